"""Results store: ``registry/results/<org>/<entry>/<task>.json``, keeping history.

Every record carries its provenance: the model identity (with its dtype), the device,
the library versions and a ``run`` block (UTC time, probebench commit, hardware).

Each file is a ``ResultHistory``; a re-evaluation appends a ``ResultRecord`` when its
deterministic part differs from the latest record of the same precision beyond the
reproducibility contract (``probebench.evaluation.reproducibility.differences``; the
device is provenance, not part of the comparison) and leaves the file untouched when it
agrees: no number is ever overwritten, and float noise from another machine, device or
batch budget never makes a new record. Under the precision policy
(``probebench.evaluation.precision``) a bfloat16/float16 result within the measured
tolerance of the float32 record is not stored either, and readers (the leaderboard,
re-evaluation) take the latest float32 record whenever there is one. (A record stored
before provenance was kept gains the ``run`` block, with that run's latency, of the
first re-run that reproduces its deterministic part exactly.) A latency measured while
the machine was loaded is never stored (``probebench.evaluation.latency``): the record
keeps None with a note, or the latency of the record it follows when that was measured
on the same hardware (``keep_latency``), and it never takes part in the comparison.
Records are read back through the same pydantic models they are written with
(``TaskResult`` inside), so a renamed field fails at the boundary with the file's name,
not deep inside the leaderboard.

An entry's **generalisation record** (the probe on the sibling tasks of its tasks'
family: ``Submission.generalisation``, ``probebench.evaluation.generalisation``) is kept
apart from its results, in ``registry/results/<org>/<entry>/_generalisation.json`` (a
name no task id can take: ids begin with a letter or digit, so ``latest_results`` never
reads it as a task). It is a ``GeneralisationHistory`` under the same rules: each record
carries the probe's bundle hash, every sibling's ``test_sha256``, the model identity, the
seed and the run's provenance; a re-evaluation appends a record only when its
deterministic part differs beyond the reproducibility contract from the latest record of
the same precision; a limited submission and uncommitted code are refused as for
results; a reduced-precision record is kept only while no float32 one exists, and
readers take the latest float32 record. Nothing that ranks or scores reads it.

An entry's **causal record** (the causal test of the probe's direction on each of its
tasks: ``Submission.causal``, ``probebench.causal``, ``submit --causal``) is kept the same
way, in ``registry/results/<org>/<entry>/_causal.json``: a ``CausalHistory`` under the
generalisation record's rules (provenance in each record: the bundle hash, each task's
``test_sha256``, the model identity, the seed and the run; a record appended only when
its deterministic part differs beyond the reproducibility contract; limited submissions
and uncommitted code refused, while one that skipped other stages, such as ``--quick``,
may store it, since the block does not depend on them; float32 preferred). The
leaderboard shows it as the "moves the model" column; nothing that ranks or scores
reads it.

A record names the probebench commit that measured it; a commit with ``+dirty`` was
measured by a working tree with uncommitted changes, whose code no one can check out.
Such a record is refused unless the caller says ``allow_dirty`` (``registry evaluate
--allow-dirty``, for local evaluations and tests); the leaderboard marks the records so
stored (``ResultRecord.from_dirty_tree``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.errors import InputError, field_problem
from probebench.evaluation.precision import REFERENCE_DTYPE, TOLERANCE, beyond_tolerance
from probebench.evaluation.reproducibility import CAUSAL_TOLERANCE, differences
from probebench.evaluation.results import (
    CausalOut,
    GeneralisationOut,
    HoldoutOut,
    ProbeInfo,
    RunInfo,
    Submission,
    TaskResult,
)
from probebench.hashing import atomic_write_bytes


class ResultRecord(BaseModel):
    """One evaluation of an entry on one task."""

    model_config = ConfigDict(extra="forbid")

    result: TaskResult
    probe: ProbeInfo
    model: dict[str, Any] = Field(description="The model identity the result was made on.")
    seed: int
    bootstrap_resamples: int
    versions: dict[str, str]
    device: str
    latency_ms: float | None = Field(default=None, description="Machine-dependent; not part "
                                     "of the comparison that decides a new record. None "
                                     "when it was withheld (latency_note says why).")
    latency_note: str | None = Field(
        default=None, description="Why this run's latency is not stored: it was measured "
        "while the machine was loaded (probebench.evaluation.latency); and, when "
        "latency_ms holds a value, which earlier record on the same hardware it was carried "
        "from. None when latency_ms is this run's own measurement.")
    run: RunInfo | None = Field(default=None, description="Provenance (when, which code, "
                                "which hardware); None on records stored before v0.3.")
    holdout: HoldoutOut | None = Field(
        default=None, description="The probe on the task's current sealed holdout "
        "generation, measured by a run that held the key; None for a task without one and "
        "on records stored before. Kept apart from the compared part, as timing is.")

    @classmethod
    def of(cls, submission: Submission, task: TaskResult,
           holdout: HoldoutOut | None = None) -> ResultRecord:
        return cls(result=task, probe=submission.probe, model=submission.model,
                   seed=submission.seed, bootstrap_resamples=submission.bootstrap_resamples,
                   versions=submission.versions, device=submission.device,
                   latency_ms=(submission.timing.latency_ms.get(task.id)
                               if submission.timing else None),
                   latency_note=(submission.timing.latency_withheld.get(task.id)
                                 if submission.timing else None),
                   run=submission.run, holdout=holdout)

    def deterministic(self) -> dict[str, Any]:
        """The fields a re-run on the same inputs reproduces (timing, provenance, the
        device and the holdout part left out)."""
        return self.model_dump(mode="json", exclude={"latency_ms", "latency_note", "run",
                                                     "device", "holdout"})

    def holdout_part(self) -> dict[str, Any] | None:
        return None if self.holdout is None else self.holdout.model_dump(mode="json")

    @property
    def dtype(self) -> str:
        return str(self.model.get("dtype", "unknown"))

    @property
    def from_dirty_tree(self) -> bool:
        """Whether the evaluating checkout had uncommitted changes (``+dirty`` commit)."""
        return self.run is not None and is_dirty(self.run.probebench_commit)


class ResultHistory(BaseModel):
    """Every evaluation of one entry on one task, oldest first."""

    model_config = ConfigDict(extra="forbid")

    entry: str
    task: str
    history: list[ResultRecord]

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True,
                          allow_nan=False) + "\n"


#: how ``provenance.probebench_commit`` marks a working tree with uncommitted changes
DIRTY_SUFFIX = "+dirty"


def is_dirty(commit: str | None) -> bool:
    return commit is not None and commit.endswith(DIRTY_SUFFIX)


def refuse_dirty(entry_id: str, commit: str | None, *, allow_dirty: bool = False) -> None:
    """Refuse to record results measured by uncommitted code, unless ``allow_dirty``."""
    if is_dirty(commit) and not allow_dirty:
        raise InputError(
            f"{entry_id}: probebench runs from a working tree with uncommitted changes "
            f"(commit {commit}), so no one could check out the code that measured these "
            "results; commit the changes first and evaluate again. For a local "
            "evaluation, --allow-dirty (allow_dirty=True) stores them anyway, and the "
            "leaderboard marks them as measured by uncommitted code")


def result_path(root: Path, entry_id: str, task_id: str) -> Path:
    return root / "results" / entry_id / f"{task_id}.json"


def read_history(path: Path) -> list[ResultRecord]:
    """The stored records of one results file (empty when there is none)."""
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    try:
        return ResultHistory.model_validate(data).history
    except ValidationError as exc:
        raise InputError(f"{path}: {field_problem(exc)} (not a results file of this "
                         "probebench version)") from None


def latest_of(history: list[ResultRecord], dtype: str | None = None) -> ResultRecord | None:
    """The latest record in ``dtype`` (any dtype when None)."""
    for record in reversed(history):
        if dtype is None or record.dtype == dtype:
            return record
    return None


def reference_record(history: list[ResultRecord]) -> ResultRecord | None:
    """The record readers use: the latest float32 one, else the latest of any dtype."""
    return latest_of(history, REFERENCE_DTYPE) or latest_of(history)


def precision_problems(root: Path, entry_id: str, submission: Submission) -> list[str]:
    """Where a reduced-precision submission disagrees with the entry's stored float32
    results beyond the precision policy's tolerance (empty for float32 submissions)."""
    dtype = str(submission.model.get("dtype", "unknown"))
    if dtype == REFERENCE_DTYPE:
        return []
    problems = []
    for task in submission.tasks:
        reference = latest_of(read_history(result_path(root, entry_id, task.id)),
                              REFERENCE_DTYPE)
        if reference is None:
            continue
        for name, gap in sorted(beyond_tolerance(reference.result, task).items()):
            problems.append(f"{task.id}: {name} in {dtype} is {gap:.4f} from the float32 "
                            f"result (tolerance {TOLERANCE[name]})")
    return problems


