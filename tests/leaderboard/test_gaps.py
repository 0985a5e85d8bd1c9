"""Ranks a skeptic would accept: baselines gate ranks, and ProbeScore intervals come from
one joint resample of every axis with sampling uncertainty.

Unit checks of the gap (paired, multi-class, the stored-interval fallback), the joint
resample (zero width only when nothing varies, the cap inside each resample, the
normal approximation for numbers stored with a CI alone) and the surface-feature flag;
then a leaderboard build on a copy of the repository's registry as it is stored today
(no per-prompt baseline scores), and one after the SyntaxGym NPI task's baselines are
re-computed on the embedded model and stored with their per-prompt scores.
"""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.evaluation.baselines import baseline_gap, best_baseline, gap_interval
from probebench.evaluation.metrics import (
    auroc_score,
    expected_calibration_error,
    item_bootstrap,
    resample_counts,
    weighted_auroc,
    weighted_calibration_error,
)
from probebench.evaluation.results import (
    BaselineGapOut,
    BaselineOut,
    FlaggedOut,
    IntervalOut,
    PromptScores,
)
from probebench.leaderboard.build import build_leaderboard, page_name
from probebench.leaderboard.gaps import entry_beats, result_gap
from probebench.leaderboard.probescore import (
    AxisValue,
    axis_values,
    load_probescore_spec,
    parse_spec,
    probescore,
)
from probebench.leaderboard.ranks import (
    Scored,
    draw_scores,
    rank_group,
    split_normal,
)
from probebench.leaderboard.task_page import separating_word, surface_flag
from probebench.registry.baselines import BaselineRecord, task_baselines
from probebench.registry.store import ResultRecord, latest_results
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_record, synthetic_result

REPO = Path(__file__).resolve().parents[2]
NPI = "probebench/syntaxgym-npi-orc-smollm2-135m-l15-v2"
NPI_TASK = "syntaxgym_npi_orc_any"
VERB_MLP = "probebench/verb-grammar-mlp-smollm2-135m-l20-v2"
GUARD = "probebench/eval-awareness-guard-smollm2-135m-l15-v2"
RESAMPLES = 60


def _iv(value: float, low: float | None = None, high: float | None = None) -> IntervalOut:
    return IntervalOut(value=value, ci_low=value if low is None else low,
                       ci_high=value if high is None else high, resamples=100, dropped=0)


# --- the gap -------------------------------------------------------------------------

def test_the_gap_resamples_the_same_items_for_probe_and_baseline() -> None:
    rng = np.random.default_rng(3)
    n_items = 80
    items = np.repeat(np.arange(n_items), 2)
    y = np.tile([1, 0], n_items)
    probe = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.2, y.size), 0, 1)
    base = np.clip(probe + rng.normal(0, 0.15, y.size), 0, 1)  # shares the hard items
    iv = gap_interval(y, probe, base, items, seed=11, n_resamples=400)
    # by hand: one draw of items, both AUROCs on it
    counts = resample_counts(n_items, 400, np.random.default_rng(11))[:, items]
    diffs = weighted_auroc(y, probe, counts) - weighted_auroc(y, base, counts)
    low, high = np.percentile(diffs, [2.5, 97.5])
    assert iv.value == pytest.approx(auroc_score(y, probe) - auroc_score(y, base))
    assert (iv.low, iv.high) == pytest.approx((low, high))
    # pairing removes the items' shared difficulty: narrower than combining the two
    # AUROCs' own intervals as if independent
    a, b = (item_bootstrap(auroc_score(y, s), partial(weighted_auroc, y, s), items,
                           n_resamples=400, seed=seed) for s, seed in ((probe, 1), (base, 2)))
    unpaired = np.hypot(a.high - a.low, b.high - b.low)
    assert iv.high - iv.low < 0.8 * unpaired


