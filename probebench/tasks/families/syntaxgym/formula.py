"""SyntaxGym prediction formulas: parsing, evaluation and the labels they imply.

Grammar (whitespace ignored; ``[ ]`` and ``( )`` both group)::

    prediction := unit (('&' | '|') unit)*
    unit       := group-of-prediction | comparison
    comparison := sum ('<' | '>' | '=') sum
    sum        := term (('+' | '-') term)*
    term       := ref | number | group-of-sum
    ref        := '(' (INT | '*') ';' '%' NAME '%' ')'

``&`` and ``|`` share one precedence level and group from the left, as in
syntaxgym-core's grammar (``A | B & C`` is ``(A | B) & C``); ``+`` and ``-`` likewise.

``(7;%match%)`` is the surprisal of region 7 in condition ``match`` under the suite's
metric; ``(*;%match%)`` is the sum over all the condition's regions. ``=`` holds when
``numpy.isclose(left, right, rtol=1e-5, atol=1e-3)`` does (syntaxgym-core's tolerance;
note it is relative to the right side).

The legacy 2019 form (``relation``, ``region_number``, ``l_operand``, ``r_operand``) is
converted to a formula: ``greaterthan`` → ``>``, ``lessthan`` → ``<``, ``equal`` and
``equals`` → ``=``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from probebench.errors import InputError

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|(%[^%]+%)|(\*)|([()\[\];<>=&|+\-]))")
_CLOSE = {"(": ")", "[": "]"}


@dataclass(frozen=True)
class Ref:
    region: int | None  #: None for ``*`` (all regions)
    condition: str


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Sum:
    terms: tuple[tuple[int, Ref | Num | Sum], ...]  #: (+1 or -1, term)


@dataclass(frozen=True)
class Compare:
    left: Sum
    op: str
    right: Sum


@dataclass(frozen=True)
class Logic:
    op: str  #: "&" or "|"
    parts: tuple[Compare | Logic, ...]


Prediction = Compare | Logic


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.text = text
        self.tokens: list[str] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise self._error(f"unexpected character {text[pos:].strip()[0]!r}")
            self.tokens.append(next(g for g in m.groups() if g is not None))
            pos = m.end()
        self.i = 0

    def _error(self, message: str) -> InputError:
        return InputError(f"{self.source}: formula {self.text.strip()!r}: {message}")

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise self._error(f"expected {expected or 'more'}, found {tok or 'the end'}")
        self.i += 1
        return tok

    def parse(self) -> Prediction:
        result = self.prediction()
        if self.peek() is not None:
            raise self._error(f"unexpected {self.peek()!r}")
        return result

    def prediction(self) -> Prediction:
        result = self.unit()
        while self.peek() in ("&", "|"):
            op = self.take()
            result = _combine(op, result, self.unit())
        return result

    def unit(self) -> Prediction:
        # a bracket may open a grouped prediction or the first sum of a comparison
        if self.peek() in _CLOSE and not self._is_ref():
            start = self.i
            opener = self.take()
            try:
                inner = self.prediction()
                self.take(_CLOSE[opener])
                if self.peek() not in ("<", ">", "=", "+", "-"):
                    return inner
            except InputError:
                pass
            self.i = start
        return self.comparison()

    def comparison(self) -> Compare:
        left = self.sum()
        op = self.peek()
        if op not in ("<", ">", "="):
            raise self._error(f"expected <, > or =, found {op or 'the end'}")
        self.take()
        return Compare(left, op, self.sum())

    def sum(self) -> Sum:
        terms = [(1, self.term())]
        while self.peek() in ("+", "-"):
            sign = 1 if self.take() == "+" else -1
            terms.append((sign, self.term()))
        return Sum(tuple(terms))

    def _is_ref(self) -> bool:
        nxt = self.peek(1)
        return self.peek() == "(" and nxt is not None and (nxt == "*" or nxt.isdigit()) \
            and self.peek(2) == ";"

    def term(self) -> Ref | Num | Sum:
        tok = self.peek()
        if self._is_ref():
            self.take("(")
            region_tok = self.take()
            self.take(";")
            cond = self.take()
            if not (cond.startswith("%") and cond.endswith("%")):
                raise self._error(f"expected %condition%, found {cond!r}")
            self.take(")")
            return Ref(None if region_tok == "*" else int(region_tok), cond[1:-1])
        if tok is not None and tok[0].isdigit():
            self.take()
            return Num(float(tok))
        if tok in _CLOSE:
            self.take()
            inner = self.sum()
            self.take(_CLOSE[tok])
            return inner
        raise self._error(f"expected a region reference, a number or a bracket, found "
                          f"{tok or 'the end'}")


def _combine(op: str, left: Prediction, right: Prediction) -> Logic:
    # Left-associative with no precedence between & and |: the left operand is everything
    # parsed so far. A run of one operator stays one flat node; its truth value is the same.
    if isinstance(left, Logic) and left.op == op:
        return Logic(op, (*left.parts, right))
    return Logic(op, (left, right))


def parse_formula(text: str, source: str = "formula") -> Prediction:
    return _Parser(text, source).parse()


LEGACY_RELATIONS = {"greaterthan": ">", "lessthan": "<", "equal": "=", "equals": "="}


def legacy_to_formula(pred: Mapping[str, object], source: str) -> str:
    """Convert a 2019-format prediction to the formula it means."""
    relation = pred.get("relation")
    if relation not in LEGACY_RELATIONS:
        raise InputError(f"{source}: relation must be one of {', '.join(LEGACY_RELATIONS)}, "
                         f"found {relation!r}")
    region = pred.get("region_number")
    left, right = pred.get("l_operand"), pred.get("r_operand")
    if not isinstance(region, int) or not isinstance(left, str) or not isinstance(right, str):
        raise InputError(f"{source}: legacy predictions need integer region_number and "
                         "string l_operand and r_operand")
    op = LEGACY_RELATIONS[str(relation)]
    return f"({region};%{left}%) {op} ({region};%{right}%)"


Lookup = Callable[[Ref], float]

#: syntaxgym-core's tolerances for ``=`` (``EQUALITY_RTOL``, ``EQUALITY_ATOL``)
EQUALITY_RTOL = 1e-5
EQUALITY_ATOL = 1e-3


def evaluate_sum(expr: Sum | Ref | Num, value: Lookup) -> float:
    if isinstance(expr, Ref):
        return value(expr)
    if isinstance(expr, Num):
        return expr.value
    return sum(sign * evaluate_sum(term, value) for sign, term in expr.terms)


def evaluate(pred: Prediction, value: Lookup) -> bool:
    """Whether a prediction holds, given each region reference's value."""
    if isinstance(pred, Logic):
        results = [evaluate(p, value) for p in pred.parts]
        return all(results) if pred.op == "&" else any(results)
    left, right = evaluate_sum(pred.left, value), evaluate_sum(pred.right, value)
    if pred.op == "<":
        return left < right
    if pred.op == ">":
        return left > right
    # np.isclose itself, not a symmetric rewrite: its tolerance scales with |right| only
    return bool(np.isclose(left, right, rtol=EQUALITY_RTOL, atol=EQUALITY_ATOL))


