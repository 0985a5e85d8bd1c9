"""What the leaderboard's table columns are called and what they mean.

Headers are words, not field names; each header's tooltip (and the methodology page's
list of columns) is its definition, taken from the code that computes the number: a
metric's column takes its header, its definition and its direction from the metric's
``MetricDef`` (``evaluation.definitions.METRICS``, also the source of submission.json's
definitions and METHODOLOGY.md's list), the ProbeScore axes from ``AXES`` and the rank
from the rank bootstrap (``RANK_DEFINITION``), the gap to the baselines from
``GAP_DEFINITION``. Nothing here is a hand-made copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from probebench.evaluation.baselines import GAP_DEFINITION
from probebench.evaluation.definitions import METRICS, Direction
from probebench.leaderboard.markdown import plain_markdown
from probebench.leaderboard.probescore import ProbeScoreSpec
from probebench.leaderboard.ranks import RANK_DEFINITION


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    #: plain text (no Markdown), shown as the header's tooltip
    definition: str


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _metric(key: str, name: str, lead: str, sep: str = ": ", tail: str = "") -> Column:
    """The column of metric ``name``: its label, and ``lead`` + its definition (``lead``
    empty: the definition alone). A lower-is-better metric says so after the lead; higher
    is how a score reads unless told (scikit-learn's ``*_score``), and saying it on every
    column would only repeat that."""
    metric = METRICS[name]
    text = plain_markdown(metric.text)
    lower = metric.direction is Direction.LOWER
    if lead:
        note = f" ({metric.direction.value})" if lower else ""
        body = f"{lead}{note}{sep}{text}"
    else:
        body = _first_upper(text) + (f" {_first_upper(metric.direction.value)}."
                                     if lower else "")
    return Column(key, metric.label, body + tail)


def columns(spec: ProbeScoreSpec) -> dict[str, Column]:
    """key -> column, for every column the leaderboard's tables show; ProbeScore axes are keyed
    ``axis:<name>`` in the order of ``spec``."""
    cap = f"{spec.cap * 100:g}%"
    out = [
        Column("rank", "Rank", _first_upper(RANK_DEFINITION) + "."),
        Column("entry", "Entry", "The entry's short name, and its id "
                                 "(registry/probes/<id>.yaml)."),
        Column("model", "Model", "The language model the probe reads."),
        Column("site", "Site", "layer:position, where the probe reads the model: the hidden "
                               "state after block number layer (0 = the embeddings), taken "
                               "at or pooled over position (last_token, token_avg, ...)."),
        Column("tasks", "Task set", "The registered tasks the entry is scored on. An entry "
                                    "is ranked only against entries scored on exactly the "
                                    "same task set."),
        Column("probescore", "ProbeScore",
               f"ProbeScore v{spec.version}: the sum of the axes' values times their "
               f"normalised weights, no axis contributing more than {cap} of the total "
               "(Methodology). In brackets, its 95% interval from the rank bootstrap, which "
               "resamples the test items and recomputes every axis with sampling "
               "uncertainty on each resample (AUROC and calibration from the stored "
               "predictions; numbers stored only with a 95% interval drawn from a normal "
               "approximation to it), with the cap applied on each; the other axes are "
               "held. A zero-width interval says why nothing varies."),
        _metric("auroc", "auroc", "AUROC, mean over the task set",
                tail=" In brackets, the 95% interval: " + plain_markdown(METRICS["ci"].text)),
        Column("gap", "Baseline gap",
               _first_upper(GAP_DEFINITION) + ". ✓ beats them; ✗ does not, and the entry "
               "is then not ranked (listed after the ranked entries, rank —); ? not "
               "compared (the gap is unknown), not ranked either. Over several tasks, the "
               "task the entry's standing turns on (one it fails, else the lowest "
               "interval)."),
        _metric("selectivity", "selectivity",
                "Accuracy minus control-task accuracy, mean over the task set", sep=". "),
        _metric("accuracy", "accuracy", ""),
        _metric("ece", "ece", "Expected calibration error"),
        _metric("brier", "brier", "Brier score"),
        _metric("fpr", "fpr_at_99tpr", "False-positive rate at 99% true-positive rate"),
        _metric("cost", "cost", "Billions of FLOPs per test prompt"),
        _metric("latency", "latency_ms", "Measured, not scored, as it depends on the "
                                         "machine"),
        _metric("distshift", "distshift_auroc", ""),
        _metric("evalaware", "evalaware_auroc", ""),
        _metric("recall", "recall_at_1pct_fpr", "Reported, not a ProbeScore axis; only on "
                "tasks that declare a control set", sep=". "),
        _metric("marks", "marks", ""),
        Column("status", "Status", "live (ranked), pending_review (awaiting review, not "
                                   "ranked), deprecated (archived) or guard (never ranked)."),
    ]
    cols = {c.key: c for c in out}
    weights = spec.normalised()
    for axis in spec.axes:
        cols[f"axis:{axis.name}"] = Column(
            axis.name, axis.label,
            f"{axis.label}, the ProbeScore axis {axis.name} (normalised weight "
            f"{weights[axis.name]:.3f}): {plain_markdown(axis.definition)}.")
    return cols


__all__ = ["Column", "columns"]
