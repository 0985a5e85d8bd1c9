"""``TaskCatalog``: the registered tasks of one ``tasks.yaml``, passed explicitly.

A catalog is made of a tasks file and the folder its paths are under. Every command
and library function that reads a task takes a catalog; none finds one through the
working directory or an environment variable. The package ships its own catalog
(``probebench/catalog/tasks.yaml`` and ``data/``, beside this package's modules):
``TaskCatalog.default()``. ``TaskCatalog.for_repo(repo)`` uses ``<repo>/tasks.yaml``
when the repository has one, else the packaged catalog. ``catalog.including(paths)``
adds the tasks of more tasks files (a researcher's own, evaluated privately, like
lm-evaluation-harness's ``--include_path``); each task's paths stay relative to its own
file.

Loading a task verifies every pinned hash first (raw files, then the canonical test
set) and refuses a task that drifted.

A task may declare a control set (``TaskSpec.control``): ordinary prompts on which the
recall at 1% false positives sets its threshold, read by the task's format
(``TaskFormat.read_control``). It is pinned apart from the test set, by the SHA-256 of
its prompts' canonical records (``control_sha256``: each prompt as a one-prompt item of
its id and slices, hashed exactly as ``test_sha256`` hashes a test set), so declaring one
leaves the task's ``test_sha256`` as it was. Loading the task verifies it too and refuses
a drifted control set (``ControlDriftError``) or one that shares a prompt text with any
split of the task.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from probebench.errors import InputError, ProbebenchError
from probebench.hashing import sha256_file
from probebench.licenses import all_of
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.families import TaskData, get_format
from probebench.tasks.holdout_listing import LISTING_FILE
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.spec import HoldoutSpec, TaskSpec, read_tasks_file

TASKS_FILE = "tasks.yaml"


class TaskDriftError(InputError):
    """A task's files or canonical test set no longer match their registered hashes."""


class ControlDriftError(TaskDriftError):
    """A task's control set no longer matches its registered ``control.sha256``."""


class SealedCheck(Protocol):
    """One sealed holdout generation checked (``sealed.HoldoutCheck``)."""

    @property
    def task(self) -> str: ...
    @property
    def generation(self) -> int | None: ...
    @property
    def ok(self) -> bool: ...
    @property
    def level(self) -> str: ...
    @property
    def message(self) -> str: ...


@dataclass
class Verification:
    task: str
    ok: bool
    message: str


@dataclass(frozen=True)
class ReevalSet:
    """The test set a re-evaluation scores: the newest holdout, else the registered set."""

    data: TaskData
    version: int
    test_sha256: str


def packaged_tasks_file() -> Path:
    """The tasks.yaml shipped inside the probebench package (the package this module is
    part of, installed from a wheel or a source tree)."""
    # Not importlib.resources' files("probebench"): a folder named probebench in the
    # working directory makes that a namespace package whose MultiplexedPath spans both
    # folders (and, on Python 3.11, whose joinpath takes one child at a time)
    return Path(__file__).resolve().parents[1] / "catalog" / TASKS_FILE


def include_hint(task_id: str, near: Iterable[Path] = (), *,
                 known: Iterable[Path] = ()) -> str:
    """The ``--include`` that was forgotten: "; PATH registers 'ID': add --include PATH"
    when the ``tasks.yaml`` of a folder in ``near`` or of the current folder (in that
    order) registers ``task_id``, else "". A file in ``known`` (already read) and any
    file that cannot be read or parsed are passed over; PATH is relative to the current
    folder when under it."""
    try:
        cwd: Path | None = Path.cwd()
    except OSError:  # the current folder was removed: look beside the artifact only
        cwd = None
    seen = set()
    for given in known:
        try:
            seen.add(Path(given).resolve())
        except (OSError, RuntimeError):
            continue
    for folder in [*near, *([cwd] if cwd is not None else [])]:
        path = Path(folder) / TASKS_FILE
        try:
            resolved = path.resolve()
            if resolved in seen or not path.is_file():
                continue
            seen.add(resolved)
            registered = {t.id for t in read_tasks_file(path).tasks}
        except (ProbebenchError, OSError, ValueError, RuntimeError):
            continue  # not a tasks file we can read: no hint from it
        if task_id in registered:
            shown = (os.path.relpath(resolved, cwd)
                     if cwd is not None and resolved.is_relative_to(cwd) else str(resolved))
            return (f"; {shown} registers {task_id!r}: add --include {shown} (in Python, "
                    f"catalog.including([{shown!r}]))")
    return ""


