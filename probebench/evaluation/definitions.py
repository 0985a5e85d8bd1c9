"""Every metric's facts, one ``MetricDef`` each, and every imputation constant.

A ``MetricDef`` holds what one metric is: its name, the leaderboard's header for it, the
one-line definition, which way is better, where it comes from, the function of
``metrics`` that computes it (and its weighted form, which the item bootstrap resamples)
and its mark bounds. It is also the dispatch: ``headline`` computes every metric whose
definition says what the headline ``reads`` for it, by calling its ``compute``, so "how
is X computed" is answered by ``METRICS[X].compute``. Everything else reads it too:
``metric_definitions()`` (the ``definitions`` block of ``submission.json``, which REPORT.md
lists), METHODOLOGY.md's list of definitions and its marks table
(``leaderboard.methodology``), the leaderboard's column headers and tooltips
(``leaderboard.columns``) and the marks (``marks``). The mark bounds alone are data, in
``marks.yaml`` next to this file; the direction that says which end of them is A is here.
The item accuracy's definition is assembled from the registered task formats when asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.evaluation.latency import RATE_TOLERANCE
from probebench.evaluation.metrics import (
    ECE_BINS,
    FPR_TARGET_PERCENT,
    TPR_TARGET,
    auroc_score,
    brier_score_loss,
    expected_calibration_error,
    fpr_at_tpr_error,
    mean_score,
    recall_at_fpr_score,
    weighted_auroc,
    weighted_mean,
    weighted_recall_at_fpr,
)
from probebench.evaluation.transfer import CORPUS_SIZE, HOLD_OUT_EVERY
from probebench.tasks.families import format_names, get_format
from probebench.yamlsafe import load_yaml

#: eval-awareness-corrected AUROC without a guard: this share of the AUROC, flagged
EVALAWARE_IMPUTE = 0.85
#: distribution-shift AUROC that cannot be measured: this share of the AUROC, flagged
DISTSHIFT_IMPUTE = 0.7
#: cross-model transfer without a declared target: this value, flagged
TRANSFER_IMPUTE = 0.5
#: ProbeScore 0.2.0 on: an entry that declares no transfer target (or whose transfer cannot
#: be measured) earns 0 on the axis; at 0.5 not declaring would outscore almost every
#: measured transfer, a reward for not being measured
MAPPED_TRANSFER_IMPUTE = 0.0
#: share of a task's items the eval-awareness correction keeps (least evaluation-like)
EVALAWARE_SHARE = 4  # one item in four
#: latency: runs before timing starts, and prompts timed (median reported)
LATENCY_WARMUP = 3
LATENCY_PROMPTS = 20
#: a selectivity control over fewer word types than this is degenerate: a lookup any
#: probe memorises (probebench.evaluation.selectivity). The registered minimal-pair
#: tasks differ in at most 10 types or in at least 22, so any bound between sorts them
#: alike.
MIN_CONTROL_TYPES = 16
#: words of the fixed context read before every prompt for the distribution shift
SHIFT_CONTEXT = ("a fixed 690-token public-domain context (the US Declaration of "
                 "Independence)")
MARKS_FILE = Path(__file__).with_name("marks.yaml")

#: three cut points, ascending, that split [0, 1] into four half-open ranges [low, high)
MarkBounds = tuple[float, float, float]


class Direction(Enum):
    """Which way a metric is better; the value is how documents say it."""

    HIGHER = "higher is better"
    LOWER = "lower is better"
    NONE = "no direction"


class Reads(Enum):
    """What ``headline`` passes a metric's ``compute`` (and ``weighted``) on a task's test
    split."""

    PROMPTS = "labels and scores of the test prompts"
    """``compute(y_true, y_score)``: binary, the labelled prompts' labels and P(positive);
    multi-class, every prompt's class index and class probabilities."""
    ITEMS = "each test item's score"
    """``compute(values)``: the correctness of each item that has one, by the task
    format's rule."""


@dataclass(frozen=True)
class Citation:
    """The paper a metric comes from."""

    short: str
    """How a text cites it, e.g. ``Brier (1950)``."""
    title: str
    venue: str

    def __str__(self) -> str:
        return f"{self.short}, {self.title}, {self.venue}"


