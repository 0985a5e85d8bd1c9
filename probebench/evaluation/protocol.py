"""The fitting protocol shared by ``probebench train``, the control task and baselines.

A ``StandardScaler``, then a logistic regression (L2, Newton-Cholesky solver) over the
inverse regularisation ``C`` in ``C_GRID``, or an MLP (one ReLU hidden layer) over the
L2 penalty ``alpha`` in ``ALPHA_GRID``. Each grid point is fitted on train and scored on
validation; ``choose`` picks the point of lowest **validation log-loss** (the mean
negative log-probability of each prompt's label), log-losses within ``LOG_LOSS_TIE`` of
the lowest counting as tied and ties going to the stronger regularisation (then the
smaller hidden size); the chosen value is refitted on train + validation. Validation
accuracy is recorded beside it. The validation split is the task's own ``val`` split,
else a hashed 20% of the train items (salt ``probebench-train-val/<task>``), so items
never straddle the two.

Why log-loss and not accuracy (SentEval's criterion): the probe's output is a
probability, and the metrics read it as one (AUROC, ECE, Brier); accuracy only reads its
side of 0.5. On an easy task every grid point reaches validation accuracy 1.0, and the
old tie rule chose the strongest penalty, squeezing the test probabilities into [0.12,
0.90] (ECE 0.22 at AUROC 1.0); and on SyntaxGym's validation splits of 4 to 16 prompts
accuracy moves in steps of 1/16 or coarser, so the tie rule, not the data, decided.
Log-loss is a proper scoring rule, continuous, and the one criterion a skeptic can
re-derive from the stored grid.

Across thread counts and CPUs (the contract of
``probebench.evaluation.reproducibility``): every fit, and every prediction of a fitted
probe (``predict``), runs in float64 from the seeded initialisation on one BLAS and
OpenMP thread (``FIT_THREADS``, ``fit_threads``: the same numbers whatever the caller's
thread limits and the machine's load, several times faster on the probes' small
matrices), so on one machine type (one CPU, one kernel set) the same activations give
the same fit, bit for bit. A linear probe's objective is strictly convex: float rounding
of the activations between machines (relative 1e-7 to 1e-6) moves its optimum, and its
probabilities, by at most about 5e-4 (C = 10, verb grammar), so a re-trained linear
probe's decisions reproduce but for a prompt that close to 0.5. An MLP's is not:
relative 1e-6 on the activations ends the fit in another minimum (measured at the
verb-grammar MLP entry's site, 268 test prompts: Adam moved test probabilities by up to
0.07 to 0.23 and flipped 3 to 5 decisions; L-BFGS, even run to convergence, by up to 0.3
to 0.98 with 4 to 16 flips; full-batch gradient descent by up to 0.1, 4 flips), so
re-trained MLP numbers carry a spread that no solver removes, and the contract compares
them within ``RETRAINED_TOLERANCE``.

Multi-class tasks (SentEval without ``positive_class``) follow the SentEval probing
protocol (Conneau et al., 2018): the L2 penalty tuned on validation, and for the MLP
the hidden size too (``HIDDEN_GRID`` x ``ALPHA_GRID``; SentEval also tunes dropout,
which scikit-learn's MLP does not have: ``alpha`` is its only regulariser), chosen by the
same rule. The logistic regression is multinomial.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families import TaskData
from probebench.tasks.hygiene import hashed_split

#: hidden units of the MLP probe unless told otherwise
DEFAULT_HIDDEN = 64
C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0)
ALPHA_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)
VAL_FRACTION = 0.2
MAX_ITER = {"linear": 100, "mlp": 400}
#: validation log-losses (nats per prompt) within this of the lowest count as tied
LOG_LOSS_TIE = 1e-9
#: BLAS and OpenMP threads a fit runs on: the results are the same on any number, and
#: the probes' matrices are small enough that more threads only wait for each other
#: (measured on 2 busy cores: an MLP fit took 2.2 s of CPU on one thread, 11 to 15 s on
#: two)
FIT_THREADS = 1
#: the MLP hidden sizes the multi-class (SentEval) protocol searches
HIDDEN_GRID = (50, 100, 200)


@dataclass(frozen=True)
class GridPoint:
    value: float
    val_accuracy: float
    #: the MLP's hidden size when the grid searches it (multi-class), else None
    hidden: int | None = None
    #: the mean negative log-probability of each validation prompt's label (``choose``)
    val_log_loss: float = float("nan")


def grid_of(probe_type: str) -> tuple[float, ...]:
    return C_GRID if probe_type == "linear" else ALPHA_GRID


def protocol_record() -> dict[str, object]:
    """The protocol's constants, as a cache key of a fit records them."""
    return {"c_grid": list(C_GRID), "alpha_grid": list(ALPHA_GRID),
            "max_iter": dict(MAX_ITER), "log_loss_tie": LOG_LOSS_TIE,
            "hidden_grid": list(HIDDEN_GRID), "val_fraction": VAL_FRACTION}


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


