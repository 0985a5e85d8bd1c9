"""The registered test-set hashes of ``tasks.yaml`` (read without loading any task).

``tasks.yaml`` lists tasks under ``tasks:``; each has an ``id`` and the ``test_sha256``
of its canonical test set. Artifact validation only needs the hash -> task mapping.
"""

from __future__ import annotations

import os
from pathlib import Path

from probebench.errors import InputError
from probebench.yamlsafe import load_yaml

TASKS_ENV = "PROBEBENCH_TASKS"


def default_tasks_file() -> Path:
    """``$PROBEBENCH_TASKS``, else ``./tasks.yaml``, else the one beside the package."""
    env = os.environ.get(TASKS_ENV)
    if env:
        return Path(env)
    here = Path("tasks.yaml")
    if here.is_file():
        return here
    return Path(__file__).resolve().parents[1] / "tasks.yaml"


def registered_test_hashes(path: Path) -> dict[str, str]:
    """Map each registered test-set SHA-256 to its task id."""
    data = load_yaml(path)
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, list):
        raise InputError(f"{path}: expected a top-level 'tasks:' list")
    out: dict[str, str] = {}
    for index, task in enumerate(tasks):
        if not isinstance(task, dict) or not isinstance(task.get("id"), str):
            raise InputError(f"{path}: tasks[{index}] needs an 'id'")
        sha = task.get("test_sha256")
        if isinstance(sha, str):
            out[sha] = task["id"]
    return out