def test_the_best_baseline_is_the_highest_auroc_and_beating_needs_the_interval() -> None:
    y = [1, 0] * 30
    items = [i for i in range(30) for _ in range(2)]
    probe = [0.9 if v else 0.2 for v in y]
    probe[0], probe[1] = 0.1, 0.95  # one item wrong
    pred = PromptScores(prompt_ids=[str(i) for i in range(60)], items=items, labels=y,
                        probs=probe)
    strong = [0.6 if v else 0.4 for v in y]
    baselines = {
        "majority": BaselineOut(auroc=_iv(0.5), accuracy=None, note="", scores=[0.5] * 60),
        "length": BaselineOut(auroc=_iv(auroc_score(np.array(y), np.array(strong))),
                              accuracy=None, note="", scores=strong),
        "surprisal": BaselineOut(auroc=None, accuracy=_iv(0.7), note="own protocol")}
    assert best_baseline(baselines) == "length"
    gap, beats = baseline_gap(baselines, pred, task_id="t", seed=0, n_resamples=200)
    assert gap is not None and gap.baseline == "length" and gap.baseline_auroc == 1.0
    assert gap.value == pytest.approx(auroc_score(np.array(y), np.array(probe)) - 1.0,
                                      abs=1e-6)
    assert beats is False and gap.ci_high is not None and gap.ci_high <= 0
    # against the constant only, it beats
    gap, beats = baseline_gap({"majority": baselines["majority"]}, pred, task_id="t",
                              seed=0, n_resamples=200)
    assert beats is True and gap is not None and gap.ci_low is not None and gap.ci_low > 0
    # a best baseline without per-prompt scores (stored before they were kept): unknown
    old = {"length": baselines["length"].model_copy(update={"scores": None})}
    assert baseline_gap(old, pred, task_id="t", seed=0, n_resamples=200) == (None, None)
    assert baseline_gap({"surprisal": baselines["surprisal"]}, pred, task_id="t", seed=0,
                        n_resamples=200) == (None, None)


def test_a_multiclass_gap_is_the_macro_aurocs_difference() -> None:
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 20)
    logits = rng.normal(0, 1, (60, 3)) + 2.0 * np.eye(3)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    majority = np.tile([1 / 3, 1 / 3, 1 / 3], (60, 1))
    pred = PromptScores(prompt_ids=[str(i) for i in range(60)], items=list(range(60)),
                        labels=y.tolist(), probs=[float(proba[i, k]) for i, k in enumerate(y)],
                        class_probs=proba.tolist())
    base = BaselineOut(auroc=_iv(0.5), accuracy=None, note="", class_scores=majority.tolist())
    gap, beats = baseline_gap({"majority": base}, pred, task_id="mc", seed=0, n_resamples=200)
    assert gap is not None and beats is True
    stored = np.array(pred.class_probs)
    assert gap.value == pytest.approx(auroc_score(y, stored) - 0.5, abs=1e-6)


def test_stored_baselines_load_with_or_without_scores() -> None:
    every = [task_baselines(REPO / "registry", p.name)
             for p in sorted((REPO / "registry" / "baselines").iterdir()) if p.is_dir()]
    records = [r for found in every for r in found.values()]
    assert len(records) >= 10
    for record in records:
        for b in record.baselines.values():
            assert b.scores is None or len(b.scores) > 0


def _as_stored_before(record: ResultRecord) -> ResultRecord:
    """``record`` as stored before gaps and per-prompt baseline scores were kept."""
    baselines = {k: b.model_copy(update={"scores": None, "class_scores": None})
                 for k, b in record.result.baselines.items()}
    return record.model_copy(update={"result": record.result.model_copy(update={
        "baseline_gap": None, "beats_baselines": None, "baselines": baselines})})


def _npi_record() -> ResultRecord:
    """The NPI probe's stored result, as stored before this change (the registry may
    hold it either way)."""
    return _as_stored_before(latest_results(REPO / "registry", NPI)[NPI_TASK])


