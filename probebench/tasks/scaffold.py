"""``probebench tasks add`` and ``tasks remove``: your own tasks in a tasks file.

A task's files are pinned by SHA-256 and its canonical test set by ``test_sha256``
(``probebench.tasks.hygiene``). Writing those by hand is error-prone (and a YAML
scalar of digits is read as a number), so ``add_task`` computes them from the files as
they are, appends the task to the tasks file (creating it if needed), then reads the
file back and loads the task through ``TaskCatalog``, which verifies every hash. Nothing
is written when any step fails.

``remove_task`` takes one task out again: only the lines of its block go (comments
outside the block and every other task stay as they were, byte for byte), the rest of the
file must read back with every other task unchanged, and its data files stay on disk
(``RemovedTask.unreferenced`` names those no task of the file reads any more). A task
of the packaged catalog is never removed.

The tasks file is yours: evaluate against it privately with ``--include`` (or
``--tasks-file``), and propose it for the registry with a task-proposal pull request
(docs/tasks.md, "Proposing a task").
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from probebench.errors import InputError, field_problem
from probebench.hashing import atomic_write_bytes
from probebench.licenses import check_license
from probebench.tasks.catalog import TASKS_FILE, TaskCatalog, spec_hashes
from probebench.tasks.families import get_format
from probebench.tasks.spec import TaskSpec, parse_tasks_text, read_tasks_file

#: a placeholder hash, replaced before anything is written
_PLACEHOLDER = "0" * 64
_NEW_FILE = ("# Tasks registered with `probebench tasks add`. Paths are relative to this file;\n"
             "# every file and the canonical test set are pinned by SHA-256. Never edit a\n"
             "# registered test set: add a new task (or version) instead.\n"
             "version: 1\ntasks:\n")


def _relative(path: Path, folder: Path, role: str) -> str:
    if path.is_symlink():
        raise InputError(f"{path}: the {role} file is a symbolic link; give the real file")
    if not path.is_file():
        raise InputError(f"{path}: the {role} file does not exist")
    try:
        rel = path.resolve().relative_to(folder.resolve())
    except ValueError:
        raise InputError(f"{path}: the {role} file is outside {folder}, the folder of the "
                         "tasks file; a task's paths are relative to its tasks file, so "
                         "put the data beside it (or give a --tasks-file in the data's "
                         "folder)") from None
    return rel.as_posix()


def new_spec(*, task_id: str, fmt: str, files: Mapping[str, Path], folder: Path, title: str,
             license: str, source: str, description: str = "",
             options: Mapping[str, Any] | None = None, labels: Mapping[int, str] | None = None,
             slices: Sequence[str] | None = None, test_fraction: float | None = None,
             salt: str | None = None) -> TaskSpec:
    """The TaskSpec of a new task with its hashes computed from the files under
    ``folder`` (the folder of the tasks file it will be written to). Labels and slices
    not given are the format's defaults (``TaskFormat.default_labels``,
    ``default_slices``); labels it reads from the data (a multi-class task's classes)
    are filled in once the files are read."""
    form = get_format(fmt)
    problem = check_license(license)
    if problem is not None:
        raise InputError(f"task {task_id}: {problem}")
    options = dict(options or {})
    rels = {role: _relative(Path(p), folder, role) for role, p in files.items()}
    missing = [r for r in form.roles if r not in rels]
    if missing:
        raise InputError(f"format {fmt} needs the file role(s) {', '.join(missing)} "
                         f"(give --file ROLE=PATH; it reads {', '.join(form.roles)})")
    raw: dict[str, Any] = {
        "id": task_id, "title": title, "format": fmt, "version": 1,
        "description": description, "files": rels,
        "files_sha256": dict.fromkeys(rels.values(), _PLACEHOLDER),
        "labels": dict(labels or form.default_labels(options)),
        "slices": list(slices if slices is not None else form.default_slices),
        "license": license, "source": source, "options": options,
        "test_sha256": _PLACEHOLDER}
    if test_fraction is not None:
        raw["split"] = {"method": "hash", "test_fraction": test_fraction,
                        "salt": salt or f"probebench-{task_id}-v1"}
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"task {task_id}: {field_problem(exc)}") from None
    try:
        files_sha256, test_sha256 = spec_hashes(spec, folder)
    except InputError as exc:
        hint = (" (this format has no split of its own: give --test-fraction)"
                if "needs a 'split'" in str(exc) else "")
        raise InputError(f"{exc}{hint}") from None
    update: dict[str, Any] = {"files_sha256": files_sha256, "test_sha256": test_sha256}
    if not spec.labels:
        data = form.load(spec, folder)
        classes = form.classes(data) or ()
        update["labels"] = dict(enumerate(classes))
    return spec.model_copy(update=update)


def spec_yaml(spec: TaskSpec, defaults: Mapping[str, Any] | None = None) -> str:
    """The task as a YAML list item (empty optional fields left out). ``defaults`` are
    the fields the tasks file's ``format_defaults`` give a task of its format
    (``TasksFile.defaults_for``): a field equal to its default is left out, and one that
    differs is written even when empty, so that the file reads back as ``spec``."""
    defaults = defaults or {}
    record = spec.model_dump(mode="json", exclude_defaults=True)
    record["version"] = spec.version
    full = spec.model_dump(mode="json")
    for key, value in defaults.items():
        if TaskSpec.model_validate({**full, key: value}) == spec:
            record.pop(key, None)  # the default gives the same value
        else:
            record[key] = full[key]
    if "labels" in record:  # JSON mode made the integer labels strings
        record["labels"] = {int(k): v for k, v in record["labels"].items()}
    ordered = {k: record[k] for k in TaskSpec.model_fields if k in record}
    return yaml.safe_dump([ordered], sort_keys=False, allow_unicode=True, width=88)


def add_task(tasks_file: Path, spec: TaskSpec) -> TaskCatalog:
    """Append ``spec`` to ``tasks_file`` (created when missing), then read it back and
    load the task with every hash verified; returns the file's catalog. The file is
    replaced atomically, and left as it was on any failure."""
    tasks_file = Path(tasks_file)
    if tasks_file.is_dir():
        tasks_file = tasks_file / TASKS_FILE
    existing = tasks_file.read_text("utf-8") if tasks_file.exists() else None
    defaults: dict[str, Any] = {}
    if existing is not None:
        current = read_tasks_file(tasks_file)
        defaults = current.defaults_for(spec.format)
        if spec.id in {t.id for t in current.tasks}:
            raise InputError(f"{tasks_file}: task {spec.id!r} is already registered there; "
                             "a changed test set is a new task: give another id")
    packaged = TaskCatalog.default()
    if spec.id in packaged.specs and not (existing is not None and tasks_file.resolve()
                                          == packaged.path.resolve()):
        raise InputError(f"task id {spec.id!r} is one of probebench's registered tasks; "
                         "choose another id (an included task may not shadow one)")
    text = existing if existing is not None else _NEW_FILE
    if text and not text.endswith("\n"):
        text += "\n"
    text += spec_yaml(spec, defaults)
    # read back from memory, as the file would be read: nothing is on disk until the
    # whole text has proved itself (a process killed before the write leaves nothing)
    parsed = parse_tasks_text(text, tasks_file)
    if [t.id for t in parsed.tasks][-1:] != [spec.id]:
        raise InputError(f"{tasks_file}: its 'tasks' list is not the last thing in the "
                         "file, so the task cannot be appended; move 'tasks:' to the end")
    if parsed.tasks[-1] != spec:  # what format_defaults fill in must not change it
        raise InputError(f"{tasks_file}: the task reads back differently from the file "
                         "(its format_defaults?); nothing was written")
    catalog = TaskCatalog(tasks_file, {t.id: t for t in parsed.tasks})
    catalog.load(spec.id)  # every hash verified
    atomic_write_bytes(tasks_file, text.encode("utf-8"))
    return TaskCatalog.from_file(tasks_file)


@dataclass(frozen=True)
class RemovedTask:
    """What ``remove_task`` did."""

    #: the tasks file the task was removed from
    tasks_file: Path
    #: the task as the file registered it
    spec: TaskSpec
    #: its data files (relative to the tasks file's folder) that no task left in the file
    #: reads; they are left on disk
    unreferenced: tuple[str, ...]


def _referenced(spec: TaskSpec) -> set[str]:
    paths = set(spec.files.values()) | set(spec.files_sha256)
    for holdout in spec.holdouts:
        paths |= set(holdout.files.values()) | set(holdout.files_sha256)
    if spec.control is not None:
        paths.add(spec.control.file)
    return paths


def _content_end(node: yaml.Node) -> int:
    """Where a node's own text ends: a block collection's end mark runs on over the
    comments after it, its last scalar's does not."""
    if isinstance(node, yaml.MappingNode) and node.value and not node.flow_style:
        return _content_end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and not node.flow_style:
        return _content_end(node.value[-1])
    return int(node.end_mark.index)


def _task_block(text: str, item: yaml.Node, where: Path) -> tuple[int, int]:
    """The character range of one task's lines: from its ``-`` line through the line
    its last value ends on."""
    start = int(item.start_mark.index)
    line = text.rfind("\n", 0, start) + 1
    if text[line:start].strip() != "-":  # "-" alone on the line above ("-\n  id: x")
        above = text.rfind("\n", 0, max(line - 1, 0)) + 1
        if text[line:start].strip() or text[above:line].strip() != "-":
            raise InputError(f"{where}: cannot find where the task's block starts; remove "
                             "it by hand")
        line = above
    end = _content_end(item)
    if text[end - 1:end] != "\n":
        newline = text.find("\n", end)
        end = len(text) if newline < 0 else newline + 1
    return line, end


def remove_task(tasks_file: Path, task_id: str) -> RemovedTask:
    """Remove task ``task_id`` from ``tasks_file`` (or the ``tasks.yaml`` in that
    folder), keeping every other line as it was (module docstring). The file is
    replaced atomically, and only once the rest reads back with every other task
    unchanged; no data file is deleted.

    Raises ``InputError`` when the file does not register the task, when it is the
    packaged catalog (or the task is one of its registered tasks), or when the task's
    lines cannot be told apart from the rest.
    """
    tasks_file = Path(tasks_file)
    if tasks_file.is_dir():
        tasks_file = tasks_file / TASKS_FILE
    packaged = TaskCatalog.default()
    if tasks_file.exists() and tasks_file.resolve() == packaged.path.resolve():
        raise InputError(f"{tasks_file} is probebench's packaged catalog: its registered "
                         "tasks are never removed (a changed task is a new version)")
    current = read_tasks_file(tasks_file)
    ids = [t.id for t in current.tasks]
    if task_id not in ids:
        close = difflib.get_close_matches(task_id, ids, n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else (
            f" (it registers {', '.join(ids) or 'no task'})")
        raise InputError(f"{tasks_file}: no task {task_id!r}{hint}")
    if task_id in packaged.specs:
        raise InputError(f"task {task_id!r} is one of probebench's registered tasks; a "
                         "registered task is never removed")
    raw = tasks_file.read_bytes()
    text = raw.decode("utf-8")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    assert isinstance(root, yaml.MappingNode)  # read_tasks_file read a mapping
    tasks_key, tasks_node = next((k, v) for k, v in root.value if k.value == "tasks")
    if not isinstance(tasks_node, yaml.SequenceNode) or tasks_node.flow_style:
        raise InputError(f"{tasks_file}: its 'tasks' list is written inline ([...]); write "
                         "it as a block list, or remove the task by hand")
    position = ids.index(task_id)
    start, end = _task_block(text, tasks_node.value[position], tasks_file)
    new_text = text[:start] + text[end:]
    if len(ids) == 1:  # "tasks:" with nothing under it would read as null
        colon = new_text.index(":", int(tasks_key.end_mark.index))
        new_text = new_text[:colon + 1] + " []" + new_text[colon + 1:]
    parsed = parse_tasks_text(new_text, tasks_file)
    kept = [t for t in current.tasks if t.id != task_id]
    if parsed.tasks != kept or parsed.format_defaults != current.format_defaults:
        raise InputError(f"{tasks_file}: without task {task_id!r}'s lines the file reads "
                         "differently; nothing was written, remove it by hand")
    atomic_write_bytes(tasks_file, new_text.encode("utf-8"))
    removed = current.tasks[position]
    still = set().union(*(_referenced(t) for t in kept)) if kept else set()
    gone = sorted(_referenced(removed) - still)
    return RemovedTask(tasks_file, removed, tuple(gone))


__all__ = ["RemovedTask", "add_task", "new_spec", "remove_task", "spec_yaml"]
