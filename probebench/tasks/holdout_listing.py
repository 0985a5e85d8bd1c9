"""``holdouts.yaml``: the listing of sealed holdout generations, machine-written.

Sealed holdouts (``probebench.tasks.sealed``) are state that ``probebench holdout seal``,
``rotate`` and ``reveal`` change; the tasks file is written by hand. So the listing has
a file of its own, ``holdouts.yaml`` in the tasks file's folder: ``catalog/holdouts.yaml``
beside ``catalog/tasks.yaml``, and ``DIR/holdouts.yaml`` beside a researcher's
``DIR/tasks.yaml`` (or any ``DIR/NAME.yaml`` given with ``--tasks-file`` or
``--include``). One listing per folder, because the sealed files it names are under the
folder's ``holdouts/`` and their paths are relative to the folder. The tasks file does
not pin it, and no command but those three writes it: each write dumps the whole file,
atomically, under a header saying so. A folder without the file has no sealed holdout.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from probebench.errors import InputError, field_problem
from probebench.hashing import atomic_write_bytes, sha256_bytes
from probebench.jsonsafe import read_capped
from probebench.tasks.spec import DataPath, Sha256, TaskId
from probebench.yamlsafe import MAX_YAML_BYTES, loads_yaml

#: the listing's file name, in the folder of the tasks file
LISTING_FILE = "holdouts.yaml"
HEADER = (
    "# Sealed holdouts: written by `probebench holdout` (seal, rotate, reveal), never by\n"
    "# hand; tasks.yaml, written by hand, registers the tasks. Each generation's items are\n"
    "# sealed (AES-256-GCM) in its sealed_file; the commitment is\n"
    "# sha256(commitment_nonce || plaintext), the nonce published at the reveal.\n"
    "# `probebench holdout verify` checks it all (docs/tasks.md, \"Sealed holdouts\"). A\n"
    "# task's generation 0 is its public holdout, under its `holdouts` in tasks.yaml.\n")

HoldoutStatus = Literal["current", "retired", "revealed"]


class HoldoutFormError(InputError):
    """The listing or a file it names is malformed, missing or changed."""


class Generation(BaseModel):
    """One sealed generation of a task's holdout, as ``holdouts.yaml`` lists it."""

    model_config = ConfigDict(extra="forbid")

    generation: int = Field(ge=1, description="1, 2, ...: the order of sealing.")
    status: HoldoutStatus = Field(description="current (the one audits use), retired, revealed.")
    cipher: Literal["AES-256-GCM"] = "AES-256-GCM"
    commitment: Sha256 = Field(description="sha256(commitment_nonce || plaintext).")
    sealed_file: DataPath = Field(description="Path relative to the listing's folder.")
    sealed_sha256: Sha256
    sealed_bytes: int = Field(ge=0)
    key_id: str = Field(pattern=r"^[0-9a-f]{16}$",
                        description="Fingerprint of the key that sealed it.")
    n_items: int = Field(ge=1)
    n_label_1: int | None = Field(default=None, ge=0, description="Prompts labelled 1 (for "
                                  "the holdout's minimum detectable drop).")
    n_label_0: int | None = Field(default=None, ge=0, description="Prompts labelled 0.")
    sealed_at: datetime.date
    retired_at: datetime.date | None = None
    revealed_at: datetime.date | None = None
    revealed_file: DataPath | None = None
    commitment_nonce: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$",
                                         description="Published at the reveal.")

    @model_validator(mode="after")
    def _fields_match_status(self) -> Generation:
        revealed = [self.revealed_at, self.revealed_file, self.commitment_nonce]
        if self.status == "revealed":
            if any(v is None for v in revealed):
                raise ValueError("a revealed generation lists revealed_at, revealed_file "
                                 "and commitment_nonce")
        elif any(v is not None for v in revealed):
            raise ValueError(f"a {self.status} generation lists no revealed_at, "
                             "revealed_file or commitment_nonce")
        if (self.status == "current") != (self.retired_at is None):
            raise ValueError("retired_at is set exactly when the generation is retired or "
                             "revealed")
        return self


