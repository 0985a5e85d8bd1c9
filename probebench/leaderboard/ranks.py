"""Who is ranked against whom, and the rank intervals.

Only comparable entries are ranked together: ProbeScores on different tasks measure
different things (MTEB and the Open LLM Leaderboard rank over a shared task set too).
A composite rank compares entries evaluated on exactly the same task set
(``rank_group``); a task's own ranking rescores every entry from that task's result
alone (the caller restricts each ``Scored`` to the task). ``comparable_groups`` splits
entries by task set and names each set's benchmark family (the format of its tasks).

Rank intervals: a paired item bootstrap over the entries of one group at once. For
each task, one matrix of item counts is drawn per resample and shared by every entry
scored on that task (paired: entries are compared on the same resampled test sets).
Each entry's AUROC is recomputed on every resample (``weighted_auroc``), the axes
that derive from it follow (the AUROC axis, and imputed eval-awareness and
distribution-shift values), the ProbeScore is recomputed, and entries are ranked
within each resample (1 = best; ties share the better rank). An entry's rank interval
is the 2.5th and 97.5th percentile of its ranks, rounded outward; its ProbeScore's 95%
interval is the same percentiles of its resampled ProbeScores.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from probebench.evaluation.definitions import DISTSHIFT_IMPUTE, EVALAWARE_IMPUTE
from probebench.evaluation.metrics import resample_counts, weighted_auroc
from probebench.leaderboard.probescore import AxisValue, ProbeScoreSpec, probescore
from probebench.registry.store import ResultRecord


@dataclass
class Scored:
    """What ranking needs of an entry."""

    id: str
    results: dict[str, ResultRecord]      #: task -> latest stored record
    values: dict[str, AxisValue]          #: axis values at the point estimate
    closed: bool


@dataclass(frozen=True)
class RankInterval:
    rank: int
    best: int
    worst: int
    auroc_low: float
    auroc_high: float
    #: the 2.5th and 97.5th percentile of the entry's ProbeScore over the same resamples
    score_low: float = float("nan")
    score_high: float = float("nan")


#: what a rank and its interval mean (the tables' tooltips and the methodology page)
RANK_DEFINITION = ("rank within the table by ProbeScore (1 = best; ties share the better "
                   "rank) and [best, worst]: the 2.5th to 97.5th percentile of the entry's "
                   "rank over a paired item bootstrap of the table's entries")


def _task_seed(seed: int, task: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}/{task}".encode()).digest()[:4], "big")


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Competition ranks per row (1 = highest score; ties share the better rank)."""
    # rank = 1 + number of entries with a strictly higher score
    higher: np.ndarray = (scores[:, None, :] > scores[:, :, None]).sum(axis=2)
    return 1 + higher


#: paired bootstrap resamples behind the rank intervals
RANK_RESAMPLES = 200


