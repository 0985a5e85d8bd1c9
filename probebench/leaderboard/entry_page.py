"""What an entry page shows beyond its metrics: the task's baselines beside the probe,
the causal test of its direction (``causal_view``: the "moves the model" verdict and the
dose-response figure), the files behind every number, the history of re-evaluations, a
citation and the command that reproduces the numbers.

A metric's definition is given once for the whole leaderboard, not in every tooltip of
every page: ``static/definitions.js`` (``definitions_script``, generated from the same
``columns`` the tables' headers read) holds the metrics' definitions, and app.js fills an
entry page's ``data-def`` headers with them; the ProbeScore axes' definitions, which carry
their spec's weights, stay on the page, once. ``python -m probebench.leaderboard.entry_page``
rewrites the script after a definition changes (a test says when it is out of date).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from probebench.evaluation.baselines import BASELINES
from probebench.evaluation.definitions import METRICS, metric_definitions
from probebench.evaluation.reproducibility import DECIMALS
from probebench.evaluation.results import (
    CausalOut,
    IntervalOut,
    Submission,
    TaskResult,
    TransferOut,
)
from probebench.leaderboard.charts import dose_response_svg, roc_auc
from probebench.leaderboard.columns import CausalCell, columns, moves_the_model
from probebench.leaderboard.files import FileLink, LeaderboardFiles, hub_url, slug
from probebench.leaderboard.markdown import link_url, render_markdown, safe_url
from probebench.leaderboard.probescore import load_probescore_spec
from probebench.registry.baselines import BaselineRecord, task_baselines
from probebench.registry.entry import Entry, entry_path
from probebench.registry.store import ResultRecord, read_history, reference_record, result_path
from probebench.safetext import without_hidden


def interval_text(x: IntervalOut | None) -> str:
    """A value with its 95% CI as pages write it: ``0.812 [0.741, 0.870]``; ``n/a``
    without a value."""
    if x is None or x.value is None:
        return "n/a"
    text = f"{x.value:.3f}"
    if x.ci_low is not None and x.ci_high is not None:
        text += f" [{x.ci_low:.3f}, {x.ci_high:.3f}]"
    return text


def baseline_key(record: ResultRecord) -> str:
    """The key ``task_baselines`` stores the baselines of ``record``'s model and site
    under."""
    name = str(record.model.get("name", record.probe.model))
    return f"{name} at {record.probe.layer}:{record.probe.position}"


def baselines_beside(registry: Path, task: str, record: ResultRecord) -> dict[str, Any]:
    """The probe's AUROC and accuracy beside the task's baselines on the same model and
    site: those stored with the task (``registry/baselines/``), else the ones computed
    in the same evaluation (the same numbers, kept with the result)."""
    stored: BaselineRecord | None = task_baselines(registry, task).get(baseline_key(record))
    if stored is not None and stored.test_sha256 == record.result.test_sha256:
        source = f"stored with the task (registry/baselines/{task}/), {baseline_key(record)}"
        baselines = stored.baselines
    else:
        source = "computed in the same evaluation as this result, on the same test split"
        baselines = record.result.baselines

    def order(name: str) -> tuple[int, str]:
        return (BASELINES.index(name) if name in BASELINES else len(BASELINES), name)

    probe = record.result.auroc.value
    rows = []
    for name, b in sorted(baselines.items(), key=lambda kv: order(kv[0])):
        base = b.auroc.value if b.auroc is not None else None
        rows.append({"name": name, "auroc": interval_text(b.auroc),
                     "accuracy": interval_text(b.accuracy),
                     "note": b.note,
                     "delta": "n/a" if probe is None or base is None else
                              f"{probe - base:+.3f}"})
    return {"source": source, "probe_auroc": interval_text(record.result.auroc),
            "probe_accuracy": interval_text(record.result.accuracy), "rows": rows}


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def transfer_view(result: TaskResult) -> dict[str, Any]:
    """What the entry page shows of a result's cross-model transfer: one row per
    declared target measured through the map (target AUROC, transfer, the map's held-out
    R², the shuffled-pair control), and a one-line summary; a result stored before the
    map (a Pearson r, or the imputed 0.5) is shown as it was stored."""
    rows, older = [], []
    for key, v in sorted(result.transfer.items()):
        if isinstance(v, TransferOut):
            rows.append({"target": v.target, "auroc": interval_text(v.auroc),
                         "source_auroc": _num(v.source_auroc), "transfer": _num(v.transfer),
                         "map_r2": _num(v.map_r2), "control_r2": _num(v.control_r2),
                         "alpha": "n/a" if v.alpha is None else f"{v.alpha:g}",
                         "control_auroc": _num(v.control_auroc),
                         "control_transfer": _num(v.control_transfer), "note": v.note})
        else:
            older.append(f"{key}: {_num(v.value)}" + (f" (imputed: {v.note})" if v.imputed
                                                      else f" ({v.note})"))
    if rows:
        summary = "; ".join(f"{r['target']}: {r['transfer']} (control {r['control_transfer']}"
                            f", map R² {r['map_r2']})" for r in rows)
    elif older:
        summary = "; ".join(older) + " (stored before transfer was measured through a map)"
    else:
        summary = "no target declared (ProbeScore imputes the axis)"
    return {"rows": rows, "summary": summary, "definition": METRICS["transfer"].text}


#: the stored AUROC is itself rounded to ``DECIMALS`` places: within this, the stored
#: probabilities reproduce it
def causal_view(task_id: str, out: CausalOut | None,
                missing: str = "no causal test stored") -> dict[str, Any]:
    """A task section's causal test: the "moves the model" cell (``moves_the_model``), the
    dose-response figure (the probe's curve over the controls' range) where the test ran,
    and the readout and ablation in words."""
    cell: CausalCell = moves_the_model(out, missing)
    view: dict[str, Any] = {"cell": cell, "chart": None, "readout": None, "ablation": None,
                            "wrong_sign": None}
    if out is None or not out.applicable:
        return view
    if out.curve and len(out.curve) == len(out.alphas):
        view["chart"] = dose_response_svg(out.alphas, out.curve, out.controls,
                                          f"Dose-response of the causal test, {task_id}")
    if out.readout:
        view["readout"] = ", ".join(f"{k} {v}" for k, v in sorted(out.readout.items()))
    if out.wrong_sign_effect is not None:
        view["wrong_sign"] = f"{out.wrong_sign_effect:.3f}"
    a = out.ablation
    if a is not None:
        view["ablation"] = (f"readout accuracy {_num(a.accuracy_before)} -> "
                            f"{_num(a.accuracy_after)}, AUROC {_num(a.auroc_before)} -> "
                            f"{_num(a.auroc_after)}, mean readout change "
                            f"{_num(a.mean_readout_change)}")
    return view


AUROC_AGREES = 1.5 * 10.0 ** -DECIMALS


def predictions_note(result: TaskResult) -> dict[str, str] | None:
    """Why the AUROC of the stored per-prompt probabilities (the ROC curve's, and the
    one the baseline gap is resampled from) differs from the stored AUROC, when it does;
    None when they agree, and for a multi-class result (its AUROC is a macro AUROC,
    which no one curve draws).

    ``submit`` computes the AUROC from the probe's probabilities and then stores every
    number rounded to ``DECIMALS`` places, the probabilities too. A probe whose
    probabilities saturate (many within 10⁻⁶ of 0 or 1) then ties prompts of both labels
    that were ordered before, and the stored probabilities give another AUROC than the
    stored one, although both come from the same record. The page shows both, so the
    curve, the gap and the AUROC do not contradict each other unexplained."""
    pred = result.predictions
    stored = result.auroc.value
    if pred.class_probs is not None or stored is None or len(set(pred.labels)) < 2:
        return None
    drawn = roc_auc(pred.labels, pred.probs)
    if abs(drawn - stored) <= AUROC_AGREES:
        return None
    # the fewest decimals (3 to DECIMALS) at which the two numbers read differently
    places = next((d for d in range(3, DECIMALS + 1)
                   if f"{drawn:.{d}f}" != f"{stored:.{d}f}"), DECIMALS)
    by_label: dict[int, set[float]] = {}
    for y, p in zip(pred.labels, pred.probs, strict=True):
        by_label.setdefault(y, set()).add(p)
    shared = set.intersection(*by_label.values())
    tied = sum(p in shared for p in pred.probs)
    return {
        "drawn": f"{drawn:.{places}f}", "stored": f"{stored:.{places}f}",
        "text": (f"The stored per-prompt probabilities are rounded to {DECIMALS} decimals, "
                 f"and at that precision {tied} of the {len(pred.probs)} labelled prompts "
                 "share their probability with a prompt of the other label: their AUROC, "
                 f"which the ROC curve and the baseline gap read, is {drawn:.{places}f}, "
                 f"where the stored AUROC, {stored:.{places}f}, was computed by the same "
                 "evaluation (this record) before the probabilities were rounded.")}


def history(registry: Path, entry_id: str, task: str) -> list[dict[str, Any]]:
    """Every stored evaluation of the entry on ``task``, newest first; ``shown`` marks
    the record the leaderboard reads (the latest float32 one)."""
    records = read_history(result_path(registry, entry_id, task))
    shown = reference_record(records)
    out = []
    for k, rec in enumerate(records):
        run = rec.run
        out.append({
            "n": k + 1, "shown": rec is shown,
            "evaluated": run.evaluated_at if run else "not recorded",
            "probebench": rec.versions.get("probebench", "?") + (
                f" ({run.probebench_commit[:12]}"
                + (", uncommitted changes" if rec.from_dirty_tree else "") + ")"
                if run and run.probebench_commit else ""),
            "device": f"{rec.device} / {rec.dtype}",
            "test_sha256": rec.result.test_sha256[:12],
            "auroc": interval_text(rec.result.auroc),
            "accuracy": interval_text(rec.result.accuracy)})
    return out[::-1]


def report_markdown(record: ResultRecord, spec_version: str) -> str | None:
    """REPORT.md of a stored result, as ``submit`` writes it for a one-task submission
    (None when the record lacks what the report shows, e.g. the model's identity)."""
    from jinja2 import UndefinedError

    from probebench.evaluation.report import render_report

    submission = Submission(spec_version=spec_version,
                            probebench_version=record.versions.get("probebench", "unknown"),
                            probe=record.probe, model=record.model, device=record.device,
                            seed=record.seed, bootstrap_resamples=record.bootstrap_resamples,
                            versions=record.versions, definitions=metric_definitions(),
                            tasks=[record.result], run=record.run)
    try:
        return render_report(submission)
    except (UndefinedError, KeyError, TypeError):
        return None


def _bib(text: str) -> str:
    """A BibTeX field value: braces, backslashes, control and bidi characters removed
    (an escape would bring a backslash back).

    >>> _bib("{Ada}\\u202e Lovelace\\x1b")
    'Ada Lovelace'
    """
    return without_hidden(re.sub(r"[{}\\%\x00-\x1f]", "", text)).strip()


def artifact_link(entry: Entry, source_url: str | None = None) -> str:
    """Where the artifact is, for a citation: its page on the hub or GitHub, its http(s)
    URL, or its repository path (under ``source_url``, the repository's files at the
    commit built, when given; else as the entry writes it).

    >>> from probebench.registry.entry import Entry
    >>> e = Entry.model_construct(artifact_url="registry/artifacts/verb-v1")
    >>> artifact_link(e)
    'registry/artifacts/verb-v1'
    >>> artifact_link(e, "https://github.com/o/r/blob/c0ffee/")
    'https://github.com/o/r/blob/c0ffee/registry/artifacts/verb-v1'
    """
    where = entry.artifact_url.strip()
    remote = hub_url(where) or safe_url(where)
    if remote is not None:
        return remote
    if source_url and "://" not in where and not where.startswith("/"):
        linked = safe_url(f"{source_url.rstrip('/')}/{quote(where.strip('/'))}")
        if linked is not None:
            return linked
    return _bib(where)


def citation(entry: Entry, records: Mapping[str, ResultRecord], spec_version: str, *,
             url: str | None = None) -> str:
    """A BibTeX entry citing the entry at its artifact hash and evaluation. Its ``url``
    field is ``url`` when that is an http(s) URL (the entry page's address where the
    build knows it, or the artifact's under ``--source-url``), else ``artifact_link``;
    a paper is named in the note. On a leaderboard served over http(s), app.js puts
    the page's own address there."""
    runs = sorted(r.run.evaluated_at for r in records.values() if r.run)
    year = (re.match(r"\d{4}", entry.release) or re.match(r"\d{4}", runs[-1] if runs else ""))
    versions = sorted({r.versions.get("probebench", "?") for r in records.values()})
    paper = safe_url(entry.paper)
    fields = [
        ("title", f"{{{_bib(entry.name)}}}: a {entry.probe_type} probe on {_bib(entry.model)}, "
                  f"layer {entry.layer}, {entry.position}"),
        ("author", _bib(entry.author)),
        ("year", year.group(0) if year else "n.d."),
        ("howpublished", f"probebench registry entry {entry.id}"),
        ("note", f"Artifact sha256 {entry.artifact_sha256}; evaluated on "
                 f"{', '.join(sorted(records))} with probebench {', '.join(versions)}"
                 + (f" ({runs[-1]})" if runs else "") + f"; ProbeScore v{spec_version}"
                 + (f"; paper {_bib(paper)}" if paper else "")),
        # safe_url admits no brace, backslash or space: the value cannot end the field
        ("url", safe_url(url) or artifact_link(entry)),
    ]
    key = "probebench:" + re.sub(r"[^A-Za-z0-9]+", "-", entry.id).strip("-")
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k.ljust(width)} = {{{v}}}" for k, v in fields)
    return f"@misc{{{key},\n{body}\n}}\n"


