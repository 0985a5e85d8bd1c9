"""Task formats, dispatched by the ``format`` field of ``tasks.yaml``.

Each format is one class (``TaskFormat``) that owns reading, item scoring, its
accuracy's name and definition, charted slices and holdout rules. The built-in formats
are registered here; ``register_format`` adds another (from a plugin or a test).
"""

from probebench.tasks.formats.base import (
    LMScoring,
    SliceChart,
    TaskData,
    TaskFormat,
    format_names,
    get_format,
    group_by_slice,
    register_format,
    unregister_format,
)
from probebench.tasks.formats.blimp import BlimpFormat
from probebench.tasks.formats.senteval import SentEvalFormat
from probebench.tasks.formats.syntaxgym import SyntaxGymFormat
from probebench.tasks.formats.verbs import VerbsFormat

register_format(VerbsFormat())
register_format(BlimpFormat())
register_format(SyntaxGymFormat())
register_format(SentEvalFormat())

__all__ = ["BlimpFormat", "LMScoring", "SentEvalFormat", "SliceChart", "SyntaxGymFormat",
           "TaskData", "TaskFormat", "VerbsFormat", "format_names", "get_format",
           "group_by_slice", "register_format", "unregister_format"]
