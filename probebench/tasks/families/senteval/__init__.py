"""SentEval probing tasks (Conneau et al., 2018): the format, and fresh ``eval_awareness``
prompts (a SentEval-format task)."""

from probebench.tasks.families.senteval.format import SentEvalFormat

__all__ = ["SentEvalFormat"]
