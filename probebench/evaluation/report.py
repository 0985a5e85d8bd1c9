"""REPORT.md: the submission as human-readable tables (Jinja2 template in ``templates/``).

Per task: the headline, robustness, the recall at 1% false positives (tasks that declare
a control set only), baselines and the gap to the best of them,
control-task selectivity, slices and the most confident errors; before the timing, the
generalisation block and (``submit --causal``) the causal test, each task's table, its
dose-response curve as a mermaid chart and as a table. A submission that
skipped stages (``Submission.stages_skipped``, the quick profile) says so at the top, and
each cell of a stage that did not run reads "not run" with the reason. The errors' texts are
the task's, not the result's: ``render_report`` shows them when given the submission's
sample records (``probebench.evaluation.samples.sample_records``); without them (the
leaderboard renders stored results) it lists the errors' prompt ids and says so.

Texts come from task files, entries and stored results, written by strangers: every
value the template writes goes through ``probebench.safetext.visible`` (the
environment's ``finalize``), so a control or bidi character (``ESC[2J``, an OSC 8
hyperlink, ``U+202E``) shows as an escape such as ``\\x1b`` or ``\\u202e``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probebench.errors import InputError
from probebench.evaluation.baselines import BASELINES
from probebench.evaluation.generalisation import GENERALISATION
from probebench.evaluation.latency import RATE_TOLERANCE
from probebench.evaluation.results import CausalOut, Submission, TaskResult
from probebench.evaluation.samples import N_ERRORS, confident_errors
from probebench.safetext import visible

if TYPE_CHECKING:
    from jinja2 import Environment

#: the definitions that differ for a multi-class task (``probebench.evaluation.metrics``)
MULTICLASS_DEFINITIONS = {
    "auroc": "one-vs-rest macro AUROC: the mean over classes k of the AUROC of P(k) for "
             "class k against every other class (sklearn.metrics.roc_auc_score with "
             "multi_class='ovr', average='macro').",
    "accuracy": "the most probable class is the prompt's class (ties: the first class in "
                "order); an item's correctness is the share of its prompts that are right.",
    "ece": "top-label ECE: 15 equal-width bins on the predicted class's probability; sum "
           "of bin share x |share right - mean P|.",
    "brier": "multi-class Brier: mean over prompts of sum over classes k of (P(k) - "
             "[class = k])^2 (0 to 2).",
    "fpr_at_99tpr": "binary only (no single multi-class meaning).",
}
#: a table cell's text is cut to this many characters
CELL_CHARS = 300
_MARKDOWN = set("\\`*_[]<>|~")


def markdown_cell(text: str, limit: int = CELL_CHARS) -> str:
    """``text`` safe inside one Markdown table cell: Markdown-significant characters
    (``|`` among them) escaped with a backslash, each line break shown as ``↵``, control
    and bidi characters as visible escapes (``probebench.safetext``), and cut to
    ``limit`` characters (``…`` marks a cut).

    >>> markdown_cell("a | b\\nc_d")
    'a \\\\| b↵c\\\\_d'
    >>> markdown_cell("\\x1b[2Jx\\u202e")
    '\\\\x1b\\\\[2Jx\\\\u202e'
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    text = "".join("↵" if c == "\n" else f"\\{c}" if c in _MARKDOWN else c for c in text)
    return visible(text)


def _shown(value: Any) -> Any:
    """What every ``{{ ... }}`` of the template writes: text made visible (a task's or
    an entry's text may hold control or bidi characters), other values as they are."""
    return visible(value, lines=True) if isinstance(value, str) else value


