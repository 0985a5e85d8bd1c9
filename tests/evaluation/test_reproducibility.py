"""The reproducibility contract: thread counts and machine load change nothing stored,
float noise never makes a new result record, and ProbeScore ignores the wall clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probebench.evaluation.reproducibility import DECIMALS, differences, rounded
from probebench.evaluation.results import read_submission
from probebench.leaderboard.probescore import axis_values, load_probescore_spec, probescore
from probebench.leaderboard.ranks import Scored, rank_intervals
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
    assert set(idle.timing.latency_ms) == {TASK}


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
