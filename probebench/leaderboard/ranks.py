"""Who is ranked against whom, and the rank intervals.

Only comparable entries are ranked together: ProbeScores on different tasks measure
different things (MTEB and the Open LLM Leaderboard rank over a shared task set too).
A composite rank compares entries evaluated on exactly the same task set
(``rank_group``); a task's own ranking rescores every entry from that task's result
alone (the caller restricts each ``Scored`` to the task). ``comparable_groups`` splits
entries by task set and names each set's benchmark family (its tasks' ``family_key``:
the ``family:`` tasks.yaml declares, else the format), so tasks of one format in
declared families (truth, honesty, refusal) rank in sections of their own.

Baselines gate ranks. Within a group, only the entries that beat their baselines on
every task of the set (``Scored.beats``: the gap to the best baseline has a CI above 0,
``probebench.leaderboard.gaps``) are ranked, among themselves; the others are listed
after all of them, unranked (rank None, shown "—"), with the reason: "does not beat its
baselines" or "baselines not compared" (the gap is unknown). No entry that does not beat
its baselines is ever ranked above one that does.

ProbeScore and rank intervals: one joint paired item bootstrap over the entries of a
group. For each task, one matrix of item counts is drawn per resample and shared by
every entry scored on that task (paired: entries are compared on the same resampled
test sets). On each resample every axis with sampling uncertainty is recomputed from
the stored result, by the axis's own definition (``probescore.AXES``) reading a copy of
the stored record with the resampled numbers in place (``_record_at``: real pydantic
copies, so the definition reads it exactly as it reads the stored record), then the
ProbeScore, with the 30% cap applied inside the resample
(``probescore.probescore_batch``, the one cap that also makes the point value):

* AUROC (binary; the macro AUROC of a multi-class task) and calibration (ECE; top-label
  on a multi-class task) from the stored per-prompt predictions, each prompt counted as
  often as its item was drawn (``weighted_auroc``, ``weighted_calibration_error``);
* imputed values follow the resampled AUROC (eval-awareness 0.85 x, distribution shift
  0.7 x), as the axes' own definitions impute them;
* numbers stored only as a value with a 95% CI (a measured eval-aware or
  distribution-shift AUROC, selectivity, the AUROC on the sealed holdout, a measured
  transfer: a Pearson r's CI, or a transfer ratio's from its target AUROC's CI, the
  denominator held) are drawn from a
  **normal approximation** matching the stored CI: value + z x (CI half-width above or below it)
  / 1.96, a split normal whose 2.5th and 97.5th percentiles are the stored bounds, with
  z drawn per resample from a stream seeded by the seed, the task and the number, and
  shared by every entry on that task (paired, as the item draws are). This is an
  approximation: it ignores how such a number co-varies with the AUROC on one draw of
  items, and treats the entries' deviations as equal in z. A number without a CI is held.
  Goodhart resistance is then recomputed from the drawn holdout AUROC, the resampled test
  AUROC and the drawn selectivity (its retention's denominator is the resampled AUROC);
  from spec 0.3.0 its baseline share from the resampled AUROC, the best baseline's AUROC
  held at its stored value. A transfer ratio's target AUROC is drawn with the same
  deviates and its stored interval moved with it, so spec 0.3.0's rule (credited only
  when that interval lies above the control's AUROC) is applied on every draw as at the
  point.

Axes without sampling uncertainty (cost, license, imputed constants) are held. Entries
are ranked within each resample (1 = best; ties share the better rank). An entry's rank
interval is the 2.5th and 97.5th percentile of its ranks, rounded outward; its
ProbeScore's 95% interval is the same percentiles of its resampled ProbeScores, and each
axis's interval the same percentiles of that axis's draws (``AxisInterval``, with the
test items behind it, ``axis_items``), from the same draws. An interval of zero width
happens only when nothing varies, and ``RankInterval.score_note`` says why (no axis
varies, or only axes the cap holds). No interval is stretched to its point estimate: a
percentile interval need not hold it (an axis clamped at a bound moves one way only; a
stored number its predictions do not reproduce), and where it does not, the axis (or
``PROBESCORE``) is named in ``RankInterval.outside``, which the build publishes and
prints as a warning.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from probebench.evaluation.metrics import (
    resample_counts,
    weighted_auroc,
    weighted_calibration_error,
    weighted_macro_auroc,
)
from probebench.evaluation.results import FlaggedOut, IntervalOut, TransferOut
from probebench.leaderboard.probescore import (
    AXES,
    FEW_ITEMS,
    MIN_ITEMS_PER_CLASS,
    AxisValue,
    ProbeScoreSpec,
    evalaware_items_per_class,
    fewest_items_per_class,
    probescore,
    probescore_batch,
    transfer_judgment,
)
from probebench.registry.store import ResultRecord
from probebench.tasks.families import FAMILY_NAMES as FORMAT_NAMES


@dataclass
class Scored:
    """What ranking needs of an entry."""

    id: str
    results: dict[str, ResultRecord]      #: task -> latest stored record
    values: dict[str, AxisValue]          #: axis values at the point estimate
    closed: bool
    #: beats its baselines on every task of ``results`` (None: not compared on some)
    beats: bool | None = None
    #: the gap behind ``beats``, in words (the reason shown with an unranked entry)
    baseline_note: str = ""


def outside(value: float, low: float, high: float) -> bool:
    """``value`` lies outside [``low``, ``high``] as published (6 decimals): a percentile
    interval need not hold the point estimate (a skewed or clamped axis), and the build
    marks where it does not instead of stretching the interval to it.

    >>> outside(0.75, 0.643, 0.694), outside(0.6940000001, 0.643, 0.694)
    (True, False)
    """
    return not round(low, 6) <= round(value, 6) <= round(high, 6)


#: the name ``RankInterval.outside`` gives the ProbeScore itself
PROBESCORE = "probescore"


@dataclass(frozen=True)
class AxisInterval:
    """One axis of one entry over the joint resample: its point value and the 2.5th and
    97.5th percentile of its draws (the draws the ProbeScore's interval is made of)."""

    value: float                 #: at the point estimate (``Scored.values``)
    ci_low: float
    ci_high: float
    #: the test items behind the value, over the entry's tasks (``axis_items``; None: the
    #: axis has no sampling uncertainty)
    n_items: int | None
    #: the draws are not all equal (an axis held, or clamped in every draw, does not vary)
    varies: bool

    @property
    def outside(self) -> bool:
        return outside(self.value, self.ci_low, self.ci_high)

    @property
    def few_items(self) -> bool:
        """The interval rests on fewer than ``FEW_ITEMS`` test items (marked as such)."""
        return self.n_items is not None and self.n_items < FEW_ITEMS


@dataclass(frozen=True)
class RankInterval:
    #: rank and its interval among the entries that beat their baselines (None: unranked)
    rank: int | None
    best: int | None
    worst: int | None
    auroc_low: float
    auroc_high: float
    #: the 2.5th and 97.5th percentile of the entry's ProbeScore over the same resamples
    score_low: float = float("nan")
    score_high: float = float("nan")
    #: why the ProbeScore's interval has zero width (empty when it has width)
    score_note: str = ""
    #: why the entry is not ranked (empty when it is)
    unranked: str = ""
    #: axis name (the spec's) -> its value's interval over the same resamples
    axes: Mapping[str, AxisInterval] = field(default_factory=dict)
    #: the axes (spec names) whose point value lies outside its interval, then
    #: ``PROBESCORE`` where the ProbeScore's does (``outside``); shown, never hidden
    outside: tuple[str, ...] = ()


#: what a rank and its interval mean (the tables' tooltips and the methodology page)
RANK_DEFINITION = ("rank within the table by ProbeScore (1 = best; ties share the better "
                   "rank) among the entries that beat their baselines (the gap to the best "
                   "baseline has a 95% interval above 0); the others are listed after them, "
                   "unranked (—), with the reason. [best, worst]: the 2.5th to 97.5th "
                   "percentile of the entry's rank over a joint paired item bootstrap of the "
                   "table's entries, which recomputes every axis with sampling uncertainty "
                   "(AUROC and calibration from the predictions; values stored with a CI "
                   "drawn from a normal approximation) and the 30% cap on each resample")

#: what an unranked entry's rank cell says, by ``Scored.beats``
NOT_BEATING = "does not beat its baselines"
NOT_COMPARED = "baselines not compared"


def _task_seed(seed: int, task: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}/{task}".encode()).digest()[:4], "big")


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Competition ranks per row (1 = highest score; ties share the better rank): 1 + the
    number of entries in the row with a strictly higher score (a NaN is higher than
    nothing, and nothing is higher than a NaN, as ``>`` has it).

    Counted from each row sorted, not by comparing every pair: memory ``O(rows x
    entries)``, not ``O(rows x entries^2)`` (200 resamples of a table of 8,000 entries
    would compare into 12.8 GB of booleans).

    >>> _ranks(np.array([[0.5, 0.9, 0.5, np.nan, 0.1]])).tolist()
    [[2, 1, 2, 1, 4]]
    """
    scores = np.asarray(scores, dtype=np.float64)
    out = np.zeros(scores.shape, dtype=np.int64)
    for row, ranks in zip(scores, out, strict=True):
        nan = np.isnan(row)
        ordered = np.sort(row)  # NaNs last: searchsorted counts the finite ones <= x
        not_higher = np.searchsorted(ordered, row, side="right")
        ranks[:] = 1 + np.where(nan, 0, (row.size - nan.sum()) - not_higher)
    return out


#: paired bootstrap resamples behind the rank intervals
RANK_RESAMPLES = 200
#: z of the 97.5th percentile: a stored 95% CI's half-width is this many SDs
Z_975 = 1.959963984540054
#: the source names of today's axes whose inputs carry sampling uncertainty (named in
#: the zero-width note; ``HELD_SOURCES`` are the ones known not to)
RESAMPLED_SOURCES = ("auroc", "evalaware_auroc", "evalaware_min_items", "distshift_auroc",
                     "ece", "selectivity", "transfer", "mapped_transfer",
                     "transfer_above_control", "holdout_goodhart", "goodhart_shown")


@dataclass
class ScoreDraws:
    """The joint bootstrap of a set of entries: their ProbeScores on every resample."""

    point: np.ndarray                     #: (n,) ProbeScore at the point estimate
    boot: np.ndarray                      #: (B, n) ProbeScore on each resample
    auroc_ci: list[tuple[float, float]]   #: per entry: 95% interval of the mean AUROC
    notes: list[str]                      #: per entry: why its interval has no width
    #: per entry: axis source -> its (B,) values, one per resample
    axis_draws: list[dict[str, np.ndarray]] = field(default_factory=list)
    #: per entry: axis name (the spec's) -> its interval
    axes: list[dict[str, AxisInterval]] = field(default_factory=list)


def split_normal(value: float | None, low: float | None, high: float | None,
                 z: np.ndarray, bounds: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """Draws matching a stored 95% CI: ``value`` + z x (high - value) / 1.96 for z > 0,
    z x (value - low) / 1.96 below, clipped to ``bounds``; ``value`` itself (every draw)
    without a CI.

    >>> [float(x) for x in split_normal(0.8, 0.7, 0.85, np.array([-Z_975, 0.0, Z_975]))]
    [0.7, 0.8, 0.85]
    """
    if value is None:
        raise ValueError("no value to draw around")
    if low is None or high is None:
        return np.full(z.shape, float(value))
    up = max(0.0, high - value) / Z_975
    down = max(0.0, value - low) / Z_975
    return np.clip(value + np.where(z > 0, z * up, z * down), *bounds)


class _Streams:
    """The normal deviates of one bootstrap: one (B,) vector per (task, number), drawn
    from a stream seeded by the seed, the task and the number's name, so that every
    entry on the task gets the same deviates (paired)."""

    def __init__(self, seed: int, n_resamples: int) -> None:
        self.seed, self.n = seed, n_resamples
        self._z: dict[tuple[str, str], np.ndarray] = {}

    def z(self, task: str, name: str) -> np.ndarray:
        key = (task, name)
        if key not in self._z:
            self._z[key] = np.random.default_rng(
                _task_seed(self.seed, f"{task}/{name}")).standard_normal(self.n)
        return self._z[key]


@dataclass
class _TaskDraws:
    """One stored result's resampled numbers, (B,) each; the FlaggedOut and interval
    values drawn from their CIs are ``None`` where held."""

    auroc: np.ndarray
    ece: np.ndarray
    distshift: np.ndarray | None = None
    evalaware: np.ndarray | None = None
    selectivity: np.ndarray | None = None
    #: the AUROC on the sealed holdout (its own items: drawn from its CI)
    holdout: np.ndarray | None = None
    #: target -> (the attribute drawn: a FlaggedOut's value, a TransferOut's transfer; draws)
    transfer: dict[str, tuple[str, np.ndarray]] = field(default_factory=dict)
    #: target -> a TransferOut's target AUROC, drawn with the ratio's deviates (its stored
    #: interval moves with it: the 0.3.0 rule, interval above the control, per draw)
    transfer_auroc: dict[str, np.ndarray] = field(default_factory=dict)


def _measured(x: FlaggedOut | IntervalOut | None) -> bool:
    """A number measured with a value and a CI (what a normal approximation needs); a
    FlaggedOut imputed is not."""
    return (x is not None and x.value is not None
            and not (isinstance(x, FlaggedOut) and x.imputed)
            and x.ci_low is not None and x.ci_high is not None)


def _task_draws(task: str, record: ResultRecord, counts: np.ndarray,
                streams: _Streams) -> _TaskDraws:
    t = record.result
    pred = t.predictions
    items = np.asarray(pred.items, dtype=np.int64)
    y = np.asarray(pred.labels, dtype=np.int64)
    weights = counts[:, items]
    if pred.class_probs is not None:  # a multi-class task: macro AUROC, top-label ECE
        proba = np.asarray(pred.class_probs, dtype=np.float64)
        auroc = weighted_macro_auroc(y, proba, weights)
        right = (np.argmax(proba, axis=1) == y).astype(np.int64)
        ece = weighted_calibration_error(right, proba.max(axis=1), weights)
    else:
        p = np.asarray(pred.probs, dtype=np.float64)
        auroc = weighted_auroc(y, p, weights)
        ece = weighted_calibration_error(y, p, weights)
    # a resample without both classes has no AUROC: the stored value stands in
    auroc = np.where(np.isfinite(auroc), auroc, t.auroc.value if t.auroc.value is not None
                     else np.nan)
    ece = np.where(np.isfinite(ece), ece, t.ece)
    out = _TaskDraws(auroc=auroc, ece=ece)
    for name in ("distshift_auroc", "evalaware_auroc"):
        flagged: FlaggedOut = getattr(t, name)
        if _measured(flagged):
            drawn = split_normal(flagged.value, flagged.ci_low, flagged.ci_high,
                                 streams.z(task, name))
            setattr(out, name.split("_")[0], drawn)
    selectivity = t.selectivity.selectivity if t.selectivity is not None else None
    if selectivity is not None and _measured(selectivity):
        out.selectivity = split_normal(selectivity.value, selectivity.ci_low,
                                       selectivity.ci_high, streams.z(task, "selectivity"),
                                       bounds=(-1.0, 1.0))
    held = record.holdout
    if held is not None and _measured(held.auroc):
        out.holdout = split_normal(held.auroc.value, held.auroc.ci_low, held.auroc.ci_high,
                                   streams.z(task, "holdout"))
    for target, value in sorted(t.transfer.items()):
        z = streams.z(task, f"transfer/{target}")
        if isinstance(value, FlaggedOut):  # a Pearson r with its CI (specs before 0.2.0)
            if _measured(value):
                out.transfer[target] = ("value", split_normal(
                    value.value, value.ci_low, value.ci_high, z, bounds=(-1.0, 1.0)))
            continue
        # a transfer ratio (auroc - 0.5) / (source_auroc - 0.5): its interval from the
        # target AUROC's, the denominator held
        ratio, target_auroc, source = value.transfer, value.auroc, value.source_auroc
        if ratio is None or source is None or source <= 0.5 or target_auroc is None \
                or target_auroc.ci_low is None or target_auroc.ci_high is None:
            continue

        def as_ratio(auroc: float, source: float = source) -> float:
            return min(1.0, max(0.0, (auroc - 0.5) / (source - 0.5)))

        out.transfer[target] = ("transfer", split_normal(
            ratio, as_ratio(target_auroc.ci_low), as_ratio(target_auroc.ci_high), z))
        if target_auroc.value is not None:
            out.transfer_auroc[target] = split_normal(
                target_auroc.value, target_auroc.ci_low, target_auroc.ci_high, z)
    return out


def _record_at(record: ResultRecord, draws: _TaskDraws, b: int) -> ResultRecord:
    """``record`` with its resampled numbers of resample ``b`` in place of the stored
    ones, as a real ``ResultRecord`` (pydantic copies, ``model_copy``): the axes' own
    definitions then read it exactly as they read the stored record at the point
    estimate, ``isinstance`` tests included (a duck-typed stand-in once failed
    ``isinstance(v, TransferOut)`` and held the transfer axis at 0 in every draw)."""
    t = record.result
    update: dict[str, Any] = {
        "auroc": t.auroc.model_copy(update={"value": float(draws.auroc[b])}),
        "ece": float(draws.ece[b])}
    if draws.distshift is not None:
        update["distshift_auroc"] = t.distshift_auroc.model_copy(
            update={"value": float(draws.distshift[b])})
    if draws.evalaware is not None:
        update["evalaware_auroc"] = t.evalaware_auroc.model_copy(
            update={"value": float(draws.evalaware[b])})
    elif t.evalaware_auroc.imputed:  # imputed from the AUROC: from the resampled one
        update["evalaware_auroc"] = t.evalaware_auroc.model_copy(update={"value": None})
    if draws.selectivity is not None and t.selectivity is not None:
        sel = t.selectivity
        update["selectivity"] = sel.model_copy(update={"selectivity": sel.selectivity.model_copy(
            update={"value": float(draws.selectivity[b])})})
    if draws.transfer:
        update["transfer"] = {
            k: _transfer_at(v, draws, k, b) if k in draws.transfer else v
            for k, v in t.transfer.items()}
    outer: dict[str, Any] = {"result": t.model_copy(update=update)}
    if draws.holdout is not None and record.holdout is not None:
        held = record.holdout
        outer["holdout"] = held.model_copy(update={"auroc": held.auroc.model_copy(
            update={"value": float(draws.holdout[b])})})
    return record.model_copy(update=outer)


def _transfer_at(value: TransferOut | FlaggedOut, draws: _TaskDraws, target: str,
                 b: int) -> TransferOut | FlaggedOut:
    """One stored transfer on resample ``b``: the drawn ratio (or Pearson r); for a
    TransferOut also the drawn target AUROC, its interval moved by as much (so spec
    0.3.0's rule, the interval above the control, is applied per draw)."""
    attr, drawn = draws.transfer[target]
    update: dict[str, Any] = {attr: float(drawn[b])}
    if isinstance(value, TransferOut) and target in draws.transfer_auroc \
            and value.auroc is not None and value.auroc.value is not None:
        at = float(draws.transfer_auroc[target][b])
        shift = at - value.auroc.value
        update["auroc"] = value.auroc.model_copy(update={
            "value": at,
            "ci_low": None if value.auroc.ci_low is None else value.auroc.ci_low + shift,
            "ci_high": None if value.auroc.ci_high is None else value.auroc.ci_high + shift})
    return value.model_copy(update=update)


#: how a measured eval-aware AUROC's note begins: "N of M items rated least
#: evaluation-like ..." (``evaluation.evalaware``); N items are behind the value
_OF_ITEMS = re.compile(r"(\d+) of \d+ items")


def _transfer_measured(source: str, value: TransferOut | FlaggedOut) -> bool:
    """``value`` is a measured transfer of the kind the axis ``source`` reads."""
    if source == "mapped_transfer":
        return isinstance(value, TransferOut) and value.transfer is not None
    return isinstance(value, FlaggedOut) and not value.imputed and value.value is not None


def axis_items(source: str, records: Sequence[ResultRecord]) -> int | None:
    """The test items behind an axis value, summed over the entry's tasks: a task's
    items for AUROC, calibration and the distribution shift (measured on the same
    prompts, or imputed from the AUROC), and for a measured transfer (the target AUROC
    is over the test prompts); for a measured eval-aware AUROC the items its guard kept
    (the N of its note; imputed: the task's); for Goodhart resistance the sealed
    holdout's items. None for an axis without sampling uncertainty (cost, license, a
    constant, an imputed transfer or Goodhart value)."""
    if source in ("auroc", "ece", "distshift_auroc"):
        return sum(r.result.n_items for r in records)
    if source == "evalaware_min_items":
        total = 0
        for r in records:
            flagged = r.result.evalaware_auroc
            kept = evalaware_items_per_class(r.result.predictions)
            enough = len(kept) >= 2 and min(kept.values()) >= MIN_ITEMS_PER_CLASS
            found = (_OF_ITEMS.match(flagged.note) if enough and not flagged.imputed
                     and flagged.value is not None else None)
            total += int(found.group(1)) if found else r.result.n_items
        return total
    if source == "evalaware_auroc":
        total = 0
        for r in records:
            flagged = r.result.evalaware_auroc
            found = (_OF_ITEMS.match(flagged.note)
                     if not flagged.imputed and flagged.value is not None else None)
            total += int(found.group(1)) if found else r.result.n_items
        return total
    if source == "transfer_above_control":
        judged = [r.result.n_items for r in records if any(
            isinstance(v, TransferOut) and transfer_judgment(
                v, fewest_items_per_class(r.result.predictions))[0]
            is not None for v in r.result.transfer.values())]
        return sum(judged) if judged else None
    if source in ("transfer", "mapped_transfer"):
        measured = [r.result.n_items for r in records
                    if any(_transfer_measured(source, v) for v in r.result.transfer.values())]
        return sum(measured) if measured else None
    if source in ("holdout_goodhart", "goodhart_shown"):
        held = [r.holdout.n_items for r in records
                if r.holdout is not None and r.holdout.auroc.value is not None]
        return sum(held) if held and len(held) == len(records) else None
    return None


#: the sources of today's axes that read nothing a resample changes (every other axis,
#: one added later included, is recomputed on each resample)
HELD_SOURCES = frozenset({"license", "latency_ms", "flops", "goodhart"})


def _varying_sources(spec: ProbeScoreSpec, draws: Mapping[str, _TaskDraws],
                     records: Mapping[str, ResultRecord]) -> list[str]:
    """The axes of ``spec`` recomputed on each resample for one entry: AUROC and
    calibration always; eval-awareness and distribution shift where imputed from the
    AUROC or drawn; transfer where drawn; any axis not known to be held."""
    out = set()
    for axis in spec.axes:
        src = axis.source
        if src in ("auroc", "ece", "evalaware_min_items"):
            # (below its minimum a measured eval-aware AUROC follows the resampled AUROC)
            out.add(src)
        elif src == "evalaware_auroc":
            if any(d.evalaware is not None or records[t].result.evalaware_auroc.imputed
                   or records[t].result.evalaware_auroc.value is None
                   for t, d in draws.items()):
                out.add(src)
        elif src == "distshift_auroc":
            if any(d.distshift is not None or records[t].result.distshift_auroc.value is None
                   for t, d in draws.items()):
                out.add(src)
        elif src in ("transfer", "mapped_transfer", "transfer_above_control"):
            if any(d.transfer for d in draws.values()):
                out.add(src)
        elif src in ("holdout_goodhart", "goodhart_shown"):
            if all(d.holdout is not None for d in draws.values()):
                out.add(src)
        elif src not in HELD_SOURCES:
            out.add(src)
    return sorted(out)


def _zero_width_note(spec: ProbeScoreSpec, axis_draws: Mapping[str, np.ndarray],
                     capped_always: set[str], n_resamples: int) -> str:
    """Why an entry's ProbeScore did not move over the resamples."""
    varied = [a for a in spec.axes if a.source in axis_draws
              and float(np.ptp(axis_draws[a.source])) > 1e-12]
    if not varied:
        held = ", ".join(f"{a.label} {float(axis_draws[a.source][0]):.3f}"
                         for a in spec.axes if a.source in RESAMPLED_SOURCES
                         and a.source in axis_draws)
        return (f"no axis varies: every one of the {n_resamples} resamples gives the same "
                f"{held or 'values'}, and the other axes have no sampling uncertainty")
    if all(a.name in capped_always for a in varied):
        names = ", ".join(a.label for a in varied)
        return (f"only capped axes vary ({names}): the {spec.cap * 100:g}% cap holds their "
                "contribution at its share of a total that the axes which do not vary set, "
                "in every resample")
    return ""


def _axis_interval(value: float, drawn: np.ndarray, n_items: int | None) -> AxisInterval:
    low, high = np.percentile(drawn, [2.5, 97.5])
    return AxisInterval(value, float(low), float(high), n_items, float(np.ptp(drawn)) > 1e-12)


def draw_scores(entries: Sequence[Scored], spec: ProbeScoreSpec, *,
                n_resamples: int = RANK_RESAMPLES, seed: int = 0) -> ScoreDraws:
    """Every entry's ProbeScore on each of ``n_resamples`` joint paired item resamples
    (module docstring), and at the point estimate."""
    tasks = sorted({t for e in entries for t in e.results})
    counts = {}
    for task in tasks:
        n_items = max(max(e.results[task].result.predictions.items) + 1
                      for e in entries if task in e.results)
        counts[task] = resample_counts(n_items, n_resamples,
                                       np.random.default_rng(_task_seed(seed, task)))
    streams = _Streams(seed, n_resamples)
    boot = np.zeros((n_resamples, len(entries)))
    point = np.zeros(len(entries))
    auroc_ci: list[tuple[float, float]] = []
    notes: list[str] = []
    all_draws: list[dict[str, np.ndarray]] = []
    axes: list[dict[str, AxisInterval]] = []
    for j, entry in enumerate(entries):
        ordered = sorted(entry.results.items())
        draws = {task: _task_draws(task, rec, counts[task], streams) for task, rec in ordered}
        mean_b = np.mean(np.vstack([d.auroc for d in draws.values()]), axis=0)
        finite = mean_b[np.isfinite(mean_b)]
        auroc_ci.append((float(np.percentile(finite, 2.5)), float(np.percentile(finite, 97.5)))
                        if finite.size else (float("nan"), float("nan")))
        point[j] = probescore(spec, entry.values, closed_license=entry.closed).total
        varying = _varying_sources(spec, draws, entry.results)
        axis_draws = {a.source: np.full(n_resamples, entry.values[a.source].value)
                      for a in spec.axes}
        for b in range(n_resamples):
            records = [_record_at(rec, draws[task], b) for task, rec in ordered]
            for src in varying:  # the axes' own definitions, on the resampled numbers
                axis_draws[src][b] = AXES[src].compute(records, "").value
        batch = probescore_batch(spec, axis_draws, closed_license=entry.closed)
        boot[:, j], capped = batch.totals, batch.capped
        stored = [rec for _, rec in ordered]
        all_draws.append(axis_draws)
        axes.append({a.name: _axis_interval(entry.values[a.source].value,
                                            axis_draws[a.source], axis_items(a.source, stored))
                     for a in spec.axes})
        low, high = np.percentile(boot[:, j], [2.5, 97.5])
        capped_always = {a.name for k, a in enumerate(spec.axes) if capped[:, k].all()}
        notes.append(_zero_width_note(spec, axis_draws, capped_always, n_resamples)
                     if round(float(high - low), 6) == 0 else "")
    return ScoreDraws(point, boot, auroc_ci, notes, all_draws, axes)


def _intervals(entries: Sequence[Scored], draws: ScoreDraws, ranked: Sequence[int],
               reasons: Mapping[int, str]) -> dict[str, RankInterval]:
    """Rank intervals among the entries at indices ``ranked``; the others unranked."""
    out = {}
    ranks = _ranks(draws.boot[:, list(ranked)]) if ranked else np.zeros((0, 0))
    point_rank = _ranks(draws.point[None, list(ranked)])[0] if ranked else np.zeros(0)
    position = {j: k for k, j in enumerate(ranked)}
    for j, entry in enumerate(entries):
        score_low, score_high = np.percentile(draws.boot[:, j], [2.5, 97.5])
        # the plain percentiles, never stretched to the point: a point outside its
        # interval (an axis clamped at a bound moves one way only) is marked instead
        marked = tuple(name for name, axis in draws.axes[j].items() if axis.outside)
        if outside(float(draws.point[j]), float(score_low), float(score_high)):
            marked += (PROBESCORE,)
        common: dict[str, Any] = {
            "auroc_low": draws.auroc_ci[j][0], "auroc_high": draws.auroc_ci[j][1],
            "score_low": float(score_low), "score_high": float(score_high),
            "score_note": draws.notes[j], "axes": draws.axes[j], "outside": marked}
        if j in position:
            k = position[j]
            low, high = np.percentile(ranks[:, k], [2.5, 97.5])
            out[entry.id] = RankInterval(int(point_rank[k]), int(np.floor(low)),
                                         int(np.ceil(high)), **common)
        else:
            out[entry.id] = RankInterval(None, None, None, unranked=reasons[j], **common)
    return out


def rank_intervals(entries: Sequence[Scored], spec: ProbeScoreSpec, *,
                   n_resamples: int = RANK_RESAMPLES,
                   seed: int = 0) -> dict[str, RankInterval]:
    """Ranks and intervals of ``entries`` among all of them (no baseline gate: see
    ``rank_group``), from ``draw_scores``."""
    if not entries:
        return {}
    draws = draw_scores(entries, spec, n_resamples=n_resamples, seed=seed)
    return _intervals(entries, draws, list(range(len(entries))), {})


#: the unranked reason of an entry scored by ``score_intervals``
NOT_IN_A_RANKING = "not in a ranking"


def score_intervals(entries: Sequence[Scored], spec: ProbeScoreSpec, *,
                    n_resamples: int = RANK_RESAMPLES,
                    seed: int = 0) -> dict[str, RankInterval]:
    """The ProbeScore and per-axis intervals of entries that no ranking holds (pending,
    deprecated, guards), from the same joint resample as a ranking's (``draw_scores``),
    without ranks."""
    if not entries:
        return {}
    draws = draw_scores(entries, spec, n_resamples=n_resamples, seed=seed)
    return _intervals(entries, draws, [], dict.fromkeys(range(len(entries)),
                                                        NOT_IN_A_RANKING))


def unranked_reason(entry: Scored) -> str:
    """Why ``entry`` is not ranked ("" when it beats its baselines)."""
    if entry.beats is True:
        return ""
    lead = NOT_BEATING if entry.beats is False else NOT_COMPARED
    return f"{lead}: {entry.baseline_note}" if entry.baseline_note else lead


#: the family of a task set whose tasks come from several families
CROSS_FAMILY = "cross-family"

#: what pages call the families that tasks.yaml declares with ``family:`` (a family that
#: is a format is named by its format's ``display_name``), in page order
DECLARED_FAMILY_NAMES: Mapping[str, str] = {
    "truth": "Truth", "honesty": "Honesty and deception", "refusal": "Refusal"}


class _FamilyNames(Mapping[str, str]):
    """family -> display name: the registered formats' (``tasks.families.FAMILY_NAMES``,
    read on each use, so a format registered later is named too), then the declared
    families'; in that order."""

    def __getitem__(self, name: str) -> str:
        if name in FORMAT_NAMES:
            return FORMAT_NAMES[name]
        return DECLARED_FAMILY_NAMES[name]

    def __iter__(self) -> Iterator[str]:
        formats = list(FORMAT_NAMES)
        return iter(formats + [n for n in DECLARED_FAMILY_NAMES if n not in formats])

    def __len__(self) -> int:
        return len(list(iter(self)))


#: benchmark families by their display names, in the order pages show them; a family
#: without a display name is shown by its key
FAMILY_NAMES: Mapping[str, str] = _FamilyNames()


def family_of(families: Iterable[str]) -> str:
    """The family of a task set from its tasks' families (``TaskSpec.family_key``;
    ``CROSS_FAMILY`` when mixed).

    >>> family_of(["blimp", "blimp"]), family_of(["blimp", "verbs"])
    ('blimp', 'cross-family')
    """
    found = set(families)
    return found.pop() if len(found) == 1 else CROSS_FAMILY


def family_name(family: str) -> str:
    """What pages call a family.

    >>> family_name("verbs"), family_name("senteval"), family_name("honesty")
    ('Verb grammar', 'senteval', 'Honesty and deception')
    """
    if family == CROSS_FAMILY:
        return "Task sets across families"
    return FAMILY_NAMES.get(family, family)


def family_sort_key(family: str) -> tuple[int, str]:
    """The named families first (in ``FAMILY_NAMES`` order), then others by name, then
    ``CROSS_FAMILY``."""
    order = list(FAMILY_NAMES)
    if family in FAMILY_NAMES:
        return (order.index(family), "")
    return (len(order) + (family == CROSS_FAMILY), family)


@dataclass(frozen=True)
class RankedGroup:
    """Entries evaluated on exactly ``tasks``, ranked against each other only."""

    family: str
    tasks: tuple[str, ...]                #: the shared task set, sorted
    #: entry ids: those that beat their baselines by ProbeScore, best first, then the
    #: others (unranked) by ProbeScore
    order: tuple[str, ...]
    scores: dict[str, float]              #: entry id -> ProbeScore over ``tasks``
    ranks: dict[str, RankInterval]        #: entry id -> rank and interval in this group

    @property
    def ranked(self) -> tuple[str, ...]:
        """The entries with a rank (they beat their baselines), best first."""
        return tuple(i for i in self.order if self.ranks[i].rank is not None)


def rank_group(entries: Sequence[Scored], spec: ProbeScoreSpec, *, family: str,
               n_resamples: int = RANK_RESAMPLES, seed: int = 0) -> RankedGroup:
    """Rank ``entries``, which must share one task set: those that beat their baselines
    by ProbeScore, best first, then the others, unranked, by ProbeScore."""
    task_sets = {tuple(sorted(e.results)) for e in entries}
    if len(task_sets) != 1:
        shown = "; ".join(", ".join(t) for t in sorted(task_sets))
        raise ValueError(f"entries evaluated on different task sets are not comparable "
                         f"({shown or 'no entries'})")
    scores = {e.id: probescore(spec, e.values, closed_license=e.closed).total
              for e in entries}
    draws = draw_scores(entries, spec, n_resamples=n_resamples, seed=seed)
    ranked = [j for j, e in enumerate(entries) if e.beats is True]
    reasons = {j: unranked_reason(e) for j, e in enumerate(entries) if e.beats is not True}
    ranks = _intervals(entries, draws, ranked, reasons)
    order = tuple(sorted(scores, key=lambda i: (ranks[i].rank is None, -scores[i], i)))
    return RankedGroup(family, task_sets.pop(), order, scores, ranks)


def comparable_groups(entries: Sequence[Scored], spec: ProbeScoreSpec, *,
                      family: Callable[[str], str], n_resamples: int = RANK_RESAMPLES,
                      seed: int = 0) -> list[RankedGroup]:
    """One ``RankedGroup`` per distinct task set of ``entries``; ``family`` maps a task
    id to its family. Groups come by family, then the largest first."""
    by_set: dict[tuple[str, ...], list[Scored]] = defaultdict(list)
    for entry in entries:
        by_set[tuple(sorted(entry.results))].append(entry)
    groups = [rank_group(members, spec, family=family_of(family(t) for t in tasks),
                         n_resamples=n_resamples, seed=seed)
              for tasks, members in by_set.items()]
    return sorted(groups, key=lambda g: (family_sort_key(g.family), -len(g.order), g.tasks))


__all__ = ["CROSS_FAMILY", "DECLARED_FAMILY_NAMES", "FAMILY_NAMES", "NOT_BEATING",
           "NOT_COMPARED", "NOT_IN_A_RANKING", "PROBESCORE", "RANK_DEFINITION",
           "RANK_RESAMPLES", "RESAMPLED_SOURCES",
           "AxisInterval", "RankInterval", "RankedGroup", "ScoreDraws", "Scored",
           "axis_items", "comparable_groups", "draw_scores", "family_name", "family_of",
           "family_sort_key", "outside", "rank_group", "rank_intervals", "score_intervals",
           "split_normal", "unranked_reason"]