def reproduce_commands(entry: Entry, records: Mapping[str, ResultRecord]) -> str:
    """The commands that re-evaluate the entry with the stored results' settings, at
    the commit that measured them (``registry evaluate --no-store`` leaves the store
    as it is and writes submission.json)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for task, rec in sorted(records.items()):
        commit = rec.run.probebench_commit if rec.run and rec.run.probebench_commit else ""
        device = "cuda" if rec.device.startswith("cuda") else "cpu"
        key = (commit, str(rec.seed), str(rec.bootstrap_resamples), device, rec.dtype)
        groups.setdefault(key, []).append(task)
    blocks = []
    for (commit, seed, resamples, device, dtype), tasks in groups.items():
        lines = []
        if len(groups) > 1:
            lines.append(f"# the results on {', '.join(tasks)}")
        if commit:
            clean = commit.removesuffix("+dirty")
            note = ("  # the evaluating checkout had uncommitted changes"
                    if commit.endswith("+dirty") else "")
            lines.append(f"git checkout {clean}{note}")
        else:
            lines.append("# the probebench commit was not recorded")
        dtype_flag = f" --dtype {dtype}" if dtype in ("float32", "bfloat16", "float16") else ""
        lines.append(f"probebench registry evaluate {entry.id} --no-store --seed {seed} "
                     f"--bootstrap {resamples} --device {device}{dtype_flag} "
                     "--submission submission.json")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def linked_files(files: LeaderboardFiles, registry: Path, entry: Entry,
                records: Mapping[str, ResultRecord], spec_version: str) -> dict[str, Any]:
    """The files behind an entry's page, each linked (or listed) as ``files`` decides,
    and its README rendered inert."""
    base = f"files/{slug(entry.id)}"
    folder = files.artifact_folder(entry.artifact_url)
    artifact = files.artifact_files(folder, f"{base}/artifact") if folder else []
    by_name = {f.name: f for f in artifact}
    results: list[tuple[str, FileLink | None, FileLink | None]] = []
    for task, rec in sorted(records.items()):
        stored = files.repository_file(result_path(registry, entry.id, task),
                                       f"{base}/results/{task}.json",
                                       note="stored results with their history")
        text = report_markdown(rec, spec_version)
        report = (files.generated(f"{base}/reports/{task}/REPORT.md", text, name="REPORT.md",
                                  note="rendered from the stored result")
                  if text is not None else None)
        results.append((task, stored, report))
    readme = None
    if "README.md" in by_name and folder is not None:
        def resolve(target: str) -> str | None:
            linked = by_name.get(target.removeprefix("./"))
            if linked is not None and linked.href is not None:
                return linked.from_page("../")
            return link_url(target)

        text = (folder / "README.md").read_text("utf-8", errors="replace")
        readme = render_markdown(text, resolve)
    notebooks = [f for f in artifact if f.name.endswith(".ipynb")]
    return {
        "entry_yaml": files.repository_file(entry_path(registry, entry.id),
                                            f"{base}/entry.yaml",
                                            note="the registry entry"),
        "artifact": artifact,
        "artifact_where": ("in the repository" if folder else
                           "on GitHub" if entry.artifact_url.startswith("https://github.com/")
                           else "on the Hugging Face Hub"
                           if entry.artifact_url.startswith(("hf://", "https://huggingface.co/"))
                           else "outside the repository"),
        "hub": hub_url(entry.artifact_url),
        "notebooks": notebooks,
        "reproducer": by_name.get(entry.reproducer_notebook),
        "colab": safe_url(entry.colab_url),
        "paper": safe_url(entry.paper),
        "results": results,
        "readme": readme,
        # here, where the repository's address (--source-url) is known
        "citation": citation(entry, records, spec_version,
                             url=artifact_link(entry, files.source_url)),
    }


def history_by_task(registry: Path, entry_id: str,
                    tasks: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    return {t: history(registry, entry_id, t) for t in tasks}


#: the columns an entry page's metric tables define through ``static/definitions.js``:
#: the metrics', which no ProbeScore spec changes (a test holds them equal under every
#: spec in ``specs/``)
SITE_DEFINITIONS = ("auroc", "accuracy", "selectivity", "ece", "brier", "fpr", "distshift",
                    "evalaware", "transfer", "cost", "latency", "causal", "recall", "marks")
#: the script, in the leaderboard's static files (copied into every build)
DEFINITIONS_JS = Path(__file__).resolve().parent / "static" / "definitions.js"


def site_definitions() -> dict[str, str]:
    """Column key -> its definition (plain text), for ``SITE_DEFINITIONS``: the text of the
    header's tooltip on every page (``columns``); transfer's is its metric's."""
    cols = columns(load_probescore_spec())
    return {key: METRICS["transfer"].text if key == "transfer" else cols[key].definition
            for key in SITE_DEFINITIONS}


def definitions_script() -> str:
    """``static/definitions.js``: ``window.PROBEBENCH_DEFINITIONS``, read by app.js (a
    script, not JSON, so that it loads from file://); ASCII only, so no character of a
    definition can end the script."""
    return ("// The leaderboard's column definitions, filled into the entry pages' tooltips by\n"
            "// app.js. Generated by `python -m probebench.leaderboard.entry_page`: do not edit.\n"
            "window.PROBEBENCH_DEFINITIONS = "
            + json.dumps(site_definitions(), ensure_ascii=True, indent=1) + ";\n")


__all__ = ["AUROC_AGREES", "DEFINITIONS_JS", "SITE_DEFINITIONS", "artifact_link",
           "baseline_key", "baselines_beside", "causal_view", "citation",
           "definitions_script", "history", "history_by_task", "linked_files",
           "predictions_note", "report_markdown", "reproduce_commands", "site_definitions",
           "transfer_view"]


if __name__ == "__main__":  # rewrite static/definitions.js
    DEFINITIONS_JS.write_text(definitions_script(), encoding="utf-8")
    print(f"wrote {DEFINITIONS_JS}", file=sys.stderr)
