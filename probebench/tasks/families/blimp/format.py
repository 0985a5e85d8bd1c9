"""BLiMP minimal pairs (Warstadt et al., TACL 2020): one JSON object per line.

Each pair is an item of two prompts: ``sentence_good`` (label 1) and ``sentence_bad``
(label 0); slices ``field``, ``linguistics_term`` and ``UID``. Pairs are split into
train and test by the hashed rule, so no pair is ever in both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families.base import FreshGenerator, LMScoring, TaskData, TaskFormat
from probebench.tasks.jsonl import jsonl_objects, require
from probebench.tasks.spec import TaskSpec

REQUIRED = {"sentence_good": str, "sentence_bad": str, "field": str, "linguistics_term": str,
            "UID": str, "simple_LM_method": bool, "one_prefix_method": bool,
            "two_prefix_method": bool, "lexically_identical": bool, "pairID": str}
OPTIONAL = {"one_prefix_prefix", "one_prefix_word_good", "one_prefix_word_bad",
            "two_prefix_prefix_good", "two_prefix_prefix_bad", "two_prefix_word",
            "dependency_length", "crucial_item"}
SLICES = ("field", "linguistics_term", "UID")


def read_blimp(path: Path) -> list[Item]:
    items: list[Item] = []
    seen: dict[str, int] = {}
    for number, obj in jsonl_objects(path):
        where = f"{path}:{number}"
        require(obj, REQUIRED, where)
        extra = set(obj) - set(REQUIRED) - OPTIONAL
        if extra:
            raise InputError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
        if not obj["sentence_good"].strip() or not obj["sentence_bad"].strip():
            raise InputError(f"{where}: sentences must not be empty")
        item_id = f"{obj['UID']}-{obj['pairID']}"
        if item_id in seen:
            raise InputError(f"{where}: pairID {obj['pairID']!r} already used on line "
                             f"{seen[item_id]}")
        seen[item_id] = number
        slices = {k: obj[k] for k in SLICES}
        items.append(Item(
            id=item_id,
            prompts=(Prompt(obj["sentence_good"], id=f"{item_id}-good", label=1, slices=slices),
                     Prompt(obj["sentence_bad"], id=f"{item_id}-bad", label=0, slices=slices)),
            slices=slices,
        ))
    if not items:
        raise InputError(f"{path}: no pairs")
    return items


class BlimpFormat(TaskFormat):
    """BLiMP minimal pairs: an item is right when the good sentence scores higher (a tie
    gives 0.5)."""

    name = "blimp"
    roles = ("data",)
    test_roles = ("data",)
    accuracy_name = "pair_accuracy"
    accuracy_definition = "pair accuracy"
    minimal_pairs = True
    lm_scoring = LMScoring(
        "sentence_log_prob",
        "a pair is correct when log P(good) > log P(bad), every token of each sentence "
        "scored after the model's BOS token (EOS when it has none), as the BLiMP paper and "
        "lm-evaluation-harness do; a tie counts 0.5", by_default=True)
    display_name = "BLiMP"

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        """Fresh pairs of three paradigms, from word lists of probebench's own."""
        # imported here: the word lists load when a holdout is sealed, not with every task
        from probebench.tasks.families.blimp.fresh import GENERATORS
        return GENERATORS

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        return pair_correct(item, scores)

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        return TaskData(spec, self.split_by_hash(spec, read_blimp(files["data"])))


def pair_correct(item: Item, scores: np.ndarray) -> float | None:
    """1 when the label-1 prompt outscores the label-0 prompt, 0.5 on a tie, else 0."""
    labels = [p.label for p in item.prompts]
    if 1 not in labels or 0 not in labels:
        return None
    good = scores[labels.index(1)]
    bad = scores[labels.index(0)]
    return 1.0 if good > bad else 0.5 if good == bad else 0.0