def test_a_results_gap_comes_from_the_best_data_there_is() -> None:
    record = _npi_record()
    # stored today: no per-prompt baseline scores, so the stored intervals (MOVER)
    gap = result_gap(record, None)
    assert gap.method == "intervals" and gap.baseline == "random_features"
    probe = record.result.auroc.value
    assert probe is not None and gap.value is not None
    assert gap.beats is False and gap.value == pytest.approx(probe - 1.0)
    assert gap.low is not None and gap.high is not None and gap.low < gap.value < 0
    assert gap.high <= 0  # the probe's CI reaches no higher than the baseline's 1.000
    # with per-prompt scores (a perfect separator), the paired bootstrap at build time
    labels = record.result.predictions.labels
    rf = record.result.baselines["random_features"].model_copy(
        update={"scores": [float(v) for v in labels]})
    stored = BaselineRecord(task=NPI_TASK, test_sha256=record.result.test_sha256,
                            site="15:last_token", model=record.model, seed=0,
                            bootstrap_resamples=1000,
                            baselines={**record.result.baselines, "random_features": rf})
    paired = result_gap(record, stored)
    assert paired.method == "paired" and paired.beats is False
    direct, _ = baseline_gap(stored.baselines, record.result.predictions, task_id=NPI_TASK,
                             seed=record.seed, n_resamples=record.bootstrap_resamples)
    assert direct is not None and (paired.value, paired.low, paired.high) == (
        direct.value, direct.ci_low, direct.ci_high)
    # baselines stored for another test set are not used: back to the result's own
    other = stored.model_copy(update={"test_sha256": "0" * 64})
    assert result_gap(record, other).method == "intervals"
    # a result that carries its gap: that one
    carried = record.model_copy(update={"result": record.result.model_copy(update={
        "baseline_gap": BaselineGapOut(value=0.1, ci_low=0.02, ci_high=0.2, resamples=10,
                                       dropped=0, baseline="length", baseline_auroc=0.6),
        "beats_baselines": True})})
    found = result_gap(carried, stored)
    assert (found.method, found.beats, found.baseline) == ("stored", True, "length")
    # no interval to combine: the gap is shown, never taken as beating
    bare = record.model_copy(update={"result": record.result.model_copy(update={
        "auroc": IntervalOut(value=0.92, ci_low=None, ci_high=None, resamples=0,
                             dropped=0)})})
    unknown = result_gap(bare, None)
    assert unknown.method == "none" and unknown.beats is None and unknown.value is not None
    nothing = record.model_copy(update={"result": record.result.model_copy(update={
        "baselines": {}})})
    assert result_gap(nothing, None).beats is None
    assert entry_beats([gap, found]) is False and entry_beats([found, unknown]) is None
    assert entry_beats([found, found]) is True and entry_beats([]) is None


# --- ranks ---------------------------------------------------------------------------

