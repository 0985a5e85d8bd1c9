"""The one interface every task format implements."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.hygiene import hashed_split
from probebench.tasks.spec import TaskSpec


@dataclass
class TaskData:
    """A loaded task: items per split (``train``, ``val``, ``test``)."""

    spec: TaskSpec
    splits: dict[str, list[Item]]

    @property
    def test(self) -> list[Item]:
        return self.splits.get("test", [])


class TaskFormat(ABC):
    """Reads one kind of file into items; validates with file:line errors."""

    name: ClassVar[str]
    #: file roles a task of this format must declare in ``files``
    roles: ClassVar[tuple[str, ...]]

    def load(self, spec: TaskSpec, root: Path) -> TaskData:
        missing = [r for r in self.roles if r not in spec.files]
        if missing:
            raise InputError(f"task {spec.id}: format {self.name} needs files: "
                             f"{', '.join(missing)}")
        return self.read(spec, {role: root / rel for role, rel in spec.files.items()})

    @abstractmethod
    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData: ...

    @staticmethod
    def split_by_hash(spec: TaskSpec, items: list[Item]) -> dict[str, list[Item]]:
        if spec.split is None:
            raise InputError(f"task {spec.id}: format needs a 'split' (method: hash)")
        train, test = hashed_split(items, spec.split.salt, spec.split.test_fraction)
        return {"train": train, "test": test}


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; errors name file and line."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not valid JSON ({exc.msg}, column "
                                 f"{exc.colno})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{number}: expected a JSON object")
            yield number, obj


def require(obj: dict[str, Any], fields: Mapping[str, type | tuple[type, ...]],
            where: str) -> None:
    """Each field present with the given type; the error names the field and what it found."""
    for name, kind in fields.items():
        if name not in obj:
            raise InputError(f"{where}: field {name!r} is missing")
        value = obj[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            expected = kind.__name__ if isinstance(kind, type) else " or ".join(
                k.__name__ for k in kind)
            raise InputError(f"{where}: field {name!r} must be {expected}, found "
                             f"{type(value).__name__} {value!r}")
