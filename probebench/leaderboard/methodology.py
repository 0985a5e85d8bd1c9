"""The generated parts of METHODOLOGY.md: the ProbeScore axes, the metric definitions and
the precision policy's tolerances.

The tables are rendered from the code that computes the numbers (``AXES`` and the
specs, ``metric_definitions``), between marker comments, so the document cannot drift
from the code. ``python -m probebench.leaderboard.methodology METHODOLOGY.md`` rewrites
them; a test fails when the committed file is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from probebench.errors import InputError
from probebench.evaluation.definitions import metric_definitions
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
    """Every metric of submission.json with its definition."""
    return "".join(f"- **{name}**: {text}\n" for name, text in metric_definitions().items())


def tolerance_table() -> str:
    """The precision policy's tolerances (``evaluation.precision.TOLERANCE``)."""
    from probebench.evaluation.precision import TOLERANCE

    rows = ["| metric | tolerance (absolute) |", "| --- | ---: |"]
    rows += [f"| {name} | {value:g} |" for name, value in TOLERANCE.items()]
    return "\n".join(rows) + "\n"


SECTIONS = {"axes": axes_table, "definitions": definitions_list,
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
