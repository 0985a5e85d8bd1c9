"""SyntaxGym test suites (Hu et al., ACL 2020): the format, its prediction formulas, and
fresh items of three suites."""

from probebench.tasks.families.syntaxgym.format import SyntaxGymFormat

__all__ = ["SyntaxGymFormat"]