def comparisons(pred: Prediction) -> list[Compare]:
    if isinstance(pred, Compare):
        return [pred]
    return [c for p in pred.parts for c in comparisons(p)]


def references(pred: Prediction | Sum | Ref | Num) -> list[Ref]:
    if isinstance(pred, Ref):
        return [pred]
    if isinstance(pred, Num):
        return []
    if isinstance(pred, Sum):
        return [r for _, t in pred.terms for r in references(t)]
    if isinstance(pred, Compare):
        return references(pred.left) + references(pred.right)
    return [r for p in pred.parts for r in references(p)]


def _signed_conditions(expr: Sum | Ref | Num, sign: int = 1) -> list[tuple[int, str]]:
    if isinstance(expr, Ref):
        return [(sign, expr.condition)]
    if isinstance(expr, Num):
        return []
    return [c for s, t in expr.terms for c in _signed_conditions(t, sign * s)]


def _surprising_side(comp: Compare) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(more surprising side, less surprising side) as signed conditions."""
    left, right = _signed_conditions(comp.left), _signed_conditions(comp.right)
    return (left, right) if comp.op == ">" else (right, left)


def _is_simple(comp: Compare) -> bool:
    if comp.op == "=":
        return False
    hi, lo = _surprising_side(comp)
    hi_conds, lo_conds = {c for _, c in hi}, {c for _, c in lo}
    return (len(hi_conds) == 1 and len(lo_conds) == 1 and hi_conds != lo_conds
            and all(s == 1 for s, _ in hi + lo))


def condition_labels(preds: list[Prediction], conditions: list[str]) -> dict[str, int | None]:
    """Labels for probes: 0 for the anomalous (more surprising) condition, 1 for the other.

    Simple comparisons (one condition per side, terms only added, e.g. ``(7;%match%) <
    (7;%mismatch%)`` or ``[(6;%a%)+(7;%a%)] < [(6;%b%)+(7;%b%)]``) decide. A suite with no
    simple comparison (e.g. a sum of differences ``> 0``) uses all its comparisons with
    the sign rule: a condition added on the more surprising side, or subtracted on the
    less surprising side, is anomalous. Interactions (differences of differences) in a
    suite that has simple comparisons label nothing: ``a - b > c - d`` does not say
    that ``d`` is anomalous. A condition given both labels, or none, gets None.
    """
    comps = [c for p in preds for c in comparisons(p) if c.op != "="]
    chosen = [c for c in comps if _is_simple(c)] or comps
    votes: dict[str, set[int]] = {}
    for comp in chosen:
        hi, lo = _surprising_side(comp)
        for sign, cond in hi:
            votes.setdefault(cond, set()).add(0 if sign > 0 else 1)
        for sign, cond in lo:
            votes.setdefault(cond, set()).add(1 if sign > 0 else 0)
    return {c: (next(iter(votes[c])) if len(votes.get(c, ())) == 1 else None)
            for c in conditions}
