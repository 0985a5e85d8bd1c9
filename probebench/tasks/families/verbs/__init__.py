"""The bilingual verb-grammar set: the format, and fresh generated test lines."""

from probebench.tasks.families.verbs.format import VerbsFormat

__all__ = ["VerbsFormat"]
