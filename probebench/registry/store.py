"""Results store: ``registry/results/<org>/<entry>/<task>.json``, keeping history.

Each file holds ``{"entry", "task", "history": [...]}``; a re-evaluation appends a
record when its deterministic result differs from the latest one and leaves the file
untouched when it is the same: nothing is ever overwritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from probebench.errors import InputError
from probebench.evaluation.schema import Submission, TaskResult
from probebench.hashing import atomic_write_bytes


def result_path(root: Path, entry_id: str, task_id: str) -> Path:
    return root / "results" / entry_id / f"{task_id}.json"


def read_history(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from None
    history = data.get("history") if isinstance(data, dict) else None
    if not isinstance(history, list):
        raise InputError(f"{path}: expected an object with a 'history' list")
    return history


def record_of(submission: Submission, task: TaskResult) -> dict[str, Any]:
    return {
        "result": task.model_dump(mode="json"),
        "probe": submission.probe.model_dump(mode="json"),
        "model": submission.model,
        "seed": submission.seed,
        "bootstrap_resamples": submission.bootstrap_resamples,
        "versions": submission.versions,
        "device": submission.device,
        "latency_ms": (submission.timing.latency_ms.get(task.id)
                       if submission.timing else None),
    }


def _deterministic(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "latency_ms"}


def store_submission(root: Path, entry_id: str, submission: Submission) -> list[Path]:
    """Append each task's result to its history; returns the files that changed."""
    changed = []
    for task in submission.tasks:
        path = result_path(root, entry_id, task.id)
        history = read_history(path)
        record = record_of(submission, task)
        if history and _deterministic(history[-1]) == _deterministic(record):
            continue
        history.append(record)
        doc = {"entry": entry_id, "task": task.id, "history": history}
        atomic_write_bytes(path, (json.dumps(doc, indent=1, sort_keys=True,
                                             allow_nan=False) + "\n").encode("utf-8"))
        changed.append(path)
    return changed


def latest_results(root: Path, entry_id: str) -> dict[str, dict[str, Any]]:
    """task id -> latest record, for every stored task of an entry."""
    folder = root / "results" / entry_id
    out = {}
    for path in sorted(folder.glob("*.json")):
        history = read_history(path)
        if history:
            out[path.stem] = history[-1]
    return out
