"""BLiMP minimal pairs (Warstadt et al., TACL 2020): one JSON object per line.

Each pair is an item of two prompts: ``sentence_good`` (label 1) and ``sentence_bad``
(label 0); slices ``field``, ``linguistics_term`` and ``UID``. Pairs are split into
train and test by the hashed rule, so no pair is ever in both.
"""

from __future__ import annotations

from pathlib import Path

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.formats.base import TaskData, TaskFormat
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
    name = "blimp"
    roles = ("data",)

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        return TaskData(spec, self.split_by_hash(spec, read_blimp(files["data"])))
