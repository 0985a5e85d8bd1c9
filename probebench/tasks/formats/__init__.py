"""Task formats, dispatched by the ``format`` field of ``tasks.yaml``."""

from probebench.tasks.formats.base import TaskData, TaskFormat
from probebench.tasks.formats.blimp import BlimpFormat
from probebench.tasks.formats.senteval import SentEvalFormat
from probebench.tasks.formats.syntaxgym import SyntaxGymFormat

FORMATS: dict[str, TaskFormat] = {f.name: f for f in (BlimpFormat(), SyntaxGymFormat(),
                                                        SentEvalFormat())}

__all__ = ["FORMATS", "TaskData", "TaskFormat"]