def fit_threads() -> Any:
    """A context in which BLAS and OpenMP run on ``FIT_THREADS`` threads, whatever the
    caller's limits: every fit and every prediction of a fitted probe runs in one, so
    its numbers do not depend on the thread count or on how busy the machine is."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=FIT_THREADS)


def fit(probe_type: str, value: float, x: np.ndarray, y: np.ndarray, *, seed: int,
        hidden: int) -> tuple[Any, Any]:
    """(probe, scaler): a StandardScaler on ``x``, then the estimator on scaled ``x``,
    fitted in float64 on one BLAS and OpenMP thread (``FIT_THREADS``)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.preprocessing import StandardScaler

    x64 = np.asarray(x, dtype=np.float64)
    with warnings.catch_warnings(), fit_threads():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scaler = StandardScaler().fit(x64)
        probe = make_estimator(probe_type, value, seed=seed, hidden=hidden)
        probe.fit(scaler.transform(x64), y)
    return probe, scaler


def predict(probe: Any, scaler: Any, x: np.ndarray, *, proba: bool = False) -> np.ndarray:
    """A fitted probe's decisions (or, with ``proba``, its class probabilities) on ``x``
    in float64, on ``FIT_THREADS`` threads as the fit ran."""
    with fit_threads():
        xs = scaler.transform(np.asarray(x, dtype=np.float64))
        return np.asarray(probe.predict_proba(xs) if proba else probe.predict(xs))


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


def log_loss(probe: Any, x: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-probability the fitted ``probe`` gives each row's label ``y``
    (a label it never saw gets probability 0); probabilities are clipped at 1e-15."""
    proba = np.asarray(probe.predict_proba(x), dtype=np.float64)
    classes = list(probe.classes_)
    col = np.array([classes.index(v) if v in classes else -1 for v in y.tolist()])
    p = np.where(col >= 0, proba[np.arange(len(y)), np.maximum(col, 0)], 0.0)
    return float(-np.mean(np.log(np.clip(p, 1e-15, 1.0))))


def choose(points: Sequence[GridPoint]) -> GridPoint:
    """The protocol's choice: the lowest validation log-loss; points within
    ``LOG_LOSS_TIE`` of it tie, and the first of them wins (``points`` run from the
    strongest penalty, and the smallest hidden size within each)."""
    if not points:
        raise InputError("no grid point to choose from")
    lowest = min(p.val_log_loss for p in points)
    return next(p for p in points if p.val_log_loss <= lowest + LOG_LOSS_TIE)


def search(probe_type: str, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray,
           y_val: np.ndarray, *, seed: int, hidden: int) -> tuple[list[GridPoint], float]:
    """Every grid point fitted on train and scored on validation; (points, chosen)."""
    points, best = search_grid(probe_type, x_train, y_train, x_val, y_val, seed=seed,
                               hiddens=(hidden,))
    return points, best.value


def _grid_point(probe_type: str, value: float, size: int, x_train: np.ndarray,
                y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray, seed: int,
                record_size: bool) -> GridPoint:
    """One grid point fitted on train and scored on validation (a worker's job)."""
    probe, scaler = fit(probe_type, value, x_train, y_train, seed=seed, hidden=size)
    with fit_threads():
        xs = scaler.transform(np.asarray(x_val, dtype=np.float64))
        pred = probe.predict(xs)
        loss = log_loss(probe, xs, y_val)
    return GridPoint(value, float(np.mean(pred == y_val)), size if record_size else None,
                     loss)


def fit_workers(probe_type: str, jobs: int) -> int:
    """Processes that run ``jobs`` independent fits: one per usable core (at most one a
    fit) for the MLP, whose Adam epochs are the protocol's cost; a linear fit takes
    milliseconds and runs in this process. Each fit runs on ``FIT_THREADS`` threads
    wherever it runs, so the numbers are those of a sequential run."""
    if probe_type != "mlp" or jobs < 2:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, jobs))


