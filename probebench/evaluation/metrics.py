"""Every statistic of a probe's scores, binary and multi-class, and the one item bootstrap.

Names follow scikit-learn: ``*_score`` is better when higher, ``*_error``/``*_loss``
when lower (a test holds each metric's direction to its function's name). Each function
takes ``y_true`` and ``y_score``:

* binary: ``y_true`` (n,) in {0, 1}, ``y_score`` (n,) of P(positive) or any monotone
  score;
* multi-class: ``y_true`` (n,) class indices 0..K-1, ``y_score`` (n, K >= 3) class
  probabilities in the task's sorted class order (``TaskFormat.classes``). The AUROC is
  then the one-vs-rest macro AUROC (the mean over classes k of the AUROC of P(k) for
  "class k" against "any other class", as ``sklearn.metrics.roc_auc_score(y, P,
  multi_class="ovr", average="macro")`` computes it), the ECE is top-label (the binary
  ECE of "the most probable class is right" against its probability) and the Brier loss
  sums over classes (0 to 2). FPR at 99% TPR has no multi-class meaning.

What a metric means (its definition as ``submission.json`` carries it, its direction,
citation and marks) is its ``MetricDef`` in ``probebench.evaluation.definitions``: its
``compute`` is the function here that computes the number, and its ``weighted``, where
it has a 95% CI, the same statistic under item weights that ``item_bootstrap``
resamples (``weighted_auroc`` for the AUROC, ``weighted_mean`` for the accuracy).

The recall at 1% false positives (``recall_at_fpr_score``) also reads a control set's
scores (m,): ordinary prompts of the task's control set, on which the threshold is set;
its CI resamples the test items and the control prompts independently
(``two_sample_bootstrap``).

Bootstrap: items, not prompts, are resampled with replacement (a BLiMP pair or a verb
question with all its candidates moves as one); every prompt of an item counts as many
times as its item was drawn. The 95% interval is the percentile interval (2.5th and
97.5th percentiles) of the resampled statistic; resamples where it is undefined (a
class absent) are dropped and counted. Seeded through ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from probebench.errors import ProbebenchError

ECE_BINS = 15
#: bootstrap resamples behind every 95% CI unless a caller asks for another number
N_RESAMPLES = 1000
TPR_TARGET = 0.99

#: a statistic under item weights: (B, n) weights of the n prompts -> (B,) values, NaN
#: where a row leaves it undefined
WeightedStatistic = Callable[[np.ndarray], np.ndarray]


class MetricError(ProbebenchError):
    """A metric is undefined for the given input (e.g. one class only)."""


def _check(y_true: np.ndarray, y_score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true)
    s = np.asarray(y_score, dtype=np.float64)
    if y.ndim != 1 or s.shape != y.shape:
        raise MetricError(f"y_true {y.shape} and y_score {s.shape} must be vectors of the "
                          "same length")
    if not np.isin(y, (0, 1)).all():
        raise MetricError("y_true must hold only 0 and 1")
    if not np.isfinite(s).all():
        raise MetricError("y_score holds NaN or infinite values")
    return y.astype(np.int64), s


def _check_classes(y_true: np.ndarray, proba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true, dtype=np.int64)
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or y.ndim != 1 or p.shape[0] != y.shape[0] or p.shape[1] < 3:
        raise MetricError(f"y {y.shape} and proba {p.shape} must be (n,) and (n, K >= 3)")
    if y.size and (y.min() < 0 or y.max() >= p.shape[1]):
        raise MetricError(f"y must hold class indices 0..{p.shape[1] - 1}")
    if not np.isfinite(p).all():
        raise MetricError("proba holds NaN or infinite values")
    return y, p


def _two_classes(y: np.ndarray) -> None:
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == len(y):
        raise MetricError(f"AUROC needs both classes; got {n_pos} positives of {len(y)}")


def auroc_score(y_true: np.ndarray, y_score: np.ndarray) -> float:
    """Area under the ROC curve; of class probabilities (n, K), the one-vs-rest macro
    AUROC, for which every class must occur.

    >>> auroc_score(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    >>> p = np.array([[.8, .1, .1], [.2, .7, .1], [.1, .2, .7], [.3, .3, .4]])
    >>> auroc_score(np.array([0, 1, 2, 2]), p)
    1.0
    """
    if np.ndim(y_score) == 2:
        y, p = _check_classes(y_true, y_score)
        value = float(weighted_macro_auroc(y, p, np.ones((1, y.size)))[0])
        if not np.isfinite(value):
            missing = sorted(set(range(p.shape[1])) - set(y.tolist()))
            raise MetricError(f"macro AUROC needs every class; classes {missing} have no "
                              "prompt")
        return value
    from sklearn.metrics import roc_auc_score

    y, s = _check(y_true, y_score)
    _two_classes(y)
    return float(roc_auc_score(y, s))


def expected_calibration_error(y_true: np.ndarray, y_prob: np.ndarray,
                               n_bins: int = ECE_BINS) -> float:
    """ECE over ``n_bins`` equal-width bins of P(positive) over [0, 1] (a score of
    exactly 1 falls in the last bin): the sum over bins of (bin size / n) * |observed
    positive rate - mean P in the bin|. Of class probabilities (n, K), top-label: the
    ECE of "the most probable class (ties: the first) is right" against its probability.

    >>> expected_calibration_error(np.array([0, 1]), np.array([0.0, 1.0]))
    0.0
    """
    if np.ndim(y_prob) == 2:
        y_, p_ = _check_classes(y_true, y_prob)
        right = (np.argmax(p_, axis=1) == y_).astype(np.int64)
        return expected_calibration_error(right, p_.max(axis=1), n_bins)
    y, p = _check(y_true, y_prob)
    if ((p < 0) | (p > 1)).any():
        raise MetricError("ECE needs probabilities in [0, 1]")
    bins = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        mask = bins == b
        total += mask.mean() * abs(y[mask].mean() - p[mask].mean())
    return float(total)


def brier_score_loss(y_true: np.ndarray, y_prob: np.ndarray) -> float:
    """Mean squared error of P(positive); of class probabilities (n, K), the mean over
    prompts of sum_k (P_k - [y == k])^2 (0 to 2).

    >>> brier_score_loss(np.array([0, 1]), np.array([0.25, 0.5]))
    0.15625
    """
    if np.ndim(y_prob) == 2:
        y_, p_ = _check_classes(y_true, y_prob)
        onehot = np.eye(p_.shape[1])[y_]
        return float(np.mean(np.sum((p_ - onehot) ** 2, axis=1)))
    y, p = _check(y_true, y_prob)
    return float(np.mean((p - y) ** 2))


def fpr_at_tpr_error(y_true: np.ndarray, y_score: np.ndarray,
                     tpr_target: float = TPR_TARGET) -> float:
    """FPR at the first threshold (highest first) whose TPR reaches ``tpr_target``, with
    no interpolation to the nearest point. Binary only.

    >>> fpr_at_tpr_error(np.array([0, 0, 1, 1]), np.array([0.1, 0.9, 0.8, 0.7]), 0.99)
    0.5
    """
    from sklearn.metrics import roc_curve

    y, s = _check(y_true, y_score)
    _two_classes(y)
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    first = int(np.argmax(tpr >= tpr_target))
    return float(fpr[first])


def mean_score(values: np.ndarray) -> float:
    """The mean of per-item scores (an item's correctness: the accuracy).

    >>> mean_score(np.array([1.0, 0.0, 0.5, 1.0]))
    0.625
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        raise MetricError("no items to average")
    return float(v.mean())


# --- weighted forms: each statistic under (B, n) item weights ---------------------------


def weighted_auroc(y: np.ndarray, s: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``auroc_score`` of each row of ``weights`` (B, n) over the same labelled scores
    (n,), or class probabilities (n, K) (``weighted_macro_auroc``).

    The Mann-Whitney form with ties as one half: for each tie group of scores, the
    positive weight times (negative weight strictly below + half the tied negative
    weight), over total positive times total negative weight. NaN where a class has
    no weight. Vectorised: one sort, then cumulative sums per row.
    """
    s = np.asarray(s, dtype=np.float64)
    if s.ndim == 2:
        return weighted_macro_auroc(y, s, weights)
    order = np.argsort(s, kind="stable")
    s_sorted = s[order]
    starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])
    pos = (np.asarray(y)[order] == 1)
    # float32 holds every count, cumulative count and half-integer product exactly here
    # (all below 2**24); the final sums run in float64
    w = weights[:, order].astype(np.float32)
    if starts.size == s.size:  # no ties: every prompt is its own group
        w_pos, w_neg = w * pos, w * ~pos
    else:
        w_pos = np.add.reduceat(w * pos, starts, axis=1)
        w_neg = np.add.reduceat(w * ~pos, starts, axis=1)
    below = np.cumsum(w_neg, axis=1, dtype=np.float64).astype(np.float32) - w_neg
    u = np.sum(w_pos * (below + 0.5 * w_neg), axis=1, dtype=np.float64)
    denom = w_pos.sum(axis=1, dtype=np.float64) * w_neg.sum(axis=1, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, u / np.where(denom > 0, denom, 1.0), np.nan)


def weighted_macro_auroc(y: np.ndarray, proba: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The one-vs-rest macro AUROC of each row of ``weights`` (B, n): class indices
    ``y`` (n,) against class probabilities ``proba`` (n, K). NaN where a class has no
    weight on one side."""
    y_ = np.asarray(y, dtype=np.int64)
    p_ = np.asarray(proba, dtype=np.float64)
    per_class = np.stack([weighted_auroc((y_ == k).astype(np.int64), p_[:, k], weights)
                          for k in range(p_.shape[1])])
    return np.asarray(per_class.mean(axis=0), dtype=np.float64)


def weighted_calibration_error(y: np.ndarray, p: np.ndarray, weights: np.ndarray,
                               n_bins: int = ECE_BINS) -> np.ndarray:
    """``expected_calibration_error`` of each row of ``weights`` (B, n): every prompt
    counts as often as its weight, in the same ``n_bins`` equal-width bins. NaN where a
    row has no weight. With weights of one it is the ECE itself.

    >>> ece = weighted_calibration_error(np.array([0, 1]), np.array([0.2, 0.6]),
    ...                                  np.array([[1, 1], [0, 2]]))
    >>> [round(float(x), 6) for x in ece]
    [0.3, 0.4]
    """
    y_ = np.asarray(y, dtype=np.float64)
    p_ = np.asarray(p, dtype=np.float64)
    bins = np.minimum((p_ * n_bins).astype(np.int64), n_bins - 1)
    onehot = np.zeros((p_.size, n_bins))
    onehot[np.arange(p_.size), bins] = 1.0
    w = np.asarray(weights, dtype=np.float64)
    # per bin: |sum of w * (y - p)| is bin weight x |observed rate - mean P|
    per_bin = np.abs((w * (y_ - p_)) @ onehot)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, per_bin.sum(axis=1) / np.where(total > 0, total, 1.0),
                        np.nan)


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``mean_score`` of each row of ``weights`` (B, n): each value counts as often as
    its weight. NaN where a row has no weight.

    >>> weighted_mean(np.array([1.0, 0.0]), np.array([[1, 1], [2, 0]])).tolist()
    [0.5, 1.0]
    """
    v = np.asarray(values, dtype=np.float64)
    total = np.asarray(weights).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(weights @ v / total, dtype=np.float64)


# --- the item bootstrap ------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    resamples: int        #: resamples used
    dropped: int          #: resamples dropped (the statistic undefined)


def resample_counts(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_resamples, n_items) int32: how often each item is drawn in each resample."""
    draws = rng.integers(0, n_items, size=(n_resamples, n_items))
    flat = draws + (np.arange(n_resamples, dtype=np.int64) * n_items)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n_items)
    return counts.reshape(n_resamples, n_items).astype(np.int32)


def _interval(value: float, stats: np.ndarray) -> Interval:
    ok = stats[np.isfinite(stats)]
    if ok.size == 0:
        return Interval(value, float("nan"), float("nan"), 0, int(stats.size))
    low, high = np.percentile(ok, [2.5, 97.5])
    return Interval(value, float(low), float(high), int(ok.size), int(stats.size - ok.size))


def item_bootstrap(value: float, statistic: WeightedStatistic, item_of: np.ndarray, *,
                   n_resamples: int = N_RESAMPLES, seed: int = 0) -> Interval:
    """``value`` (the statistic on the full sample) with the 95% percentile interval of
    ``statistic`` over ``n_resamples`` item resamples: each resample draws the items
    (``item_of`` (n,): any item label of each prompt) with replacement, and every prompt
    weighs as often as its item was drawn. A paired difference is one statistic (a's
    minus b's under the same weights).

    >>> y, s = np.array([0, 1, 0, 1]), np.array([0.1, 0.9, 0.6, 0.4])
    >>> iv = item_bootstrap(auroc_score(y, s), lambda w: weighted_auroc(y, s, w),
    ...                     np.array([0, 0, 1, 1]), n_resamples=100)
    >>> iv.value, iv.resamples + iv.dropped
    (0.75, 100)
    """
    _, dense = np.unique(np.asarray(item_of), return_inverse=True)
    counts = resample_counts(int(dense.max()) + 1, n_resamples, np.random.default_rng(seed))
    return _interval(value, statistic(counts[:, dense]))


# --- recall at a false-positive budget set on a control set ------------------------------

#: the false-positive budget of the recall metric: 1% of the control set
FPR_TARGET_PERCENT = 1


def control_threshold(control_score: np.ndarray, fpr_percent: int = FPR_TARGET_PERCENT
                      ) -> float:
    """The threshold at ``fpr_percent``% false positives on a control set: the k-th
    smallest control score (1-based), k = ceil((100 - fpr_percent) / 100 * n), computed in
    integers so that no float rounding moves k. At most ``fpr_percent``% of the control
    scores lie strictly above it (n - k of them); every control score equal to it counts
    as negative.

    >>> control_threshold(np.arange(200.0))  # k = 198: 198 and 199 lie above
    197.0
    >>> control_threshold(np.array([0.2, 0.9, 0.1]))  # k = ceil(2.97) = 3, the maximum
    0.9
    """
    s = np.sort(np.asarray(control_score, dtype=np.float64))
    if s.ndim != 1 or s.size == 0:
        raise MetricError(f"the control set needs at least one score; found shape {s.shape}")
    if not np.isfinite(s).all():
        raise MetricError("the control scores hold NaN or infinite values")
    k = -(-(100 - fpr_percent) * s.size // 100)  # ceil in integers
    return float(s[k - 1])


def recall_at_fpr_score(y_true: np.ndarray, y_score: np.ndarray, control_score: np.ndarray,
                        fpr_percent: int = FPR_TARGET_PERCENT) -> float:
    """Recall at ``fpr_percent``% false positives on a control set: the share of the
    positives (``y_true == 1``) whose score lies strictly above ``control_threshold`` of
    the control scores (m,) (a score equal to the threshold counts as negative).
    Binary only; the negatives of ``y_true`` are not read.

    >>> # threshold 0.9 (the largest of three controls); 0.9 itself counts as negative
    >>> recall_at_fpr_score(np.array([1, 1, 1, 1, 0]),
    ...                     np.array([0.5, 0.95, 0.9, 0.97, 0.99]), np.array([0.2, 0.9, 0.1]))
    0.5
    """
    y, s = _check(y_true, y_score)
    positives = s[y == 1]
    if positives.size == 0:
        raise MetricError("recall needs at least one positive; found none")
    return float(np.mean(positives > control_threshold(control_score, fpr_percent)))


def weighted_recall_at_fpr(y: np.ndarray, s: np.ndarray, control_score: np.ndarray,
                           weights: np.ndarray, control_weights: np.ndarray,
                           fpr_percent: int = FPR_TARGET_PERCENT) -> np.ndarray:
    """``recall_at_fpr_score`` of each row of the test prompts' ``weights`` (B, n) with
    the same row of the control prompts' ``control_weights`` (B, m): every prompt counts
    as often as its weight, so a row's threshold is the k-th smallest control score of
    the multiset it draws (k = ceil((100 - fpr_percent) / 100 x its total weight), in
    integers). NaN where a row weighs no positive or no control.

    >>> w = weighted_recall_at_fpr(np.array([1, 1]), np.array([0.3, 0.8]),
    ...                            np.array([0.1, 0.5]), np.array([[1, 1], [2, 0]]),
    ...                            np.array([[1, 1], [2, 0]]))
    >>> w.tolist()  # row 1: threshold 0.5; row 2: the controls are 0.1 twice
    [0.5, 1.0]
    """
    y_ = np.asarray(y)
    s_ = np.asarray(s, dtype=np.float64)
    c = np.asarray(control_score, dtype=np.float64)
    order = np.argsort(c, kind="stable")
    cw = np.asarray(control_weights, dtype=np.int64)[:, order]
    cum = np.cumsum(cw, axis=1)
    total = cum[:, -1]
    k = -(-(100 - fpr_percent) * total // 100)
    # the first sorted control whose cumulative weight reaches k (a row of no weight: 0)
    at = np.argmax(cum >= np.maximum(k, 1)[:, None], axis=1)
    threshold = c[order][at]
    pos = y_ == 1
    w = np.asarray(weights, dtype=np.float64)[:, pos]
    above = (s_[pos][None, :] > threshold[:, None])
    n_pos = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(n_pos > 0, (w * above).sum(axis=1) / np.where(n_pos > 0, n_pos, 1.0),
                       np.nan)
    return np.asarray(np.where(total > 0, out, np.nan), dtype=np.float64)


def two_sample_bootstrap(value: float,
                         statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
                         item_of: np.ndarray, control_item_of: np.ndarray, *,
                         n_resamples: int = N_RESAMPLES, seed: int = 0) -> Interval:
    """``item_bootstrap`` over two independent samples (the test items and a control
    set): each resample draws the test items and, independently, the control items with
    replacement (``item_of`` (n,), ``control_item_of`` (m,): any item label of each
    prompt), and ``statistic(weights, control_weights)`` reads the two (B, n) and (B, m)
    weights. One generator, ``numpy.random.default_rng(seed)``, draws the test items'
    counts first, then the control items'.

    >>> y, s, c = np.array([1, 1, 1]), np.array([0.2, 0.6, 0.9]), np.array([0.1, 0.5])
    >>> iv = two_sample_bootstrap(
    ...     recall_at_fpr_score(y, s, c),
    ...     lambda w, cw: weighted_recall_at_fpr(y, s, c, w, cw),
    ...     np.arange(3), np.arange(2), n_resamples=50)
    >>> round(iv.value, 3), iv.resamples + iv.dropped
    (0.667, 50)
    """
    _, dense = np.unique(np.asarray(item_of), return_inverse=True)
    _, control_dense = np.unique(np.asarray(control_item_of), return_inverse=True)
    rng = np.random.default_rng(seed)
    counts = resample_counts(int(dense.max()) + 1, n_resamples, rng)
    control_counts = resample_counts(int(control_dense.max()) + 1, n_resamples, rng)
    return _interval(value, statistic(counts[:, dense], control_counts[:, control_dense]))
