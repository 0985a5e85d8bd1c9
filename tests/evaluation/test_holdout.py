"""The holdout part of a stored result: kept apart from the compared part, never replaced
or outranked by a keyless run; the Goodhart-resistance axis it measures, resampled with
the other axes; and the minimum detectable drop of a holdout."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest

from probebench.evaluation import holdout as holdout_module
from probebench.evaluation import power
from probebench.evaluation.holdout import goodhart_value, retention, selectivity_share
from probebench.evaluation.metrics import auroc_score
from probebench.evaluation.power import minimum_detectable_drop, standard_error
from probebench.evaluation.results import (
    HoldoutOut,
    IntervalOut,
    ProbeInfo,
    SelectivityOut,
    Submission,
    TaskResult,
)
from probebench.leaderboard.probescore import axis_values, load_probescore_spec
from probebench.leaderboard.ranks import Scored, rank_intervals
from probebench.registry.store import read_history, result_path, store_submission
from tests.registry_fixture import synthetic_record, synthetic_result

TASK = "blimp_passive_1"
ENTRY = "org/sealed-smollm2-135m-l1-v1"


def _iv(value: float, half: float = 0.03) -> IntervalOut:
    return IntervalOut(value=value, ci_low=value - half, ci_high=value + half, resamples=200,
                       dropped=0)


def _holdout(auroc: float, test_auroc: float, generation: int = 1) -> HoldoutOut:
    return HoldoutOut(generation=generation, commitment=f"{generation:064x}", n_items=120,
                      n_labelled_prompts=240, auroc=_iv(auroc), test_auroc=test_auroc,
                      retention=retention(auroc, test_auroc), minimum_detectable_drop=9.6)


def _result(strength: float = 0.3, seed: int = 0) -> TaskResult:
    return synthetic_result(TASK, strength, np.random.default_rng(seed))


def _submission(result: TaskResult) -> Submission:
    record = synthetic_record(result)
    return Submission(spec_version="0.0.1", probebench_version="0.1.0",
                      probe=ProbeInfo(id="sealed", bundle_sha256="cd" * 32,
                                      probe_type="linear", model="smollm2-135m", layer=1,
                                      position="last_token", license="MIT"),
                      model=record.model, device="cpu", seed=0, bootstrap_resamples=100,
                      versions=record.versions, definitions={}, tasks=[result],
                      run=record.run)


def test_the_modules_doctests_pass() -> None:
    for module in (power, holdout_module):
        assert doctest.testmod(module).failed == 0


def test_a_keyless_run_stores_nothing_for_a_task_with_a_sealed_holdout(tmp_path: Path) -> None:
    sub = _submission(_result())
    assert store_submission(tmp_path, ENTRY, sub, sealed_unscored=[TASK]) == []
    assert not result_path(tmp_path, ENTRY, TASK).exists()


def test_a_keyed_run_completes_a_keyless_record_and_a_keyless_one_never_replaces_it(
        tmp_path: Path) -> None:
    path = result_path(tmp_path, ENTRY, TASK)
    result = _result()
    auroc = result.auroc.value
    assert auroc is not None
    # stored before the task had a sealed holdout: no holdout part
    assert store_submission(tmp_path, ENTRY, _submission(result)) == [path]
    # the same numbers, now with the holdout: a new record (the holdout part is news)
    held = _holdout(auroc - 0.04, auroc)
    assert store_submission(tmp_path, ENTRY, _submission(result), holdouts={TASK: held}) \
        == [path]
    history = read_history(path)
    assert [r.holdout for r in history] == [None, held]
    # again, identical: nothing
    assert store_submission(tmp_path, ENTRY, _submission(result), holdouts={TASK: held}) == []
    # float noise in the holdout part within the contract: nothing
    noisy = held.model_copy(update={"auroc": _iv((held.auroc.value or 0) + 1e-7)})
    assert store_submission(tmp_path, ENTRY, _submission(result),
                            holdouts={TASK: noisy}) == []
    # a keyless run with other numbers appends nothing: it never outranks a keyed one
    other = _result(strength=0.1, seed=3)
    assert store_submission(tmp_path, ENTRY, _submission(other), sealed_unscored=[TASK]) == []
    # the next generation: a new record
    gen2 = _holdout(auroc - 0.02, auroc, generation=2)
    assert store_submission(tmp_path, ENTRY, _submission(result), holdouts={TASK: gen2}) \
        == [path]
    assert [r.holdout.generation if r.holdout else None for r in read_history(path)] == \
        [None, 1, 2]
    # the compared part ignores the holdout part, as it ignores timing
    first, second = read_history(path)[:2]
    assert first.deterministic() == second.deterministic()


def _selectivity(accuracy: float, control: float | None) -> SelectivityOut:
    sel = None if control is None else accuracy - control
    none = IntervalOut(value=None, ci_low=None, ci_high=None, resamples=0, dropped=0)
    return SelectivityOut(accuracy=_iv(accuracy), control_accuracy=_iv(control) if control
                          is not None else none,
                          selectivity=_iv(sel, 0.04) if sel is not None else none,
                          control_positive_rate=0.5, degenerate=control is None,
                          degenerate_reason=None if control is not None else "a lookup",
                          note="")


def test_goodhart_resistance_is_retention_times_the_selectivity_share() -> None:
    assert retention(0.8, 0.9) == pytest.approx(0.75)
    assert retention(0.95, 0.9) == 1.0 and retention(0.4, 0.9) == 0.0
    assert retention(0.7, 0.5) is None
    assert selectivity_share(_selectivity(0.9, 0.7)) == pytest.approx(0.5)
    assert selectivity_share(_selectivity(0.9, None)) is None
    assert selectivity_share(None) is None
    assert goodhart_value(0.75, 0.5)[0] == pytest.approx(0.375)
    assert goodhart_value(0.75, None) == (0.75, "retention on the sealed holdout "
                                                "(selectivity not measured)")
    assert goodhart_value(None, 0.5)[0] is None


def _record(auroc_drop: float, accuracy: float, control: float | None, *,
            with_holdout: bool = True, seed: int = 0) -> object:
    result = _result(seed=seed)
    result = result.model_copy(update={"selectivity": _selectivity(accuracy, control)})
    test_auroc = result.auroc.value
    assert test_auroc is not None
    record = synthetic_record(result)
    if with_holdout:
        record = record.model_copy(update={"holdout": _holdout(test_auroc - auroc_drop,
                                                                test_auroc)})
    return record


def test_the_axis_is_measured_where_every_task_has_a_holdout_part_and_imputed_elsewhere(
        ) -> None:
    record = _record(0.05, 0.9, 0.7)
    value = axis_values({TASK: record}, "MIT")["holdout_goodhart"]  # type: ignore[dict-item]
    test_auroc = record.result.auroc.value  # type: ignore[attr-defined]
    expected = (test_auroc - 0.05 - 0.5) / (test_auroc - 0.5) * 0.5
    assert not value.imputed and value.value == pytest.approx(expected, abs=1e-6)
    degenerate = axis_values({TASK: _record(0.05, 0.9, None)}, "MIT")["holdout_goodhart"]  # type: ignore[dict-item]
    assert degenerate.value == pytest.approx((test_auroc - 0.55) / (test_auroc - 0.5),
                                             abs=1e-6)
    assert "selectivity not measured" in degenerate.note
    keyless = axis_values({TASK: _record(0.05, 0.9, 0.7, with_holdout=False)},  # type: ignore[dict-item]
                          "MIT")["holdout_goodhart"]
    assert keyless.imputed and keyless.value == 0.5 and "holdout key" in keyless.note
    # specs before 0.2.0 keep the constant imputation
    assert axis_values({TASK: record}, "MIT")["goodhart"].imputed  # type: ignore[dict-item]


def test_spec_0_2_0_reads_the_measured_axis_and_its_interval_moves() -> None:
    spec = load_probescore_spec("0.2.0")
    assert {a.name: a.source for a in spec.axes}["goodhart_resistance"] == "holdout_goodhart"
    entries = []
    for k, drop in enumerate((0.0, 0.1, 0.2)):
        record = _record(drop, 0.9, 0.7, seed=k)
        entries.append(Scored(f"org/e{k}-m-l1-v1", {TASK: record},  # type: ignore[dict-item]
                              axis_values({TASK: record}, "MIT"),  # type: ignore[dict-item]
                              closed=False))
    values = [e.values["holdout_goodhart"].value for e in entries]
    assert len(set(values)) == 3 and values == sorted(values, reverse=True)
    ranks = rank_intervals(entries, spec, n_resamples=100)
    for entry in entries:
        r = ranks[entry.id]
        assert r.score_high - r.score_low > 0 and not r.score_note


def test_the_minimum_detectable_drop_matches_a_simulation() -> None:
    """Hanley and McNeil's SE against the spread of AUROCs of simulated holdouts of 100
    positive and 100 negative prompts at AUROC 0.75 (binormal, equal variance)."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(0)
    shift = np.sqrt(2) * 0.6745  # binormal separation with AUROC ~0.75
    scores = np.hstack([rng.normal(shift, 1, (2000, 100)), rng.normal(0, 1, (2000, 100))])
    # Mann-Whitney: the positives' rank sum, per simulated holdout
    draws = (rankdata(scores, axis=1)[:, :100].sum(axis=1) - 100 * 101 / 2) / (100 * 100)
    one = np.r_[np.ones(100), np.zeros(100)]
    assert draws[0] == pytest.approx(auroc_score(one, scores[0]))
    assert np.mean(draws) == pytest.approx(0.75, abs=0.01)
    assert np.std(draws) == pytest.approx(standard_error(0.75, 100, 100), rel=0.12)
    assert minimum_detectable_drop(100, 100) < 10.0 < minimum_detectable_drop(60, 60)
