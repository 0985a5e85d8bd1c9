"""What the leaderboard's table columns are called and what they mean.

Headers are words, not field names; each header's tooltip (and the methodology page's
list of columns) is its definition, taken from the code that computes the number: a
metric's column takes its header, its definition and its direction from the metric's
``MetricDef`` (``evaluation.definitions.METRICS``, also the source of submission.json's
definitions and METHODOLOGY.md's list), the ProbeScore axes from ``AXES`` and the rank
from the rank bootstrap (``RANK_DEFINITION``), the gap to the baselines from
``GAP_DEFINITION``. Nothing here is a hand-made copy.

The "moves the model" column (``moves_the_model``) reads an entry's causal record
(``registry.store.latest_causal``): its definition, ``CAUSAL_DEFINITION``, is the rule
the function applies. It is reported beside the metrics and is no ProbeScore axis.
"""

from __future__ import annotations

from dataclasses import dataclass

from probebench.evaluation.baselines import GAP_DEFINITION
from probebench.evaluation.definitions import METRICS, Direction
from probebench.evaluation.results import CausalOut
from probebench.leaderboard.markdown import plain_markdown
from probebench.leaderboard.probescore import ProbeScoreSpec
from probebench.leaderboard.ranks import RANK_DEFINITION


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    #: plain text (no Markdown), shown as the header's tooltip
    definition: str


#: the works the causal test follows, as the column and METHODOLOGY cite them
CAUSAL_CITATIONS = ('Marks & Tegmark 2023, "The Geometry of Truth", arXiv:2310.06824; '
                    'Arditi et al. 2024, "Refusal in Language Models Is Mediated by a '
                    'Single Direction", arXiv:2406.11717')
#: the control percentile a "yes" needs: the probe's effect above every random control
CAUSAL_PERCENTILE = 100.0
#: the column's definition: the rule ``moves_the_model`` applies
CAUSAL_DEFINITION = (
    "Whether steering the residual stream along the probe's direction moves the model's "
    "own behaviour (the causal test, docs/causal.md, after " + CAUSAL_CITATIONS + "): "
    "the direction is added at the probe's site at -4 to 4 standard deviations and the "
    "task's readout (what the model itself answers) is read; the effect is the mean "
    "slope of the readout per standard deviation, with its 95% item-bootstrap interval, "
    "and the control percentile the share of 16 random directions of the activations' "
    "own covariance whose effect is below it. yes: the interval lies above 0 and the "
    "effect is above every random control (control percentile 100); no: measured "
    "otherwise; n/a: the test does not apply (not a linear probe, or the task declares "
    "no readout), with the reason; not measured: no stored causal test of the entry's "
    "current artifact on the task's registered test set. Shown with the effect [95% "
    "interval] and the control percentile. Reported, not a ProbeScore axis.")


@dataclass(frozen=True)
class CausalCell:
    """What the "moves the model" column shows for one entry on one task."""

    verdict: str              #: yes, no, n/a or not measured
    detail: str               #: the effect [CI] and control percentile, or why not
    effect: float | None = None

    @property
    def text(self) -> str:
        return f"{self.verdict} ({self.detail})" if self.detail else self.verdict


def moves_the_model(out: CausalOut | None, missing: str = "no causal test stored"
                    ) -> CausalCell:
    """The column's value for one task's causal test (``CAUSAL_DEFINITION``); ``out``
    None: not measured, ``missing`` says why.

    >>> moves_the_model(CausalOut(applicable=True, effect=0.5, ci=(0.2, 0.8),
    ...                           controls=[0.1, -0.2], control_percentile=100.0)).text
    'yes (effect 0.500 [0.200, 0.800], control percentile 100 of 2)'
    >>> moves_the_model(None).text
    'not measured (no causal test stored)'
    """
    if out is None:
        return CausalCell("not measured", missing)
    if not out.applicable:
        return CausalCell("n/a", out.reason or "the test does not apply")
    if out.effect is None:
        return CausalCell("no", "measured, but no effect was computed")
    low, high = out.ci if out.ci is not None else (None, None)
    interval = ("" if low is None or high is None else f" [{low:.3f}, {high:.3f}]")
    pct = out.control_percentile
    detail = f"effect {out.effect:.3f}{interval}, " + (
        "no control directions" if pct is None else
        f"control percentile {pct:g} of {len(out.controls)}")
    yes = low is not None and low > 0 and pct is not None and pct >= CAUSAL_PERCENTILE
    return CausalCell("yes" if yes else "no", detail, out.effect)


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
        Column("causal", "moves the model", CAUSAL_DEFINITION),
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


__all__ = ["CAUSAL_CITATIONS", "CAUSAL_DEFINITION", "CAUSAL_PERCENTILE", "CausalCell",
           "Column", "columns", "moves_the_model"]