def _entry(entry_id: str, probs: list[float], labels: list[int], *, beats: bool | None,
           evalaware: FlaggedOut | None = None, distshift: float | None = 0.7) -> Scored:
    items = [i for i in range(len(probs) // 2) for _ in range(2)]
    result = synthetic_result("blimp_passive_1", 0.3, np.random.default_rng(0))
    y, p = np.array(labels), np.array(probs)
    result = result.model_copy(update={
        "auroc": _iv(auroc_score(y, p)), "ece": expected_calibration_error(y, p),
        "evalaware_auroc": evalaware or FlaggedOut(value=0.85 * auroc_score(y, p),
                                                   imputed=True, note="no guard"),
        "distshift_auroc": FlaggedOut(value=distshift, imputed=False, note=""),
        "predictions": PromptScores(prompt_ids=[str(i) for i in range(len(probs))],
                                    items=items, labels=labels, probs=probs)})
    record = synthetic_record(result)
    return Scored(entry_id, {"t": record}, axis_values({"t": record}, "MIT"), closed=False,
                  beats=beats, baseline_note="gap +0.010 [−0.020, +0.040] vs length")


def _noisy(seed: int, strength: float, n: int = 120) -> tuple[list[float], list[int]]:
    rng = np.random.default_rng(seed)
    labels = [1, 0] * (n // 2)
    la = np.array(labels)
    return list(np.clip(0.5 + strength * (la - 0.5) + rng.normal(0, 0.2, n), 0, 1)), labels


def test_entries_that_do_not_beat_their_baselines_follow_the_others_unranked() -> None:
    spec = load_probescore_spec()
    strong, labels = _noisy(1, 0.6)
    weak, _ = _noisy(2, 0.2)
    entries = [_entry("org/strong-fails-m-l1-v1", strong, labels, beats=False),
               _entry("org/weak-beats-m-l1-v1", weak, labels, beats=True),
               _entry("org/unknown-m-l1-v1", strong, labels, beats=None)]
    group = rank_group(entries, spec, family="blimp", n_resamples=RESAMPLES)
    # the strong entry scores higher, yet it is listed after the one that beats them
    assert group.scores["org/strong-fails-m-l1-v1"] > group.scores["org/weak-beats-m-l1-v1"]
    assert group.order[0] == "org/weak-beats-m-l1-v1"
    assert group.ranked == ("org/weak-beats-m-l1-v1",)
    r = group.ranks["org/weak-beats-m-l1-v1"]
    assert (r.rank, r.best, r.worst, r.unranked) == (1, 1, 1, "")
    fails, unknown = group.ranks["org/strong-fails-m-l1-v1"], group.ranks["org/unknown-m-l1-v1"]
    assert fails.rank is fails.best is fails.worst is None
    assert fails.unranked.startswith("does not beat its baselines: gap")
    assert unknown.rank is None and unknown.unranked.startswith("baselines not compared")
    # unranked entries still get their ProbeScore interval from the same draws
    assert fails.score_low < group.scores["org/strong-fails-m-l1-v1"] < fails.score_high


def test_a_score_interval_has_zero_width_only_when_nothing_varies() -> None:
    spec = load_probescore_spec()
    labels = [1, 0] * 40
    perfect = [0.9 if v else 0.1 for v in labels]  # AUROC 1 and ECE 0.1 on every draw
    still = _entry("org/still-m-l1-v1", perfect, labels, beats=True)
    draws = draw_scores([still], spec, n_resamples=RESAMPLES)
    assert draws.boot.max() - draws.boot.min() < 1e-12  # float64 sums in another order
    assert draws.notes[0].startswith("no axis varies: every one of the 60 resamples gives "
                                     "the same AUROC 1.000")
    # the eval-aware AUROC measured with a CI only: drawn from a normal approximation
    measured = FlaggedOut(value=0.8, ci_low=0.7, ci_high=0.85, imputed=False, note="guard")
    moving = _entry("org/moving-m-l1-v1", perfect, labels, beats=True, evalaware=measured)
    twin = _entry("org/twin-m-l1-v1", perfect, labels, beats=True, evalaware=measured)
    group = rank_group([moving, twin], spec, family="blimp", n_resamples=400)
    a, b = group.ranks["org/moving-m-l1-v1"], group.ranks["org/twin-m-l1-v1"]
    assert a.score_high - a.score_low > 0.005 and a.score_note == ""
    # paired: the same deviates for both, so identical entries stay tied
    assert (a.rank, a.best, a.worst) == (b.rank, b.best, b.worst) == (1, 1, 1)
    # the ProbeScore moves by the eval-aware axis alone, whose draws span the stored CI:
    # the interval's ends are the ProbeScores at the CI's ends (the cap included)
    source = next(x.source for x in spec.axes if x.name == "auroc_evalaware")

    def at(value: float) -> float:
        values = {**moving.values, source: AxisValue(value)}
        return probescore(spec, values).total

    assert (a.score_low, a.score_high) == pytest.approx((at(0.7), at(0.85)), abs=4e-3)


def test_the_cap_is_applied_inside_each_resample() -> None:
    """Only AUROC varies, and the cap holds it on every draw: the total cannot move (with
    the cap applied to the point estimate alone it would)."""
    spec = parse_spec({"version": "t", "cap": 0.3, "axes": {
        "auroc": {"weight": 0.3, "source": "auroc"},
        "license_score": {"weight": 0.1, "source": "license"},
        "inference_efficiency": {"weight": 0.1, "source": "flops"},
        "latency": {"weight": 0.1, "source": "latency_ms"},
        "goodhart_resistance": {"weight": 0.1, "source": "goodhart"}}}, "test")
    probs, labels = _noisy(4, 0.3)
    entry = _entry("org/capped-m-l1-v1", probs, labels, beats=True)
    draws = draw_scores([entry], spec, n_resamples=RESAMPLES)
    assert draws.boot.min() == pytest.approx(draws.boot.max())
    assert draws.notes[0].startswith("only capped axes vary (AUROC)")
    assert probescore(spec, entry.values).capped == ["auroc"]


def test_a_multiclass_result_is_resampled_by_its_macro_auroc() -> None:
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1, 2], 30)
    logits = rng.normal(0, 1, (90, 3)) + 1.2 * np.eye(3)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    base = synthetic_result("blimp_passive_1", 0.3, np.random.default_rng(0))
    result = base.model_copy(update={
        "classes": ["0", "1", "2"], "auroc": _iv(auroc_score(y, proba)),
        "ece": expected_calibration_error(y, proba),
        "predictions": PromptScores(prompt_ids=[str(i) for i in range(90)],
                                    items=list(range(90)), labels=y.tolist(),
                                    probs=[float(proba[i, k]) for i, k in enumerate(y)],
                                    class_probs=proba.tolist())})
    record = synthetic_record(result)
    entry = Scored("org/mc-m-l1-v1", {"t": record}, axis_values({"t": record}, "MIT"),
                   closed=False, beats=True)
    draws = draw_scores([entry], load_probescore_spec(), n_resamples=200)
    low, high = draws.auroc_ci[0]
    assert low < auroc_score(y, proba) < high and high - low > 0.02
    assert np.ptp(draws.boot[:, 0]) > 0 and draws.notes == [""]


def test_split_normal_matches_the_stored_interval() -> None:
    z = np.random.default_rng(0).standard_normal(200_000)
    draws = split_normal(0.8, 0.6, 0.85, z)
    assert np.percentile(draws, [2.5, 50, 97.5]) == pytest.approx([0.6, 0.8, 0.85], abs=3e-3)
    assert (split_normal(0.8, None, None, z) == 0.8).all()
    assert weighted_calibration_error(np.array([1, 0]), np.array([0.9, 0.1]),
                                      np.array([[1, 1]]))[0] == pytest.approx(0.1)


# --- the surface flag ----------------------------------------------------------------

def test_the_surface_flag_names_the_separating_word() -> None:
    catalog = TaskCatalog.default()
    assert separating_word(catalog.load(NPI_TASK).test) == (
        "the first word: label 1 prompts have “No”, label 0 prompts “The”")
    # a task whose labels no word position or word separates
    assert separating_word(catalog.load("blimp_anaphor_gender_agreement").test) is None
    stored = task_baselines(REPO / "registry", NPI_TASK)
    flag = surface_flag(catalog, NPI_TASK, stored)
    assert flag is not None and flag["feature"] and flag["feature"].startswith("the first")
    assert [h["baseline"] for h in flag["hits"]] == ["random_features"]
    assert surface_flag(catalog, "blimp_anaphor_gender_agreement", task_baselines(
        REPO / "registry", "blimp_anaphor_gender_agreement")) is None


# --- the leaderboard, on the registry as stored ---------------------------------------

def _copy_registry(root: Path) -> Path:
    from tests.leaderboard.test_ranks import _match_stored_results

    registry = root / "registry"
    for part in ("probes", "results", "baselines"):
        shutil.copytree(REPO / "registry" / part, registry / part)
    shutil.copy(REPO / "registry" / "guards.yaml", registry / "guards.yaml")
    _match_stored_results(registry)
    return registry


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("gate")
    registry = _copy_registry(root)
    build_leaderboard(registry, root / "board", catalog=TaskCatalog.for_repo(REPO),
                      n_resamples=RESAMPLES)
    return root / "board", json.loads((root / "board" / "leaderboard.json").read_text())


def test_every_result_carries_its_gap(board: tuple[Path, dict[str, Any]]) -> None:
    import csv

    import jsonschema

    out, doc = board
    jsonschema.validate(doc, json.loads((out / "leaderboard.schema.json").read_text()))
    assert doc["schema_version"] == "4"
    for row in doc["results"]:
        if row["guard"]:
            continue
        assert row["baseline_gap"] is not None and row["best_baseline"], row["entry_id"]
        assert isinstance(row["beats_baselines"], bool)
        # results stored before the gap: the stored intervals (their baselines kept no
        # per-prompt scores); results stored since: the gap they carry
        assert row["baseline_gap_method"] in ("intervals", "stored")
        assert (row["baseline_gap_ci_low"] > 0) == row["beats_baselines"]
        # the gap is computed on the stored per-prompt numbers (6 decimals), the AUROC on
        # the full-precision ones: rounding ties move it by up to about 1e-3
        assert row["baseline_gap"] == pytest.approx(row["auroc"] - row["best_baseline_auroc"],
                                                    abs=2e-3)
    with (out / "leaderboard.csv").open(newline="") as handle:
        header = next(csv.reader(handle))
    assert {"baseline_gap", "baseline_gap_ci_low", "beats_baselines",
            "task_unranked"} <= set(header)


def test_the_npi_probe_does_not_beat_random_features(
        board: tuple[Path, dict[str, Any]]) -> None:
    out, doc = board
    row = next(r for r in doc["results"] if r["entry_id"] == NPI)
    assert row["beats_baselines"] is False and row["best_baseline"] == "random_features"
    assert row["baseline_gap"] == pytest.approx(row["auroc"] - 1.0, abs=2e-3)
    assert row["baseline_gap"] < 0
    assert row["task_rank"] is None and row["task_unranked"].startswith(
        f"does not beat its baselines: gap −{-row['baseline_gap']:.3f}")
    (ranked,) = [r for g in doc["rankings"] for r in g["entries"] if r["entry_id"] == NPI]
    assert ranked["rank"] is None and ranked["beats_baselines"] is False
    page = (out / page_name(NPI)).read_text()
    assert "<strong>not ranked</strong>: does not beat its baselines" in page
    assert "✗ Does not beat its baselines" in page
    task = (out / "tasks" / f"{NPI_TASK}.html").read_text()
    assert "Solvable from surface features." in task
    assert "the first word: label 1 prompts have “No”, label 0 prompts “The”" in task
    assert "not ranked" in task.split('id="task-ranking"')[1].split("</table>")[0]


def test_no_entry_that_does_not_beat_its_baselines_ranks_above_one_that_does(
        board: tuple[Path, dict[str, Any]]) -> None:
    out, doc = board
    assert any(r["rank"] is None for g in doc["rankings"] for r in g["entries"])
    for group in doc["rankings"]:
        beats = [r["beats_baselines"] is True for r in group["entries"]]
        assert beats == sorted(beats, reverse=True), group["tasks"]
        ranks = [r["rank"] for r in group["entries"] if r["beats_baselines"] is True]
        assert ranks == sorted(ranks) and (not ranks or ranks[0] == 1)
        assert all(r["rank"] is None and r["unranked"] for r in group["entries"]
                   if r["beats_baselines"] is not True)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in doc["results"]:
        if row["status"] == "live" and not row["guard"]:
            by_task.setdefault(row["task"], []).append(row)
    for rows in by_task.values():
        ranked = [r["task_rank"] for r in rows if r["beats_baselines"]]
        assert all(r is not None for r in ranked)
        assert all(r["task_rank"] is None for r in rows if not r["beats_baselines"])
    # the index shows the gap, by default, next to the AUROC
    index = (out / "index.html").read_text()
    table = index.split('data-tasks="syntaxgym_npi_orc_any"', 1)[1].split("</table>")[0]
    npi = next(r for r in doc["results"] if r["entry_id"] == NPI)
    assert ">Baseline gap<" in table and f"✗ −{-npi['baseline_gap']:.3f}" in table


def test_every_ranked_probescore_interval_has_width(
        board: tuple[Path, dict[str, Any]]) -> None:
    _, doc = board
    groups = [g for g in doc["rankings"] if len(g["entries"]) >= 2]
    assert groups
    for group in groups:
        for r in group["entries"]:
            if r["rank"] is not None:
                assert r["probescore_ci_high"] - r["probescore_ci_low"] > 1e-3, r["entry_id"]
                assert r["probescore_ci_note"] is None
    # the verb-grammar MLP: its AUROC axis is capped, and its interval still has width
    (mlp,) = [r for g in doc["rankings"] for r in g["entries"] if r["entry_id"] == VERB_MLP]
    scores = {s["entry_id"]: s for s in doc["probescores"]}
    assert scores[VERB_MLP]["axes"]["auroc"]["capped"]
    assert mlp["rank"] is not None and mlp["probescore_ci_low"] < mlp["probescore"] < \
        mlp["probescore_ci_high"]


# --- the leaderboard, after the baselines are re-stored with per-prompt scores --------

@pytest.fixture(scope="module")
def restored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any],
                                                                 dict[str, BaselineOut]]:
    """The NPI task's baselines computed on the embedded SmolLM2 as an evaluation does
    (seed and resamples of the stored result) and stored with the task; the stored result
    keeps no gap (as before this change)."""
    from probebench.evaluation.results import Submission
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.evaluation.task_baselines import compute_baselines
    from probebench.registry.baselines import store_baselines
    from probebench.registry.store import ResultHistory, result_path
    from probebench.sites import Site

    root = tmp_path_factory.mktemp("restored")
    registry = _copy_registry(root)
    record = _npi_record()
    path = result_path(registry, NPI, NPI_TASK)
    doc = ResultHistory.model_validate_json(path.read_text())
    path.write_text(doc.model_copy(update={"history": [*doc.history[:-1], record]}).to_json())
    session = Session(TaskCatalog.for_repo(REPO),
                      SubmitOptions(seed=record.seed, bootstrap=record.bootstrap_resamples,
                                    progress=False, cache=False))
    baselines = compute_baselines(session, "smollm2-135m", NPI_TASK, Site(15, "last_token"))
    result = record.result.model_copy(update={"baselines": baselines})
    submission = Submission(spec_version="0.1.0", probebench_version="0.1.0",
                            probe=record.probe, model=record.model, device=record.device,
                            seed=record.seed, bootstrap_resamples=record.bootstrap_resamples,
                            versions=record.versions, definitions={}, tasks=[result],
                            run=record.run)
    # a new record where the stored one has no scores (within the reproducibility
    # contract of one that has them, nothing changes)
    store_baselines(registry, submission)
    build_leaderboard(registry, root / "board", catalog=TaskCatalog.for_repo(REPO),
                      n_resamples=RESAMPLES)
    return registry, json.loads((root / "board" / "leaderboard.json").read_text()), baselines


