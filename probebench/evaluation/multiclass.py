"""Multi-class probes (a SentEval task without ``positive_class``): accuracy and
one-vs-rest macro AUROC, with item bootstraps.

A multi-class probe outputs one probability per class, in the task's sorted class order
(``TaskFormat.classes``). Definitions:

* accuracy: the most probable class is the prompt's class (ties: the first class in
  order); an item's correctness is the share of its prompts that are right.
* macro AUROC: the mean over classes k of the AUROC of P(k) for "class k" against
  "any other class" (one-vs-rest), as ``sklearn.metrics.roc_auc_score(y, P,
  multi_class="ovr", average="macro")`` computes it.
* ECE: top-label calibration: the binary ECE (15 bins) of "the predicted class is
  right" against the predicted class's probability.
* Brier: the mean over prompts of the squared distance between P and the one-hot class
  (sum over classes; 0 to 2).
* FPR at 99% TPR has no single multi-class meaning: it is left out (None).

The bootstrap resamples items exactly as the binary metrics do
(``probebench.evaluation.metrics``); a resample missing a class has no macro AUROC and
is dropped and counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probebench.errors import InputError
from probebench.evaluation.headline import (
    Flat,
    Headline,
    interval_out,
    mean_interval,
    sub_seed,
)
from probebench.evaluation.metrics import (
    N_RESAMPLES,
    Interval,
    MetricError,
    expected_calibration_error,
    resample_counts,
    weighted_auroc,
)
from probebench.evaluation.metrics import _interval as percentile_interval
from probebench.evaluation.results import IntervalOut
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.formats import TaskData, TaskFormat


def task_classes(data: TaskData) -> tuple[str, ...] | None:
    """The sorted classes of a multi-class task; None for a binary one."""
    return data.format.classes(data)


def class_indices(fmt: TaskFormat, prompts: Sequence[Prompt], classes: Sequence[str],
                  what: str) -> np.ndarray:
    """(n,) index into ``classes`` of each prompt's class; an error names a prompt whose
    class is missing or not among ``classes``."""
    index = {c: i for i, c in enumerate(classes)}
    out = np.empty(len(prompts), dtype=np.int64)
    for n, prompt in enumerate(prompts):
        cls = fmt.prompt_class(prompt)
        if cls not in index:
            raise InputError(f"{what} prompt {prompt.label_name}: class {cls!r} is not one of "
                             f"the task's classes {list(classes)}")
        out[n] = index[cls]
    return out


def _check(y: np.ndarray, proba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y, dtype=np.int64)
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or y.ndim != 1 or p.shape[0] != y.shape[0] or p.shape[1] < 3:
        raise MetricError(f"y {y.shape} and proba {p.shape} must be (n,) and (n, K >= 3)")
    if y.size and (y.min() < 0 or y.max() >= p.shape[1]):
        raise MetricError(f"y must hold class indices 0..{p.shape[1] - 1}")
    if not np.isfinite(p).all():
        raise MetricError("proba holds NaN or infinite values")
    return y, p


def macro_auroc_score(y: np.ndarray, proba: np.ndarray) -> float:
    """One-vs-rest macro AUROC of class probabilities ``proba`` (n, K) against class
    indices ``y`` (n,); every class must occur.

    >>> import numpy as np
    >>> y = np.array([0, 1, 2, 2])
    >>> p = np.array([[.8, .1, .1], [.2, .7, .1], [.1, .2, .7], [.3, .3, .4]])
    >>> float(macro_auroc_score(y, p))
    1.0
    """
    y, p = _check(y, proba)
    per_class = _per_class(y, p, np.ones((1, y.size)))
    value = float(per_class.mean(axis=0)[0])
    if not np.isfinite(value):
        missing = sorted(set(range(p.shape[1])) - set(y.tolist()))
        raise MetricError(f"macro AUROC needs every class; classes {missing} have no prompt")
    return value


def _per_class(y: np.ndarray, p: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(K, B) one-vs-rest AUROC of each class under each weight row (NaN: a side empty)."""
    return np.stack([weighted_auroc((y == k).astype(np.int64), p[:, k], weights)
                     for k in range(p.shape[1])])


