"""The one interface every task format implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

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
