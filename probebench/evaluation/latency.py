"""When a measured latency may be stored: a latency timed while other work competed for
the CPU is the load's number, not the machine's, and is never stored.

The measurement (``time_prompts``): after the warm-up, each timed prompt runs
``LATENCY_REPEATS`` times, round-robin (every prompt once, then again), so a burst of
other work slows one repeat of several prompts rather than every repeat of one. A
prompt's time is its fastest repeat (the least disturbed); the latency is the median over
prompts of those times.

While it runs, the process's **CPU contention** is read (``cpu_wait``): the share of the
time its threads were ready to run but waited for a CPU, from Linux's per-thread
scheduler statistics (``/proc/self/task/*/schedstat``: time on a CPU, time waiting in the
run queue). It is a reading of this measurement, not of the machine's recent past: an
idle machine reads near 0 (this process's threads fit on its cores), two busy loops
beside a two-thread model on two cores about 0.5. Where the statistics are absent, the
1-minute load average stands in for it (``loadavg_contention``): the runnable tasks
beyond this process's own threads, ``others``, as ``others / (others + cores)``, what
the process's share of waiting would be if the cores were shared evenly.

The rule (``judge_latency``): the latency is stored only when the contention is at most
``MAX_CONTENTION`` and the repeats agree (the median over prompts of the slowest repeat
over the fastest at most ``MAX_SPREAD``: an intermittent load the contention reading
averaged away still shows as unsteady repeats). Otherwise no latency is stored (None),
with a note saying what was measured and why it was withheld; the results store never
replaces a stored latency by a withheld one (``probebench.registry.store``).

**The machine's rate** (``matmul_gflops``): beside every latency the machine's float32
matmul rate is read, a short ``torch.mm`` of two ``RATE_SIZE`` square matrices on the
latency's device and in its thread count, the fastest of repeats for at most
``RATE_SECONDS`` (GFLOP/s). A latency is a number of this machine in the state it was in,
and the rate says what that state was: a latency kept from an earlier run is reused only
while the rate read now is within ``RATE_TOLERANCE`` of the rate read when it was
measured (``rate_mismatch``); otherwise, or when the record has no rate (one cached
before rates were read), it is measured anew.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: timed runs of each prompt after the warm-up
LATENCY_REPEATS = 3
#: the largest share of the timing this process's threads may have waited for a CPU:
#: an idle machine reads under 0.05, one busy loop beside a two-thread model on two
#: cores about 0.33
MAX_CONTENTION = 0.1
#: the largest median, over prompts, of a prompt's slowest repeat over its fastest
MAX_SPREAD = 1.5
#: rows (and columns) of the square float32 matrices whose product reads the rate on a
#: CPU: small enough that a repeat takes milliseconds (about 5 ms at 50 GFLOP/s), large
#: enough to run at the BLAS's full rate on every thread; an accelerator multiplies
#: ``ACCELERATOR_RATE_SIZE`` ones, as a CPU-sized product measures its launch overhead
RATE_SIZE = 512
ACCELERATOR_RATE_SIZE = 2048
#: the reading's time: repeats after one warm-up until this many seconds have passed (at
#: least ``RATE_MIN_REPEATS``), so the whole reading stays near a tenth of a second
RATE_SECONDS = 0.1
RATE_MIN_REPEATS = 3
#: the reading never runs past this many seconds, warm-up included, when a repeat would
#: take it beyond (a machine that slow reads fewer than ``RATE_MIN_REPEATS``)
RATE_MAX_SECONDS = 0.3
#: how far the rate read now may be from the one read beside a cached latency for that
#: latency to be reused: at most 1 + this times the smaller, either way. The fastest of
#: the repeats varies by under 10% from one reading to the next on one thread, even
#: beside other work, so 25% is no reading's noise; a model's forward pass at batch size 1
#: is mostly float32 matmuls, so a factor of 1.25 in the rate is one of up to 1.25 in the
#: latency, more than the leaderboard's latency ranks can ignore. Load moves the rate
#: far more: two threads on two cores beside other work read about a tenth of their idle
#: rate. A latency timed under load is thus not reused once the machine is idle, nor an
#: idle one while it is loaded.
RATE_TOLERANCE = 0.25


@dataclass(frozen=True)
class Contention:
    """How long this process waited for a CPU during a measurement."""

    #: share of the threads' ready time spent waiting for a CPU, in [0, 1]
    share: float
    #: where it was read: ``schedstat`` or ``loadavg``
    source: str


def _schedstat(pid: int | None = None) -> dict[str, tuple[int, int]] | None:
    """Per thread of the process: (ns on a CPU, ns waiting in the run queue); None
    where the kernel does not keep them."""
    base = Path(f"/proc/{pid or os.getpid()}/task")
    out = {}
    try:
        threads = list(base.iterdir())
    except OSError:
        return None
    for thread in threads:
        try:
            run, wait, _ = (thread / "schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        out[thread.name] = (int(run), int(wait))
    return out or None


def loadavg_contention(load: float, own_threads: int, cores: int) -> float:
    """The share of waiting a 1-minute ``load`` average implies for this process: the
    runnable tasks beyond its ``own_threads``, over those plus the ``cores``.

    >>> loadavg_contention(0.9, 2, 2)
    0.0
    >>> loadavg_contention(4.0, 2, 2)
    0.5
    """
    others = max(0.0, load - own_threads)
    return others / (others + max(cores, 1))


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def cpu_wait(own_threads: int = 1) -> Callable[[], Contention]:
    """Start reading this process's CPU contention; the returned function ends the
    reading (``own_threads``: the threads the measured work runs on, for the load
    average's fallback)."""
    before = _schedstat()
    if before is None:
        def from_load() -> Contention:
            return Contention(loadavg_contention(os.getloadavg()[0], own_threads,
                                                 usable_cores()), "loadavg")
        return from_load

    def stop() -> Contention:
        after = _schedstat() or {}
        run = wait = 0
        for tid, (r, w) in after.items():
            r0, w0 = before.get(tid, (0, 0))
            run, wait = run + max(0, r - r0), wait + max(0, w - w0)
        return Contention(wait / (run + wait) if run + wait else 0.0, "schedstat")

    return stop


@dataclass(frozen=True)
class LatencyVerdict:
    """A latency measurement and whether it may be stored."""

    #: the latency (median over prompts of each prompt's fastest repeat), None when it is
    #: withheld
    ms: float | None
    #: why it was withheld (None when it is stored)
    note: str | None
    #: what was measured, stored or not
    measured_ms: float
    contention: Contention
    spread: float
    #: per timed prompt, the ms of each repeat
    times_ms: tuple[tuple[float, ...], ...] = ()


def judge_latency(times_ms: Sequence[Sequence[float]], contention: Contention, *,
                  max_contention: float = MAX_CONTENTION,
                  max_spread: float = MAX_SPREAD) -> LatencyVerdict:
    """The latency of ``times_ms`` (per prompt, the ms of each repeat) and whether it
    is stored, given the ``contention`` read while they were timed.

    >>> idle = Contention(0.01, "schedstat")
    >>> judge_latency([[50.0, 51.0, 50.5], [60.0, 61.0, 60.0]], idle).ms
    55.0
    >>> busy = judge_latency([[500.0, 510.0, 505.0]], Contention(0.45, "schedstat"))
    >>> busy.ms is None, busy.measured_ms
    (True, 500.0)
    >>> print(busy.note)  # doctest: +NORMALIZE_WHITESPACE
    withheld: measured 500.0 ms while this process waited for a CPU 45% of the time
    (schedstat; at most 10% is stored): the machine was loaded
    >>> print(judge_latency([[50.0, 120.0, 51.0]], idle).note)  # doctest: +ELLIPSIS
    withheld: measured 50.0 ms but its repeats spread by a factor of 2.40 (at most 1.50 ...
    """
    if not times_ms or not all(times_ms):
        raise ValueError("no timed prompt")
    fastest = [min(t) for t in times_ms]
    ms = float(statistics.median(fastest))
    spread = float(statistics.median(max(t) / max(min(t), 1e-9) for t in times_ms))
    note = None
    if contention.share > max_contention:
        note = (f"withheld: measured {ms:.1f} ms while this process waited for a CPU "
                f"{contention.share:.0%} of the time ({contention.source}; at most "
                f"{max_contention:.0%} is stored): the machine was loaded")
    elif spread > max_spread:
        note = (f"withheld: measured {ms:.1f} ms but its repeats spread by a factor of "
                f"{spread:.2f} (at most {max_spread:.2f} is stored): the machine's load "
                "changed during the measurement")
    return LatencyVerdict(ms=None if note else ms, note=note, measured_ms=ms,
                          contention=contention, spread=spread,
                          times_ms=tuple(tuple(t) for t in times_ms))


def time_prompts(run: Callable[[int], object], n_prompts: int, *,
                 repeats: int = LATENCY_REPEATS, own_threads: int = 1,
                 read_contention: Callable[[int], Callable[[], Contention]] | None = None
                 ) -> LatencyVerdict:
    """Time ``run(i)`` for each prompt ``i < n_prompts``, ``repeats`` times round-robin,
    reading the contention over the whole timing (``read_contention(own_threads)``,
    default ``cpu_wait``, starts the reading and its result ends it: a test passes a
    reading of its own), and judge it (``judge_latency``)."""
    if n_prompts < 1 or repeats < 1:
        raise ValueError("time at least one prompt once")
    times: list[list[float]] = [[] for _ in range(n_prompts)]
    stop = (read_contention or cpu_wait)(own_threads)
    for _ in range(repeats):
        for i in range(n_prompts):
            start = time.perf_counter()
            run(i)
            times[i].append((time.perf_counter() - start) * 1000)
    return judge_latency(times, stop())


def matmul_gflops(device: str = "cpu", *, size: int | None = None,
                  seconds: float = RATE_SECONDS) -> float:
    """The machine's float32 matmul rate on ``device`` (GFLOP/s), in torch's current
    thread count: ``2 size³`` over the fastest of the products timed (one warm-up, then
    repeats for ``seconds``, at least ``RATE_MIN_REPEATS``, all within
    ``RATE_MAX_SECONDS``). ``size`` defaults to ``RATE_SIZE`` on a CPU and
    ``ACCELERATOR_RATE_SIZE`` elsewhere."""
    import torch

    where = torch.device(device)
    n = size or (RATE_SIZE if where.type == "cpu" else ACCELERATOR_RATE_SIZE)
    if n < 1:
        raise ValueError(f"matrix size {n}: expected at least 1")

    def sync() -> None:
        if where.type == "cuda":
            torch.cuda.synchronize(where)
        elif where.type == "mps":
            torch.mps.synchronize()

    gen = torch.Generator().manual_seed(0)
    a = torch.rand((n, n), generator=gen).to(where)
    b = torch.rand((n, n), generator=gen).to(where)
    out = torch.empty((n, n), device=where)
    start = time.perf_counter()
    torch.mm(a, b, out=out)
    sync()
    best = math.inf
    repeats = 0
    while True:
        t0 = time.perf_counter()
        torch.mm(a, b, out=out)
        sync()
        best = min(best, time.perf_counter() - t0)
        repeats += 1
        spent = time.perf_counter() - start
        # another repeat would pass the cap: a slow or loaded machine reads fewer repeats
        if (spent >= seconds and repeats >= RATE_MIN_REPEATS) or spent + best > RATE_MAX_SECONDS:
            break
    return 2 * n**3 / max(best, 1e-9) / 1e9


def rate_mismatch(measured: float | None, now: float, *,
                  tolerance: float = RATE_TOLERANCE) -> str | None:
    """Why a latency measured at the matmul rate ``measured`` (GFLOP/s; None: not read)
    may not stand for one now, at the rate ``now``; None when it may (the larger rate at
    most ``1 + tolerance`` times the smaller).

    >>> rate_mismatch(100.0, 120.0) is None
    True
    >>> print(rate_mismatch(100.0, 50.0))  # doctest: +NORMALIZE_WHITESPACE
    the machine's matmul rate is 50.0 GFLOP/s now and was 100.0 GFLOP/s when the
    latency was measured (a factor of 2.00; at most 1.25 reuses it)
    >>> print(rate_mismatch(None, 50.0))
    the cached latency has no matmul rate beside it (measured before rates were read)
    """
    if measured is None or not math.isfinite(measured) or measured <= 0:
        return "the cached latency has no matmul rate beside it (measured before rates " \
               "were read)"
    factor = max(measured, now) / max(min(measured, now), 1e-12)
    if factor <= 1 + tolerance:
        return None
    return (f"the machine's matmul rate is {now:.1f} GFLOP/s now and was {measured:.1f} "
            f"GFLOP/s when the latency was measured (a factor of {factor:.2f}; at most "
            f"{1 + tolerance:.2f} reuses it)")


__all__ = ["ACCELERATOR_RATE_SIZE", "LATENCY_REPEATS", "MAX_CONTENTION", "MAX_SPREAD",
           "RATE_MAX_SECONDS", "RATE_MIN_REPEATS", "RATE_SECONDS", "RATE_SIZE",
           "RATE_TOLERANCE", "Contention", "LatencyVerdict", "cpu_wait", "judge_latency",
           "loadavg_contention", "matmul_gflops", "rate_mismatch", "time_prompts",
           "usable_cores"]
