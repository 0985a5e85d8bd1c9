"""The reproducibility contract: thread counts and machine load change nothing stored,
float noise never makes a new result record (each number compared by the rule that fits
how it is made), and ProbeScore ignores the wall clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probebench.evaluation.reproducibility import (
    DECIMALS,
    LM_SCORE_TOLERANCE,
    VALUE_TOLERANCE,
    Rule,
    differences,
    rounded,
    same_within,
    tolerance_at,
)
from probebench.evaluation.results import Submission, read_submission
from probebench.leaderboard.probescore import axis_values, load_probescore_spec, probescore
from probebench.leaderboard.ranks import Scored, rank_intervals
from probebench.registry.baselines import store_baselines
from probebench.registry.store import ResultRecord, read_history, result_path, store_submission

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "registry/artifacts/syntaxgym-reflexive-src-smollm2-135m-l15-v1"
TASK = "syntaxgym_reflexive_src_masc"

#: items of each split: every stage runs, on fewer prompts (the contract is per number)
LIMIT = 8
BURNER = "import time\nend = time.time() + 600\nwhile time.time() < end:\n    pass\n"


def _submit(out: Path, threads: int) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    subprocess.run([sys.executable, "-m", "probebench", "submit", str(REFERENCE), "--tasks",
                    TASK, "--out", str(out / "submission.json"), "--report",
                    str(out / "REPORT.md"), "--no-cache", "--bootstrap", "200",
                    "--latency-prompts", "2", "--quiet",
                    "--repo", str(ROOT), "--limit", str(LIMIT)],
                   check=True, env=env, capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
         ) -> dict[str, Path]:
    """The same submission twice: one thread, and two threads; under ``-m slow`` the
    second run also competes with two busy loops for the CPU (which triples its time)."""
    root = tmp_path_factory.mktemp("repro")
    idle, loaded = root / "idle", root / "loaded"
    _submit(idle, 1)
    busy = 2 if "slow" in (request.config.option.markexpr or "").replace("not slow", "") \
        else 0
    burners = [subprocess.Popen([sys.executable, "-c", BURNER]) for _ in range(busy)]
    try:
        _submit(loaded, 2)
    finally:
        for b in burners:
            b.kill()
            b.wait()
    return {"idle": idle, "loaded": loaded}


def test_thread_count_and_load_leave_the_submission_identical(runs: dict[str, Path]) -> None:
    idle = read_submission(runs["idle"] / "submission.json")
    loaded = read_submission(runs["loaded"] / "submission.json")
    assert idle.deterministic_json() == loaded.deterministic_json()
    # what does differ is kept apart, in the timing and run blocks
    assert idle.timing is not None and loaded.timing is not None
    # each task has a latency or, timed while the machine was loaded, a note saying so
    assert set(idle.timing.latency_ms) | set(idle.timing.latency_withheld) == {TASK}
    assert not set(idle.timing.latency_ms) & set(idle.timing.latency_withheld)


def test_probescore_and_ranks_do_not_see_the_wall_clock(runs: dict[str, Path]) -> None:
    """ProbeScore 0.1.0 reads the analytical cost: the two runs score and rank alike even
    when their measured latencies differ by a factor of 1,000."""
    spec = load_probescore_spec()
    scored = []
    for name, latency in (("idle", 1.0), ("loaded", 1000.0)):
        sub = read_submission(runs[name] / "submission.json")
        record = ResultRecord.of(sub, sub.tasks[0]).model_copy(update={"latency_ms": latency})
        values = axis_values({TASK: record}, "Apache-2.0")
        scored.append(Scored(name, {TASK: record}, values, closed=False))
    totals = [probescore(spec, s.values).total for s in scored]
    assert totals[0] == totals[1]
    assert scored[0].values["flops"].value == scored[1].values["flops"].value
    assert not scored[0].values["flops"].imputed
    ranks = rank_intervals(scored, spec, n_resamples=50)
    assert (ranks["idle"].rank, ranks["idle"].best, ranks["idle"].worst) == (
        ranks["loaded"].rank, ranks["loaded"].best, ranks["loaded"].worst) == (1, 1, 1)


def test_stored_numbers_carry_the_contract_decimals(runs: dict[str, Path]) -> None:
    data = json.loads((runs["idle"] / "submission.json").read_text())
    task = data["tasks"][0]
    numbers = [*task["predictions"]["probs"], task["ece"], task["brier"],
               task["auroc"]["value"], task["auroc"]["ci_low"]]
    assert all(round(x, DECIMALS) == x for x in numbers)
    assert any(len(repr(x).split(".")[-1]) == DECIMALS for x in task["predictions"]["probs"])


def test_float_noise_makes_no_new_record_and_a_real_change_does(
        runs: dict[str, Path], tmp_path: Path) -> None:
    # the limited run's numbers, stored as a whole run's: the store's comparison is tested
    sub = read_submission(runs["idle"] / "submission.json").model_copy(update={"limit": None})
    assert store_submission(tmp_path, "org/p", sub, allow_dirty=True) != []
    task = sub.tasks[0]

    def shifted(by: float) -> Any:
        probs = [min(1.0, p + by) for p in task.predictions.probs]
        moved = task.model_copy(update={
            "ece": task.ece + by, "predictions": task.predictions.model_copy(
                update={"probs": probs})})
        return sub.model_copy(update={"tasks": [moved]})

    assert store_submission(tmp_path, "org/p", shifted(3e-6), allow_dirty=True) == []
    assert store_submission(tmp_path, "org/p", shifted(1e-3), allow_dirty=True) != []
    assert len(read_history(result_path(tmp_path, "org/p", TASK))) == 2


def test_differences_name_the_field_and_respect_the_tolerance() -> None:
    old = {"a": {"b": [0.5, 0.25]}, "n": 3, "s": "x"}
    assert differences(old, {"a": {"b": [0.500004, 0.25]}, "n": 3, "s": "x"}) == []
    assert differences(old, {"a": {"b": [0.5, 0.26]}, "n": 3, "s": "x"}) == [
        "a.b[1]: 0.25 -> 0.26"]
    assert differences(old, {"a": {"b": [0.5]}, "n": 4, "s": "y"}) == [
        "a.b: 2 values -> 1 values", "n: 3 -> 4", "s: 'x' -> 'y'"]
    assert differences({"k": 1}, {}) == ["k: 1 -> 'missing'"]
    assert rounded(0.1234565001) == 0.123457 and rounded(-1e-9) == 0.0


# --- each stored number compared by the rule that fits how it is made ----------------

LIVE = "probebench/verb-grammar-mlp-smollm2-135m-l20-v1"


def test_one_unit_in_the_last_place_is_rounding_whatever_the_tolerance() -> None:
    """A value at a rounding boundary (0.1234565) plus float32-sized noise rounds either
    way: the stored values lie one unit (1e-6) apart and are the same result; two units
    are not, at a zero tolerance."""
    boundary = 0.1234565
    low, high = rounded(boundary - 3e-9), rounded(boundary + 3e-9)
    assert (low, high) == (0.123456, 0.123457)
    assert same_within(low, high, 0.0) and differences([low], [high], tolerance=0.0) == []
    assert differences([0.123455], [0.123457], tolerance=0.0) == ["[0]: 0.123455 -> 0.123457"]
    # within the tolerance after rounding: 1e-5 and one unit, not more
    assert same_within(0.5, 0.500011) and not same_within(0.5, 0.500012)
    # whole steps of a count (an item of 300) are beyond it
    assert not same_within(0.703333, 0.706667)
    assert same_within(254.0, 254.000001, 0.0)  # in binary the unit is not exact


def test_surprisal_bits_are_compared_relative_to_their_magnitude() -> None:
    old = {"baselines": {"surprisal": {"scores": [-254.294043, -133.16337]},
                         "random_features": {"scores": [0.173117]}}}

    def moved(rel: float, rf: float = 0.0) -> dict[str, Any]:
        return {"baselines": {
            "surprisal": {"scores": [rounded(s * (1 + rel)) for s in
                                     old["baselines"]["surprisal"]["scores"]]},
            "random_features": {"scores": [rounded(0.173117 + rf)]}}}

    # the kernels' measured change (relative 3.3e-6: 8e-4 bits at 254) is not a result
    assert differences(old, moved(3.3e-6)) == []
    assert differences(old, moved(3.3e-6), lm_score_tolerance=0.0) != []
    # ten times it is
    assert [d.split(":")[0] for d in differences(old, moved(3.3e-5))] == [
        "baselines.surprisal.scores[0]", "baselines.surprisal.scores[1]"]
    # a re-fitted baseline's scores: 1.2e-5 measured, within REFIT_TOLERANCE; 1e-3 not
    assert differences(old, moved(0.0, rf=1.2e-5)) == []
    assert differences(old, moved(0.0, rf=1e-3)) == [
        "baselines.random_features.scores[0]: 0.173117 -> 0.174117"]
    # the relative rule stays under its key: a probability is compared absolutely
    assert tolerance_at("baselines", "surprisal", Rule(VALUE_TOLERANCE)) == Rule(
        VALUE_TOLERANCE)
    assert tolerance_at("surprisal", "scores", Rule(VALUE_TOLERANCE)).relative == \
        LM_SCORE_TOLERANCE


def _avx512_replay(record: ResultRecord) -> ResultRecord:
    """The stored record as a fresh evaluation on AVX512 kernels remade it (the stored
    one ran on AVX2 kernels; measured, reproducibility.py's docstring): every surprisal
    score more negative by relative 3.25e-6, probabilities by up to 5e-6, three random-
    feature scores by up to 1.2e-5, the re-trained control accuracy one prompt of 300
    higher and the selectivity one lower."""
    result = record.result
    base = dict(result.baselines)
    surprisal, rf = base["surprisal"], base["random_features"]
    assert surprisal.scores is not None and rf.scores is not None
    base["surprisal"] = surprisal.model_copy(update={
        "scores": [rounded(s * (1 + 3.25e-6)) for s in surprisal.scores]})
    base["random_features"] = rf.model_copy(update={
        "scores": [rounded(s + (1.2e-5 if i in (205, 206) else -1e-5 if i == 216 else 0.0))
                   for i, s in enumerate(rf.scores)]})
    probs = [rounded(min(1.0, max(0.0, p + (5e-6 if i % 2 else -5e-6))))
             for i, p in enumerate(result.predictions.probs)]
    sel = result.selectivity
    assert sel is not None and sel.control_accuracy.value is not None
    assert sel.selectivity.value is not None
    sel = sel.model_copy(update={
        "control_accuracy": sel.control_accuracy.model_copy(
            update={"value": rounded(sel.control_accuracy.value + 1 / 300)}),
        "selectivity": sel.selectivity.model_copy(
            update={"value": rounded(sel.selectivity.value - 1 / 300)})})
    moved = result.model_copy(update={
        "baselines": base, "selectivity": sel,
        "predictions": result.predictions.model_copy(update={"probs": probs})})
    return record.model_copy(update={"result": moved, "latency_ms": 51.2})


def test_the_measured_kernel_change_of_a_stored_record_is_no_new_result(tmp_path: Path
                                                                        ) -> None:
    """Replayed on the registry's stored record: the movements a fresh AVX512 evaluation
    made (which once appended a record) are within the contract, in the results and in
    the task-baselines store alike, while a flipped decision is not."""
    stored = read_history(result_path(ROOT / "registry", LIVE, "verb_grammar"))[-1]
    replay = _avx512_replay(stored)
    assert differences(stored.deterministic(), replay.deterministic(),
                       retrained_tolerance=0.0, lm_score_tolerance=0.0) != []
    assert differences(stored.deterministic(), replay.deterministic()) == []
    flipped = replay.result.accuracy.model_copy(update={
        "value": rounded((replay.result.accuracy.value or 0.0) + 1 / 100)})
    beyond = replay.model_copy(update={"result": replay.result.model_copy(
        update={"accuracy": flipped})})
    assert [d.split(":")[0] for d in differences(stored.deterministic(),
                                                 beyond.deterministic())] == [
        "result.accuracy.value"]

    def submission(record: ResultRecord) -> Submission:
        return Submission(spec_version="0.0.1", probebench_version="x", probe=record.probe,
                          model=record.model, device=record.device, seed=record.seed,
                          bootstrap_resamples=record.bootstrap_resamples,
                          versions=record.versions, definitions={}, tasks=[record.result],
                          run=record.run)

    assert store_baselines(tmp_path, submission(stored)) != []
    assert store_baselines(tmp_path, submission(replay)) == []
    louder = replay.result.baselines["surprisal"]
    assert louder.scores is not None
    changed = replay.result.model_copy(update={"baselines": {
        **replay.result.baselines, "surprisal": louder.model_copy(
            update={"scores": [rounded(s * (1 + 1e-4)) for s in louder.scores]})}})
    assert store_baselines(tmp_path, submission(replay.model_copy(
        update={"result": changed}))) != []


def test_the_modules_doctests_pass() -> None:
    import doctest

    from probebench.evaluation import reproducibility

    assert doctest.testmod(reproducibility).failed == 0
