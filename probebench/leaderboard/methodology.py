"""The generated parts of METHODOLOGY.md: the ProbeScore axes, the metric definitions, the
marks, the precision policy's tolerances, every task's holdout generations with their
minimum detectable drops, the control task of every minimal-pair task beside the
``pairs_split`` its entries' results store, the reference entries' stored
cross-model transfers, and the section on the causal test of a probe's direction (what
it measures, the "moves the model" column's definition, the stored verdicts, and the
lead's paragraph on whether it should become an axis: ``CAUSAL_AXIS_QUESTION``).

The tables are rendered from the code that computes the numbers (``AXES`` and the
specs, the ``MetricDef`` of each metric, the control task) and from the stored results
(``registry/results``), between marker comments, so the document cannot drift from the
code or from the store. ``python -m probebench.leaderboard.methodology METHODOLOGY.md``
rewrites them (from the registry beside the file); a test fails when the committed file
is stale, and another when a stored number disagrees with the code that made it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from probebench.errors import InputError
from probebench.evaluation.definitions import METRICS, Direction
from probebench.evaluation.marks import ORDER, mark_definitions
from probebench.leaderboard.probescore import (
    AXES,
    available_specs,
    fewest_items_per_class,
    load_probescore_spec,
    transfer_judgment,
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


#: the repository's registry, whose stored results the generated tables repeat
REGISTRY = Path(__file__).resolve().parents[2] / "registry"


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


@dataclass(frozen=True)
class ControlRow:
    """One minimal-pair task's control task as ``submit`` builds it: the threshold fitted
    on the train part of ``train_val_items``, the shares measured on the test items (what
    a result stores as ``selectivity.pairs_split``)."""

    task: str
    #: share of the test items' good/bad pairs with different control labels (None: no
    #: item holds both labels, or no control is fitted)
    pairs_split: float | None
    #: the same under the sentence-level vote (the control before ``differing-types``)
    sentence_vote_split: float | None
    n_types: int | None
    degenerate: tuple[str, ...]
    #: why ``submit`` measures no selectivity on the task (empty when it does)
    not_measured: str = ""


@cache
def control_rows() -> tuple[ControlRow, ...]:
    """``ControlRow`` of every packaged task whose format has minimal pairs, in catalog
    order (cached: every render reads them, and the packaged tasks do not change while
    a process runs)."""
    from probebench.evaluation.protocol import train_val_items
    from probebench.evaluation.selectivity import SENTENCE_VOTE, control_kind, control_task
    from probebench.tasks.catalog import TaskCatalog
    from probebench.tasks.families import get_format

    catalog = TaskCatalog.default()
    rows = []
    for task_id in catalog.ids:
        if not get_format(catalog.spec(task_id).format).minimal_pairs:
            continue
        data = catalog.load(task_id)
        try:
            train, val, _ = train_val_items(data)
        except InputError as exc:  # submit measures no selectivity here (task_selectivity)
            rows.append(ControlRow(task_id, None, None, None, (), str(exc)))
            continue
        control = control_task(control_kind(data.format), train, val, data.test)
        by_sentence = control_task(SENTENCE_VOTE, train, val, data.test)
        rows.append(ControlRow(task_id, control.pairs_split, by_sentence.pairs_split,
                               control.n_types, control.degenerate))
    return tuple(rows)


def stored_pairs_split(registry: Path = REGISTRY) -> dict[str, dict[str, float]]:
    """task -> entry id -> the ``selectivity.pairs_split`` of the entry's latest stored
    record on the task (the record the leaderboard reads), for every entry with results
    that store one (a sentence task's selectivity has no pairs to split)."""
    from probebench.registry.store import latest_results

    folder = registry / "results"
    if not folder.is_dir():
        raise InputError(f"{registry}: no results/ folder; the generated tables repeat the "
                         "stored results of the repository's registry")
    out: dict[str, dict[str, float]] = {}
    for owner in sorted(p for p in folder.iterdir() if p.is_dir()):
        for entry in sorted(p for p in owner.iterdir() if p.is_dir()):
            entry_id = f"{owner.name}/{entry.name}"
            for task, record in latest_results(registry, entry_id).items():
                sel = record.result.selectivity
                if sel is not None and sel.pairs_split is not None:
                    out.setdefault(task, {})[entry_id] = sel.pairs_split
    return out


def pairs_table(registry: Path = REGISTRY) -> str:
    """Every minimal-pair task's control, computed on its test items as ``submit`` does,
    beside the ``pairs_split`` its entries' stored results hold."""
    stored = stored_pairs_split(registry)
    rows = ["| task | good/bad pairs split | stored in its entries' results | the same by "
            "sentence vote | word types | degenerate |",
            "| --- | ---: | --- | ---: | ---: | --- |"]
    for r in control_rows():
        values: dict[str, list[str]] = {}
        for entry_id, value in sorted(stored.get(r.task, {}).items()):
            values.setdefault(_share(value), []).append(entry_id)
        kept = "; ".join(f"{v} ({len(ids)} {'entry' if len(ids) == 1 else 'entries'})"
                         for v, ids in sorted(values.items())) or "none stored"
        if r.not_measured:
            rows.append(f"| `{r.task}` | n/a | {kept} | n/a | n/a | not measured: "
                        f"{r.not_measured} |")
            continue
        why = "; ".join(r.degenerate) if r.degenerate else "no"
        rows.append(f"| `{r.task}` | {_share(r.pairs_split)} | {kept} | "
                    f"{_share(r.sentence_vote_split)} | {r.n_types} | {why} |")
    return "\n".join(rows) + "\n"


def transfers_table(registry: Path = REGISTRY) -> str:
    """The stored cross-model transfer of every live entry (its latest record), one row
    per declared target measured through the map."""
    from probebench.evaluation.results import TransferOut
    from probebench.registry.entry import entry_files, read_entry
    from probebench.registry.store import latest_results

    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    rows = ["| entry | target | map R² (control) | target AUROC [95% CI] | control AUROC | "
            "transfer (control) | credited from v0.3.0 |",
            "| --- | --- | ---: | --- | ---: | ---: | --- |"]
    live = sorted((e for e in map(read_entry, entry_files(registry)) if e.status == "live"),
                  key=lambda e: e.id)
    for e in live:
        for task, record in sorted(latest_results(registry, e.id).items()):
            for target, t in sorted(record.result.transfer.items()):
                if not isinstance(t, TransferOut) or t.auroc is None:
                    continue
                ci = ("" if t.auroc.ci_low is None or t.auroc.ci_high is None
                      else f" [{t.auroc.ci_low:.3f}, {t.auroc.ci_high:.3f}]")
                fewest = fewest_items_per_class(record.result.predictions)
                credit, why = transfer_judgment(t, fewest)
                credited = (num(credit) if not why else
                            f"{num(credit) if credit is not None else 'not judged'}: {why}")
                rows.append(f"| `{e.id}` ({task}) | `{target}` | {num(t.map_r2)} "
                            f"({num(t.control_r2)}) | {num(t.auroc.value)}{ci} | "
                            f"{num(t.control_auroc)} | {num(t.transfer)} "
                            f"({num(t.control_transfer)}) | {credited} |")
    return "\n".join(rows) + "\n"


#: the selectivity a test should detect, to judge whether the selectivity rule can gate
SELECTIVITY_EFFECT = 0.05


def selectivity_power(ci_low: float, ci_high: float, effect: float = SELECTIVITY_EFFECT
                      ) -> float:
    """The power of "the 95% interval lies above 0" to detect a true selectivity of
    ``effect``, with the standard error a stored interval implies (half-width / 1.96).

    >>> round(selectivity_power(-0.06, 0.11), 2)
    0.21
    """
    from scipy.stats import norm

    se = (ci_high - ci_low) / (2 * 1.959963984540054)
    return float(norm.cdf(effect / se - 1.959963984540054)) if se > 0 else 1.0


def selectivity_table(registry: Path = REGISTRY) -> str:
    """Every live entry's stored selectivity, whether it is shown (interval above 0),
    and the power of that test to detect a selectivity of ``SELECTIVITY_EFFECT``: the
    measured argument for marking rather than unranking."""
    from statistics import median

    from probebench.registry.entry import entry_files, read_entry
    from probebench.registry.store import latest_results

    rows = ["| entry | task | selectivity [95% CI] | shown (interval above 0) | power at "
            f"{SELECTIVITY_EFFECT:g} |", "| --- | --- | --- | --- | ---: |"]
    powers, shown = [], []
    live = sorted((e for e in map(read_entry, entry_files(registry)) if e.status == "live"),
                  key=lambda e: e.id)
    for e in live:
        for task, record in sorted(latest_results(registry, e.id).items()):
            sel = record.result.selectivity
            iv = sel.selectivity if sel is not None else None
            if iv is None or iv.value is None or iv.ci_low is None or iv.ci_high is None:
                rows.append(f"| `{e.id}` | {task} | n/a (no computable control) | n/a | n/a |")
                continue
            power = selectivity_power(iv.ci_low, iv.ci_high)
            powers.append(power)
            shown.append(iv.ci_low > 0)
            rows.append(f"| `{e.id}` | {task} | {iv.value:.3f} [{iv.ci_low:.3f}, "
                        f"{iv.ci_high:.3f}] | {'yes' if iv.ci_low > 0 else '**no**'} | "
                        f"{power:.2f} |")
    if powers:
        rows.append("")
        rows.append(f"{shown.count(False)} of {len(shown)} live results with a computable "
                    "control are not shown to be selective; the median power of the test "
                    f"to detect a selectivity of {SELECTIVITY_EFFECT:g} is "
                    f"{median(powers):.2f}.")
    return "\n".join(rows) + "\n"


#: THE LEAD FILLS THIS IN: the paragraph under "Should it become an axis?" in METHODOLOGY's
#: causal-test section, written from the measured distribution of the verdicts over the
#: registry's entries (the table ``causal_section`` renders below it). None: the section
#: says it is still to be written. Regenerate METHODOLOGY.md after changing it.
CAUSAL_AXIS_QUESTION: str | None = (
    "Not in the next spec. Measured on the reference entries (2026-11-27, the table below; "
    "`tools/build_reference.py --causal-only`): 25 linear probes on SmolLM2-135M with a "
    "readout (14 truth, 4 honesty, 4 verb grammar, 2 refusal, the eval-awareness guard) and "
    "12 where the test does not apply (MLPs, probes on an encoder, BLiMP and SyntaxGym tasks, "
    "which declare no readout). **Two move the model**, both on `honesty_instructed`: the "
    "logistic and the mass-mean probe at layer 21 raise the model's own answer to \"Was the "
    "statement above a lie?\" by 0.011 and 0.012 nats per standard deviation, CIs above 0, "
    "above all 16 random directions, and projecting either out lowers that answer's AUROC "
    "on the labels from 0.84 to 0.69 and 0.72. But only just: the largest control reached "
    "0.010, and with 16 controls a random direction comes out on top one time in 17. "
    "**With 100 controls neither holds** (2026-11-28, `tools/causal_controls.py --controls "
    "100`: the records' seed, alphas and 200 items; its first 16 controls are the records' "
    "own, to 5e-7): one random direction of the 100 moved the model by 0.015 nats per "
    "standard deviation, more than either probe (0.011 and 0.012), so both sit at control "
    "percentile 99 and are \"no\" under the column's rule, which asks for the effect above "
    "every control; adding controls can only turn a \"yes\" into a \"no\", so at 100 "
    "controls none of the 25 would pass. The "
    "other 23 do not: effects from -0.008 to 0.047 nats per standard deviation, inside the "
    "controls' range (-0.028 to 0.052 on the truth tasks, -0.30 to 0.35 on verb grammar, "
    "-0.16 to 0.39 on refusal); control percentiles 6 to 100 over all 25 (median 56); 20 of "
    "the 25 intervals above 0 and 4 below, so a sign alone says little. Mass-mean directions "
    "moved the model more than logistic ones in 7 of 10 pairs. Where the model's own readout "
    "hardly tracks the labels (the truth tasks: AUROC 0.18 to 0.83, median 0.54; "
    "`refusal_harmful`: it never opens with a refusal) there is little behaviour to move; "
    "where it does, the probes mostly do not move it: the verb-grammar readout picks the "
    "expected verb form for 81% of 81 items and the four probes' effects sit at control "
    "percentiles 38 to 69; `honesty_instructed_cities`' readout has AUROC 0.98 and its two "
    "probes sit at 62.5. Two entries on one task of one model, each barely past 16 "
    "controls and not past 100, are too little to weight in ProbeScore, and an axis nearly "
    "constant across the ranked entries would only dilute the others. Keep it a column. "
    "Revisit on a second model "
    "(the stored records keep 16 controls, within the test's 10-minute budget: 100 took "
    "1,034 s per entry on 2 cores), where an axis could be limited to tasks whose "
    "unsteered readout has AUROC (for candidates, accuracy) of at least 0.75."
)

#: what the section says while ``CAUSAL_AXIS_QUESTION`` is None (no number is made up)
CAUSAL_AXIS_PENDING = ("*Not written yet: this paragraph is filled in from the measured "
                       "distribution of the verdicts over the registry's entries (the table "
                       "below). Until then the column is reported beside the ranking and "
                       "no spec reads it.*")


def causal_section(registry: Path = REGISTRY, axis_question: str | None = None) -> str:
    """METHODOLOGY's section on the causal test: what it measures (docs/causal.md), the
    "moves the model" column's definition (``columns.CAUSAL_DEFINITION``, the rule the
    leaderboard applies), that no ProbeScore spec reads it, the paragraph "Should it
    become an axis?" (``axis_question``, else ``CAUSAL_AXIS_QUESTION``, else a marked
    placeholder) and every live entry's stored verdict."""
    from probebench.leaderboard.columns import (
        CAUSAL_DEFINITION,
        CAUSAL_PERCENTILE,
        moves_the_model,
    )
    from probebench.registry.entry import entry_files, read_entry
    from probebench.registry.store import latest_causal_record

    specs = ", ".join(available_specs())
    paragraph = axis_question or CAUSAL_AXIS_QUESTION or CAUSAL_AXIS_PENDING
    lines = [
        "## Does the model use the direction? (the causal test)",
        "A probe that reads a property from hidden states shows the property is decodable, "
        "not that the model uses it. The causal test ([docs/causal.md](docs/causal.md), "
        "`probebench/causal/`) moves the residual stream along a linear probe's direction at "
        "its site and reads what the model itself does, after Marks & Tegmark 2023 (\"The "
        "Geometry of Truth\", arXiv:2310.06824), who add the truth direction and watch "
        "P(True) − P(False) move, and Arditi et al. 2024 (\"Refusal in Language Models Is "
        "Mediated by a Single Direction\", arXiv:2406.11717), who ablate the refusal "
        "direction and watch refusals disappear.",
        "",
        "- **Measured**: for each task, the effect (the mean over items of the least-squares "
        "slope of the task's readout over the steering grid, in readout units per standard "
        "deviation) with its 95% item-bootstrap interval, the effects of 16 random control "
        "directions drawn from the activations' own covariance and the probe's percentile "
        "among them, the opposite direction's effect, the mean readout change at each "
        "strength (the dose-response curve), and the readout's accuracy and AUROC on the "
        "task's labels before and after the direction is projected out. `submit --causal` "
        "runs it (the `causal` block of submission.json); `registry evaluate --causal` "
        "stores it beside the entry's results, in "
        "`registry/results/<entry>/_causal.json`, under the results' rules (provenance, "
        "history kept, a new record only beyond the reproducibility contract, float32 "
        "preferred).",
        f"- **The column \"moves the model\"** (task pages and entry pages, each entry "
        f"page with the dose-response figure): {CAUSAL_DEFINITION[:1].lower()}"
        f"{CAUSAL_DEFINITION[1:]}",
        f"- **Reported, not ranked.** No axis of any ProbeScore spec ({specs}) reads it, "
        "ProbeScore 0.2.0 included: a leaderboard built with and without the causal "
        "records scores and ranks identically. A \"yes\" needs both tests at once (the "
        f"interval above 0, control percentile {CAUSAL_PERCENTILE:g}), so a \"no\" can "
        "mean a direction the model does not use, a readout that does not see it, or too "
        "few items to tell.",
        "",
        "### Should it become an axis?",
        paragraph,
        "",
        "Stored causal tests of the live entries (the record the leaderboard reads: the "
        "latest float32 one):",
        "",
    ]
    rows = ["| entry | task | moves the model | detail |", "| --- | --- | --- | --- |"]
    live = sorted((e for e in map(read_entry, entry_files(registry)) if e.status == "live"),
                  key=lambda e: e.id)
    for e in live:
        record = latest_causal_record(registry, e.id)
        if record is None or record.probe.bundle_sha256 != e.artifact_sha256:
            continue
        for task, out in sorted(record.causal.items()):
            cell = moves_the_model(out)
            rows.append(f"| `{e.id}` | {task} | {cell.verdict} | {cell.detail} |")
    if len(rows) == 2:
        rows = ["None stored yet (`registry evaluate --causal ENTRY_ID` stores one)."]
    return "\n".join(_wrapped(lines) + rows) + "\n"


def _wrapped(lines: list[str], width: int = 90) -> list[str]:
    """Prose lines wrapped as the hand-written parts are (a bullet's lines indented under
    its text); headings and blank lines as they are."""
    import textwrap

    out: list[str] = []
    for line in lines:
        if not line or line.startswith("#"):
            out.append(line)
            continue
        indent = "  " if line.startswith("- ") else ""
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False)
    return out


