"""Results store: ``registry/results/<org>/<entry>/<task>.json``, keeping history.

Every record carries its provenance: the model identity (with its dtype), the device,
the library versions and a ``run`` block (UTC time, probebench commit, hardware).

Each file is a ``ResultHistory``; a re-evaluation appends a ``ResultRecord`` when its
deterministic part differs from the latest one beyond the reproducibility contract
(``probebench.evaluation.reproducibility.differences``) and leaves the file untouched
when it agrees: no number is ever overwritten, and float noise from another machine or
batch budget never makes a new record. (A record stored before provenance was kept
gains the ``run`` block, with that run's latency, of the first re-run that reproduces
its deterministic part exactly.) Records are read back through the same
pydantic models they are written with (``TaskResult`` inside), so a renamed field fails
at the boundary with the file's name, not deep inside the leaderboard.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.errors import InputError, field_problem
from probebench.evaluation.reproducibility import differences
from probebench.evaluation.results import ProbeInfo, RunInfo, Submission, TaskResult
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
                                     "of the comparison that decides a new record.")
    run: RunInfo | None = Field(default=None, description="Provenance (when, which code, "
                                "which hardware); None on records stored before v0.3.")

    @classmethod
    def of(cls, submission: Submission, task: TaskResult) -> ResultRecord:
        return cls(result=task, probe=submission.probe, model=submission.model,
                   seed=submission.seed, bootstrap_resamples=submission.bootstrap_resamples,
                   versions=submission.versions, device=submission.device,
                   latency_ms=(submission.timing.latency_ms.get(task.id)
                               if submission.timing else None),
                   run=submission.run)

    def deterministic(self) -> dict[str, Any]:
        """The fields a re-run on the same inputs reproduces (timing and provenance left
        out)."""
        return self.model_dump(mode="json", exclude={"latency_ms", "run"})

    @property
    def dtype(self) -> str:
        return str(self.model.get("dtype", "unknown"))


class ResultHistory(BaseModel):
    """Every evaluation of one entry on one task, oldest first."""

    model_config = ConfigDict(extra="forbid")

    entry: str
    task: str
    history: list[ResultRecord]

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True,
                          allow_nan=False) + "\n"


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


def store_submission(root: Path, entry_id: str, submission: Submission) -> list[Path]:
    """Append each task's result to its history; returns the files that changed."""
    changed = []
    for task in submission.tasks:
        path = result_path(root, entry_id, task.id)
        history = read_history(path)
        record = ResultRecord.of(submission, task)
        if history and not differences(history[-1].deterministic(), record.deterministic()):
            if history[-1].run is not None or record.run is None:
                continue
            # stored before provenance was kept: the first run that reproduces it exactly
            # is when and where these numbers were (again) measured; its timing and its
            # provenance are kept together
            record = history.pop().model_copy(update={"run": record.run,
                                                      "latency_ms": record.latency_ms})
        doc = ResultHistory(entry=entry_id, task=task.id, history=[*history, record])
        atomic_write_bytes(path, doc.to_json().encode("utf-8"))
        changed.append(path)
    return changed


def latest_results(root: Path, entry_id: str) -> dict[str, ResultRecord]:
    """task id -> latest record, for every stored task of an entry."""
    folder = root / "results" / entry_id
    out = {}
    for path in sorted(folder.glob("*.json")):
        history = read_history(path)
        if history:
            out[path.stem] = history[-1]
    return out


__all__ = ["ResultHistory", "ResultRecord", "latest_results", "read_history", "result_path",
           "store_submission"]