BRIER_1950 = Citation("Brier (1950)", "Verification of forecasts expressed in terms of "
                      "probability", "Monthly Weather Review 78(1)")
GUO_2017 = Citation("Guo et al. (2017)", "On Calibration of Modern Neural Networks",
                    "ICML")
GOLDOWSKY_DILL_2025 = Citation("Goldowsky-Dill et al. (2025)", "Detecting Strategic "
                               "Deception Using Linear Probes", "ICML")
HEWITT_LIANG_2019 = Citation("Hewitt and Liang (2019)", "Designing and Interpreting "
                             "Probes with Control Tasks", "EMNLP")


@dataclass(frozen=True)
class MetricDef:
    """One metric (or one statistic that every metric shares, such as ``ci``): every
    fact about it, in one place."""

    name: str
    """The key in ``submission.json``'s ``definitions`` block and in results."""
    label: str
    """The human-readable column header."""
    definition: str | Callable[[], str]
    """One line, as ``submission.json`` carries it; a function when the text depends on
    what is registered when it is asked for (the accuracy: each task format's rule)."""
    direction: Direction
    """Which way is better; it says which end of ``marks`` is A."""
    citation: Citation | None = None
    """Where the metric comes from, where one paper defines it."""
    compute: Callable[..., float] | None = None
    """The function of ``probebench.evaluation.metrics`` that computes the number, where
    one does, binary or multi-class (for AUROC ``auroc_score``, the one-vs-rest macro
    AUROC of class probabilities). ``headline`` and ``headline.metric_interval`` call it;
    without it they do not produce the metric."""
    weighted: Callable[..., np.ndarray] | None = None
    """The same statistic under (B, n) item weights (``weighted_auroc``), which
    ``metrics.item_bootstrap`` resamples for the metric's 95% CI; None: the metric is
    reported as a point value. A metric that also reads a control set
    (``recall_at_1pct_fpr``) takes the control prompts' (B, m) weights too, which
    ``metrics.two_sample_bootstrap`` draws independently."""
    reads: Reads | None = None
    """What ``headline`` passes ``compute`` on each task's test split; None: the metric
    is not a headline metric (it is computed where its own prompts are read, e.g. the
    shifted AUROC after the fixed context)."""
    binary_only: bool = False
    """The metric has no multi-class meaning: a multi-class task reports None."""
    marks: MarkBounds | None = None
    """The mark bounds from ``marks.yaml``; None when the metric gets no mark."""
    part_of: str | None = None
    """The definition that covers this metric when it has no line of its own in the
    ``definitions`` block (``mc_accuracy`` is one format's ``accuracy``)."""

    def __post_init__(self) -> None:
        if self.marks is None:
            return
        if self.direction is Direction.NONE:
            raise InputError(f"metric {self.name}: marks need a direction (higher or lower "
                             "is better); it has none")
        if not (len(self.marks) == 3 and 0 < self.marks[0] < self.marks[1]
                < self.marks[2] < 1):
            raise InputError(f"metric {self.name}: mark bounds must be three ascending "
                             f"numbers inside (0, 1); found {list(self.marks)}")

    @property
    def text(self) -> str:
        """The definition as ``submission.json`` carries it."""
        return self.definition if isinstance(self.definition, str) else self.definition()


