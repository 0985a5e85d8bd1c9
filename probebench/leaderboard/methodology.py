"""The generated parts of METHODOLOGY.md: the ProbeScore axes, the metric definitions, the
marks and the precision policy's tolerances.

The tables are rendered from the code that computes the numbers (``AXES`` and the
specs, the ``MetricDef`` of each metric), between marker comments, so the document cannot
drift from the code. ``python -m probebench.leaderboard.methodology METHODOLOGY.md`` rewrites
them; a test fails when the committed file is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from probebench.errors import InputError
from probebench.evaluation.definitions import METRICS, Direction
from probebench.evaluation.marks import ORDER, mark_definitions
from probebench.leaderboard.probescore import (
    AXES,
    available_specs,
    load_probescore_spec,
)


def axes_table() -> str:
    """One row per axis name of any spec, with each spec's weight and the definition."""
    specs = [load_probescore_spec(v) for v in available_specs()]
    # an axis that changed its source between specs gets one row per source
    names: dict[tuple[str, str], None] = {}
    for spec in specs:
        for axis in spec.axes:
            names.setdefault((axis.name, axis.source), None)
    head = "| axis | " + " | ".join(f"v{s.version} weight" for s in specs) + " | value |"
    rule = "| --- | " + " | ".join("---:" for _ in specs) + " | --- |"
    rows = [head, rule]
    for name, source in names:
        weights = []
        for spec in specs:
            weight = next((a.weight for a in spec.axes
                           if a.name == name and a.source == source), None)
            weights.append("–" if weight is None else f"{weight:.2f}")
        rows.append(f"| {name} | " + " | ".join(weights) + f" | {AXES[source].definition} |")
    return "\n".join(rows) + "\n"


def definitions_list() -> str:
    """Every metric of submission.json with its direction, its definition (the text
    submission.json carries) and its reference."""
    lines = []
    for metric in METRICS.values():
        if metric.part_of is not None:
            continue
        direction = ("" if metric.direction is Direction.NONE
                     else f" ({metric.direction.value})")
        cited = "" if metric.citation is None else f" Reference: {metric.citation}."
        lines.append(f"- **{metric.name}**{direction}: {metric.text}{cited}\n")
    return "".join(lines)


def marks_table() -> str:
    """Every metric with marks: its direction and the range of each mark."""
    rows = ["| metric | direction | " + " | ".join(ORDER) + " |",
            "| --- | --- | " + " | ".join("---" for _ in ORDER) + " |"]
    for name, marks in mark_definitions().items():
        ranges = [f"[{low:.2f}, {high:.2f}{']' if high == 1.0 else ')'}"
                  for low, high in marks.ranges.values()]
        rows.append(f"| {name} | {marks.direction.value} | " + " | ".join(ranges) + " |")
    return "\n".join(rows) + "\n"


def tolerance_table() -> str:
    """The precision policy's tolerances (``evaluation.precision.TOLERANCE``)."""
    from probebench.evaluation.precision import TOLERANCE

    rows = ["| metric | tolerance (absolute) |", "| --- | ---: |"]
    rows += [f"| {name} | {value:g} |" for name, value in TOLERANCE.items()]
    return "\n".join(rows) + "\n"


SECTIONS = {"axes": axes_table, "marks": marks_table, "definitions": definitions_list,
            "tolerances": tolerance_table}


def render(text: str, source: str = "METHODOLOGY.md") -> str:
    """``text`` with every ``<!-- generated:NAME -->`` block replaced by its fresh output."""
    for name, make in SECTIONS.items():
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.DOTALL)
        if not pattern.search(text):
            raise InputError(f"{source}: no {start} ... {end} block")
        block = f"{start}\n{make()}{end}"
        text = pattern.sub(lambda _m: block, text)  # noqa: B023 - used at once
    return text


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "METHODOLOGY.md")
    target.write_text(render(target.read_text("utf-8"), str(target)), "utf-8")
    print(f"rewrote the generated blocks of {target}")
