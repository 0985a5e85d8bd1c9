"""Tasks: registered, hash-pinned evaluation sets and the formats they are read from."""

from probebench.tasks.anatomy import Item
from probebench.tasks.spec import TaskSpec, read_tasks_file

__all__ = ["Item", "TaskSpec", "read_tasks_file"]