@dataclass
class TaskCatalog:
    """The tasks registered in one tasks file; ``root`` is the folder its paths are under."""

    path: Path
    specs: dict[str, TaskSpec]
    packaged: bool = False
    _loaded: dict[str, TaskData] = field(default_factory=dict, repr=False)
    #: task id -> the tasks file it came from, for tasks added with ``including``
    _included: dict[str, Path] = field(default_factory=dict, repr=False)
    #: task id -> its verified control prompts
    _controls: dict[str, list[Prompt]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_file(cls, path: Path, *, packaged: bool = False) -> TaskCatalog:
        """The tasks of a ``tasks.yaml``; their paths are relative to its folder."""
        parsed = read_tasks_file(path)
        return cls(Path(path), {t.id: t for t in parsed.tasks}, packaged=packaged)

    @classmethod
    def default(cls) -> TaskCatalog:
        """The catalog shipped with the package."""
        return cls.from_file(packaged_tasks_file(), packaged=True)

    @classmethod
    def for_repo(cls, repo: Path) -> TaskCatalog:
        """``<repo>/tasks.yaml`` when the repository has one, else the packaged catalog."""
        own = Path(repo) / TASKS_FILE
        return cls.from_file(own) if own.is_file() else cls.default()

    def including(self, paths: Sequence[Path]) -> TaskCatalog:
        """This catalog plus the tasks of each tasks file in ``paths`` (a ``tasks.yaml``
        or a folder holding one). A task id registered twice is refused, naming both
        files: an included task never silently replaces a registered one."""
        specs, included = dict(self.specs), dict(self._included)
        for given in paths:
            path = Path(given)
            path = path / TASKS_FILE if path.is_dir() else path
            for spec in read_tasks_file(path).tasks:
                if spec.id in specs:
                    where = included.get(spec.id, self.path)
                    raise InputError(f"{path}: task {spec.id!r} is already registered in "
                                     f"{where}; give the included task another id")
                specs[spec.id] = spec
                included[spec.id] = path
        return TaskCatalog(self.path, specs, packaged=self.packaged, _included=included)

    @property
    def root(self) -> Path:
        """The folder the catalog's own tasks file is in."""
        return self.path.parent

    def root_of(self, task_id: str) -> Path:
        """The folder ``task_id``'s paths are relative to (its own tasks file's)."""
        return self._included[task_id].parent if task_id in self._included else self.root

    def source_of(self, task_id: str) -> Path:
        """The tasks file that registers ``task_id``."""
        return self._included.get(task_id, self.path)

    def describe(self) -> str:
        """How messages name this catalog."""
        own = len(self.specs) - len(self._included)
        text = (f"the packaged tasks ({own})" if self.packaged
                else f"{self.path} ({own} tasks)")
        files = sorted({str(p) for p in self._included.values()})
        if files:
            text += f" + {len(self._included)} included from {', '.join(files)}"
        return text

    @property
    def ids(self) -> list[str]:
        """Every registered task id, in the tasks file's order."""
        return list(self.specs)

    def spec(self, task_id: str, *, near: Sequence[Path] = ()) -> TaskSpec:
        """The registered task ``task_id``. The error suggests close ids, and the
        ``--include`` that was forgotten when a ``tasks.yaml`` in one of the folders
        ``near`` (e.g. an artifact's folder and its parent) or in the current folder
        registers ``task_id`` (``include_hint``)."""
        if task_id not in self.specs:
            close = difflib.get_close_matches(task_id, list(self.specs), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            shown = task_id if len(task_id) <= 80 else f"{task_id[:60]}..."
            raise InputError(f"unknown task {shown!r}{hint} (see `probebench tasks list`; "
                             f"tasks from {self.describe()})"
                             + include_hint(task_id, near, known=self.tasks_files()))
        return self.specs[task_id]

    def tasks_files(self) -> list[Path]:
        """The tasks files this catalog was read from: its own and the included ones."""
        return [self.path, *sorted(set(self._included.values()))]

    def with_format(self, fmt: str) -> list[TaskSpec]:
        """The tasks of one format (``verbs``, ``blimp``, ``syntaxgym``, ...)."""
        return [t for t in self.specs.values() if t.format == fmt]

    def files_of(self, spec: TaskSpec) -> dict[str, Path]:
        """role -> absolute path of a task's files."""
        return {role: data_file(self.root_of(spec.id), rel)
                for role, rel in spec.files.items()}

    def test_hashes(self) -> dict[str, str]:
        """Each registered test-set SHA-256 -> its task id."""
        return {t.test_sha256: t.id for t in self.specs.values()}

    # --- loading and verification ---------------------------------------------------

    def file_drift(self, spec: TaskSpec) -> list[str]:
        """Problems with a task's raw files: missing, unregistered or changed."""
        problems = []
        for rel in sorted(set(spec.files.values())):
            if rel not in spec.files_sha256:
                problems.append(f"{rel}: not pinned in files_sha256")
        for rel, expected in sorted(spec.files_sha256.items()):
            path = data_file(self.root_of(spec.id), rel)
            if not path.is_file():
                problems.append(f"{rel}: missing")
                continue
            actual = sha256_file(path, memo=False)
            if actual != expected:
                problems.append(f"{rel}: sha256 {actual[:16]}... differs from the registered "
                                f"{expected[:16]}...")
        return problems

    def load(self, task_id: str, *, verify: bool = True) -> TaskData:
        """A registered task's items per split, verifying every pinned hash first."""
        if verify and task_id in self._loaded:
            return self._loaded[task_id]
        spec = self.spec(task_id)
        fmt = get_format(spec.format)
        if verify:
            problems = self.file_drift(spec)
            if problems:
                raise TaskDriftError(f"task {spec.id} refused, its files changed since they "
                                     f"were registered: {'; '.join(problems)}")
        data = fmt.load(spec, self.root_of(spec.id))
        if not data.test:
            raise InputError(f"task {spec.id}: the test split is empty")
        if verify:
            actual = canonical_test_sha256(data.test)
            if actual != spec.test_sha256:
                raise TaskDriftError(f"task {spec.id} refused: its canonical test set hashes "
                                     f"to {actual}, registered {spec.test_sha256}")
            if spec.control is not None:
                self._controls[task_id] = self._verified_control(spec, data)
            self._loaded[task_id] = data
        return data

    def load_control(self, task_id: str) -> list[Prompt]:
        """The verified prompts of ``task_id``'s control set, in file order (the task is
        loaded and verified with it); an ``InputError`` when it declares none."""
        spec = self.spec(task_id)
        if spec.control is None:
            raise InputError(f"task {task_id} declares no control set (no 'control' block "
                             f"in {self.source_of(task_id)})")
        self.load(task_id)
        return self._controls[task_id]

    def _verified_control(self, spec: TaskSpec, data: TaskData) -> list[Prompt]:
        assert spec.control is not None
        prompts = read_control(spec, self.root_of(spec.id))
        actual = control_sha256(prompts)
        if actual != spec.control.sha256:
            raise ControlDriftError(
                f"task {spec.id} refused: its control set {spec.control.file} hashes to "
                f"{actual}, registered control.sha256 {spec.control.sha256} in "
                f"{self.source_of(spec.id)} (a changed control set needs its new hash from "
                "`probebench tasks hash`)")
        texts = {p.text: split for split, items in data.splits.items() for i in items
                 for p in i.prompts}
        shared = [p for p in prompts if p.text in texts]
        if shared:
            raise InputError(f"task {spec.id} refused: {len(shared)} prompt(s) of its control "
                             f"set {spec.control.file} also occur in the task's "
                             f"{texts[shared[0].text]} split (e.g. {shared[0].id}: "
                             f"{shared[0].text[:60]!r}); a control set is disjoint from the "
                             "task's prompts")
        return prompts

    def load_holdout(self, task_id: str, holdout: HoldoutSpec, *,
                     verify: bool = True) -> TaskData:
        """A holdout's test set, verified against its pinned hashes."""
        spec = self.spec(task_id)
        if verify:
            for rel, expected in holdout.files_sha256.items():
                path = data_file(self.root_of(spec.id), rel)
                if not path.is_file() or sha256_file(path, memo=False) != expected:
                    raise TaskDriftError(f"holdout v{holdout.version} of {spec.id} refused: "
                                         f"{rel} is missing or changed since it was "
                                         "registered")
        data = get_format(spec.format).read_holdout(spec, holdout, self.root_of(spec.id))
        if verify and canonical_test_sha256(data.test) != holdout.test_sha256:
            raise TaskDriftError(f"holdout v{holdout.version} of {spec.id} refused: its test "
                                 "set no longer matches test_sha256")
        return data

    def reeval_set(self, task_id: str) -> ReevalSet:
        """The newest holdout of a task, else its registered test set."""
        spec = self.spec(task_id)
        if not spec.holdouts:
            return ReevalSet(self.load(task_id), spec.version, spec.test_sha256)
        newest = max(spec.holdouts, key=lambda h: h.version)
        return ReevalSet(self.load_holdout(task_id, newest), newest.version,
                         newest.test_sha256)

    def current_control_hash(self, task_id: str) -> str | None:
        """``control.sha256`` as the control file is now (None: the task declares no
        control set); the registered value is not read."""
        spec = self.spec(task_id)
        if spec.control is None:
            return None
        return control_sha256(read_control(spec, self.root_of(spec.id)))

    def current_hashes(self, task_id: str) -> tuple[dict[str, str], str]:
        """(files_sha256, test_sha256) as the files are now, registered values unread:
        what a new task or version registers."""
        spec = self.spec(task_id)
        return spec_hashes(spec, self.root_of(spec.id))

    def verify(self, sealed: Sequence[SealedCheck] = ()) -> list[Verification]:
        """Every task and holdout checked against its registered hashes.

        Args:
            sealed: the checks of the sealed holdout generations, as
                ``verify_holdouts(catalog)`` makes them (``probebench tasks verify``
                passes them; this module sits below ``probebench.tasks.sealed``). A
                failed one fails its task; one of a task this catalog does not register is
                reported under that task's name, or ``holdouts.yaml``'s. Without them,
                sealed holdouts are not checked.
        """
        by_task: dict[str, list[SealedCheck]] = {}
        for check in sealed:
            by_task.setdefault(check.task, []).append(check)
        out = []
        for spec in self.specs.values():
            checks = by_task.pop(spec.id, [])
            try:
                data = self.load(spec.id)
            except InputError as exc:
                out.append(Verification(spec.id, False, "; ".join(
                    [str(exc), *_sealed_problems(checks)])))
                continue
            problems = split_overlap(data)
            for holdout in spec.holdouts:
                try:
                    held = self.load_holdout(spec.id, holdout)
                except InputError as exc:
                    problems.append(str(exc))
                    continue
                problems += holdout_overlap(data, held.test, holdout.version)
            problems += _sealed_problems(checks)
            if problems:
                out.append(Verification(spec.id, False, "; ".join(problems)))
                continue
            extra = f", {len(spec.holdouts)} holdout(s) verified" if spec.holdouts else ""
            if checks:
                extra += _sealed_note(checks)
            if spec.control is not None:
                extra += (f", control set of {len(self._controls[spec.id])} prompts "
                          f"verified (sha256 {spec.control.sha256[:16]}...)")
            out.append(Verification(spec.id, True, f"{len(data.test)} test items, test_sha256 "
                                    f"{spec.test_sha256[:16]}...{extra}"))
        for task, checks in sorted(by_task.items()):  # listed tasks no tasks file registers
            out.append(Verification(LISTING_FILE if task == "-" else task, False,
                                    "; ".join(_sealed_problems(checks))))
        return out


#: how a sealed generation that passed was checked (``HoldoutCheck.level``)
_CHECKED = {"form": "form only: authenticity needs the key", "authentic": "opened with the key",
            "revealed": "revealed, matches its commitment"}


def _sealed_problems(checks: Sequence[SealedCheck]) -> list[str]:
    return [(f"sealed holdout generation {c.generation}: " if c.generation is not None
             else "") + c.message for c in checks if not c.ok]


def _sealed_note(checks: Sequence[SealedCheck]) -> str:
    """``, N sealed generation(s) verified (how)`` for a task's passing checks."""
    found = {c.level for c in checks}
    how = [text for level, text in _CHECKED.items() if level in found]
    return f", {len(checks)} sealed holdout generation(s) verified ({'; '.join(how)})"


def spec_hashes(spec: TaskSpec, root: Path) -> tuple[dict[str, str], str]:
    """(files_sha256, test_sha256) of ``spec``'s files under ``root`` as they are now;
    its registered hashes are not read (what a new task registers)."""
    data = get_format(spec.format).load(spec, root)
    if not data.test:
        raise InputError(f"task {spec.id}: the test split is empty")
    hashes = {rel: sha256_file(data_file(root, rel), memo=False)
              for rel in sorted(set(spec.files.values()))}
    return hashes, canonical_test_sha256(data.test)


def read_control(spec: TaskSpec, root: Path) -> list[Prompt]:
    """The prompts of ``spec``'s control set (its file under ``root``) as its format reads
    them, unverified; each must have an id, unique in the set."""
    if spec.control is None:
        raise InputError(f"task {spec.id} declares no control set")
    path = data_file(root, spec.control.file)
    if not path.is_file():
        raise InputError(f"{path}: no such file (task {spec.id}, control.file)")
    prompts = get_format(spec.format).read_control(spec, path)
    if not prompts:
        raise InputError(f"{path}: the control set of task {spec.id} holds no prompt")
    seen: set[str] = set()
    for p in prompts:
        if p.id is None or p.id in seen:
            raise InputError(f"{path}: every control prompt needs an id of its own; found "
                             f"{'none' if p.id is None else repr(p.id) + ' twice'} (task "
                             f"{spec.id}, control.file)")
        seen.add(p.id)
    return prompts


def control_sha256(prompts: Iterable[Prompt]) -> str:
    """The SHA-256 of a control set: its prompts, each as a one-prompt item of the
    prompt's id and slices, hashed as ``test_sha256`` hashes a test set
    (``probebench.tasks.hygiene``: records sorted by id, canonical JSON, joined by
    newlines)."""
    return canonical_test_sha256(Item(id=p.id or "", prompts=(p,), slices=p.slices)
                                 for p in prompts)


def effective_license(spec: TaskSpec) -> str:
    """The license of everything a task reads: its own, and, where its control set
    declares another, both joined by AND (``licenses.all_of``: the most restrictive
    binds)."""
    if spec.control is None or spec.control.license is None:
        return spec.license
    return all_of(spec.license, spec.control.license)


def split_overlap(data: TaskData) -> list[str]:
    """Why a task's splits are not disjoint (empty when they are): no prompt text may
    occur in two of train, val and test."""
    texts = {split: {p.text for i in items for p in i.prompts}
             for split, items in sorted(data.splits.items())}
    problems = []
    names = list(texts)
    for n, first in enumerate(names):
        for second in names[n + 1:]:
            shared = sorted(texts[first] & texts[second])
            if shared:
                problems.append(f"the {first} and {second} splits share {len(shared)} "
                                f"prompt text(s) (e.g. {shared[0][:60]!r})")
    return problems


def holdout_overlap(data: TaskData, holdout: list[Item], version: int) -> list[str]:
    """Why a holdout is not disjoint from the task's splits (empty when it is): no item
    id and no prompt text may occur in the test, train or validation split."""
    problems = []
    for split, items in sorted(data.splits.items()):
        ids = {i.id for i in items}
        texts = {p.text for i in items for p in i.prompts}
        same_id = sorted(i.id for i in holdout if i.id in ids)
        same_text = sorted(i.id for i in holdout if any(p.text in texts for p in i.prompts))
        if same_id or same_text:
            shown = ", ".join((same_id or same_text)[:3])
            problems.append(f"holdout v{version} shares {len(same_id)} item id(s) and "
                            f"{len(same_text)} item(s) with prompt texts of the {split} "
                            f"split (e.g. {shown})")
    return problems


__all__ = ["ControlDriftError", "ReevalSet", "TaskCatalog", "TaskDriftError", "Verification",
           "control_sha256", "effective_license", "include_hint", "packaged_tasks_file",
           "read_control", "spec_hashes", "split_overlap"]
