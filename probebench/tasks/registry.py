"""Loading registered tasks, refusing any whose files or test set drifted from tasks.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from probebench.errors import InputError
from probebench.hashing import sha256_file
from probebench.tasks.formats import FORMATS, TaskData
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.spec import TaskSpec, read_tasks_file


class TaskDriftError(InputError):
    """A task's files or canonical test set no longer match their registered hashes."""


def file_drift(spec: TaskSpec, root: Path) -> list[str]:
    """Problems with the raw files: missing, unregistered or changed."""
    problems = []
    for rel in sorted(set(spec.files.values())):
        if rel not in spec.files_sha256:
            problems.append(f"{rel}: not pinned in files_sha256")
    for rel, expected in sorted(spec.files_sha256.items()):
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        actual = sha256_file(path, memo=False)
        if actual != expected:
            problems.append(f"{rel}: sha256 {actual[:16]}... differs from the registered "
                            f"{expected[:16]}...")
    return problems


def load_spec(spec: TaskSpec, root: Path, *, verify: bool = True) -> TaskData:
    if spec.format not in FORMATS:
        raise InputError(f"task {spec.id}: format {spec.format!r} is not implemented")
    if verify:
        problems = file_drift(spec, root)
        if problems:
            raise TaskDriftError(f"task {spec.id} refused, its files changed since they were "
                                 f"registered: {'; '.join(problems)}")
    data = FORMATS[spec.format].load(spec, root)
    if not data.test:
        raise InputError(f"task {spec.id}: the test split is empty")
    if verify:
        actual = canonical_test_sha256(data.test)
        if actual != spec.test_sha256:
            raise TaskDriftError(f"task {spec.id} refused: its canonical test set hashes to "
                                 f"{actual}, registered {spec.test_sha256}")
    return data


def load_task(task_id: str, *, tasks_file: Path | None = None, verify: bool = True) -> TaskData:
    """Load a registered task by id, verifying every pinned hash first."""
    parsed, root = read_tasks_file(tasks_file)
    specs = {t.id: t for t in parsed.tasks}
    if task_id not in specs:
        import difflib

        close = difflib.get_close_matches(task_id, list(specs), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(f"unknown task {task_id!r}{hint} (see `probebench tasks list`)")
    return load_spec(specs[task_id], root, verify=verify)


@dataclass
class Verification:
    task: str
    ok: bool
    message: str


def verify_all(tasks_file: Path | None = None) -> list[Verification]:
    parsed, root = read_tasks_file(tasks_file)
    out = []
    for spec in parsed.tasks:
        try:
            data = load_spec(spec, root)
        except InputError as exc:
            out.append(Verification(spec.id, False, str(exc)))
            continue
        from probebench.tasks.holdout import load_holdout

        problems = []
        for holdout in spec.holdouts:
            try:
                load_holdout(spec, holdout, root)
            except InputError as exc:
                problems.append(str(exc))
        if problems:
            out.append(Verification(spec.id, False, "; ".join(problems)))
            continue
        extra = f", {len(spec.holdouts)} holdout(s) verified" if spec.holdouts else ""
        out.append(Verification(spec.id, True, f"{len(data.test)} test items, test_sha256 "
                                f"{spec.test_sha256[:16]}...{extra}"))
    return out
