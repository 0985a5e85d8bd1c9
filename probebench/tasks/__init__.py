"""Tasks: registered, hash-pinned evaluation sets and the formats they are read from."""

from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog, TaskDriftError
from probebench.tasks.families import TaskData, TaskFormat, get_format, register_format
from probebench.tasks.spec import TaskSpec, read_tasks_file

__all__ = ["Item", "TaskCatalog", "TaskData", "TaskDriftError", "TaskFormat", "TaskSpec",
           "get_format", "read_tasks_file", "register_format"]