SECTIONS: dict[str, Callable[[], str]] = {
    "axes": axes_table, "marks": marks_table, "definitions": definitions_list,
    "tolerances": tolerance_table, "holdouts": holdouts_table, "pairs": pairs_table,
    "transfers": transfers_table, "selectivity": selectivity_table,
    "causal": causal_section}
#: the sections that repeat the stored results, rendered from a given registry
FROM_REGISTRY: dict[str, Callable[[Path], str]] = {"pairs": pairs_table,
                                                   "transfers": transfers_table,
                                                   "selectivity": selectivity_table,
                                                   "causal": causal_section}


def render(text: str, source: str = "METHODOLOGY.md", registry: Path = REGISTRY) -> str:
    """``text`` with every ``<!-- generated:NAME -->`` block replaced by its fresh output
    (the blocks that repeat stored results read ``registry``)."""
    for name, make in SECTIONS.items():
        start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
        pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.DOTALL)
        if not pattern.search(text):
            raise InputError(f"{source}: no {start} ... {end} block")
        body = FROM_REGISTRY[name](registry) if name in FROM_REGISTRY else make()
        block = f"{start}\n{body}{end}"
        text = pattern.sub(lambda _m: block, text)  # noqa: B023 - used at once
    return text


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "METHODOLOGY.md")
    target.write_text(render(target.read_text("utf-8"), str(target),
                             registry=target.resolve().parent / "registry"), "utf-8")
    print(f"rewrote the generated blocks of {target}")
