"""The headline metrics of a probe on a task's test split, binary or multi-class, shared
by ``submit``, ``train`` and the reproducer notebooks so that all three print the same
numbers.

The definitions drive the computation: ``headline`` computes each metric that
``definitions.headline_metrics`` lists by calling its ``MetricDef.compute`` on what the
definition ``reads`` (the test prompts' labels and scores, or each item's score), and
where the definition has a ``weighted`` form adds its item-bootstrap 95% CI
(``metric_interval``, through ``metrics.item_bootstrap``). A metric whose definition has
no ``compute`` is not produced. Binary and multi-class tasks take the same path:
``Scored`` holds either kind and every metric function reads both.

Seeds are derived per metric from the run's seed and the task id (``sub_seed``), so a
metric's bootstrap does not depend on which other metrics or tasks ran before it.

``recall_at_control`` computes the one metric that also reads a control set, the recall
at 1% false positives, for the tasks that declare one (``Session.with_control_recall``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from probebench.evaluation.definitions import METRICS, MetricDef, Reads, headline_metrics
from probebench.evaluation.metrics import (
    N_RESAMPLES,
    Interval,
    MetricError,
    control_threshold,
    item_bootstrap,
    two_sample_bootstrap,
)
from probebench.evaluation.multiclass import class_indices, item_correctness
from probebench.evaluation.results import ControlSetOut, IntervalOut, RecallOut, SliceOut
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families import TaskFormat, group_by_slice

#: a headline metric's result: an interval (a metric with a weighted form), a point
#: value, or None (no meaning for the task's kind)
Value = IntervalOut | float | None
NO_INTERVAL = IntervalOut(value=None, ci_low=None, ci_high=None, resamples=0, dropped=0)


def sub_seed(seed: int, *parts: str) -> int:
    digest = hashlib.sha256("/".join([str(seed), *parts]).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def interval_out(iv: Interval) -> IntervalOut:
    def clean(x: float) -> float | None:
        return None if not np.isfinite(x) else float(x)
    return IntervalOut(value=clean(iv.value), ci_low=clean(iv.low), ci_high=clean(iv.high),
                       resamples=iv.resamples, dropped=iv.dropped)


def metric_interval(metric: str | MetricDef, *inputs: np.ndarray, item_of: np.ndarray,
                    seed: int, n_resamples: int, parts: Sequence[str]) -> IntervalOut:
    """``metric`` as its definition computes it from ``inputs`` (``compute``), with the
    item-bootstrap 95% CI of its ``weighted`` form; ``item_of``: any item label of each
    input row; seeded from ``seed`` and ``parts`` alone."""
    d = METRICS[metric] if isinstance(metric, str) else metric
    if d.compute is None or d.weighted is None:
        raise MetricError(f"metric {d.name}: its MetricDef has no compute and weighted "
                          "form, so it has no interval")
    value = d.compute(*inputs)
    return interval_out(item_bootstrap(value, partial(d.weighted, *inputs), item_of,
                                       n_resamples=n_resamples, seed=sub_seed(seed, *parts)))


def _items_interval(metric: str | MetricDef, values: Sequence[float | None], *, seed: int,
                    n_resamples: int, parts: Sequence[str]) -> IntervalOut:
    v = np.array([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        return NO_INTERVAL
    return metric_interval(metric, v, item_of=np.arange(v.size), seed=seed,
                           n_resamples=n_resamples, parts=parts)


def mean_interval(values: Sequence[float | None], *, seed: int, n_resamples: int,
                  parts: Sequence[str]) -> IntervalOut:
    """The mean of item scores (the accuracy's statistic) with its item-bootstrap CI;
    None items are left out."""
    return _items_interval("accuracy", values, seed=seed, n_resamples=n_resamples,
                           parts=parts)


@dataclass
class Flat:
    """The test prompts of a task in one list, with each prompt's item index."""

    prompts: list[Prompt]
    item_of: np.ndarray

    @classmethod
    def of(cls, items: Sequence[Any]) -> Flat:
        prompts = [p for item in items for p in item.prompts]
        item_of = np.array([i for i, item in enumerate(items) for _ in item.prompts],
                           dtype=np.int64)
        return cls(prompts, item_of)

    def labelled(self) -> tuple[np.ndarray, np.ndarray]:
        """(indices of labelled prompts, their labels)."""
        return labelled(self.prompts)


def labelled(prompts: Sequence[Prompt]) -> tuple[np.ndarray, np.ndarray]:
    """(indices of labelled prompts, their labels)."""
    idx = np.array([i for i, p in enumerate(prompts) if p.label is not None], dtype=np.int64)
    y = np.array([prompts[i].label for i in idx], dtype=np.int64)
    return idx, y


@dataclass(frozen=True)
class Scored:
    """A task's test prompts as a metric reads them (``Reads.PROMPTS``): binary, the
    labelled prompts' labels and P(positive); multi-class, every prompt's class index and
    class probabilities (n, K)."""

    y: np.ndarray
    scores: np.ndarray
    item_of: np.ndarray
    """The item of each of these prompts."""
    multiclass: bool = False

    @classmethod
    def binary(cls, flat: Flat, probs: np.ndarray) -> Scored:
        idx, y = flat.labelled()
        return cls(y, probs[idx], flat.item_of[idx])

    @classmethod
    def of_classes(cls, fmt: TaskFormat, flat: Flat, classes: Sequence[str],
                   proba: np.ndarray, what: str) -> Scored:
        return cls(class_indices(fmt, flat.prompts, classes, what), proba, flat.item_of,
                   multiclass=True)


def _value(value: Value, name: str) -> IntervalOut:
    if not isinstance(value, IntervalOut):
        raise MetricError(f"the headline's {name} is {value!r}, not an interval")
    return value


def _point(value: Value, name: str) -> float:
    if not isinstance(value, float):
        raise MetricError(f"the headline's {name} is {value!r}, not a number")
    return value


@dataclass
class Headline:
    """A task's headline metrics, metric name -> ``Value`` in ``METRICS`` order, and each
    item's score (its correctness by the format's rule; None: not scored)."""

    values: dict[str, Value]
    item_scores: list[float | None]

    def __getitem__(self, name: str) -> Value:
        if name not in self.values:
            raise MetricError(f"the headline has no {name}: its MetricDef has no compute "
                              "(or does not say what the headline reads for it)")
        return self.values[name]

    @property
    def auroc(self) -> IntervalOut:
        return _value(self["auroc"], "auroc")

    @property
    def accuracy(self) -> IntervalOut:
        return _value(self["accuracy"], "accuracy")

    @property
    def ece(self) -> float:
        return _point(self["ece"], "ece")

    @property
    def brier(self) -> float:
        return _point(self["brier"], "brier")

    @property
    def fpr_at_99tpr(self) -> float | None:
        """None for a multi-class probe (no single multi-class meaning)."""
        value = self["fpr_at_99tpr"]
        return None if value is None else _point(value, "fpr_at_99tpr")

    def printable(self) -> dict[str, float | None]:
        """The numbers a reproducer prints and ``review`` compares (reported_metrics keys)."""
        return {"auroc": self.auroc.value, "auroc_ci_low": self.auroc.ci_low,
                "auroc_ci_high": self.auroc.ci_high, "ece": self.ece, "brier": self.brier,
                "fpr_at_99tpr": self.fpr_at_99tpr, "accuracy": self.accuracy.value}


def _compute(metric: MetricDef, test: Scored, item_scores: Sequence[float | None], *,
             seed: int, n_resamples: int, parts: Sequence[str]) -> Value:
    """One headline metric, as its definition says: None where it has no meaning."""
    assert metric.compute is not None
    if metric.binary_only and test.multiclass:
        return None
    if metric.reads is Reads.ITEMS:
        if metric.weighted is not None:
            return _items_interval(metric, item_scores, seed=seed, n_resamples=n_resamples,
                                   parts=parts)
        return metric.compute(np.array([x for x in item_scores if x is not None],
                                       dtype=np.float64))
    if metric.weighted is not None:
        return metric_interval(metric, test.y, test.scores, item_of=test.item_of, seed=seed,
                               n_resamples=n_resamples, parts=parts)
    return metric.compute(test.y, test.scores)


def headline(task_id: str, fmt: TaskFormat, items: Sequence[Item], scores: np.ndarray, *,
             classes: Sequence[str] | None = None, seed: int = 0,
             n_resamples: int = N_RESAMPLES) -> Headline:
    """The metrics ``definitions.headline_metrics`` lists (AUROC and the item accuracy
    with item-bootstrap CIs, ECE, Brier, FPR at 99% TPR) of per-prompt scores over
    ``items`` (the flattened test prompts, in order): P(positive) (n,), or, for a
    multi-class task's ``classes``, the class probabilities (n, K) in that order.

    The CIs' seeds depend only on ``seed``, ``task_id`` and the metric's name:
    ``submit``, ``train``, ``reeval`` and the notebooks give the same interval for the
    same scores."""
    flat = Flat.of(items)
    if classes is None:
        test = Scored.binary(flat, scores)
        item_scores = fmt.item_scores(items, scores, flat.item_of)
    else:
        test = Scored.of_classes(fmt, flat, classes, scores, f"task {task_id}")
        item_scores = item_correctness(items, scores, test.y)
    values = {d.name: _compute(d, test, item_scores, seed=seed, n_resamples=n_resamples,
                               parts=(task_id, d.name))
              for d in headline_metrics()}
    return Headline(values, item_scores)


def headline_interval(task_id: str, items: Sequence[Item], probs: np.ndarray, *,
                      metric: str = "auroc", seed: int = 0,
                      n_resamples: int = N_RESAMPLES) -> IntervalOut:
    """One headline metric with its item-bootstrap CI (the AUROC unless ``metric`` names
    another) of P(positive) ``probs`` over a binary task's ``items``, seeded as
    ``headline`` seeds it: the one code path of ``submit``, ``train``, ``reeval``, the
    sealed holdouts and the notebooks."""
    test = Scored.binary(Flat.of(items), probs)
    return metric_interval(metric, test.y, test.scores, item_of=test.item_of, seed=seed,
                           n_resamples=n_resamples, parts=(task_id, metric))


def recall_at_control(task_id: str, items: Sequence[Item], probs: np.ndarray,
                      control_probs: np.ndarray, control: ControlSetOut, *, seed: int = 0,
                      n_resamples: int = N_RESAMPLES) -> RecallOut:
    """``recall_at_1pct_fpr`` as its definition computes it: P(positive) ``probs`` over a
    binary task's test ``items`` (the flattened test prompts, in order), the threshold
    from ``control_probs`` (m,), the probe's P(positive) of each prompt of the task's
    control set. The CI resamples the items that hold positives and, independently, the
    control prompts (``metrics.two_sample_bootstrap``), seeded from ``seed``, the task id
    and the metric's name alone, as ``headline`` seeds its metrics."""
    d = METRICS["recall_at_1pct_fpr"]
    assert d.compute is not None and d.weighted is not None
    test = Scored.binary(Flat.of(items), probs)
    pos = test.y == 1
    y, s, c = test.y[pos], test.scores[pos], np.asarray(control_probs, dtype=np.float64)
    value = d.compute(y, s, c)
    iv = interval_out(two_sample_bootstrap(
        value, partial(d.weighted, y, s, c), test.item_of[pos], np.arange(c.size),
        n_resamples=n_resamples, seed=sub_seed(seed, task_id, d.name)))
    threshold = control_threshold(c)
    return RecallOut(**iv.model_dump(), threshold=threshold,
                     control_fpr=float(np.mean(c > threshold)), n_positives=int(y.size),
                     n_control=int(c.size), control=control)


def slice_accuracies(task_id: str, items: Sequence[Item], item_scores: Sequence[float | None],
                     slices: Sequence[str], *, seed: int, n_resamples: int
                     ) -> dict[str, dict[str, SliceOut]]:
    """The item accuracy with its CI of each value of each of ``slices``, seeded from
    ``seed``, the task id and the slice's name and value."""
    return {
        name: {value: SliceOut(n_items=len(vals),
                               accuracy=mean_interval(list(vals), seed=seed,
                                                      n_resamples=n_resamples,
                                                      parts=(task_id, "slice", name, value)))
               for value, vals in groups.items()}
        for name, groups in group_by_slice(items, item_scores, slices).items()}
