"""Copies of the packaged task catalog, to edit freely in a test."""

from __future__ import annotations

import shutil
from pathlib import Path

from probebench.tasks.catalog import TaskCatalog, packaged_tasks_file
from probebench.tasks.holdout_listing import LISTING_FILE

PACKAGED_TASKS = packaged_tasks_file()
PACKAGED_ROOT = PACKAGED_TASKS.parent


def copy_catalog(dest: Path, *, keep_sealed: bool = False) -> TaskCatalog:
    """``dest/tasks.yaml`` and ``dest/data/``: a copy of the packaged catalog.

    The packaged sealed holdouts are sealed with the maintainers' key, which no test
    reads: by default the copy leaves them out (no ``holdouts.yaml``, no
    ``holdouts/``), so a test seals its own with a throwaway key. ``keep_sealed`` keeps
    them, for tests of what a keyless clone sees."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PACKAGED_ROOT / "data", dest / "data", dirs_exist_ok=True)
    shutil.copy(PACKAGED_TASKS, dest / "tasks.yaml")
    if keep_sealed:
        shutil.copy(PACKAGED_ROOT / LISTING_FILE, dest / LISTING_FILE)
        shutil.copytree(PACKAGED_ROOT / "holdouts", dest / "holdouts", dirs_exist_ok=True)
    return TaskCatalog.from_file(dest / "tasks.yaml")