class TaskHoldouts(BaseModel):
    """A task's sealed holdout generations, oldest first."""

    model_config = ConfigDict(extra="forbid")

    generations: list[Generation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _numbered_in_order(self) -> TaskHoldouts:
        numbers = [g.generation for g in self.generations]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"generations are numbered 1, 2, ... in order, found {numbers}")
        current = [g.generation for g in self.generations if g.status == "current"]
        if len(current) > 1 or (current and current[0] != numbers[-1]):
            raise ValueError("only the newest generation may be current")
        return self

    @property
    def current(self) -> Generation | None:
        return next((g for g in self.generations if g.status == "current"), None)

    def get(self, number: int) -> Generation | None:
        return next((g for g in self.generations if g.generation == number), None)


class HoldoutsFile(BaseModel):
    """The whole of ``holdouts.yaml``."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    sealed_holdouts: dict[TaskId, TaskHoldouts] = Field(
        default_factory=dict, description="Task id -> its sealed holdout generations.")

    def of(self, task_id: str) -> TaskHoldouts:
        """The task's generations (none when it has no sealed holdout)."""
        return self.sealed_holdouts.get(task_id) or TaskHoldouts()

    def with_task(self, task_id: str, generations: list[Generation]) -> HoldoutsFile:
        """A copy whose ``task_id`` lists ``generations``."""
        return HoldoutsFile(sealed_holdouts={**self.sealed_holdouts,
                                             task_id: TaskHoldouts(generations=generations)})


def listing_path(tasks_file: Path) -> Path:
    """The listing of the tasks file ``tasks_file``: ``holdouts.yaml`` in its folder."""
    return Path(tasks_file).parent / LISTING_FILE


#: parsed listings by (path, sha256 of the bytes). A leaderboard build asks once per task
#: page, per methodology row and per stored result (about 90 times today); parsing the
#: YAML costs about 9 ms, reading and hashing the bytes 0.1 ms. Keyed by content, not
#: by mtime, so that an edit within the clock's tick is never missed.
_PARSED: dict[tuple[str, str], HoldoutsFile] = {}


def _parse(data: bytes, path: Path) -> HoldoutsFile:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HoldoutFormError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return HoldoutsFile.model_validate(loads_yaml(text, str(path)))
    except ValidationError as exc:
        raise HoldoutFormError(f"{path}: {field_problem(exc)}; this file is written by "
                               "`probebench holdout`, never by hand") from None
    except InputError as exc:
        raise HoldoutFormError(str(exc)) from None


def read_listing(tasks_file: Path) -> HoldoutsFile:
    """The listing beside the tasks file ``tasks_file`` (empty when there is none): a
    copy the caller may change, parsed once per content of the file."""
    path = listing_path(tasks_file)
    if not path.exists():
        return HoldoutsFile()
    try:
        data = read_capped(path, MAX_YAML_BYTES, "YAML")
    except InputError as exc:
        raise HoldoutFormError(str(exc)) from None
    stamp = (str(path.resolve()), sha256_bytes(data))
    if stamp not in _PARSED:
        _PARSED[stamp] = _parse(data, path)
    return _PARSED[stamp].model_copy(deep=True)


def listing_text(listing: HoldoutsFile) -> str:
    """The text of ``holdouts.yaml``: the header, then the listing, tasks sorted by id
    (a task with no generation left out)."""
    tasks = {task: held.model_dump(mode="json", exclude_none=True)
             for task, held in sorted(listing.sealed_holdouts.items()) if held.generations}
    return HEADER + yaml.safe_dump({"version": listing.version, "sealed_holdouts": tasks},
                                   sort_keys=False, allow_unicode=True, width=88)


def write_listing(tasks_file: Path, listing: HoldoutsFile) -> Path:
    """Replace the listing beside ``tasks_file`` with ``listing``, the whole file at once
    (readers see the old file or the new one); returns its path."""
    path = listing_path(tasks_file)
    atomic_write_bytes(path, listing_text(listing).encode("utf-8"))
    return path


__all__ = [
    "HEADER",
    "LISTING_FILE",
    "Generation",
    "HoldoutFormError",
    "HoldoutStatus",
    "HoldoutsFile",
    "TaskHoldouts",
    "listing_path",
    "listing_text",
    "read_listing",
    "write_listing",
]