def test_restored_baselines_are_resampled_with_the_probes_items(
        restored: tuple[Path, dict[str, Any], dict[str, BaselineOut]]) -> None:
    registry, doc, baselines = restored
    record = _npi_record()
    pred = record.result.predictions
    y = np.array(pred.labels)
    for name, b in baselines.items():
        if b.auroc is None:  # SyntaxGym's own protocol: no per-prompt score
            assert b.scores is None and name == "surprisal"
            continue
        # one score per labelled test prompt, in the order of the probe's predictions
        assert b.scores is not None and len(b.scores) == len(pred.probs)
        assert auroc_score(y, np.array(b.scores)) == pytest.approx(b.auroc.value, abs=1e-6)
    assert baselines["random_features"].auroc.value == 1.0  # type: ignore[union-attr]
    # the stored file holds them
    (stored,) = task_baselines(registry, NPI_TASK).values()
    assert stored.baselines["random_features"].scores == pytest.approx(
        baselines["random_features"].scores, abs=1e-5)
    # the build resamples them with the probe's items: what evaluation would have stored
    row = next(r for r in doc["results"] if r["entry_id"] == NPI)
    assert row["baseline_gap_method"] == "paired" and row["beats_baselines"] is False
    gap, beats = baseline_gap(baselines, pred, task_id=NPI_TASK, seed=record.seed,
                              n_resamples=record.bootstrap_resamples)
    assert gap is not None and beats is False
    assert (row["baseline_gap"], row["baseline_gap_ci_low"], row["baseline_gap_ci_high"]) == \
        pytest.approx((gap.value, gap.ci_low, gap.ci_high), abs=1e-4)
    assert gap.ci_high is not None and gap.ci_high <= 0
    # the other tasks' results: their stored intervals, or the gap they carry
    assert {r["baseline_gap_method"] for r in doc["results"] if r["task"] != NPI_TASK} <= \
        {"intervals", "stored"}


