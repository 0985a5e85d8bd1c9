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
"""

from __future__ import annotations

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


__all__ = ["LATENCY_REPEATS", "MAX_CONTENTION", "MAX_SPREAD", "Contention",
           "LatencyVerdict", "cpu_wait", "judge_latency", "loadavg_contention",
           "time_prompts", "usable_cores"]
