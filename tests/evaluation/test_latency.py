"""A latency timed on a loaded machine is never stored: the rule decides from the
measurement itself (how long the measuring process waited for a CPU, how far its repeats
spread), tested with readings passed in and with a real busy loop on the measured
process's own core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probebench.evaluation.latency import (
    MAX_CONTENTION,
    MAX_SPREAD,
    Contention,
    judge_latency,
    loadavg_contention,
    time_prompts,
)

REPO = Path(__file__).resolve().parents[2]
#: per prompt, three repeats: fastest 50, 40 and 44 ms, spread 1.04, 1.03 and 1.05
STEADY = [[50.0, 52.0, 51.0], [40.0, 41.0, 40.5], [45.0, 44.0, 46.0]]


def test_an_idle_measurement_is_stored_as_the_median_of_each_prompts_fastest() -> None:
    verdict = judge_latency(STEADY, Contention(0.02, "schedstat"))
    assert verdict.ms == verdict.measured_ms == 44.0 and verdict.note is None
    assert verdict.spread == pytest.approx(52.0 / 50.0)
    # at the bound it is stored, above it withheld
    assert judge_latency(STEADY, Contention(MAX_CONTENTION, "schedstat")).ms == 44.0
    assert judge_latency(STEADY, Contention(MAX_CONTENTION + 0.01, "schedstat")).ms is None


def test_a_loaded_measurement_is_withheld_with_what_was_measured() -> None:
    slow = [[t * 9 for t in prompt] for prompt in STEADY]  # 521.9 ms-like: the load's
    verdict = judge_latency(slow, Contention(0.45, "schedstat"))
    assert verdict.ms is None and verdict.measured_ms == 396.0
    assert verdict.note is not None
    assert "396.0 ms" in verdict.note and "45% of the time" in verdict.note
    assert "loaded" in verdict.note


def test_unsteady_repeats_are_withheld_even_when_the_wait_averaged_away() -> None:
    bursty = [[50.0, 110.0, 51.0], [40.0, 41.0, 95.0], [45.0, 44.0, 46.0]]
    verdict = judge_latency(bursty, Contention(0.0, "schedstat"))
    # the median prompt's slowest repeat over its fastest: 110 / 50
    assert verdict.spread == pytest.approx(2.2) and verdict.spread > MAX_SPREAD
    assert verdict.ms is None and verdict.note is not None and "spread" in verdict.note
    # what would have been stored: the median of each prompt's fastest repeat
    assert verdict.measured_ms == 44.0


def test_the_load_average_stands_in_beside_the_own_threads() -> None:
    assert loadavg_contention(1.9, own_threads=2, cores=2) == 0.0  # only this process
    assert loadavg_contention(4.0, own_threads=2, cores=2) == 0.5  # two busy loops more
    assert loadavg_contention(2.5, own_threads=2, cores=2) == pytest.approx(0.2)


def test_time_prompts_runs_round_robin_and_decides_from_the_reading_it_is_given() -> None:
    ran: list[int] = []
    def reading(share: float) -> Any:
        return lambda threads: (lambda: Contention(share, "given"))

    for share, stored in ((0.0, True), (0.6, False)):
        ran.clear()
        verdict = time_prompts(ran.append, 3, repeats=2, read_contention=reading(share))
        assert ran == [0, 1, 2, 0, 1, 2]
        assert [len(t) for t in verdict.times_ms] == [2, 2, 2]
        # the verdict is the rule applied to what was timed and read
        assert verdict == judge_latency(verdict.times_ms, Contention(share, "given"))
        if not stored:
            assert verdict.ms is None and verdict.contention.share == 0.6
    with pytest.raises(ValueError):
        time_prompts(ran.append, 0)


MEASURE = r"""
import json, os, subprocess, sys, time
from probebench.evaluation.latency import time_prompts

cpu, burn = int(sys.argv[1]), sys.argv[2] == "1"
os.sched_setaffinity(0, {cpu})
burner = None
if burn:  # a busy loop on this process's only core
    burner = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    os.sched_setaffinity(burner.pid, {cpu})
    time.sleep(0.3)


def run(i):
    total = 0
    for k in range(150_000):
        total += k * k


try:
    v = time_prompts(run, 4, repeats=3)
finally:
    if burner is not None:
        burner.kill()
        burner.wait()
print(json.dumps({"ms": v.ms, "measured_ms": v.measured_ms, "share": v.contention.share,
                  "source": v.contention.source, "spread": v.spread, "note": v.note}))
"""


def _measure(cpu: int, burn: bool) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(cpu), "1" if burn else "0"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task").is_dir()
                    or not hasattr(os, "sched_setaffinity"),
                    reason="needs Linux's per-thread scheduler statistics and CPU pinning")
def test_a_real_busy_loop_on_the_measured_core_withholds_the_latency() -> None:
    """The measuring process and a busy loop share one core, so the process waits for it
    about half the time whatever else the machine runs: the reading must see it and the
    rule withhold the latency. Without the busy loop the machine may still be loaded (a
    shared test host): the decision must then be the rule's on what was read."""
    cpu = min(os.sched_getaffinity(0))
    loaded = _measure(cpu, burn=True)
    assert loaded["source"] == "schedstat"
    assert float(loaded["share"]) > 0.25 > MAX_CONTENTION  # type: ignore[arg-type]
    assert loaded["ms"] is None and "loaded" in str(loaded["note"])
    alone = _measure(cpu, burn=False)
    share, spread = str(alone["share"]), str(alone["spread"])
    withheld = float(share) > MAX_CONTENTION or float(spread) > MAX_SPREAD
    assert (alone["ms"] is None) == withheld
    assert alone["ms"] is None or alone["ms"] == alone["measured_ms"]


def test_the_modules_doctests_pass() -> None:
    import doctest

    from probebench.evaluation import latency

    assert doctest.testmod(latency).failed == 0
