"""Task families: one folder a family, dispatched by the ``format`` field of ``tasks.yaml``.

A family is the format of its tasks. Its folder (``families/<format>/``) holds the
format (``format.py``: one ``TaskFormat`` class that owns reading, item scoring, its
accuracy's name and definition, charted slices, holdout rules and its family's display
name), the generator of fresh holdout items of its tasks where it has one (``fresh.py``,
reached through ``TaskFormat.fresh_generators``) and what else only that family needs
(SyntaxGym's prediction formulas). ``base.py`` is the interface and the one registry of
formats; ``drawing.py`` what every generator draws with. The built-in formats are
registered here; ``register_format`` adds another (from a plugin or a test).
"""

from probebench.tasks.families.base import (
    FAMILY_NAMES,
    FreshGenerator,
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
from probebench.tasks.families.blimp import BlimpFormat
from probebench.tasks.families.senteval import SentEvalFormat
from probebench.tasks.families.statements import StatementsFormat
from probebench.tasks.families.syntaxgym import SyntaxGymFormat
from probebench.tasks.families.verbs import VerbsFormat

# the registration order is the order pages show the families in
register_format(VerbsFormat())
register_format(BlimpFormat())
register_format(SyntaxGymFormat())
register_format(SentEvalFormat())
register_format(StatementsFormat())

__all__ = ["FAMILY_NAMES", "BlimpFormat", "FreshGenerator", "LMScoring", "SentEvalFormat",
           "SliceChart", "StatementsFormat", "SyntaxGymFormat", "TaskData", "TaskFormat",
           "VerbsFormat", "format_names", "get_format", "group_by_slice", "register_format",
           "unregister_format"]