def rank_intervals(entries: Sequence[Scored], spec: ProbeScoreSpec, *,
                   n_resamples: int = RANK_RESAMPLES,
                   seed: int = 0) -> dict[str, RankInterval]:
    if not entries:
        return {}
    tasks = sorted({t for e in entries for t in e.results})
    counts = {}
    for task in tasks:
        n_items = max(max(e.results[task].result.predictions.items) + 1
                      for e in entries if task in e.results)
        counts[task] = resample_counts(n_items, n_resamples,
                                       np.random.default_rng(_task_seed(seed, task)))
    boot = np.zeros((n_resamples, len(entries)))
    point = np.zeros(len(entries))
    auroc_ci = []
    for j, entry in enumerate(entries):
        per_task = []
        imputed_dist = []
        for task, record in sorted(entry.results.items()):
            pred = record.result.predictions
            items = np.asarray(pred.items, dtype=np.int64)
            y = np.asarray(pred.labels, dtype=np.int64)
            p = np.asarray(pred.probs, dtype=np.float64)
            per_task.append(weighted_auroc(y, p, counts[task][:, items]))
            imputed_dist.append(record.result.distshift_auroc.value is None)
        aurocs = np.vstack(per_task)  # (tasks, B)
        mean_b = np.nanmean(aurocs, axis=0)
        finite = mean_b[np.isfinite(mean_b)]
        auroc_ci.append((float(np.percentile(finite, 2.5)), float(np.percentile(finite, 97.5))))
        point[j] = probescore(spec, entry.values, closed_license=entry.closed).total
        base = entry.values
        for b in range(n_resamples):
            a_b = float(mean_b[b]) if np.isfinite(mean_b[b]) else base["auroc"].value
            values = dict(base)
            values["auroc"] = AxisValue(a_b)
            if base["evalaware_auroc"].imputed:
                values["evalaware_auroc"] = AxisValue(EVALAWARE_IMPUTE * a_b, True)
            if base["distshift_auroc"].imputed and all(imputed_dist):
                values["distshift_auroc"] = AxisValue(DISTSHIFT_IMPUTE * a_b, True)
            boot[b, j] = probescore(spec, values, closed_license=entry.closed).total
    ranks = _ranks(boot)
    point_rank = _ranks(point[None, :])[0]
    out = {}
    for j, entry in enumerate(entries):
        low, high = np.percentile(ranks[:, j], [2.5, 97.5])
        score_low, score_high = np.percentile(boot[:, j], [2.5, 97.5])
        out[entry.id] = RankInterval(int(point_rank[j]), int(np.floor(low)),
                                     int(np.ceil(high)), *auroc_ci[j],
                                     score_low=float(score_low), score_high=float(score_high))
    return out


#: benchmark families, by the format of their tasks, in the order pages show them; a
#: task of another format forms its own family, named after the format
FAMILY_NAMES = {"verbs": "Verb grammar", "blimp": "BLiMP", "syntaxgym": "SyntaxGym"}
#: the family of a task set whose tasks come from several families
CROSS_FAMILY = "cross-family"


def family_of(formats: Iterable[str]) -> str:
    """The family of a task set from its tasks' formats (``CROSS_FAMILY`` when mixed).

    >>> family_of(["blimp", "blimp"]), family_of(["blimp", "verbs"])
    ('blimp', 'cross-family')
    """
    found = set(formats)
    return found.pop() if len(found) == 1 else CROSS_FAMILY


def family_name(family: str) -> str:
    """What pages call a family.

    >>> family_name("verbs"), family_name("senteval")
    ('Verb grammar', 'senteval')
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
    order: tuple[str, ...]                #: entry ids, best ProbeScore first
    scores: dict[str, float]              #: entry id -> ProbeScore over ``tasks``
    ranks: dict[str, RankInterval]        #: entry id -> rank and interval in this group


def rank_group(entries: Sequence[Scored], spec: ProbeScoreSpec, *, family: str,
               n_resamples: int = RANK_RESAMPLES, seed: int = 0) -> RankedGroup:
    """Rank ``entries``, which must share one task set, best ProbeScore first."""
    task_sets = {tuple(sorted(e.results)) for e in entries}
    if len(task_sets) != 1:
        shown = "; ".join(", ".join(t) for t in sorted(task_sets))
        raise ValueError(f"entries evaluated on different task sets are not comparable "
                         f"({shown or 'no entries'})")
    scores = {e.id: probescore(spec, e.values, closed_license=e.closed).total
              for e in entries}
    ranks = rank_intervals(entries, spec, n_resamples=n_resamples, seed=seed)
    order = tuple(sorted(scores, key=lambda i: (-scores[i], i)))
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


__all__ = ["CROSS_FAMILY", "FAMILY_NAMES", "RANK_DEFINITION", "RANK_RESAMPLES",
           "RankInterval", "RankedGroup", "Scored", "comparable_groups", "family_name",
           "family_of", "family_sort_key", "rank_group", "rank_intervals"]
