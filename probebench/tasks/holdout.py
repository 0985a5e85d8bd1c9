"""Holdout versions of registered tasks, used by ``probebench reeval``.

A holdout replaces some of a task's files (its test set) and is pinned like the task
itself (``files_sha256``, ``test_sha256``). For the verb-grammar task the holdout is a
fresh set of generated sentences from a new, recorded seed: each line must follow the
per-line rules of ``check-verbs``, and none may repeat a train or val sentence or equal
a hand-written test probe (coverage minimums apply to the hand-written set only).
"""

from __future__ import annotations

from pathlib import Path

from probebench.errors import InputError
from probebench.hashing import sha256_file
from probebench.tasks.formats import FORMATS
from probebench.tasks.formats.base import TaskData
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.registry import TaskDriftError, load_spec
from probebench.tasks.spec import HoldoutSpec, TaskSpec


def newest_holdout(spec: TaskSpec) -> HoldoutSpec | None:
    return max(spec.holdouts, key=lambda h: h.version) if spec.holdouts else None


def _verbs_holdout(spec: TaskSpec, holdout: HoldoutSpec, root: Path) -> TaskData:
    from probebench.tasks.verbs.checks import check_line
    from probebench.tasks.verbs.render import render_item
    from probebench.tasks.verbs.schema import VerbTables, read_verb_file

    files = {role: root / rel for role, rel in spec.files.items()}
    tables = VerbTables.read(files["verbs"])
    lines = read_verb_file(root / holdout.files["test"])
    seen = {ln.item.prompt for role in ("train", "val") for ln in read_verb_file(files[role])}
    problems = [p for ln in lines for p in check_line(ln, tables)]
    problems += [f"{ln.where}: repeats a train/val sentence" for ln in lines
                 if ln.item.prompt in seen]
    if problems:
        raise InputError(f"holdout v{holdout.version} of {spec.id} refused: "
                         + "; ".join(problems[:5]))
    template = files["template"].read_text("utf-8")
    test = [render_item(ln.item, template) for ln in lines if not ln.item.deprecated]
    return TaskData(spec, {"test": test})


def load_holdout(spec: TaskSpec, holdout: HoldoutSpec, root: Path, *,
                 verify: bool = True) -> TaskData:
    """The holdout's test set, verified against its pinned hashes."""
    if verify:
        for rel, expected in holdout.files_sha256.items():
            path = root / rel
            if not path.is_file() or sha256_file(path, memo=False) != expected:
                raise TaskDriftError(f"holdout v{holdout.version} of {spec.id} refused: {rel} "
                                     "is missing or changed since it was registered")
    if spec.format == "verbs":
        data = _verbs_holdout(spec, holdout, root)
    else:
        replaced = spec.model_copy(update={"files": {**spec.files, **holdout.files}})
        data = FORMATS[spec.format].load(replaced, root)
    if verify and canonical_test_sha256(data.test) != holdout.test_sha256:
        raise TaskDriftError(f"holdout v{holdout.version} of {spec.id} refused: its test set "
                             "no longer matches test_sha256")
    return data


def load_for_reeval(spec: TaskSpec, root: Path) -> tuple[TaskData, int, str]:
    """(test data, version, test_sha256): the newest holdout, else the registered set."""
    holdout = newest_holdout(spec)
    if holdout is None:
        return load_spec(spec, root), spec.version, spec.test_sha256
    return load_holdout(spec, holdout, root), holdout.version, holdout.test_sha256
