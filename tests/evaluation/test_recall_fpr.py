"""Recall at 1% false positives (``recall_at_1pct_fpr``): the threshold on a control set,
the strict tie rule, the weighted form and the two-sample bootstrap, each against an
independent numpy computation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from probebench.evaluation.definitions import METRICS, Direction
from probebench.evaluation.headline import recall_at_control, sub_seed
from probebench.evaluation.metrics import (
    MetricError,
    control_threshold,
    recall_at_fpr_score,
    two_sample_bootstrap,
    weighted_recall_at_fpr,
)
from probebench.evaluation.results import ControlSetOut
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item


def _numpy_threshold(control: np.ndarray) -> float:
    """The 99th percentile by counting, not by an index: the smallest control score x
    with #(controls <= x) >= 99% of them (integers: 100 x count >= 99 x n)."""
    values = np.unique(control)
    counts = np.array([(control <= v).sum() for v in values])
    return float(values[np.flatnonzero(100 * counts >= 99 * control.size)[0]])


def _numpy_recall(positives: np.ndarray, control: np.ndarray) -> float:
    return float(np.count_nonzero(positives > _numpy_threshold(control)) / positives.size)


def _tied(rng: np.random.Generator, n: int, levels: int) -> np.ndarray:
    """Scores drawn from ``levels`` values only: many exact ties."""
    return rng.integers(0, levels, size=n).astype(np.float64) / levels


@pytest.mark.parametrize("n_control", [1, 7, 99, 100, 101, 200, 400, 1000])
@pytest.mark.parametrize("levels", [3, 10, 1000])
def test_threshold_and_recall_agree_with_numpy_over_ties(n_control: int, levels: int) -> None:
    rng = np.random.default_rng(n_control * 1000 + levels)
    control = _tied(rng, n_control, levels)
    positives = _tied(rng, 57, levels)
    y = np.r_[np.ones(57, dtype=int), np.zeros(20, dtype=int)]
    s = np.r_[positives, _tied(rng, 20, levels)]
    threshold = control_threshold(control)
    assert threshold == _numpy_threshold(control)
    assert recall_at_fpr_score(y, s, control) == pytest.approx(
        _numpy_recall(positives, control), abs=0)
    # at most 1% of the controls lie strictly above the threshold
    assert 100 * np.count_nonzero(control > threshold) <= control.size
    # and it is a control score: no smaller one keeps that promise
    smaller = control[control < threshold]
    if smaller.size:
        assert 100 * np.count_nonzero(control > smaller.max()) > control.size


def test_a_score_equal_to_the_threshold_counts_as_negative() -> None:
    control = np.full(100, 0.5)
    control[:3] = 0.2
    positives = np.r_[np.full(10, 0.5), np.full(10, 0.7)]
    y = np.ones(20, dtype=int)
    assert control_threshold(control) == 0.5
    assert recall_at_fpr_score(y, positives, control) == 0.5
    # saturated probabilities: controls and positives all at 1.0 flag nothing
    assert recall_at_fpr_score(np.ones(5, dtype=int), np.ones(5), np.ones(50)) == 0.0


def test_the_threshold_is_the_kth_smallest_with_k_the_ceiling_of_99_percent() -> None:
    # 100 controls: k = 99, the 99th smallest; exactly one control lies above it
    control = np.arange(100, dtype=np.float64)[::-1].copy()
    assert control_threshold(control) == 98.0
    assert recall_at_fpr_score(np.array([1, 1]), np.array([98.5, 98.0]), control) == 0.5
    # 101 controls: k = ceil(99.99) = 100, one above (two would be 1.98%)
    assert control_threshold(np.arange(101.0)) == 99.0
    assert control_threshold(np.arange(300.0)) == 296.0  # k = 297: three above


def test_the_negatives_are_not_read_and_no_positive_is_an_error() -> None:
    control = np.linspace(0, 1, 300)
    a = recall_at_fpr_score(np.array([1, 1, 0]), np.array([0.999, 0.2, 0.0]), control)
    b = recall_at_fpr_score(np.array([1, 1, 0]), np.array([0.999, 0.2, 1.0]), control)
    assert a == b == 0.5
    with pytest.raises(MetricError, match="at least one positive"):
        recall_at_fpr_score(np.array([0, 0]), np.array([0.1, 0.9]), control)
    with pytest.raises(MetricError, match="at least one score"):
        control_threshold(np.array([]))


