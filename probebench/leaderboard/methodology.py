"""The generated parts of METHODOLOGY.md: the ProbeScore axes, the metric definitions, the
marks, the precision policy's tolerances and every task's holdout generations with their
minimum detectable drops.

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


def holdouts_table() -> str:
    """Per packaged task: its public generation 0 and its current sealed generation, each
    with its size and minimum detectable drop (``evaluation.power``)."""
    from probebench.evaluation.power import (
        TARGET_DROP,
        TYPICAL_AUROC,
        label_counts,
        minimum_detectable_drop,
    )
    from probebench.tasks.catalog import TaskCatalog
    from probebench.tasks.sealed import current_generation

    def drop(n1: int | None, n0: int | None) -> str:
        if not n1 or not n0:
            return "n/a"
        value = minimum_detectable_drop(n1, n0, auroc=TYPICAL_AUROC)
        return f"{value:.1f}" + ("" if value <= TARGET_DROP else " (over 10)")

    catalog = TaskCatalog.default()
    rows = ["| task | generation 0 (public): items, prompts 1/0 | its min. detectable drop | "
            "current sealed generation: items, prompts 1/0 | its min. detectable drop |",
            "| --- | --- | ---: | --- | ---: |"]
    for task_id in catalog.ids:
        spec = catalog.spec(task_id)
        public, public_drop = "none", "n/a"
        if spec.holdouts:
            newest = max(spec.holdouts, key=lambda h: h.version)
            items = catalog.load_holdout(task_id, newest).test
            n1, n0 = label_counts(items)
            public, public_drop = f"v{newest.version}: {len(items)}, {n1}/{n0}", drop(n1, n0)
        gen = current_generation(catalog, task_id)
        sealed, sealed_drop = "none yet", "n/a"
        if gen is not None:
            sealed = (f"{gen.generation} (sealed {gen.sealed_at.isoformat()}): {gen.n_items}, "
                      f"{gen.n_label_1}/{gen.n_label_0}")
            sealed_drop = drop(gen.n_label_1, gen.n_label_0)
        rows.append(f"| `{task_id}` | {public} | {public_drop} | {sealed} | {sealed_drop} |")
    return "\n".join(rows) + "\n"


SECTIONS = {"axes": axes_table, "marks": marks_table, "definitions": definitions_list,
            "tolerances": tolerance_table, "holdouts": holdouts_table}


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
