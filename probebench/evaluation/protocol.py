"""The fitting protocol shared by ``probebench train``, the control task and baselines.

A ``StandardScaler``, then a logistic regression (L2, Newton-Cholesky solver) over the
inverse regularisation ``C`` in ``C_GRID``, or an MLP (one ReLU hidden layer, Adam)
over the L2 penalty ``alpha`` in ``ALPHA_GRID``. Each grid point is fitted on train
and scored by validation accuracy (P >= 0.5 against the label, per prompt); ties go to
the stronger regularisation; the chosen value is refitted on train + validation. The
validation split is the task's own ``val`` split, else a hashed 20% of the train items
(salt ``probebench-train-val/<task>``), so items never straddle the two.

Multi-class tasks (SentEval without ``positive_class``) follow the SentEval probing
protocol (Conneau et al., 2018): the L2 penalty tuned on validation, and for the MLP
the hidden size too (``HIDDEN_GRID`` x ``ALPHA_GRID``; SentEval also tunes dropout,
which scikit-learn's MLP does not have: ``alpha`` is its only regulariser). The
logistic regression is multinomial.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.formats import TaskData
from probebench.tasks.hygiene import hashed_split

#: hidden units of the MLP probe unless told otherwise
DEFAULT_HIDDEN = 64
C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0)
ALPHA_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)
VAL_FRACTION = 0.2
MAX_ITER = {"linear": 100, "mlp": 400}
#: the MLP hidden sizes the multi-class (SentEval) protocol searches
HIDDEN_GRID = (50, 100, 200)


@dataclass(frozen=True)
class GridPoint:
    value: float
    val_accuracy: float
    #: the MLP's hidden size when the grid searches it (multi-class), else None
    hidden: int | None = None


def grid_of(probe_type: str) -> tuple[float, ...]:
    return C_GRID if probe_type == "linear" else ALPHA_GRID


def train_val_items(data: TaskData) -> tuple[list[Item], list[Item], str]:
    """(train items, validation items, where the validation split came from)."""
    train = list(data.splits.get("train", []))
    if not train:
        raise InputError(f"task {data.spec.id} has no train split to fit a probe on")
    val = list(data.splits.get("val", []))
    if val:
        return train, val, "the task's val split"
    fit_part, held = hashed_split(train, f"probebench-train-val/{data.spec.id}",
                                  VAL_FRACTION)
    if not fit_part or not held:
        raise InputError(f"task {data.spec.id}: its {len(train)} train items are too few to "
                         "hold out a validation split")
    return fit_part, held, f"a hashed {VAL_FRACTION:.0%} of the train items"


def labelled_prompts(items: Sequence[Item]) -> list[Prompt]:
    return [p for item in items for p in item.prompts if p.label is not None]


def labels_of(prompts: Sequence[Prompt], what: str) -> np.ndarray:
    y = np.array([p.label for p in prompts], dtype=np.int64)
    if len(set(y.tolist())) < 2:
        raise InputError(f"the {what} split needs prompts of both labels, found "
                         f"{sorted(set(y.tolist()))}")
    return y


def make_estimator(probe_type: str, value: float, *, seed: int, hidden: int) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    if probe_type == "linear":
        # Newton steps on the exact Hessian: converges in a few iterations where lbfgs
        # needs hundreds at large C (features are few: the hidden size)
        return LogisticRegression(C=value, solver="newton-cholesky",
                                  max_iter=MAX_ITER["linear"])
    return MLPClassifier(hidden_layer_sizes=(hidden,), alpha=value, solver="adam",
                         max_iter=MAX_ITER["mlp"], random_state=seed)


def fit(probe_type: str, value: float, x: np.ndarray, y: np.ndarray, *, seed: int,
        hidden: int) -> tuple[Any, Any]:
    """(probe, scaler): a StandardScaler on ``x``, then the estimator on scaled ``x``."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.preprocessing import StandardScaler

    x64 = np.asarray(x, dtype=np.float64)
    scaler = StandardScaler().fit(x64)
    probe = make_estimator(probe_type, value, seed=seed, hidden=hidden)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        probe.fit(scaler.transform(x64), y)
    return probe, scaler


def class_labels(prompts: Sequence[Prompt], classes: Sequence[str], what: str,
                 class_of: Any) -> np.ndarray:
    """The class label (a string) of each prompt of a multi-class task; the split must
    hold at least two classes, and only the task's."""
    y = np.array([class_of(p) for p in prompts], dtype=object)
    unknown = sorted({str(c) for c in y.tolist()} - set(classes))
    if unknown:
        raise InputError(f"the {what} split has prompts of classes {unknown} that are not "
                         f"the task's {list(classes)}")
    if len(set(y.tolist())) < 2:
        raise InputError(f"the {what} split needs prompts of at least two classes, found "
                         f"{sorted(set(y.tolist()))}")
    return np.asarray(y.astype(str))


def search(probe_type: str, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray,
           y_val: np.ndarray, *, seed: int, hidden: int) -> tuple[list[GridPoint], float]:
    """Every grid point fitted on train and scored on validation; (points, chosen)."""
    points, best = search_grid(probe_type, x_train, y_train, x_val, y_val, seed=seed,
                               hiddens=(hidden,))
    return points, best.value


def search_grid(probe_type: str, x_train: np.ndarray, y_train: np.ndarray,
                x_val: np.ndarray, y_val: np.ndarray, *, seed: int,
                hiddens: Sequence[int]) -> tuple[list[GridPoint], GridPoint]:
    """Every (penalty, hidden size) fitted on train and scored on validation, penalties
    strongest first and sizes smallest first within each; (points, the first best).
    A linear probe ignores ``hiddens``; one size is recorded as None."""
    sizes = list(hiddens) if probe_type == "mlp" else [hiddens[0]]
    points = []
    for value in grid_of(probe_type):
        for size in sizes:
            probe, scaler = fit(probe_type, value, x_train, y_train, seed=seed, hidden=size)
            pred = probe.predict(scaler.transform(np.asarray(x_val, dtype=np.float64)))
            points.append(GridPoint(value, float(np.mean(pred == y_val)),
                                    size if len(sizes) > 1 else None))
    best = max(points, key=lambda p: p.val_accuracy)  # first maximum: strongest penalty
    return points, best


def fit_protocol(probe_type: str, x_train: np.ndarray, y_train: np.ndarray,
                 x_val: np.ndarray, y_val: np.ndarray, *, seed: int, hidden: int
                 ) -> tuple[Any, Any, float]:
    """The whole protocol: grid on validation, refit on train + validation;
    (probe, scaler, chosen value)."""
    _, chosen = search(probe_type, x_train, y_train, x_val, y_val, seed=seed, hidden=hidden)
    probe, scaler = fit(probe_type, chosen, np.concatenate([x_train, x_val]),
                        np.concatenate([y_train, y_val]), seed=seed, hidden=hidden)
    return probe, scaler, chosen


__all__ = ["ALPHA_GRID", "C_GRID", "DEFAULT_HIDDEN", "HIDDEN_GRID", "MAX_ITER", "VAL_FRACTION",
           "GridPoint", "class_labels", "fit", "fit_protocol", "grid_of", "labelled_prompts",
           "labels_of", "make_estimator", "search", "search_grid", "train_val_items"]