def test_the_weighted_form_is_the_recall_of_the_resampled_multiset() -> None:
    rng = np.random.default_rng(3)
    control, positives = _tied(rng, 150, 12), _tied(rng, 40, 12)
    y = np.ones(40, dtype=int)
    w = rng.integers(0, 3, size=(25, 40))
    cw = rng.integers(0, 3, size=(25, 150))
    got = weighted_recall_at_fpr(y, positives, control, w, cw)
    for row in range(25):
        expanded_c = np.repeat(control, cw[row])
        expanded_p = np.repeat(positives, w[row])
        if expanded_p.size == 0 or expanded_c.size == 0:
            assert np.isnan(got[row])
        else:
            assert got[row] == pytest.approx(_numpy_recall(expanded_p, expanded_c), abs=1e-12)
    ones = weighted_recall_at_fpr(y, positives, control, np.ones((1, 40)), np.ones((1, 150)))
    assert ones[0] == recall_at_fpr_score(y, positives, control)


def test_the_bootstrap_resamples_both_sets_independently_and_is_seeded() -> None:
    rng = np.random.default_rng(5)
    control, positives = rng.normal(size=300), rng.normal(1.5, 1.0, size=80)
    y = np.ones(80, dtype=int)
    value = recall_at_fpr_score(y, positives, control)

    def stat(w: np.ndarray, cw: np.ndarray) -> np.ndarray:
        return weighted_recall_at_fpr(y, positives, control, w, cw)

    first = two_sample_bootstrap(value, stat, np.arange(80), np.arange(300), n_resamples=400,
                                 seed=11)
    again = two_sample_bootstrap(value, stat, np.arange(80), np.arange(300), n_resamples=400,
                                 seed=11)
    other = two_sample_bootstrap(value, stat, np.arange(80), np.arange(300), n_resamples=400,
                                 seed=12)
    assert (first.low, first.high) == (again.low, again.high)
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low <= value <= first.high and first.high > first.low
    # independent numpy replay: positive counts first, then control counts, one generator
    gen = np.random.default_rng(11)
    draws = [gen.integers(0, 80, size=(400, 80)), gen.integers(0, 300, size=(400, 300))]
    replay = [_numpy_recall(positives[draws[0][b]], control[draws[1][b]]) for b in range(400)]
    assert (first.low, first.high) == pytest.approx(
        tuple(np.percentile(replay, [2.5, 97.5])), abs=1e-12)
    # a fixed control set (one item) leaves only the positives' spread: a narrower interval
    fixed = two_sample_bootstrap(value, stat, np.arange(80), np.zeros(300), n_resamples=400,
                                 seed=11)
    assert fixed.high - fixed.low < first.high - first.low


def test_recall_at_control_reports_threshold_fpr_counts_and_the_control_set() -> None:
    rng = np.random.default_rng(8)
    items = [Item(id=f"i{k}", prompts=(Prompt(f"text {k}", id=f"p{k}", label=k % 2),))
             for k in range(60)]
    probs = np.round(rng.uniform(size=60), 2)  # two decimals: ties
    control = np.round(rng.uniform(0, 0.9, size=250), 2)
    info = ControlSetOut(task_id="t", file="control.csv", sha256="a" * 64,
                         description="ordinary requests")
    out = recall_at_control("t", items, probs, control, info, seed=4, n_resamples=300)
    positives = probs[1::2]
    assert out.value == pytest.approx(_numpy_recall(positives, control), abs=1e-6)
    assert out.threshold == pytest.approx(_numpy_threshold(control), abs=1e-6)
    assert out.control_fpr == pytest.approx(np.mean(control > _numpy_threshold(control)),
                                            abs=1e-6)
    assert out.control_fpr <= 0.01
    assert (out.n_positives, out.n_control, out.resamples) == (30, 250, 300)
    assert out.control == info
    assert out.value is not None and out.ci_low is not None and out.ci_high is not None
    assert out.ci_low <= out.value <= out.ci_high
    # seeded as headline seeds its metrics: from the seed, the task id and the name
    same = two_sample_bootstrap(
        _numpy_recall(positives, control),
        lambda w, cw: weighted_recall_at_fpr(np.ones(30, dtype=int), positives, control, w,
                                             cw),
        np.arange(30), np.arange(250), n_resamples=300,
        seed=sub_seed(4, "t", "recall_at_1pct_fpr"))
    assert (out.ci_low, out.ci_high) == pytest.approx((same.low, same.high), abs=1e-6)


