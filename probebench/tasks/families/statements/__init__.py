"""Single labelled statements (truth, honesty and refusal probes): the format."""

from probebench.tasks.families.statements.format import StatementsFormat

__all__ = ["StatementsFormat"]