def bootstrap_macro_auroc(y: np.ndarray, proba: np.ndarray, item_of: np.ndarray, *,
                          n_resamples: int = N_RESAMPLES, seed: int = 0) -> Interval:
    """Macro AUROC with a 95% percentile interval from resampling items."""
    y, p = _check(y, proba)
    value = macro_auroc_score(y, p)
    _, dense = np.unique(np.asarray(item_of), return_inverse=True)
    counts = resample_counts(int(dense.max()) + 1, n_resamples, np.random.default_rng(seed))
    stats = _per_class(y, p, counts[:, dense]).mean(axis=0)  # NaN when a class is absent
    return percentile_interval(value, stats)


def macro_auroc_interval(y: np.ndarray, proba: np.ndarray, item_of: np.ndarray, *,
                         seed: int, n_resamples: int, parts: Sequence[str]) -> IntervalOut:
    """Macro AUROC with its item-bootstrap 95% CI, seeded like the binary AUROC."""
    return interval_out(bootstrap_macro_auroc(y, proba, item_of, n_resamples=n_resamples,
                                              seed=sub_seed(seed, *parts)))


def top_label_calibration_error(y: np.ndarray, proba: np.ndarray) -> float:
    """Top-label ECE: the binary ECE of "the argmax is right" against its probability."""
    y, p = _check(y, proba)
    pred = np.argmax(p, axis=1)
    return expected_calibration_error((pred == y).astype(np.int64), p.max(axis=1))


def multiclass_brier_loss(y: np.ndarray, proba: np.ndarray) -> float:
    """Mean over prompts of sum_k (P_k - [y == k])^2 (0 to 2)."""
    y, p = _check(y, proba)
    onehot = np.eye(p.shape[1])[y]
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))


def item_correctness(items: Sequence[Item], proba: np.ndarray, y: np.ndarray
                     ) -> list[float | None]:
    """Each item's share of prompts whose most probable class is right."""
    flat = Flat.of(items)
    right = (np.argmax(proba, axis=1) == y).astype(np.float64)
    return [float(right[flat.item_of == i].mean()) for i in range(len(items))]


def multiclass_headline(task_id: str, fmt: TaskFormat, items: Sequence[Item],
                        classes: Sequence[str], proba: np.ndarray, *, seed: int = 0,
                        n_resamples: int = N_RESAMPLES) -> Headline:
    """Macro AUROC (+CI), item accuracy (+CI), top-label ECE and Brier of class
    probabilities ``proba`` (n, K) over ``items``' flattened test prompts; seeded from
    ``seed`` and ``task_id`` alone, as the binary ``headline``."""
    flat = Flat.of(items)
    y = class_indices(fmt, flat.prompts, classes, f"task {task_id}")
    auroc = macro_auroc_interval(y, proba, flat.item_of, seed=seed, n_resamples=n_resamples,
                                 parts=(task_id, "auroc"))
    scores = item_correctness(items, proba, y)
    accuracy = mean_interval(scores, seed=seed, n_resamples=n_resamples,
                             parts=(task_id, "accuracy"))
    return Headline(auroc=auroc, accuracy=accuracy, item_scores=scores,
                    ece=top_label_calibration_error(y, proba),
                    brier=multiclass_brier_loss(y, proba), fpr_at_99tpr=None)


# --- baselines -------------------------------------------------------------------------

def majority_class_proba(y_train: np.ndarray, n_test: int, n_classes: int) -> np.ndarray:
    """Every test prompt gets the train split's class frequencies (argmax: the most
    frequent class; macro AUROC 0.5)."""
    freq = np.bincount(y_train, minlength=n_classes).astype(np.float64)
    return np.tile(freq / freq.sum(), (n_test, 1))


def length_class_proba(train: Sequence[Prompt], y_train: np.ndarray,
                       test: Sequence[Prompt], n_classes: int, seed: int) -> np.ndarray:
    """A multinomial logistic regression on the prompt's length in characters alone."""
    from sklearn.linear_model import LogisticRegression

    x = np.array([[len(p.text)] for p in train], dtype=np.float64)
    mean, std = x.mean(), x.std() or 1.0
    model = LogisticRegression(random_state=seed).fit((x - mean) / std, y_train)
    x_test = np.array([[len(p.text)] for p in test], dtype=np.float64)
    out = np.zeros((len(test), n_classes))
    out[:, model.classes_] = model.predict_proba((x_test - mean) / std)
    return out


__all__ = ["bootstrap_macro_auroc", "class_indices", "item_correctness",
           "length_class_proba", "macro_auroc_interval", "macro_auroc_score",
           "majority_class_proba", "multiclass_brier_loss", "multiclass_headline",
           "task_classes", "top_label_calibration_error"]