def store_submission(root: Path, entry_id: str, submission: Submission, *,
                     allow_dirty: bool = False,
                     holdouts: Mapping[str, HoldoutOut] | None = None,
                     sealed_unscored: Collection[str] = ()) -> list[Path]:
    """Append each task's result to its history; returns the files that changed. A
    limited submission (``submit --limit``) is refused: it scores part of a test set; so
    is one measured by uncommitted code (a ``+dirty`` commit) unless ``allow_dirty``.

    ``holdouts`` (task -> the probe on its current sealed holdout) is stored with each
    record, apart from the compared part: a record that agrees with the latest one
    within the contract but brings a holdout part the latest lacks (or another
    generation's) is appended, so a keyed run completes a keyless one. Tasks in
    ``sealed_unscored`` have a sealed holdout that this run could not read (no key):
    nothing is stored for them, so a keyless run never replaces or outranks a keyed one."""
    problem = submission.registry_problem()
    if problem is not None:
        raise InputError(f"{entry_id}: this submission is {problem}; the registry stores "
                         "only results of every stage on whole test sets (run it again "
                         "without --limit, --quick, --skip or --stages)")
    multiclass = [t.id for t in submission.tasks if t.classes is not None]
    if multiclass:
        raise InputError(f"{', '.join(multiclass)}: multi-class results are reported by "
                         "`probebench submit` but not stored in the registry: ProbeScore's "
                         "axes (FPR at 99% TPR, the eval-awareness correction, "
                         "selectivity) are defined for binary probes")
    refuse_dirty(entry_id, submission.run.probebench_commit if submission.run else None,
                 allow_dirty=allow_dirty)
    changed = []
    holdouts = holdouts or {}
    for task in submission.tasks:
        if task.id in sealed_unscored:
            continue
        path = result_path(root, entry_id, task.id)
        history = read_history(path)
        record = ResultRecord.of(submission, task, holdouts.get(task.id))
        if record.dtype != REFERENCE_DTYPE:
            reference = latest_of(history, REFERENCE_DTYPE)
            if reference is not None and not beyond_tolerance(reference.result, task):
                continue  # accepted: the float32 record stands for it
        same = latest_of(history, record.dtype)
        if (same is not None and not _holdout_news(same, record)
                and not differences(same.deterministic(), record.deterministic())):
            if same.run is not None or record.run is None or same is not history[-1]:
                continue
            if record.latency_ms is None:
                continue  # a withheld latency replaces none: a later run brings both
            # stored before provenance was kept: the first run that reproduces it exactly
            # is when and where these numbers were (again) measured; its timing and its
            # provenance are kept together
            record = history.pop().model_copy(update={"run": record.run,
                                                      "latency_ms": record.latency_ms,
                                                      "latency_note": None})
        else:
            record = keep_latency(record, same)
        doc = ResultHistory(entry=entry_id, task=task.id, history=[*history, record])
        atomic_write_bytes(path, doc.to_json().encode("utf-8"))
        changed.append(path)
    return changed


