"""``probebench leaderboard build``: the static website (plain HTML/CSS/JS, no CDN).

Reads ``registry/probes/**.yaml`` and each entry's latest stored results, scores every
entry with a ProbeScore spec, computes rank intervals and renders Jinja2 templates. All
links are relative, so the pages work from ``file://``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from probebench.errors import InputError
from probebench.evaluation.definitions import (
    DISTSHIFT_IMPUTE,
    EVALAWARE_IMPUTE,
    TRANSFER_IMPUTE,
)
from probebench.evaluation.results import FlaggedOut, IntervalOut, TaskResult
from probebench.leaderboard.charts import bars_svg, reliability_svg, roc_svg, sweep_svg
from probebench.leaderboard.probescore import (
    CLOSED_LICENSE_CEILING,
    DEFAULT_SPEC,
    UNMEASURED,
    axis_values,
    license_score,
    load_probescore_spec,
    probescore,
)
from probebench.leaderboard.ranks import RANK_RESAMPLES, Scored, rank_intervals
from probebench.registry.check import entry_files
from probebench.registry.entry import Entry, read_entry
from probebench.registry.store import ResultRecord, latest_results
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import get_format
from probebench.train.sweep import read_sweep
from probebench.version import __version__

HERE = Path(__file__).parent


@dataclass(frozen=True)
class RankedEntry:
    """One line of the ranking (live entries only), best first."""

    rank: int
    entry_id: str
    probescore: float
    auroc: float
    model: str


@dataclass
class BuildSummary:
    out: Path
    entries: int
    skipped: list[str]
    ranking: list[RankedEntry] = field(default_factory=list)

    def top_table(self, n: int = 5) -> str:
        lines = [f"{'rank':>4}  {'ProbeScore':>10}  {'AUROC':>5}  {'model':<13} entry"]
        for r in self.ranking[:n]:
            lines.append(f"{r.rank:>4}  {r.probescore:>10.3f}  {r.auroc:>5.3f}  "
                         f"{r.model:<13} {r.entry_id}")
        return "\n".join(lines)


def _iv(x: IntervalOut | FlaggedOut | None) -> str:
    if x is None or x.value is None:
        return "n/a"
    text = f"{x.value:.3f}"
    if x.ci_low is not None and x.ci_high is not None:
        text += f" [{x.ci_low:.3f}, {x.ci_high:.3f}]"
    if isinstance(x, FlaggedOut) and x.imputed:
        text += " (imputed)"
    return text


def _marks(t: TaskResult) -> str:
    return ", ".join(f"{k} {m.mark}" for k, m in sorted(t.marks.items()))


def plain_markdown(text: str) -> str:
    """Inline Markdown (``**bold**``, ```code```) as plain text, for tooltips."""
    return text.replace("**", "").replace("`", "")


def inline_markdown(text: str) -> Markup:
    """Inline Markdown (``**bold**``, ```code```) as escaped HTML."""
    html = str(escape(text))
    html = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html)
    html = re.sub(r"`(.+?)`", r"<code>\1</code>", html)
    return Markup(html)


def page_name(entry_id: str) -> str:
    return "entries/" + entry_id.replace("/", "__") + ".html"


def build_leaderboard(registry: Path, out: Path, *, catalog: TaskCatalog,
               spec_version: str = DEFAULT_SPEC, n_resamples: int = RANK_RESAMPLES,
               seed: int = 0) -> BuildSummary:
    """Render the whole site for ``registry`` into ``out`` (replaced atomically); task
    pages describe the tasks of ``catalog``."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    spec = load_probescore_spec(spec_version)
    entries: list[Entry] = []
    results: dict[str, dict[str, ResultRecord]] = {}
    skipped = []
    every = [read_entry(path) for path in entry_files(registry)]
    for entry in every:
        stored = {t: r for t, r in latest_results(registry, entry.id).items()
                  if t in entry.tasks}
        if not stored:
            skipped.append(f"{entry.id}: no stored results")
            continue
        stale = sorted(t for t, r in stored.items()
                       if r.probe.bundle_sha256 != entry.artifact_sha256)
        if stale:  # results of another artifact: the entry changed and awaits publish
            skipped.append(f"{entry.id}: stored results on {', '.join(stale)} are for "
                           f"bundle {stored[stale[0]].probe.bundle_sha256[:12]}, not the "
                           f"entry's artifact {entry.artifact_sha256[:12]}")
            continue
        entries.append(entry)
        results[entry.id] = stored
    scored = [Scored(e.id, results[e.id], axis_values(results[e.id], e.license),
                     closed=e.license == "closed") for e in entries]
    breakdowns = {s.id: probescore(spec, s.values, closed_license=s.closed) for s in scored}
    # the mean AUROC by axis source (a spec may call its axis anything)
    mean_auroc = {s.id: s.values["auroc"].value for s in scored}
    # only live entries are ranked: pending ones await review, deprecated ones are archived
    live = {e.id for e in entries if e.status == "live"}
    ranks = rank_intervals([s for s in scored if s.id in live], spec,
                           n_resamples=n_resamples, seed=seed)
    order = sorted((e for e in entries if e.id in live), key=lambda e: (ranks[e.id].rank, e.id))
    archived = sorted((e for e in every if e.status == "deprecated"), key=lambda e: e.id)
    pending = sorted((e for e in entries if e.status == "pending_review"), key=lambda e: e.id)

    env = Environment(loader=FileSystemLoader(HERE / "templates"), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["inline_md"] = inline_markdown
    env.filters["plain_md"] = plain_markdown
    task_ids = sorted({t for r in results.values() for t in r})
    common = {"spec": spec, "version": __version__, "nav_tasks": task_ids}
    tmp = out.with_name(f".{out.name}.building")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "entries").mkdir(parents=True)
    (tmp / "tasks").mkdir()
    shutil.copytree(HERE / "static", tmp / "static")

    rows = []
    ranking = []
    for e in order:
        b, r = breakdowns[e.id], ranks[e.id]
        recs = results[e.id]
        rows.append({
            "id": e.id, "href": page_name(e.id), "short_name": e.short_name,
            "rank": r.rank, "best": r.best, "worst": r.worst, "score": b.total,
            "axes": {a.name: {"value": b.values[a.name].value,
                              "imputed": b.values[a.name].imputed,
                              "capped": a.name in b.capped} for a in spec.axes},
            "auroc": mean_auroc[e.id], "auroc_low": r.auroc_low,
            "auroc_high": r.auroc_high,
            "marks": [(t, rec.result.marks["auroc"].mark)
                      for t, rec in sorted(recs.items()) if "auroc" in rec.result.marks],
            "model": e.model, "category": e.category, "tasks": sorted(recs)})
        ranking.append(RankedEntry(r.rank, e.id, b.total, mean_auroc[e.id], e.model))
    index = env.get_template("index.html.j2").render(
        **common, root="", title="Leaderboard", rows=rows, n_resamples=n_resamples,
        models=sorted({e.model for e in entries if e.id in live}),
        categories=sorted({e.category for e in entries if e.id in live}),
        pending=[(e, page_name(e.id)) for e in pending], n_archived=len(archived))
    (tmp / "index.html").write_text(index, encoding="utf-8")
    (tmp / "archive.html").write_text(env.get_template("archive.html.j2").render(
        **common, root="", title="Archive",
        archived=[(e, page_name(e.id) if e.id in results else None) for e in archived]),
        encoding="utf-8")

    entry_tpl = env.get_template("entry.html.j2")
    for e in entries:
        tasks = [_task_view(t, rec) for t, rec in sorted(results[e.id].items())]
        html = entry_tpl.render(**common, root="../", title=e.short_name, e=e,
                                rank=ranks.get(e.id), score=breakdowns[e.id], tasks=tasks)
        (tmp / page_name(e.id)).write_text(html, encoding="utf-8")

    _task_pages(env, common, tmp, task_ids, entries, results, _sweeps(registry), catalog)
    weights = spec.normalised()
    (tmp / "methodology.html").write_text(env.get_template("methodology.html.j2").render(
        **common, root="", title="Methodology", weights=weights, n_resamples=n_resamples,
        closed_license_score=license_score("closed"), closed_ceiling=CLOSED_LICENSE_CEILING,
        imputes={"evalaware": EVALAWARE_IMPUTE, "distshift": DISTSHIFT_IMPUTE,
                 "transfer": TRANSFER_IMPUTE, "unmeasured": UNMEASURED}),
        encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
    return BuildSummary(out, len(entries), skipped, ranking)


def _provenance(record: ResultRecord) -> list[tuple[str, str]]:
    """Where and when a stored result was measured, as label/value rows."""
    run = record.run
    not_recorded = "not recorded (stored before provenance was kept)"
    commit = (run.probebench_commit or "unknown (installed without git)") if run else None
    return [
        ("evaluated", f"{run.evaluated_at} (UTC)" if run else not_recorded),
        ("probebench", f"{record.versions.get('probebench', 'unknown')}"
                       + (f", commit {commit}" if commit else "")),
        ("device / dtype", f"{record.device} / {record.dtype}"),
        ("hardware", run.hardware if run else not_recorded),
        ("libraries", ", ".join(f"{k} {record.versions[k]}" for k in
                                ("torch", "transformers", "scikit-learn", "numpy")
                                if k in record.versions)),
        ("model weights", f"{record.model.get('name', '?')} "
                          f"({record.model.get('revision') or 'no revision'}), sha256 "
                          f"{record.model.get('weights_sha256', '?')}"),
        ("test set", f"sha256 {record.result.test_sha256}"),
        ("artifact bundle", f"sha256 {record.probe.bundle_sha256}"),
        ("seed / resamples", f"{record.seed} / {record.bootstrap_resamples}"),
    ]


def _task_view(task_id: str, record: ResultRecord) -> dict[str, Any]:
    t = record.result
    pred = t.predictions
    view: dict[str, Any] = {
        "id": task_id, "version": t.version, "auroc": _iv(t.auroc),
        "accuracy_name": t.accuracy_name, "accuracy": _iv(t.accuracy),
        "ece": f"{t.ece:.3f}", "brier": f"{t.brier:.3f}", "fpr": f"{t.fpr_at_99tpr:.3f}",
        "latency": f"{record.latency_ms:.1f} ms" if record.latency_ms else "n/a",
        "distshift": _iv(t.distshift_auroc), "evalaware": _iv(t.evalaware_auroc),
        "marks": _marks(t),
        "provenance": _provenance(record),
        "roc": roc_svg(pred.labels, pred.probs, f"ROC curve, {task_id}"),
        "reliability": reliability_svg(pred.labels, pred.probs,
                                       f"Reliability diagram, {task_id}"),
        "slice_figures": [],
    }
    try:
        charts = get_format(t.format).charted_slices
    except InputError:  # a result of a format this installation does not know
        charts = ()
    for chart in charts:
        values = t.slices.get(chart.slice, {})
        bars = [(v, s.accuracy.value, s.accuracy.ci_low or 0.0, s.accuracy.ci_high or 0.0)
                for v, s in sorted(values.items())
                if s.accuracy.value is not None and v not in chart.skip_values]
        if bars:
            view["slice_figures"].append((chart.title, bars_svg(bars, chart.title)))
    return view


def _sweeps(registry: Path) -> dict[str, list[dict[str, Any]]]:
    """task id -> figures of the layer sweeps stored under ``registry/sweeps/``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((registry / "sweeps").rglob("*.json")):
        sweep = read_sweep(path)
        rows = [r for r in sweep.rows if r.auroc is not None]
        layers = [r.layer for r in rows]
        series = [("AUROC", "s1", [r.auroc or 0.0 for r in rows],
                   [r.auroc_ci_low or 0.0 for r in rows], [r.auroc_ci_high or 0.0 for r in rows])]
        if all(r.accuracy is not None for r in rows):
            series.append((sweep.accuracy_name, "s2", [r.accuracy or 0.0 for r in rows],
                           [r.accuracy_ci_low or 0.0 for r in rows],
                           [r.accuracy_ci_high or 0.0 for r in rows]))
        title = (f"Layer sweep: {sweep.probe_type} probes on {sweep.model}, position "
                 f"{sweep.position}")
        best = sweep.best()
        out.setdefault(sweep.task, []).append({
            "title": title, "svg": sweep_svg(layers, series, title),
            "best": f"best layer {best.layer}: AUROC {best.auroc:.3f} "
                    f"[{best.auroc_ci_low:.3f}, {best.auroc_ci_high:.3f}]",
            "rows": sweep.rows, "accuracy_name": sweep.accuracy_name})
    return out


def _task_pages(env: Any, common: dict[str, Any], out: Path, task_ids: Sequence[str],
                entries: Sequence[Entry], results: dict[str, dict[str, ResultRecord]],
                sweeps: dict[str, list[dict[str, Any]]], catalog: TaskCatalog) -> None:
    template = env.get_template("task.html.j2")
    for task_id in task_ids:
        rows: list[dict[str, Any]] = []
        baselines: list[dict[str, Any]] = []
        source, acc_name = "", "accuracy"
        for e in entries:
            rec = results[e.id].get(task_id)
            if rec is None:
                continue
            t = rec.result
            acc_name = t.accuracy_name
            rows.append({"href": page_name(e.id), "short_name": e.short_name,
                         "auroc": _iv(t.auroc), "auroc_value": t.auroc.value,
                         "accuracy": _iv(t.accuracy),
                         "acc_value": t.accuracy.value if t.accuracy.value is not None
                         else -1, "ece": f"{t.ece:.3f}", "marks": _marks(t)})
            if not baselines:
                source = e.short_name
                baselines = [{"name": n, "auroc": _iv(b.auroc), "accuracy": _iv(b.accuracy),
                              "note": b.note} for n, b in sorted(t.baselines.items())]
        spec = catalog.specs.get(task_id)
        task = {"id": task_id, "title": spec.title if spec else task_id,
                "version": spec.version if spec else "?", "format": spec.format if spec else "?",
                "license": spec.license if spec else "?",
                "test_sha256": spec.test_sha256 if spec else "?"}
        html = template.render(**common, root="../", title=task_id, task=task, rows=rows,
                               baselines=baselines, baseline_source=source,
                               accuracy_name=acc_name, sweeps=sweeps.get(task_id, []))
        (out / "tasks" / f"{task_id}.html").write_text(html, encoding="utf-8")
