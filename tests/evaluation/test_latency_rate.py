"""The machine's matmul rate beside every latency (``probebench.evaluation.latency``):
the rate is read for real; the reuse decision (``deployment.measure_latency``) runs on a
real disk cache under ``tmp_path`` with a timed function and a rate function of the
test's own, so a slower machine is a lower rate, not a sleep."""

from __future__ import annotations

import functools
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from probebench.artifact.checks import validate
from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation import deployment
from probebench.evaluation.latency import (
    RATE_MAX_SECONDS,
    RATE_TOLERANCE,
    Contention,
    LatencyVerdict,
    judge_latency,
    matmul_gflops,
    rate_mismatch,
)
from probebench.evaluation.session import Session, SubmitOptions
from probebench.models.cache import ActivationCache
from probebench.prompts import Prompt
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog

REFERENCE = (Path(__file__).resolve().parents[2] / "registry" / "artifacts"
             / "verb-grammar-mlp-smollm2-135m-l20-v1")
SITE = Site(20, "token_avg")  # the reference MLP's site
PROMPTS = [Prompt(text=t) for t in ("The keys to the cabinet are here.",
                                    "The author that the guards like laughs.")]


def test_the_rate_is_a_positive_finite_rate_read_within_its_time_cap() -> None:
    start = time.perf_counter()
    rate = matmul_gflops()
    spent = time.perf_counter() - start
    assert math.isfinite(rate) and rate > 0
    # the cap holds the repeats; the slack covers torch's first product on a loaded machine
    assert spent < RATE_MAX_SECONDS + 1.0
    # any size reads a rate: a product of 32 x 32 matrices too
    small = matmul_gflops(size=32, seconds=0.01)
    assert math.isfinite(small) and small > 0
    with pytest.raises(ValueError, match="at least 1"):
        matmul_gflops(size=-1)


@pytest.mark.parametrize(("then", "now", "reused"), [
    (100.0, 100.0 * (1 + RATE_TOLERANCE) - 0.01, True),
    (100.0, 100.0 * (1 + RATE_TOLERANCE) + 0.01, False),
    (100.0 * (1 + RATE_TOLERANCE) - 0.01, 100.0, True),   # either way
    (100.0 * (1 + RATE_TOLERANCE) + 0.01, 100.0, False),
    (None, 100.0, False), (0.0, 100.0, False), (math.nan, 100.0, False),
])
def test_the_band_is_symmetric_and_a_missing_rate_is_never_within_it(
        then: float | None, now: float, reused: bool) -> None:
    assert (rate_mismatch(then, now) is None) == reused


class Machine:
    """The rate and the load a test sets, and the timings its timed function made."""

    def __init__(self) -> None:
        self.gflops = 100.0
        self.contention = 0.0
        self.timed: list[float] = []

    def rate(self, device: str) -> float:
        assert device == "cpu"
        return self.gflops

    def timer(self, session: Session, meta: object, weights: object,
              sample: object, site: Site) -> LatencyVerdict:
        # a latency proportional to the inverse rate, as a matmul-bound forward pass's is
        ms = 4000.0 / self.gflops + len(self.timed) * 0.001
        self.timed.append(ms)
        return judge_latency([[ms, ms, ms]], Contention(self.contention, "test"))




@functools.cache
def _probe() -> tuple[TaskCatalog, ProbeMeta, ProbeWeights]:
    """The catalog and the reference probe, read once: a session per run of ``submit``."""
    report = validate(REFERENCE)
    assert report.meta is not None and report.weights is not None
    return TaskCatalog.default(), report.meta, report.weights


def _measure(machine: Machine, *, cache: bool = True) -> deployment.Latency:
    catalog, meta, weights = _probe()
    session = Session(catalog, SubmitOptions(progress=False, cache=cache))
    return deployment.measure_latency(session, meta, weights, PROMPTS, SITE,
                                      rate=machine.rate, timer=machine.timer)


def _entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.safetensors"))


def _record(root: Path) -> dict[str, object]:
    (path,) = _entries(root)
    hit = ActivationCache(root).get(path.stem, None, np.uint8)
    assert hit is not None
    value: dict[str, object] = json.loads(hit.tobytes().decode("utf-8"))
    return value


def test_a_latency_is_reused_only_within_the_rate_band(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(root))
    machine = Machine()
    first = _measure(machine)
    assert (first.reused, first.remeasured, len(machine.timed)) == (False, None, 1)
    assert first.ms == machine.timed[0]
    assert first.matmul_gflops == first.matmul_gflops_now == 100.0
    assert _record(root)["matmul_gflops"] == 100.0  # the rate is cached beside the latency

    machine.gflops = 110.0  # within the band: the cached latency, with both rates
    again = _measure(machine)
    assert (again.reused, again.ms, again.measured_at) == (True, first.ms, first.measured_at)
    assert (again.matmul_gflops, again.matmul_gflops_now) == (100.0, 110.0)
    assert len(machine.timed) == 1

    machine.gflops = 40.0  # a slower machine: timed anew, and the new one replaces the old
    slower = _measure(machine)
    assert slower.reused is False and len(machine.timed) == 2
    assert slower.ms == machine.timed[1] and slower.ms != first.ms
    assert slower.remeasured is not None and "factor of 2.50" in slower.remeasured
    assert slower.matmul_gflops == slower.matmul_gflops_now == 40.0
    assert _record(root)["matmul_gflops"] == 40.0 and len(_entries(root)) == 1
    assert _measure(machine).reused is True

    machine.gflops = 100.0  # faster again: the latency timed at 40 GFLOP/s is not reused
    assert _measure(machine).reused is False and len(machine.timed) == 3

    # --no-cache reads the rate too, and the reading it returns is this run's
    uncached = _measure(machine, cache=False)
    assert uncached.reused is False and uncached.matmul_gflops == 100.0


def test_a_remeasurement_withheld_under_load_leaves_the_cached_latency(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(root))
    machine = Machine()
    idle = _measure(machine)
    machine.gflops, machine.contention = 10.0, 0.5  # loaded: the rate falls tenfold
    loaded = _measure(machine)
    assert loaded.reused is False and loaded.ms is None and loaded.note is not None
    assert loaded.remeasured is not None and loaded.matmul_gflops == 10.0
    assert _record(root)["matmul_gflops"] == 100.0  # never cached
    machine.gflops, machine.contention = 95.0, 0.0
    back = _measure(machine)
    assert (back.reused, back.ms, back.matmul_gflops) == (True, idle.ms, 100.0)


def test_a_cached_latency_without_a_rate_is_measured_anew(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record cached before rates were read (``ms``, ``measured_at``, ``note``) is
    never reused, and the new measurement replaces it."""
    root = tmp_path / "cache"
    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(root))
    machine = Machine()
    _measure(machine)
    (path,) = _entries(root)
    old = {"ms": 839.0, "measured_at": "2026-01-01T00:00:00Z", "note": None}
    ActivationCache(root).put(path.stem, np.frombuffer(
        json.dumps(old).encode("utf-8"), dtype=np.uint8), {"result": "latency"}, np.uint8)
    anew = _measure(machine)
    assert anew.reused is False and anew.ms == machine.timed[-1] and anew.ms != 839.0
    assert anew.remeasured is not None and "no matmul rate" in anew.remeasured
    assert _record(root)["matmul_gflops"] == 100.0
    assert _measure(machine).reused is True