@cache
def _environment() -> Environment:
    """One Jinja2 environment, so the template is compiled once per process (the
    leaderboard renders a report per stored result)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")),
                      undefined=StrictUndefined, trim_blocks=False,
                      keep_trailing_newline=True, autoescape=False,  # Markdown, not HTML
                      finalize=_shown)
    env.filters["cell"] = markdown_cell
    return env


def _texts(submission: Submission, samples: Sequence[Mapping[str, Any]] | None
           ) -> list[list[str] | None]:
    """Per task of ``submission``, the text of each prediction (None: not given)."""
    if samples is None:
        return [None] * len(submission.tasks)
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for record in samples:
        by_task.setdefault(str(record["task"]), []).append(record)
    out: list[list[str] | None] = []
    for task in submission.tasks:
        records = by_task.get(task.id, [])
        ids = [str(r["prompt_id"]) for r in records]
        if ids != task.predictions.prompt_ids:
            raise InputError(f"task {task.id}: the sample records ({len(ids)}) do not join "
                             f"the result's predictions ({len(task.predictions.prompt_ids)}) "
                             "one for one; make them with sample_records(submission, ...)")
        out.append([str(r["text"]) for r in records])
    return out


def _errors(task: TaskResult, texts: list[str] | None) -> list[dict[str, Any]]:
    return [{"prompt_id": e.prompt_id, "label": e.label, "probability": e.probability,
             "predicted": e.predicted, "confidence": e.confidence,
             "text": None if texts is None else texts[e.position]}
            for e in confident_errors(task, N_ERRORS)]


def _definitions(submission: Submission) -> dict[str, str]:
    """The submission's definitions; where a multi-class task reads a metric otherwise,
    its definition (alone when every task is multi-class)."""
    out = dict(submission.definitions)
    kinds = {t.classes is None for t in submission.tasks}
    if False not in kinds:  # no multi-class task
        return out
    for name, text in MULTICLASS_DEFINITIONS.items():
        if True in kinds and name in out:
            out[name] = f"{out[name]} Multi-class tasks: {text}"
        else:
            out[name] = text
    return out


def render_report(submission: Submission, *,
                  samples: Sequence[Mapping[str, Any]] | None = None) -> str:
    """REPORT.md of ``submission``.

    Args:
        submission: what ``submit`` returned, or a stored result wrapped as one.
        samples: the submission's sample records (``sample_records``), whose texts the
            most-confident-errors lists show; None lists the errors' prompt ids only.
    """
    template = _environment().get_template("report.md.j2")
    present = [b for b in BASELINES if any(b in t.baselines for t in submission.tasks)]
    present += sorted({b for t in submission.tasks for b in t.baselines} - set(present))
    texts = _texts(submission, samples)
    errors = [_errors(t, tx) for t, tx in zip(submission.tasks, texts, strict=True)]
    text = template.render(s=submission, baseline_names=present, errors=errors,
                           texts_given=samples is not None, n_errors=N_ERRORS,
                           definitions=_definitions(submission),
                           rate_band=f"{1 + RATE_TOLERANCE:g}")
    return with_causal(with_generalisation(text, submission), submission)


#: the heading REPORT.md's generalisation section is placed before (else at the end)
_BEFORE = "\n## Timing"


def with_generalisation(text: str, submission: Submission) -> str:
    """``text`` (REPORT.md) with the section "Generalisation to sibling tasks" before its
    timing section: the submission's row of its family's generalisation matrix (the
    probe's own tasks, then each sibling's AUROC with its CI), or ``text`` unchanged
    when the submission has no generalisation block."""
    block = submission.generalisation
    if block is None:
        return text

    def auroc(value: float | None, low: float | None, high: float | None) -> str:
        if value is None:
            return "n/a"
        return f"{value:.3f}" + ("" if low is None or high is None
                                 else f" [{low:.3f}, {high:.3f}]")

    stage = submission.timing.stages.get(GENERALISATION) if submission.timing else None
    timed = ("" if stage is None else f" The sibling passes took {stage.seconds:.1f} s "
             f"({stage.passes} forward pass{'' if stage.passes == 1 else 'es'}; "
             "`timing.stages.generalisation`), apart from "
             "the tasks' results.")
    lines = ["## Generalisation to sibling tasks", "",
             f"The probe, evaluated on {', '.join(f'`{t}`' for t in block.trained_on)} "
             f"(family `{block.family}`), read unchanged at its site on every other "
             "registered task of the family: AUROC with its 95% item-bootstrap interval "
             "on each task's test set. Reported, not ranked: no ProbeScore axis and no "
             f"ranking reads these numbers.{timed}", "",
             "| task | role | items | AUROC [95% CI] | note |", "| --- | --- | --- | --- | --- |"]
    own = {t.id: t for t in submission.tasks}
    for task_id in block.trained_on:
        t = own[task_id]
        lines.append(f"| {markdown_cell(task_id)} | trained on (its own test set) | "
                     f"{t.n_items} | {auroc(t.auroc.value, t.auroc.ci_low, t.auroc.ci_high)}"
                     " | the task's own result |")
    for task_id, sib in sorted(block.siblings.items()):
        lines.append(f"| {markdown_cell(task_id)} | sibling | {sib.n} | "
                     f"{auroc(sib.auroc, *sib.ci)} | "
                     f"{markdown_cell(sib.note or 'reported, not ranked')} |")
    return _before_timing(text, visible("\n".join(lines) + "\n", lines=True))


def _before_timing(text: str, section: str) -> str:
    at = text.find(_BEFORE)
    if at < 0:
        return text.rstrip("\n") + "\n\n" + section
    return text[:at + 1] + section + text[at:]


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _causal_row(task_id: str, c: CausalOut) -> dict[str, Any]:
    """What the causal section shows of one task's block (numbers as text)."""
    row: dict[str, Any] = {"task": task_id, "applicable": c.applicable, "reason": c.reason}
    if not c.applicable:
        return row
    readout = dict(c.readout or {})
    kind = readout.pop("kind", "?")
    items = c.items
    skipped = sum(int(n) for n in (items.get("skipped") or {}).values())
    ctrl = (f"{min(c.controls):.3f} to {max(c.controls):.3f}, {len(c.controls)} controls"
            if c.controls else "no controls")
    ab = c.ablation
    row.update(
        readout=f"{kind}: " + ", ".join(f"{k} {v!r}" for k, v in readout.items()),
        n_items=f"{items.get('n_items', '?')} ({items.get('n_units', '?')} units"
              + (f", {skipped} skipped" if skipped else "") + ")",
        effect=_f(c.effect) + ("" if c.ci is None else f" [{_f(c.ci[0])}, {_f(c.ci[1])}]"),
        wrong_sign=_f(c.wrong_sign_effect),
        percentile=("n/a" if c.control_percentile is None
                    else f"{c.control_percentile:.1f}") + f" ({ctrl})",
        accuracy="n/a" if ab is None else f"{_f(ab.accuracy_before)} → {_f(ab.accuracy_after)}",
        auroc="n/a" if ab is None else f"{_f(ab.auroc_before)} → {_f(ab.auroc_after)}",
        # a mermaid title is a quoted string: only the task id's plain characters
        title="".join(ch for ch in task_id if ch.isalnum() or ch in "_-. ")
              + ": readout change along the probe's direction",
        alphas=[f"{a:g}" for a in c.alphas], curve=[f"{v:.3f}" for v in c.curve])
    row["points"] = list(zip(row["alphas"], row["curve"], strict=True))
    return row


def causal_section(blocks: Mapping[str, CausalOut]) -> str:
    """REPORT.md's "Causal test" section of ``Submission.causal``: per task, its table and
    its dose-response curve (a mermaid ``xychart-beta`` and the same numbers as a table),
    or one line with why the test does not apply. No timings: deterministic."""
    template = _environment().get_template("causal.md.j2")
    return template.render(blocks=[_causal_row(t, c) for t, c in blocks.items()])


def with_causal(text: str, submission: Submission) -> str:
    """``text`` (REPORT.md) with the "Causal test" section before its timing section, or
    unchanged when the submission has no causal block."""
    if submission.causal is None:
        return text
    return _before_timing(text, causal_section(submission.causal).rstrip("\n") + "\n")


__all__ = ["CELL_CHARS", "MULTICLASS_DEFINITIONS", "causal_section", "markdown_cell",
           "render_report", "with_causal", "with_generalisation"]
