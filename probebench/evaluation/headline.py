"""The headline metrics of a probe on a task's test split, shared by ``submit``,
``train`` and the reproducer notebooks so that all three print the same numbers.

Seeds are derived per metric from the run's seed and the task id (``sub_seed``), so a
metric's bootstrap does not depend on which other metrics or tasks ran before it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probebench.evaluation.metrics import (
    N_RESAMPLES,
    Interval,
    bootstrap_auroc,
    bootstrap_mean,
    brier_score_loss,
    expected_calibration_error,
    fpr_at_tpr_error,
)
from probebench.evaluation.results import IntervalOut
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.formats import TaskFormat


def sub_seed(seed: int, *parts: str) -> int:
    digest = hashlib.sha256("/".join([str(seed), *parts]).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def interval_out(iv: Interval) -> IntervalOut:
    def clean(x: float) -> float | None:
        return None if not np.isfinite(x) else float(x)
    return IntervalOut(value=clean(iv.value), ci_low=clean(iv.low), ci_high=clean(iv.high),
                       resamples=iv.resamples, dropped=iv.dropped)


def auroc_interval(y: np.ndarray, s: np.ndarray, item_of: np.ndarray, *, seed: int,
                   n_resamples: int, parts: Sequence[str]) -> IntervalOut:
    """AUROC with its item-bootstrap 95% CI (``item_of``: any item labels)."""
    _, dense = np.unique(item_of, return_inverse=True)
    return interval_out(bootstrap_auroc(y, s, dense, n_resamples=n_resamples,
                                        seed=sub_seed(seed, *parts)))


def mean_interval(values: Sequence[float | None], *, seed: int, n_resamples: int,
                  parts: Sequence[str]) -> IntervalOut:
    """Mean item correctness with its bootstrap CI; None items are left out."""
    v = np.array([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        return IntervalOut(value=None, ci_low=None, ci_high=None, resamples=0, dropped=0)
    return interval_out(bootstrap_mean(v, n_resamples=n_resamples,
                                       seed=sub_seed(seed, *parts)))


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


@dataclass
class Headline:
    auroc: IntervalOut
    accuracy: IntervalOut
    item_scores: list[float | None]
    ece: float
    brier: float
    #: None for a multi-class probe (no single multi-class meaning)
    fpr_at_99tpr: float | None

    def printable(self) -> dict[str, float | None]:
        """The numbers a reproducer prints and ``review`` compares (reported_metrics keys)."""
        return {"auroc": self.auroc.value, "auroc_ci_low": self.auroc.ci_low,
                "auroc_ci_high": self.auroc.ci_high, "ece": self.ece, "brier": self.brier,
                "fpr_at_99tpr": self.fpr_at_99tpr, "accuracy": self.accuracy.value}


def task_auroc(task_id: str, items: Sequence[Item], probs: np.ndarray, *, seed: int = 0,
               n_resamples: int = N_RESAMPLES) -> IntervalOut:
    """A task's AUROC with its item-bootstrap CI, seeded from ``seed`` and the task id
    alone: the one code path of ``submit``, ``train``, ``reeval`` and the notebooks."""
    flat = Flat.of(items)
    idx, y = flat.labelled()
    return auroc_interval(y, probs[idx], flat.item_of[idx], seed=seed,
                          n_resamples=n_resamples, parts=(task_id, "auroc"))


def headline(task_id: str, fmt: TaskFormat, items: Sequence[Item], probs: np.ndarray, *,
             seed: int = 0, n_resamples: int = N_RESAMPLES) -> Headline:
    """AUROC (+CI), item accuracy (+CI), ECE, Brier and FPR@99%TPR of per-prompt
    probabilities ``probs`` over ``items`` (the flattened test prompts, in order).

    The CIs' seeds depend only on ``seed`` and ``task_id``: ``submit``, ``train``,
    ``reeval`` and the notebooks give the same interval for the same scores."""
    flat = Flat.of(items)
    idx, y = flat.labelled()
    auroc = task_auroc(task_id, items, probs, seed=seed, n_resamples=n_resamples)
    scores = fmt.item_scores(items, probs, flat.item_of)
    accuracy = mean_interval(scores, seed=seed, n_resamples=n_resamples,
                             parts=(task_id, "accuracy"))
    return Headline(auroc=auroc, accuracy=accuracy, item_scores=scores,
                    ece=expected_calibration_error(y, probs[idx]),
                    brier=brier_score_loss(y, probs[idx]),
                    fpr_at_99tpr=fpr_at_tpr_error(y, probs[idx]))