def keep_latency(record: ResultRecord, stored: ResultRecord | None) -> ResultRecord:
    """``record``, or, when its latency was withheld (measured on a loaded machine) and
    ``stored`` (the latest record it follows) holds one measured on the same hardware
    and device, ``record`` with that latency and a note naming where it came from: a
    loaded run never replaces the latency readers see."""
    withheld = record.latency_note
    if record.latency_ms is not None or withheld is None or stored is None \
            or stored.latency_ms is None:
        return record
    if record.run is None or stored.run is None or record.device != stored.device \
            or record.run.hardware != stored.run.hardware:
        return record
    return record.model_copy(update={
        "latency_ms": stored.latency_ms,
        "latency_note": f"{withheld}; carried from the record evaluated at "
                        f"{stored.run.evaluated_at} on the same hardware"})


def _holdout_news(stored: ResultRecord, new: ResultRecord) -> bool:
    """Whether ``new`` brings a holdout part that ``stored`` lacks: one where it has
    none, another generation, or numbers beyond the reproducibility contract. A record
    without one (a keyless run) never counts as news."""
    if new.holdout is None:
        return False
    if stored.holdout is None:
        return True
    old, fresh = stored.holdout_part(), new.holdout_part()
    assert old is not None and fresh is not None
    return bool(differences(old, fresh))


def latest_results(root: Path, entry_id: str) -> dict[str, ResultRecord]:
    """task id -> the record to read (latest float32, else latest), per stored task."""
    folder = root / "results" / entry_id
    out = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("_"):  # the entry's other records (no task id starts so)
            continue
        record = reference_record(read_history(path))
        if record is not None:
            out[path.stem] = record
    return out


