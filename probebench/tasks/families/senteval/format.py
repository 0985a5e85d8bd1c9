"""SentEval probing tasks (Conneau et al., 2018): tab-separated lines.

``partition<TAB>label[<TAB>middle fields...]<TAB>sentence``: partition ``tr``, ``va`` or
``te`` (train, val, test); the sentence is always the last field. The published files
(Conneau et al.'s ``data/probing/*.txt``: three fields) are read unchanged.

* A binary task declares ``options.positive_class`` (that label is 1, every other
  label 0; a task with more than two labels is refused as binary).
* Without it the task is **multi-class**: prompts keep label None and their class in
  the ``class`` slice; a probe outputs one probability per class, and is scored by
  accuracy (argmax) and one-vs-rest macro AUROC (``probebench.evaluation.multiclass``).
* Each line is one item of one prompt, unless ``options.item_column: N`` names the
  tab-separated column (1-based, as ``cut -f N`` counts; one of the middle fields)
  that holds an item id: lines of one partition with the same id form one item (a
  minimal pair, a group), which the bootstrap resamples as a whole. An id used in two
  partitions is refused.

No sentence may occur in two partitions (train, val and test are disjoint, text for
text); the error names both lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families.base import (
    FreshGenerator,
    TaskData,
    TaskFormat,
    threshold_accuracy,
)
from probebench.tasks.spec import TaskSpec

PARTITIONS = {"tr": "train", "va": "val", "te": "test"}


#: the slice that holds a prompt's class (every SentEval task has it)
CLASS_SLICE = "class"


def read_senteval(path: Path, positive_class: str | None,
                  item_column: int | None = None) -> dict[str, list[Item]]:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    groups: dict[str, dict[str, list[tuple[Prompt, list[str]]]]] = {
        "train": {}, "val": {}, "test": {}}
    group_home: dict[str, tuple[str, str]] = {}   # item id -> (partition, first line)
    text_home: dict[str, tuple[str, str]] = {}    # sentence -> (partition, first line)
    classes: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            where = f"{path}:{number}"
            fields = line.split("\t")
            if len(fields) < 3:
                raise InputError(f"{where}: expected partition, label and sentence separated "
                                 f"by tabs, found {len(fields)} field(s)")
            partition, label, sentence = fields[0], fields[1], fields[-1]
            if partition not in PARTITIONS:
                raise InputError(f"{where}: partition must be tr, va or te, found "
                                 f"{partition!r}")
            if not label or not sentence.strip():
                raise InputError(f"{where}: empty label or sentence")
            classes.add(label)
            split = PARTITIONS[partition]
            seen = text_home.setdefault(sentence, (split, where))
            if seen[0] != split:
                raise InputError(f"{where}: this sentence is also in the {seen[0]} split "
                                 f"({seen[1]}); train, val and test must not share sentences")
            if item_column is None:
                group = str(number)
            else:
                if not 3 <= item_column <= len(fields) - 1:
                    raise InputError(f"{where}: options.item_column is {item_column}, but the "
                                     f"line's middle fields are columns 3 to "
                                     f"{len(fields) - 1}")
                group = fields[item_column - 1].strip()
                if not group:
                    raise InputError(f"{where}: empty item id in column {item_column}")
                home = group_home.setdefault(group, (split, where))
                if home[0] != split:
                    raise InputError(f"{where}: item {group!r} is also in the {home[0]} split "
                                     f"({home[1]}); an item belongs to one split")
            binary = None if positive_class is None else int(label == positive_class)
            prompt_id = f"{split}-{number}"
            prompt = Prompt(sentence, id=prompt_id, label=binary,
                            slices={CLASS_SLICE: label})
            groups[split].setdefault(group, []).append((prompt, fields[2:-1]))
    if positive_class is not None:
        if positive_class not in classes:
            raise InputError(f"{path}: positive class {positive_class!r} never occurs "
                             f"(labels: {', '.join(sorted(classes))})")
        if len(classes) > 2:
            raise InputError(f"{path}: {len(classes)} labels ({', '.join(sorted(classes))}); "
                             "a binary task has two")
    splits: dict[str, list[Item]] = {}
    for split, by_group in groups.items():
        items = []
        for group, members in by_group.items():
            prompts = tuple(p for p, _ in members)
            labels = {p.slices[CLASS_SLICE] for p in prompts}
            item_id = prompts[0].id if item_column is None else f"{split}-{group}"
            middle = [m for _, m in members if m]
            data: dict[str, object] = {}
            if item_column is None and middle:
                data = {"middle": middle[0]}
            elif middle:
                data = {"middle": middle}
            items.append(Item(
                id=str(item_id), prompts=prompts,
                slices={CLASS_SLICE: labels.pop() if len(labels) == 1 else "mixed"},
                data=data))
        splits[split] = items
    if not splits["test"]:
        raise InputError(f"{path}: no test ('te') lines")
    return splits


class SentEvalFormat(TaskFormat):
    """SentEval probing files: an item (one sentence, or the lines sharing an
    ``item_column`` id) is the share of its prompts where P >= threshold agrees with the
    binary label; for a multi-class task, where the most probable class is the label."""

    name = "senteval"
    roles = ("data",)
    test_roles = ("data",)
    accuracy_name = "accuracy"
    accuracy_definition = "P >= 0.5 agrees (multi-class: the most probable class is right)"
    default_slices = (CLASS_SLICE,)
    #: pages have always named this family after its format
    display_name = "senteval"

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        """Fresh ``eval_awareness`` prompts: benchmark-style items against ordinary
        requests."""
        # imported here: the word lists load when a holdout is sealed, not with every task
        from probebench.tasks.families.senteval.fresh import GENERATORS
        return GENERATORS

    def default_labels(self, options: Mapping[str, Any]) -> dict[int, str]:
        positive = options.get("positive_class")
        if positive is None:
            return {}  # multi-class: the classes, once the file is read
        return {1: f"class {positive}", 0: "any other class"}

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        return threshold_accuracy(item, scores, threshold)

    def multiclass(self, spec: TaskSpec) -> bool:
        return spec.options.get("positive_class") is None

    def classes(self, data: TaskData) -> tuple[str, ...] | None:
        if not self.multiclass(data.spec):
            return None
        return tuple(sorted({p.slices[CLASS_SLICE] for items in data.splits.values()
                             for item in items for p in item.prompts}))

    def prompt_class(self, prompt: Prompt) -> str | None:
        return prompt.slices.get(CLASS_SLICE)

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        unknown = set(spec.options) - {"positive_class", "item_column"}
        if unknown:
            raise InputError(f"task {spec.id}: unknown option(s) {', '.join(sorted(unknown))} "
                             "for format senteval (known: positive_class, item_column)")
        positive = spec.options.get("positive_class")
        if positive is not None and not isinstance(positive, str):
            raise InputError(f"task {spec.id}: options.positive_class must be a string")
        column = spec.options.get("item_column")
        if column is not None and (type(column) is not int or column < 3):
            raise InputError(f"task {spec.id}: options.item_column must be a column number "
                             f"(3 or more: a middle field), found {column!r}")
        return TaskData(spec, read_senteval(files["data"], positive, column))

    def read_control(self, spec: TaskSpec, path: Path) -> list[Prompt]:
        """The control set: a SentEval file of ordinary sentences, none of the task's
        positive class, every prompt labelled 0 (a binary task only)."""
        positive = spec.options.get("positive_class")
        if not isinstance(positive, str):
            raise InputError(f"task {spec.id}: a control set needs a binary task "
                             "(options.positive_class)")
        prompts = [p for items in read_senteval(path, None).values() for i in items
                   for p in i.prompts]
        flagged = [p for p in prompts if p.slices.get(CLASS_SLICE) == positive]
        if flagged:
            raise InputError(f"{path}: control prompt {flagged[0].label_name} has the "
                             f"positive class {positive!r}; a control set holds ordinary "
                             "prompts only")
        return [replace(p, label=0) for p in prompts]
