"""Copies of the packaged task catalog, to edit freely in a test."""

from __future__ import annotations

import shutil
from pathlib import Path

from probebench.tasks.catalog import TaskCatalog, packaged_tasks_file

PACKAGED_TASKS = packaged_tasks_file()
PACKAGED_ROOT = PACKAGED_TASKS.parent


def copy_catalog(dest: Path) -> TaskCatalog:
    """``dest/tasks.yaml`` and ``dest/data/``: a copy of the packaged catalog (with its
    sealed holdouts' files, ``holdouts/``, when it has any; tasks.yaml lists them)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(PACKAGED_TASKS, dest / "tasks.yaml")
    shutil.copytree(PACKAGED_ROOT / "data", dest / "data", dirs_exist_ok=True)
    if (PACKAGED_ROOT / "holdouts").is_dir():
        shutil.copytree(PACKAGED_ROOT / "holdouts", dest / "holdouts", dirs_exist_ok=True)
    return TaskCatalog.from_file(dest / "tasks.yaml")