# --- the generalisation record ----------------------------------------------------------

#: the file of an entry's generalisation records, beside its results
GENERALISATION_FILE = "_generalisation.json"


class _SideRecord(BaseModel):
    """What every side record (generalisation, causal test) holds beside its block: the
    probe, the model and the run it was made with."""

    model_config = ConfigDict(extra="forbid")

    probe: ProbeInfo
    model: dict[str, Any] = Field(description="The model identity it was made on.")
    seed: int
    bootstrap_resamples: int
    versions: dict[str, str]
    device: str
    seconds: float | None = Field(default=None, description="Wall seconds of the record's "
                                  "stage (timing.stages.<stage>); machine-dependent, not "
                                  "part of the comparison.")
    run: RunInfo | None = Field(default=None, description="Provenance: when, which code, "
                                "which hardware.")

    @staticmethod
    def _common(submission: Submission, stage: str) -> dict[str, Any]:
        """The shared fields from a submission, ``seconds`` from its ``stage``'s timing."""
        timed = submission.timing.stages.get(stage) if submission.timing else None
        return {"probe": submission.probe, "model": submission.model,
                "seed": submission.seed,
                "bootstrap_resamples": submission.bootstrap_resamples,
                "versions": submission.versions, "device": submission.device,
                "seconds": None if timed is None else timed.seconds, "run": submission.run}

    def deterministic(self) -> dict[str, Any]:
        """What a re-run on the same inputs reproduces (timing, provenance and the device
        left out)."""
        return self.model_dump(mode="json", exclude={"seconds", "run", "device"})

    @property
    def dtype(self) -> str:
        return str(self.model.get("dtype", "unknown"))


class _SideHistory(BaseModel):
    """The ``to_json`` of a side record's history file."""

    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True,
                          allow_nan=False) + "\n"


class GeneralisationRecord(_SideRecord):
    """One evaluation of an entry on the sibling tasks of its tasks' family."""

    generalisation: GeneralisationOut

    @classmethod
    def of(cls, submission: Submission) -> GeneralisationRecord:
        assert submission.generalisation is not None
        # the stage ``probebench.evaluation.generalisation.GENERALISATION`` (not imported:
        # the store stays light for the readers that only list records)
        return cls(generalisation=submission.generalisation,
                   **cls._common(submission, "generalisation"))


class GeneralisationHistory(_SideHistory):
    """Every generalisation record of one entry, oldest first."""

    entry: str
    history: list[GeneralisationRecord]


_History = TypeVar("_History", bound=BaseModel)
_Record = TypeVar("_Record", "GeneralisationRecord", "CausalRecord")


def _read_side_history(path: Path, kind: type[_History], what: str) -> _History:
    """A side record's history file (generalisation, causal test) read through its model;
    an empty history when the file does not exist (one ``stat``)."""
    if not path.is_file():
        return kind.model_validate({"entry": "", "history": []})
    try:
        data = json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: {field_problem(exc)} (not a {what} file of this "
                         "probebench version)") from None


def _reader_record(history: list[_Record]) -> _Record | None:
    """The record readers use: the latest float32 one, else the latest (None: none)."""
    for dtype in (REFERENCE_DTYPE, None):
        for record in reversed(history):
            if dtype is None or record.dtype == dtype:
                return record
    return None


def generalisation_path(root: Path, entry_id: str) -> Path:
    return root / "results" / entry_id / GENERALISATION_FILE


def read_generalisation(path: Path) -> list[GeneralisationRecord]:
    """The stored generalisation records of one entry (empty when there is none)."""
    return _read_side_history(path, GeneralisationHistory, "generalisation").history


def latest_generalisation(root: Path, entry_id: str) -> GeneralisationRecord | None:
    """The record readers use: the latest float32 one, else the latest (None: none)."""
    return _reader_record(read_generalisation(generalisation_path(root, entry_id)))


def store_generalisation(root: Path, entry_id: str, submission: Submission, *,
                         allow_dirty: bool = False) -> list[Path]:
    """Append ``submission``'s generalisation block to the entry's records (the module
    docstring's rules); returns the file when it changed. Nothing is stored for a
    submission without one; a limited one and uncommitted code are refused."""
    if submission.generalisation is None:
        return []
    problem = submission.registry_problem()
    if problem is not None:
        raise InputError(f"{entry_id}: this submission is {problem}; the registry stores "
                         "only evaluations of every stage on whole test sets (run it again "
                         "without --limit, --quick, --skip or --stages)")
    refuse_dirty(entry_id, submission.run.probebench_commit if submission.run else None,
                 allow_dirty=allow_dirty)
    path = generalisation_path(root, entry_id)
    history = read_generalisation(path)
    record = GeneralisationRecord.of(submission)
    if record.dtype != REFERENCE_DTYPE and any(r.dtype == REFERENCE_DTYPE for r in history):
        return []  # the float32 record stands for it
    same = next((r for r in reversed(history) if r.dtype == record.dtype), None)
    if same is not None and not differences(same.deterministic(), record.deterministic()):
        return []
    doc = GeneralisationHistory(entry=entry_id, history=[*history, record])
    atomic_write_bytes(path, doc.to_json().encode("utf-8"))
    return [path]


