"""Marks A-D for headline metrics: how a value gets its letter.

A metric's marks come from its ``MetricDef`` (``definitions.METRICS``): three bounds
(kept as data in ``marks.yaml``) split [0, 1] into four half-open ranges [low, high),
and the metric's direction says which end is A. A mark is the worst range that the
metric's 95% interval reaches; when the interval straddles ranges, ``straddles`` lists
them (e.g. ``["A", "B"]`` gives mark B).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from itertools import pairwise

from probebench.errors import InputError
from probebench.evaluation.definitions import METRICS, Direction, MarkBounds, MetricDef

ORDER = ("A", "B", "C", "D")


@dataclass(frozen=True)
class MarkDefinition:
    metric: str
    direction: Direction
    bounds: MarkBounds

    @classmethod
    def of(cls, metric: MetricDef) -> MarkDefinition:
        if metric.marks is None:
            raise InputError(f"metric {metric.name} has no marks; metrics with marks: "
                             f"{', '.join(mark_definitions())}")
        return cls(metric.name, metric.direction, metric.marks)

    @property
    def ranges(self) -> dict[str, tuple[float, float]]:
        """mark -> (low, high): [low, high), the top range closed at 1."""
        edges = (0.0, *self.bounds, 1.0)
        ascending = list(pairwise(edges))
        if self.direction is Direction.HIGHER:
            ascending.reverse()
        return dict(zip(ORDER, ascending, strict=True))

    def range_of(self, value: float) -> str:
        """The mark whose range holds ``value``."""
        if not math.isfinite(value):
            raise InputError(f"mark ranges of {self.metric} do not cover {value}")
        # a value on a bound belongs to the range above it: ranges are [low, high)
        above = bisect_right(self.bounds, value)
        return ORDER[above] if self.direction is Direction.LOWER else ORDER[len(ORDER) - 1 - above]

    def mark(self, value: float, low: float, high: float) -> tuple[str, list[str]]:
        """(mark, ranges the interval touches): the worst of those ranges is the mark."""
        touched = sorted({self.range_of(min(max(v, 0.0), 1.0)) for v in (value, low, high)},
                         key=ORDER.index)
        return touched[-1], touched if len(touched) > 1 else []


def mark_definitions() -> dict[str, MarkDefinition]:
    """metric name -> its marks, for every metric that has them (read from ``METRICS``
    on each call, so the marks follow the MetricDefs)."""
    return {d.name: MarkDefinition.of(d) for d in METRICS.values() if d.marks is not None}


__all__ = ["ORDER", "MarkDefinition", "mark_definitions"]
