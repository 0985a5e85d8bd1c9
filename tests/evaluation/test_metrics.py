from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from probebench.evaluation.marks import mark_definitions
from probebench.evaluation.metrics import (
    Interval,
    MetricError,
    auroc_score,
    brier_score_loss,
    expected_calibration_error,
    fpr_at_tpr_error,
    item_bootstrap,
    mean_score,
    resample_counts,
    weighted_auroc,
    weighted_mean,
)


def _bootstrap_auroc(y: np.ndarray, s: np.ndarray, item_of: np.ndarray, *,
                    n_resamples: int, seed: int) -> Interval:
    """The AUROC's item bootstrap as the headline runs it: its point value and its
    weighted form through the one generic wrapper."""
    return item_bootstrap(auroc_score(y, s), partial(weighted_auroc, y, s), item_of,
                          n_resamples=n_resamples, seed=seed)


def _bootstrap_mean(values: np.ndarray, *, n_resamples: int = 1000, seed: int = 0) -> Interval:
    return item_bootstrap(mean_score(values), partial(weighted_mean, values),
                          np.arange(len(values)), n_resamples=n_resamples, seed=seed)


def test_auroc_equals_sklearn_with_ties() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300) + y, 1)  # many ties
    assert auroc_score(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-15)
    assert auroc_score(np.array([0, 1]), np.array([0.3, 0.3])) == 0.5  # tiny n, a tie


def test_one_class_is_a_clear_error() -> None:
    with pytest.raises(MetricError, match="needs both classes; got 0 positives of 3"):
        auroc_score(np.array([0, 0, 0]), np.array([0.1, 0.2, 0.3]))
    with pytest.raises(MetricError, match="both classes"):
        fpr_at_tpr_error(np.array([1, 1]), np.array([0.1, 0.2]))
    with pytest.raises(MetricError, match="only 0 and 1"):
        auroc_score(np.array([0, 2]), np.array([0.1, 0.2]))
    with pytest.raises(MetricError, match="NaN"):
        auroc_score(np.array([0, 1]), np.array([0.1, np.nan]))


def test_ece_by_hand() -> None:
    # bins of width 1/15: 0.05 -> bin 0, 0.1 -> bin 1, 0.9 -> bin 13 (13.5), and 0.95 (14.25)
    # and 1.0 (the last bin holds 1.0) -> bin 14
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.05, 0.1, 0.9, 0.95, 1.0])
    expected = (1 / 5) * abs(0 - 0.05) + (1 / 5) * abs(1 - 0.1) + (1 / 5) * abs(1 - 0.9) \
        + (2 / 5) * abs(0.5 - 0.975)
    assert expected == pytest.approx(0.4)
    assert expected_calibration_error(y, p) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(MetricError, match="probabilities"):
        expected_calibration_error(y, p + 1)


def test_brier_matches_sklearn() -> None:
    from sklearn.metrics import brier_score_loss as sk_brier

    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 50), rng.random(50)
    assert brier_score_loss(y, p) == pytest.approx(sk_brier(y, p), abs=1e-15)


def test_fpr_at_99_tpr_takes_the_first_threshold_not_the_nearest() -> None:
    # 100 positives: TPR reaches 0.99 at the 99th positive; a later threshold reaching
    # TPR 1.0 has a much higher FPR, and must not be chosen
    pos = np.linspace(0.5, 1.0, 100)
    neg = np.r_[np.linspace(0.0, 0.49, 90), np.linspace(0.505, 0.52, 10)]
    s = np.r_[pos, neg]
    y = np.r_[np.ones(100, int), np.zeros(100, int)]
    # thresholds at each positive: at pos[1] (the 99th highest), negatives above it:
    above = (neg >= pos[1]).sum()
    assert fpr_at_tpr_error(y, s) == pytest.approx(above / 100)
    assert fpr_at_tpr_error(y, s) < fpr_at_tpr_error(y, s, tpr_target=1.0)


def test_weighted_auroc_equals_sklearn_on_expanded_samples() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + 0.5 * y, 1)
    w = rng.integers(0, 4, size=(5, 200))
    got = weighted_auroc(y, s, w)
    for b in range(5):
        idx = np.repeat(np.arange(200), w[b])
        assert got[b] == pytest.approx(roc_auc_score(y[idx], s[idx]), abs=1e-12)
    assert np.isnan(weighted_auroc(y, s, np.zeros((1, 200), int))[0])


def test_resample_counts_draw_every_item_n_times() -> None:
    counts = resample_counts(7, 50, np.random.default_rng(0))
    assert counts.shape == (50, 7) and (counts.sum(axis=1) == 7).all()