def _ordinal(n: int) -> str:
    return {2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(n, f"{n}th")


def _share() -> str:
    return {2: "half", 3: "third", 4: "quarter"}.get(EVALAWARE_SHARE, f"1/{EVALAWARE_SHARE}")


def accuracy_definition() -> str:
    """Mean item correctness, with each registered format's rule."""
    rules = ", ".join(f"{name} = {get_format(name).accuracy_definition}"
                      for name in format_names())
    return f"mean item correctness: {rules}."


def _format_accuracy(accuracy_name: str) -> Callable[[], str]:
    """The rule of the registered format whose accuracy is called ``accuracy_name``."""
    def text() -> str:
        for name in format_names():
            fmt = get_format(name)
            if fmt.accuracy_name == accuracy_name:
                return f"{name}: {fmt.accuracy_definition}"
        raise InputError(f"no registered task format calls its accuracy {accuracy_name}")
    return text


_DEFS = (
    MetricDef("auroc", "AUROC",
              "sklearn.metrics.roc_auc_score over the labelled test prompts; ties count "
              "1/2.", Direction.HIGHER, compute=auroc_score, weighted=weighted_auroc,
              reads=Reads.PROMPTS),
    MetricDef("ci", "95% CI",
              "95% percentile interval of an item bootstrap (items resampled with "
              "replacement, prompts weighted by their item's count); resamples missing a "
              "class are dropped.", Direction.NONE),
    MetricDef("ece", "ECE",
              f"{ECE_BINS} equal-width bins on P(positive); sum of bin share x |positive "
              "rate - mean P|.", Direction.LOWER, citation=GUO_2017,
              compute=expected_calibration_error, reads=Reads.PROMPTS),
    MetricDef("brier", "Brier", "mean (P(positive) - label)^2.", Direction.LOWER,
              citation=BRIER_1950, compute=brier_score_loss, reads=Reads.PROMPTS),
    MetricDef("fpr_at_99tpr", "FPR@99TPR",
              f"FPR at the first ROC threshold, highest first, whose TPR >= {TPR_TARGET}.",
              Direction.LOWER, compute=fpr_at_tpr_error, reads=Reads.PROMPTS,
              binary_only=True),
    MetricDef("recall_at_1pct_fpr", "Recall @ 1% FPR",
              f"for a task that declares a control set (ordinary prompts, e.g. Alpaca "
              f"chat instructions): the threshold is the probe's k-th smallest control "
              f"score, k = ceil({100 - FPR_TARGET_PERCENT}/100 x n controls) (its "
              f"{100 - FPR_TARGET_PERCENT}th percentile: at most {FPR_TARGET_PERCENT}% of "
              "the controls score strictly above it); recall is the share of the test "
              "positives (label 1) whose P(positive) is strictly above the threshold (a "
              "score equal to it counts as negative); 95% CI by a bootstrap that "
              "resamples the test items and the control prompts independently; "
              "control_fpr is the share of the controls strictly above the threshold. "
              "Tasks without a control set report none.", Direction.HIGHER,
              citation=GOLDOWSKY_DILL_2025, compute=recall_at_fpr_score,
              weighted=weighted_recall_at_fpr, binary_only=True),
    MetricDef("latency_ms", "Latency",
              "median ms per prompt, batch size 1, text to probability, after "
              f"{LATENCY_WARMUP} warm-up runs, on the evaluation device, with the device's "
              "float32 matmul rate (GFLOP/s) read beside it; a latency kept from an earlier "
              "run on the machine is reused only while the rate is within a factor of "
              f"{1 + RATE_TOLERANCE:.2f} of the one read with it (kept in the timing "
              "block).",
              Direction.LOWER),
    MetricDef("distshift_auroc", "Shifted AUROC",
              f"AUROC of the same test prompts read after {SHIFT_CONTEXT}; positions read "
              "the prompt's own tokens.", Direction.HIGHER, compute=auroc_score,
              weighted=weighted_auroc),
    MetricDef("evalaware_auroc", "Eval-aware AUROC",
              f"AUROC on the {_share()} of each class's items (items grouped by the labels "
              "they hold: the spec's stratified bottom-quartile split) that a registered "
              "eval-awareness guard for the model rates least evaluation-like; "
              f"without a guard, {EVALAWARE_IMPUTE} x AUROC, flagged imputed.",
              Direction.HIGHER, compute=auroc_score, weighted=weighted_auroc,
              binary_only=True),
    MetricDef("transfer", "Transfer",
              "per declared target MODEL@LAYER:POSITION: an affine ridge map from the "
              "target's activations to the probe's model's, fitted in float64 on a fixed "
              f"neutral corpus ({CORPUS_SIZE} sentences, sha256-pinned; alpha chosen on "
              f"every {_ordinal(HOLD_OUT_EVERY)} sentence held out, whose R² in the probe's "
              "standardised coordinates is "
              "map_r2; then refitted on all); the unchanged probe reads the mapped test "
              "prompts: target AUROC, transfer = (target AUROC - 0.5) / (AUROC - 0.5) "
              "clamped to [0, 1] (none when AUROC <= 0.5), and a control of shuffled-pair "
              "maps with the same alpha and output variance; no target declared: "
              f"ProbeScore imputes {TRANSFER_IMPUTE}, flagged.", Direction.HIGHER),
    MetricDef("cost", "GFLOPs/prompt",
              "FLOPs per test prompt of the model blocks up to the probe's layer, pooling, "
              "scaler and classifier, from the model's config and the tokenizer "
              "(probebench.models.cost); the same on every machine.", Direction.LOWER),
    MetricDef("selectivity", "Selectivity",
              f"{HEWITT_LIANG_2019.short}: the entry's architecture re-trained with "
              "train's protocol on the task and on a control task (labels a fixed random "
              "function of word types, equal label balance: the mean vote of the prompt's "
              "words on sentence tasks, of the word types where an item's prompts differ "
              "on minimal pairs); prompt accuracy, control accuracy and their difference, "
              "paired item bootstrap. A degenerate control (fewer than "
              f"{MIN_CONTROL_TYPES} word types, one label, no good/bad pair split, or the "
              "task's own labels) reports none, with the reason.", Direction.HIGHER,
              citation=HEWITT_LIANG_2019),
    MetricDef("baselines", "Baselines",
              "per (task, model, site), the same for every entry: majority, length, "
              "random_features (a linear probe on a random projection of the site's "
              "activations in a randomly initialised copy of the model) and, on causal "
              "models, the model's own answer: for minimal pairs (BLiMP, verbs: total "
              "surprisal after BOS; SyntaxGym: its region predictions), for single "
              "statements the mean log-probability per token, and for tasks with a readout "
              "log P(positive) - log P(negative) after the readout's suffix.",
              Direction.NONE),
    MetricDef("accuracy", "Accuracy", accuracy_definition, Direction.HIGHER,
              compute=mean_score, weighted=weighted_mean, reads=Reads.ITEMS),
    MetricDef("mc_accuracy", "Multiple-choice accuracy", _format_accuracy("mc_accuracy"),
              Direction.HIGHER, part_of="accuracy"),
    MetricDef("marks", "Marks",
              "A-D per metric from marks.yaml; the mark is the worst range the 95% CI "
              "reaches.", Direction.NONE),
)


def _with_marks(defs: tuple[MetricDef, ...], path: Path) -> dict[str, MetricDef]:
    """name -> def, each given its bounds from ``path`` (``marks.yaml``)."""
    data: Any = load_yaml(path)
    if not isinstance(data, dict) or data.get("version") != 2 \
            or not isinstance(data.get("marks"), dict):
        raise InputError(f"{path}: expected 'version: 2' and a 'marks' mapping of metric "
                         "names to three bounds")
    out = {d.name: d for d in defs}
    for name, bounds in data["marks"].items():
        if name not in out:
            raise InputError(f"{path}: marks for {name!r}, which is no metric; metrics: "
                             f"{', '.join(out)}")
        if not (isinstance(bounds, list) and len(bounds) == 3
                and all(isinstance(b, int | float) for b in bounds)):
            raise InputError(f"{path}: marks.{name}: expected three numbers, found {bounds!r}")
        try:
            out[name] = replace(out[name], marks=(float(bounds[0]), float(bounds[1]),
                                                  float(bounds[2])))
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
    return out


#: every metric, in the order of the ``definitions`` block
METRICS: dict[str, MetricDef] = _with_marks(_DEFS, MARKS_FILE)


def headline_metrics() -> list[MetricDef]:
    """The metrics ``headline`` computes on every task's test split, in ``METRICS``
    order: those whose definition says what the headline reads and how to compute it."""
    return [d for d in METRICS.values() if d.reads is not None and d.compute is not None]


def metric_definitions() -> dict[str, str]:
    """metric name -> its definition (the ``definitions`` block of submission.json)."""
    return {d.name: d.text for d in METRICS.values() if d.part_of is None}


__all__ = [
    "DISTSHIFT_IMPUTE",
    "EVALAWARE_IMPUTE",
    "EVALAWARE_SHARE",
    "LATENCY_PROMPTS",
    "LATENCY_WARMUP",
    "MAPPED_TRANSFER_IMPUTE",
    "METRICS",
    "MIN_CONTROL_TYPES",
    "SHIFT_CONTEXT",
    "TRANSFER_IMPUTE",
    "Citation",
    "Direction",
    "MarkBounds",
    "MetricDef",
    "Reads",
    "accuracy_definition",
    "headline_metrics",
    "metric_definitions",
]