def run_fits(probe_type: str, calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]
             ) -> list[Any]:
    """``[f(*args) for f, args in calls]``, in worker processes when ``fit_workers``
    says so (loky's reusable pool: spawned, not forked, so no OpenMP state is copied)."""
    workers = fit_workers(probe_type, len(calls))
    if workers == 1:
        return [f(*args) for f, args in calls]
    from joblib import Parallel, delayed

    out: list[Any] = Parallel(n_jobs=workers, backend="loky")(
        delayed(f)(*args) for f, args in calls)
    return out


def search_grids(probe_type: str, x_train: np.ndarray, x_val: np.ndarray,
                 labels: Sequence[tuple[np.ndarray, np.ndarray]], *, seed: int,
                 hiddens: Sequence[int]) -> list[tuple[list[GridPoint], GridPoint]]:
    """``search_grid`` for each (train labels, validation labels) of ``labels`` over the
    same activations, every fit of every grid in one pool of workers."""
    sizes = list(hiddens) if probe_type == "mlp" else [hiddens[0]]
    grid = [(value, size) for value in grid_of(probe_type) for size in sizes]
    calls = [(_grid_point, (probe_type, value, size, x_train, y_train, x_val, y_val, seed,
                            len(sizes) > 1))
             for y_train, y_val in labels for value, size in grid]
    done = run_fits(probe_type, calls)
    out = []
    for k in range(len(labels)):
        points = list(done[k * len(grid):(k + 1) * len(grid)])
        out.append((points, choose(points)))
    return out


def search_grid(probe_type: str, x_train: np.ndarray, y_train: np.ndarray,
                x_val: np.ndarray, y_val: np.ndarray, *, seed: int,
                hiddens: Sequence[int]) -> tuple[list[GridPoint], GridPoint]:
    """Every (penalty, hidden size) fitted on train and scored on validation, penalties
    strongest first and sizes smallest first within each; (points, ``choose``'s pick).
    A linear probe ignores ``hiddens``; one size is recorded as None."""
    return search_grids(probe_type, x_train, x_val, [(y_train, y_val)], seed=seed,
                        hiddens=hiddens)[0]


def fit_protocol(probe_type: str, x_train: np.ndarray, y_train: np.ndarray,
                 x_val: np.ndarray, y_val: np.ndarray, *, seed: int, hidden: int
                 ) -> tuple[Any, Any, float]:
    """The whole protocol: grid on validation, refit on train + validation;
    (probe, scaler, chosen value)."""
    return fit_protocols(probe_type, x_train, x_val, [(y_train, y_val)], seed=seed,
                         hidden=hidden)[0]


def _refit(probe_type: str, value: float, x: np.ndarray, y: np.ndarray, seed: int,
           hidden: int) -> tuple[Any, Any]:
    return fit(probe_type, value, x, y, seed=seed, hidden=hidden)


def fit_protocols(probe_type: str, x_train: np.ndarray, x_val: np.ndarray,
                  labels: Sequence[tuple[np.ndarray, np.ndarray]], *, seed: int,
                  hidden: int) -> list[tuple[Any, Any, float]]:
    """``fit_protocol`` for each (train labels, validation labels) of ``labels`` over
    the same activations (selectivity: the task's and the control's), the grids' fits
    and then the refits each in one pool of workers (``run_fits``)."""
    searched = search_grids(probe_type, x_train, x_val, labels, seed=seed, hiddens=(hidden,))
    x_all = np.concatenate([x_train, x_val])
    refits = run_fits(probe_type, [
        (_refit, (probe_type, best.value, x_all, np.concatenate([y_train, y_val]), seed,
                  hidden))
        for (_, best), (y_train, y_val) in zip(searched, labels, strict=True)])
    return [(probe, scaler, best.value) for (probe, scaler), (_, best)
            in zip(refits, searched, strict=True)]


__all__ = [
    "ALPHA_GRID",
    "C_GRID",
    "DEFAULT_HIDDEN",
    "FIT_THREADS",
    "HIDDEN_GRID",
    "LOG_LOSS_TIE",
    "MAX_ITER",
    "VAL_FRACTION",
    "GridPoint",
    "choose",
    "class_labels",
    "fit",
    "fit_protocol",
    "fit_protocols",
    "fit_threads",
    "fit_workers",
    "grid_of",
    "labelled_prompts",
    "labels_of",
    "log_loss",
    "make_estimator",
    "predict",
    "protocol_record",
    "run_fits",
    "search",
    "search_grid",
    "search_grids",
    "train_val_items",
]