# --- the causal record ------------------------------------------------------------------

#: the file of an entry's causal-test records, beside its results
CAUSAL_FILE = "_causal.json"


class CausalRecord(_SideRecord):
    """One causal test of an entry's probe direction on its tasks (``submit --causal``)."""

    causal: dict[str, CausalOut] = Field(description="Task -> the causal test on it.")
    test_sha256: dict[str, str] = Field(description="Task -> the registered canonical "
                                        "test-set hash of the evaluation it came with.")

    @classmethod
    def of(cls, submission: Submission) -> CausalRecord:
        assert submission.causal is not None
        shas = {t.id: t.test_sha256 for t in submission.tasks if t.id in submission.causal}
        return cls(causal=submission.causal, test_sha256=shas,
                   **cls._common(submission, "causal"))


class CausalHistory(_SideHistory):
    """Every causal record of one entry, oldest first."""

    entry: str
    history: list[CausalRecord]


def causal_path(root: Path, entry_id: str) -> Path:
    return root / "results" / entry_id / CAUSAL_FILE


def read_causal(path: Path) -> list[CausalRecord]:
    """The stored causal records of one entry (empty when there is none: one ``stat``)."""
    return _read_side_history(path, CausalHistory, "causal-test").history


def latest_causal_record(root: Path, entry_id: str) -> CausalRecord | None:
    """The record readers use: the latest float32 one, else the latest (None: none)."""
    return _reader_record(read_causal(causal_path(root, entry_id)))


def latest_causal(root: Path, entry_id: str) -> dict[str, CausalOut]:
    """Task -> the causal test of the record readers use (empty: none stored)."""
    record = latest_causal_record(root, entry_id)
    return {} if record is None else dict(record.causal)


def store_causal(root: Path, entry_id: str, submission: Submission, *,
                 allow_dirty: bool = False) -> list[Path]:
    """Append ``submission``'s causal block to the entry's records (the module
    docstring's rules); returns the file when it changed. Nothing is stored for a
    submission without one; a limited one and uncommitted code are refused (one that
    skipped other stages is not: the block does not depend on them)."""
    if submission.causal is None:
        return []
    # the block depends on the artifact, the task's test set, the model, the seed and the
    # test's own method, not on the other stages: a submission that skipped some (--quick)
    # may store it, a limited one (fewer items) may not
    if submission.limit is not None:
        raise InputError(f"{entry_id}: this submission is {submission.limit.note}; the "
                         "registry stores only causal tests on whole test sets (run it "
                         "again without --limit)")
    refuse_dirty(entry_id, submission.run.probebench_commit if submission.run else None,
                 allow_dirty=allow_dirty)
    path = causal_path(root, entry_id)
    history = read_causal(path)
    record = CausalRecord.of(submission)
    if record.dtype != REFERENCE_DTYPE and any(r.dtype == REFERENCE_DTYPE for r in history):
        return []  # the float32 record stands for it
    same = next((r for r in reversed(history) if r.dtype == record.dtype), None)
    if same is not None and not differences(same.deterministic(), record.deterministic(),
                                            tolerance=CAUSAL_TOLERANCE):
        return []
    doc = CausalHistory(entry=entry_id, history=[*history, record])
    atomic_write_bytes(path, doc.to_json().encode("utf-8"))
    return [path]


__all__ = ["CAUSAL_FILE", "DIRTY_SUFFIX", "GENERALISATION_FILE", "CausalHistory",
           "CausalRecord", "GeneralisationHistory", "GeneralisationRecord", "ResultHistory",
           "ResultRecord", "causal_path", "generalisation_path", "is_dirty", "keep_latency",
           "latest_causal", "latest_causal_record", "latest_generalisation", "latest_of",
           "latest_results", "precision_problems", "read_causal", "read_generalisation",
           "read_history", "reference_record", "refuse_dirty", "result_path",
           "store_causal", "store_generalisation", "store_submission"]
