"""Each result's gap to its task's baselines, as the leaderboard shows and ranks by it.

The gap is the probe's AUROC minus the best baseline's on the same task, model and site
(``probebench.evaluation.baselines.GAP_DEFINITION``); an entry *beats its baselines*
when the gap's 95% interval lies above 0. Where the numbers come from, best first:

1. ``stored``: the gap stored with the result (``TaskResult.baseline_gap``), a paired
   item bootstrap made when the result was evaluated.
2. ``paired``: a result stored before the gap was kept, whose baselines (those stored
   with the task in ``registry/baselines/`` for the result's model and site and test
   set, else those kept with the result) kept their per-prompt scores: the same paired
   item bootstrap, at build time, with the seed and resamples the result was evaluated
   with (``baselines.baseline_gap``), so it gives what evaluation would have stored.
3. ``intervals``: neither has per-prompt scores, but the probe's AUROC and the best
   baseline's have stored 95% intervals: an **approximate** interval for the difference
   by MOVER (Zou and Donner 2008), which combines the two intervals as if the two AUROCs
   were independent: low = gap - sqrt((p - p_low)^2 + (b_high - b)^2), high = gap +
   sqrt((p_high - p)^2 + (b - b_low)^2). The probe and its baselines are scored on the
   same items, whose difficulty moves both the same way, so the paired interval is
   usually narrower: this one is the more cautious.
4. ``none``: no baseline has an AUROC, or an interval is missing: the gap is unknown
   and the entry is marked "baselines not compared", never treated as beating them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from probebench.evaluation.baselines import baseline_gap, beats, best_baseline
from probebench.registry.baselines import BaselineRecord
from probebench.registry.store import ResultRecord

#: how a gap was obtained (module docstring)
Method = Literal["stored", "paired", "intervals", "none"]
#: how each kind of gap was obtained, as pages and leaderboard.json say it
METHODS: dict[Method, str] = {
    "stored": "paired item bootstrap, computed with the result",
    "paired": "paired item bootstrap at build time, from the stored per-prompt scores of "
              "the probe and the baseline",
    "intervals": "approximate: combined from the stored 95% intervals of the two AUROCs "
                 "as if independent (MOVER, Zou and Donner 2008); the result and its "
                 "baselines were stored before per-prompt baseline scores were kept",
    "none": "not compared",
}


#: the same, in a few words (an unranked entry's reason)
METHODS_SHORT: dict[Method, str] = {
    "stored": "paired bootstrap", "paired": "paired bootstrap at build time",
    "intervals": "approximate, from the stored intervals", "none": "not compared"}


@dataclass(frozen=True)
class Gap:
    """One result's gap to the best baseline (values None where unknown)."""

    baseline: str | None
    baseline_auroc: float | None
    value: float | None
    low: float | None
    high: float | None
    beats: bool | None
    method: Method
    why: str = ""               #: why it is unknown (method "none")

    @property
    def verdict(self) -> str:
        return {True: "beats its baselines", False: "does not beat its baselines",
                None: "baselines not compared"}[self.beats]

    @property
    def text(self) -> str:
        """'−0.078 [−0.110, −0.045] vs random_features', or why it is unknown."""
        if self.value is None:
            return self.why or "unknown"
        shown = _signed(self.value)
        if self.low is not None and self.high is not None:
            shown += f" [{_signed(self.low)}, {_signed(self.high)}]"
        return f"{shown} vs {self.baseline}"

    @property
    def note(self) -> str:
        """The gap with its method, e.g. for an unranked entry's reason."""
        if self.value is None:
            return self.text
        return f"gap {self.text} ({METHODS_SHORT[self.method]})"


def _signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


def _approximate(p: float, p_low: float, p_high: float, b: float, b_low: float,
                 b_high: float) -> tuple[float, float, float]:
    """MOVER's interval for p - b from two independent 95% intervals.

    >>> [round(x, 3) for x in _approximate(0.922, 0.889, 0.962, 1.0, 1.0, 1.0)]
    [-0.078, -0.111, -0.038]
    """
    gap = p - b
    low = gap - math.sqrt((p - p_low) ** 2 + (b_high - b) ** 2)
    high = gap + math.sqrt((p_high - p) ** 2 + (b - b_low) ** 2)
    return gap, low, high


def result_gap(record: ResultRecord, stored: BaselineRecord | None) -> Gap:
    """The gap of one stored result; ``stored``: the task's baselines stored for the
    result's model and site (``registry/baselines/``), or None."""
    t = record.result
    if t.baseline_gap is not None:
        g = t.baseline_gap
        return Gap(g.baseline, g.baseline_auroc, g.value, g.ci_low, g.ci_high,
                   beats(g.ci_low) if g.value is not None else None, "stored")
    baselines = (stored.baselines if stored is not None
                 and stored.test_sha256 == t.test_sha256 else t.baselines)
    name = best_baseline(baselines)
    if name is None:
        return Gap(None, None, None, None, None, None, "none",
                   why="no baseline with an AUROC is stored for this task, model and site")
    base = baselines[name].auroc
    assert base is not None and base.value is not None
    gap, _ = baseline_gap(baselines, t.predictions, task_id=t.id, seed=record.seed,
                          n_resamples=record.bootstrap_resamples)
    if gap is not None:
        return Gap(name, base.value, gap.value, gap.ci_low, gap.ci_high, beats(gap.ci_low),
                   "paired")
    probe = t.auroc
    if probe.value is None:
        return Gap(name, base.value, None, None, None, None, "none",
                   why="the result has no AUROC")
    if None in (probe.ci_low, probe.ci_high, base.ci_low, base.ci_high):
        return Gap(name, base.value, probe.value - base.value, None, None, None, "none",
                   why="no interval is stored for the probe's or the baseline's AUROC")
    assert probe.ci_low is not None and probe.ci_high is not None
    assert base.ci_low is not None and base.ci_high is not None
    value, low, high = _approximate(probe.value, probe.ci_low, probe.ci_high, base.value,
                                    base.ci_low, base.ci_high)
    return Gap(name, base.value, value, low, high, beats(low), "intervals")


def entry_beats(gaps: Iterable[Gap]) -> bool | None:
    """An entry beats its baselines on a task set when it beats them on every task;
    it does not when it fails on any; otherwise (some task not compared) unknown."""
    found = [g.beats for g in gaps]
    if any(b is False for b in found):
        return False
    return True if found and all(b is True for b in found) else None


def worst_gap(gaps: Iterable[Gap]) -> Gap | None:
    """The gap an entry's standing over several tasks turns on: a failing one first,
    then an unknown one, else the one with the lowest interval bound."""
    found = list(gaps)
    if not found:
        return None

    def key(g: Gap) -> tuple[int, float]:
        rank = {False: 0, None: 1, True: 2}[g.beats]
        bound = g.low if g.low is not None else (g.value if g.value is not None else 0.0)
        return (rank, bound)

    return min(found, key=key)


__all__ = ["METHODS", "METHODS_SHORT", "Gap", "entry_beats", "result_gap", "worst_gap"]