def test_bootstrap_ci_covers_the_estimate_and_narrows_with_n() -> None:
    widths = []
    for n_items in (50, 400, 3200):
        rng = np.random.default_rng(n_items)
        y = np.tile([1, 0], n_items)  # pairs: items of two prompts
        s = rng.normal(size=2 * n_items) + 0.8 * y
        item_of = np.repeat(np.arange(n_items), 2)
        iv = _bootstrap_auroc(y, s, item_of, n_resamples=500, seed=0)
        assert iv.low <= iv.value <= iv.high
        assert iv.resamples == 500 and iv.dropped == 0
        widths.append(iv.high - iv.low)
    assert widths[0] > widths[1] > widths[2]


def test_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 100), rng.normal(size=100)
    a = _bootstrap_auroc(y, s, np.arange(100), n_resamples=200, seed=5)
    b = _bootstrap_auroc(y, s, np.arange(100), n_resamples=200, seed=5)
    c = _bootstrap_auroc(y, s, np.arange(100), n_resamples=200, seed=6)
    assert a == b and (a.low, a.high) != (c.low, c.high)


def test_bootstrap_mean_and_tiny_n() -> None:
    iv = _bootstrap_mean(np.array([1.0, 0.0, 1.0, 1.0]), n_resamples=400, seed=0)
    assert iv.value == 0.75 and 0 <= iv.low <= 0.75 <= iv.high <= 1
    one = _bootstrap_mean(np.array([1.0]), n_resamples=10, seed=0)
    assert (one.value, one.low, one.high) == (1.0, 1.0, 1.0)
    with pytest.raises(MetricError):
        _bootstrap_mean(np.array([]))


def test_item_bootstrap_weighs_prompts_by_their_items_draws() -> None:
    """The statistic sees, per resample, each prompt weighted by how often its item was
    drawn: ``resample_counts`` of the dense item labels under ``default_rng(seed)``, in
    that order; the interval is the percentiles of what it returns."""
    item_of = np.array([10, 10, 42, 7, 7, 7])  # any labels: 7 -> 0, 10 -> 1, 42 -> 2
    seen: list[np.ndarray] = []

    def statistic(weights: np.ndarray) -> np.ndarray:
        seen.append(weights)
        return weights[:, 0].astype(np.float64)

    iv = item_bootstrap(0.5, statistic, item_of, n_resamples=40, seed=3)
    counts = resample_counts(3, 40, np.random.default_rng(3))
    assert len(seen) == 1 and (seen[0] == counts[:, [1, 1, 2, 0, 0, 0]]).all()
    low, high = np.percentile(counts[:, 1], [2.5, 97.5])
    assert (iv.value, iv.low, iv.high, iv.resamples, iv.dropped) == (0.5, low, high, 40, 0)


def test_item_bootstrap_takes_a_paired_difference_as_one_statistic() -> None:
    """One draw of items for both sides: a statistic minus itself has a zero-width
    interval, where two separate bootstraps would not."""
    rng = np.random.default_rng(2)
    y, s = np.tile([0, 1], 30), rng.random(60)
    items = np.repeat(np.arange(30), 2)
    iv = item_bootstrap(0.0, lambda w: weighted_auroc(y, s, w) - weighted_auroc(y, s, w),
                        items, n_resamples=100)
    assert (iv.low, iv.high) == (0.0, 0.0)


def test_weighted_mean_is_the_mean_of_the_expanded_sample() -> None:
    rng = np.random.default_rng(4)
    v, w = rng.random(9), rng.integers(0, 3, size=(6, 9))
    w[0] = 1
    got = weighted_mean(v, w)
    for b in range(6):
        assert got[b] == pytest.approx(np.repeat(v, w[b]).mean(), abs=1e-12)
    assert got[0] == pytest.approx(mean_score(v), abs=1e-15)
    assert np.isnan(weighted_mean(v, np.zeros((1, 9), int))[0])


def test_bootstrap_drops_one_class_resamples() -> None:
    y = np.array([1, 0, 0, 0])
    iv = _bootstrap_auroc(y, np.array([0.9, 0.1, 0.2, 0.3]), np.arange(4), n_resamples=300,
                         seed=0)
    assert iv.dropped > 0 and iv.resamples + iv.dropped == 300


def test_marks_take_the_worst_range_the_ci_reaches() -> None:
    auroc = mark_definitions()["auroc"]
    assert auroc.mark(0.95, 0.92, 0.97) == ("A", [])
    assert auroc.mark(0.91, 0.88, 0.94) == ("B", ["A", "B"])
    ece = mark_definitions()["ece"]  # lower is better
    assert ece.mark(0.03, 0.03, 0.03) == ("A", [])
    assert ece.mark(0.08, 0.04, 0.12) == ("C", ["A", "B", "C"])