def test_each_field_family_has_its_section_with_recall_and_matrix(
        board: tuple[Path, dict[str, Any]]) -> None:
    """Truth, honesty and refusal each get a family page: the ranking tables (with their
    gaps), the recall at 1% false positives where a task declares a control set, and the
    generalisation matrix, each cell the stored record's number."""
    import html
    import re

    out, doc = board
    pages = {f: (out / "families" / f"{f}.html").read_text("utf-8")
             for f in ("truth", "honesty", "refusal")}
    for family, page in pages.items():
        assert "Rankings by task set" in page, family
    # the recall table: refusal and honesty declare control sets, truth does not
    refusal = "probebench/refusal-harmful-smollm2-135m-l27-v1"
    stored = latest_results(REPO / "registry", refusal)["refusal_harmful"].result
    recall = stored.recall_at_1pct_fpr
    assert recall is not None and recall.value is not None
    assert 'id="recall"' in pages["refusal"] and 'id="recall"' in pages["honesty"]
    assert 'id="recall"' not in pages["truth"]
    assert f"{recall.value:.3f} [{recall.ci_low:.3f}, {recall.ci_high:.3f}]" in pages["refusal"]
    # the matrix: the cities probe on the negated cities, as its sibling record says
    from probebench.registry.store import latest_generalisation

    cities = "probebench/truth-cities-smollm2-135m-l21-v1"
    record = latest_generalisation(REPO / "registry", cities)
    assert record is not None
    neg = record.generalisation.siblings["truth_neg_cities"]
    assert neg.auroc is not None and neg.auroc < 0.5  # the famous failure, whatever it shows
    text = html.unescape(re.sub(r"<[^>]+>", " ", pages["truth"]))
    assert "Generalisation across the family's tasks" in text
    assert f"{neg.auroc:.3f}" in pages["truth"]
    matrices = {m["family"]: m for m in doc["generalisation"]}
    assert {"truth", "honesty"} <= set(matrices)
