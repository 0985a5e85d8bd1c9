"""Marks A-D for headline metrics, with ranges kept as data (``marks.yaml``).

A mark is the worst range that the metric's 95% interval reaches; when the interval
straddles ranges, ``straddles`` lists them (e.g. ``["A", "B"]`` gives mark B).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from probebench.errors import InputError
from probebench.yamlsafe import load_yaml

ORDER = ("A", "B", "C", "D")


@dataclass(frozen=True)
class MarkDefinition:
    metric: str
    higher_is_better: bool
    ranges: dict[str, tuple[float, float]]

    def range_of(self, value: float) -> str:
        for mark in ORDER:
            low, high = self.ranges[mark]
            if low <= value < high:
                return mark
        raise InputError(f"mark ranges of {self.metric} do not cover {value}")

    def mark(self, value: float, low: float, high: float) -> tuple[str, list[str]]:
        """(mark, ranges the interval touches): the worst of those ranges is the mark."""
        touched = sorted({self.range_of(min(max(v, 0.0), 1.0)) for v in (value, low, high)},
                         key=ORDER.index)
        return touched[-1], touched if len(touched) > 1 else []


@cache
def mark_definitions() -> dict[str, MarkDefinition]:
    data = load_yaml(Path(__file__).with_name("marks.yaml"))
    out = {}
    for metric, spec in data["marks"].items():
        ranges = {m: (float(spec["ranges"][m][0]), float(spec["ranges"][m][1])) for m in ORDER}
        out[metric] = MarkDefinition(metric, spec["direction"] == "higher_is_better", ranges)
    return out
