"""SentEval probing tasks (Conneau et al., 2018): tab-separated lines.

``partition<TAB>label[<TAB>middle fields...]<TAB>sentence``: partition ``tr``, ``va`` or
``te`` (train, val, test); the sentence is always the last field. A binary task
declares ``options.positive_class`` (that label is 1, every other label 0; a task
with more than two labels is refused as binary). Without it the task is multi-class:
prompts keep label None and their class in the ``class`` slice, and are scored by
accuracy. Each line is one item of one prompt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.formats.base import TaskData, TaskFormat
from probebench.tasks.spec import TaskSpec

PARTITIONS = {"tr": "train", "va": "val", "te": "test"}


def read_senteval(path: Path, positive_class: str | None) -> dict[str, list[Item]]:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    splits: dict[str, list[Item]] = {"train": [], "val": [], "test": []}
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
            binary = None if positive_class is None else int(label == positive_class)
            item_id = f"{PARTITIONS[partition]}-{number}"
            slices = {"class": label}
            splits[PARTITIONS[partition]].append(Item(
                id=item_id,
                prompts=(Prompt(sentence, id=item_id, label=binary, slices=slices),),
                slices=slices,
                data={"middle": fields[2:-1]} if len(fields) > 3 else {},
            ))
    if positive_class is not None:
        if positive_class not in classes:
            raise InputError(f"{path}: positive class {positive_class!r} never occurs "
                             f"(labels: {', '.join(sorted(classes))})")
        if len(classes) > 2:
            raise InputError(f"{path}: {len(classes)} labels ({', '.join(sorted(classes))}); "
                             "a binary task has two")
    if not splits["test"]:
        raise InputError(f"{path}: no test ('te') lines")
    return splits


class SentEvalFormat(TaskFormat):
    """SentEval probing files: one sentence per item, right when P >= threshold agrees
    with its binary label."""

    name = "senteval"
    roles = ("data",)
    test_roles = ("data",)
    accuracy_name = "accuracy"
    accuracy_definition = "P >= 0.5 agrees"

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        label = item.prompts[0].label
        if label is None or threshold is None:
            return None
        return float((scores[0] >= threshold) == bool(label))

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        positive = spec.options.get("positive_class")
        if positive is not None and not isinstance(positive, str):
            raise InputError(f"task {spec.id}: options.positive_class must be a string")
        return TaskData(spec, read_senteval(files["data"], positive))