def test_the_metric_definition_says_the_tie_rule_and_cites_its_source() -> None:
    d = METRICS["recall_at_1pct_fpr"]
    assert d.label == "Recall @ 1% FPR" and d.direction is Direction.HIGHER
    assert d.citation is not None and "Goldowsky-Dill" in d.citation.short
    assert "Deception Using Linear Probes" in d.citation.title
    text = d.text
    assert "strictly above" in text and "equal to it counts as negative" in text
    assert "ceil(99/100 x n controls)" in text and "independently" in text
    assert d.compute is recall_at_fpr_score and d.reads is None  # not a headline metric


def test_the_leaderboard_shows_the_recall_where_a_task_declares_a_control_set(
        tmp_path: Path) -> None:
    """A stored result with a recall: its entry page and leaderboard.json carry it; the
    task page draws the column because the task declares a control set, and a task that
    declares none draws no column and its rows carry null."""
    from probebench.leaderboard.build import build_leaderboard, page_name
    from probebench.leaderboard.columns import columns
    from probebench.leaderboard.probescore import load_probescore_spec
    from probebench.registry.store import ResultHistory, result_path
    from probebench.tasks.catalog import TaskCatalog
    from probebench.tasks.spec import ControlSpec
    from tests.registry_fixture import synthetic_registry

    registry = tmp_path / "registry"
    ids = synthetic_registry(registry, 3)
    path = result_path(registry, ids[1], "blimp_passive_1")
    history = ResultHistory.model_validate_json(path.read_text("utf-8"))
    record = history.history[-1]
    info = ControlSetOut(task_id="blimp_passive_1", file="data/controls/ordinary.csv",
                         sha256="c" * 64, description="ordinary sentences")
    items = [Item(id=f"i{k}", prompts=(Prompt(f"t{k}", id=f"p{k}", label=1),))
             for k in range(40)]
    probs = np.linspace(0.3, 0.99, 40)
    control = np.linspace(0.0, 0.9, 200)
    recall = recall_at_control("blimp_passive_1", items, probs, control, info, seed=0,
                               n_resamples=100)
    result = record.result.model_copy(update={"recall_at_1pct_fpr": recall})
    history.history[-1] = record.model_copy(update={"result": result})
    path.write_text(history.to_json(), "utf-8")

    default = TaskCatalog.default()
    control_spec = ControlSpec(file="data/controls/ordinary.csv", sha256="c" * 64,
                               description="ordinary sentences")
    specs = {**default.specs, "blimp_passive_1": default.spec("blimp_passive_1").model_copy(
        update={"control": control_spec})}
    out = tmp_path / "board"
    build_leaderboard(registry, out, catalog=TaskCatalog(default.path, specs),
                      n_resamples=50)

    cell = f"{recall.value:.3f} [{recall.ci_low:.3f}, {recall.ci_high:.3f}]"
    label = columns(load_probescore_spec())["recall"].label
    assert label == "Recall @ 1% FPR"
    entry = (out / page_name(ids[1])).read_text("utf-8")
    assert label in entry and cell in entry and "ordinary sentences" in entry
    assert f"threshold {recall.threshold:.6f}" in entry
    other = (out / page_name(ids[2])).read_text("utf-8")
    assert label not in other.split('id="files"')[0].split("ProbeScore axes")[1]
    blimp = (out / "tasks" / "blimp_passive_1.html").read_text("utf-8")
    verbs = (out / "tasks" / "verb_grammar.html").read_text("utf-8")
    assert label in blimp and cell in blimp and "n/a" in blimp
    assert label not in verbs
    board = json.loads((out / "leaderboard.json").read_text("utf-8"))
    rows = {(r["entry_id"], r["task"]): r for r in board["results"]}
    mine = rows[(ids[1], "blimp_passive_1")]
    assert (mine["recall_at_1pct_fpr"], mine["recall_at_1pct_fpr_ci_low"],
            mine["recall_at_1pct_fpr_ci_high"], mine["recall_threshold"]) == (
        recall.value, recall.ci_low, recall.ci_high, recall.threshold)
    assert all(r["recall_at_1pct_fpr"] is None for key, r in rows.items()
               if key != (ids[1], "blimp_passive_1"))
