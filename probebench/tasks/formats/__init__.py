"""Task formats, dispatched by the ``format`` field of ``tasks.yaml``."""

from probebench.tasks.formats.base import TaskData, TaskFormat
from probebench.tasks.formats.blimp import BlimpFormat
from probebench.tasks.formats.senteval import SentEvalFormat
from probebench.tasks.formats.syntaxgym import SyntaxGymFormat
from probebench.tasks.formats.verbs import VerbsFormat

FORMATS: dict[str, TaskFormat] = {f.name: f for f in (BlimpFormat(), SyntaxGymFormat(),
                                                        SentEvalFormat(), VerbsFormat())}

__all__ = ["FORMATS", "TaskData", "TaskFormat"]
