"""``probebench train``: fit a probe on a registered task with the SentEval protocol.

1. Activations of the task's train, validation and test prompts at one site, through
   the activation cache (the test prompts are keyed exactly as ``submit`` keys them, so
   a later ``submit`` reuses them).
2. The validation split is the task's own ``val`` split when it has one, else a
   deterministic hashed 20% of the train items (salt ``probebench-train-val/<task>``),
   so items never straddle the two.
3. A small grid, each point fitted on train and scored on validation: logistic
   regression (L2, Newton-Cholesky solver) over the inverse regularisation ``C`` in
   ``C_GRID``; an MLP (one ReLU hidden layer, Adam) over the L2 penalty
   ``alpha`` in ``ALPHA_GRID``; or (``method="mass-mean"``, linear only) the difference
   of the class means with a one-dimensional calibration over its ``C`` in
   ``CALIBRATION_C_GRID`` (``probebench.train.massmean``). The point of lowest
   validation log-loss is chosen (``probebench.evaluation.protocol.choose``: log-losses
   within ``LOG_LOSS_TIE`` tie, and ties go to the stronger regularisation); validation
   accuracy is shown beside it. A value chosen at either end of its grid (C = 10 is the
   common one: nearly separable activations) is named (``grid_edges``): the best value
   may lie beyond the grid, and ``probebench train`` warns on stderr.
   The control task of ``submit``'s selectivity is fitted by the same code.
4. Refit on train + validation with the chosen value; a ``StandardScaler`` is fitted on
   the same data first.
5. The test split is scored with the same code as ``submit`` (``headline``), so the
   reported metrics are the numbers ``submit`` will reproduce.

A multi-class task (SentEval without ``positive_class``) fits every prompt against its
class with the SentEval protocol (``probebench.evaluation.protocol``: a multinomial
logistic regression over ``C``, or an MLP over ``alpha`` x hidden size in
``HIDDEN_GRID``), and is scored by accuracy and macro AUROC
(``probebench.evaluation.multiclass``).

Everything is seeded: the same task files, model, site, probe type and seed give the
same weights and the same files (``write_artifact``). Tasks come from a ``TaskCatalog``
(default: the packaged tasks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

import numpy as np

from probebench.artifact.meta import EVALUABLE_PROBE_TYPES
from probebench.errors import InputError
from probebench.evaluation.headline import Flat, Headline, headline
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.evaluation.protocol import (
    ALPHA_GRID,
    C_GRID,
    DEFAULT_HIDDEN,
    HIDDEN_GRID,
    MAX_ITER,
    VAL_FRACTION,
    GridPoint,
    class_labels,
    fit,
    grid_of,
    labelled_prompts,
    labels_of,
    make_estimator,
    search,
    search_grid,
    train_val_items,
)
from probebench.models.builtin import DEFAULT_MODEL
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import TaskData
from probebench.train.massmean import (
    CALIBRATION_C_GRID,
    DEFAULT_METHOD,
    METHODS,
    fit_mass_mean,
    search_mass_mean,
)

#: the probe types ``train`` fits (those ``submit`` can re-evaluate)
PROBE_TYPES = EVALUABLE_PROBE_TYPES


@dataclass(frozen=True)
class TrainConfig:
    """What to fit: a probe of ``probe_type`` on ``task`` at ``site`` of ``model``.

    ``kind`` is the old name of ``probe_type``, still accepted because published
    reproducer notebooks (hash-pinned, never edited) call ``TrainConfig(kind=...)``.
    ``method`` says how a linear probe is fitted: ``"logistic"`` (a logistic regression)
    or ``"mass-mean"`` (the difference of the class means, calibrated:
    ``probebench.train.massmean``); an MLP is always fitted by its own optimiser.
    """

    task: str
    site: Site
    model: str = DEFAULT_MODEL
    probe_type: str = "linear"
    seed: int = 0
    hidden: int = DEFAULT_HIDDEN
    bootstrap: int = N_RESAMPLES
    device: str = "auto"
    #: the model's precision (auto: float32, the reference) and batch budget (None:
    #: sized from the device)
    dtype: str = "auto"
    batch_tokens: int | None = None
    max_batch_size: int | None = None
    #: how a linear probe is fitted: logistic or mass-mean (``METHODS``)
    method: str = DEFAULT_METHOD
    kind: InitVar[str | None] = None

    def __post_init__(self, kind: str | None) -> None:
        if kind is not None:
            object.__setattr__(self, "probe_type", kind)
        if self.probe_type not in PROBE_TYPES:
            raise InputError(f"--probe-type must be one of {', '.join(PROBE_TYPES)}, found "
                             f"{self.probe_type!r}")
        if self.hidden < 1:
            raise InputError(f"--hidden must be at least 1, found {self.hidden}")
        if self.method not in METHODS:
            raise InputError(f"--method must be one of {', '.join(METHODS)}, found "
                             f"{self.method!r}")
        if self.method == "mass-mean" and self.probe_type != "linear":
            raise InputError(f"--method mass-mean fits a linear probe (one direction: the "
                             f"difference of the class means), not --probe-type "
                             f"{self.probe_type}; use --probe-type linear, or --method "
                             f"logistic for an {self.probe_type} probe")

    @property
    def grid_name(self) -> str:
        """The hyperparameter the grid searches: ``C`` (linear; for a mass-mean probe,
        the inverse L2 penalty of its calibration) or ``alpha`` (MLP)."""
        return "C" if self.probe_type == "linear" else "alpha"

    @property
    def grid(self) -> tuple[float, ...]:
        """The values of ``grid_name`` tried, each scored on the validation split."""
        if self.method == "mass-mean":
            return CALIBRATION_C_GRID
        return grid_of(self.probe_type)


#: what each end of a grid means, per hyper-parameter: (lowest value, highest value)
_ENDS = {"C": ("the strongest regularisation", "the weakest regularisation"),
         "alpha": ("the weakest regularisation", "the strongest regularisation"),
         "hidden": ("the smallest hidden size", "the largest hidden size")}
#: where each grid is defined (no option of ``probebench train`` widens one)
_GRID_HOME = {("C", "logistic"): "C_GRID in probebench/evaluation/protocol.py",
              ("C", "mass-mean"): "CALIBRATION_C_GRID in probebench/train/massmean.py",
              ("alpha", "logistic"): "ALPHA_GRID in probebench/evaluation/protocol.py",
              ("hidden", "logistic"): "HIDDEN_GRID in probebench/evaluation/protocol.py"}


@dataclass(frozen=True)
class GridEdge:
    """A hyper-parameter chosen on validation at one end of the grid it was chosen from:
    the best value may lie beyond the grid, so the choice is named, never changed."""

    #: the hyper-parameter: ``C``, ``alpha`` or ``hidden``
    name: str
    #: the value chosen
    value: float
    #: every value of the grid, in ascending order
    grid: tuple[float, ...]
    #: which end: ``"lowest"`` or ``"highest"``
    end: str
    #: how a linear probe was fitted (``TrainConfig.method``): says which grid it was
    method: str = DEFAULT_METHOD

    @property
    def meaning(self) -> str:
        """What this end of the grid is, e.g. "the weakest regularisation"."""
        low, high = _ENDS.get(self.name, ("the lowest value", "the highest value"))
        return low if self.end == "lowest" else high

    @property
    def grid_text(self) -> str:
        """The grid as shown: ``0.001, 0.01, 0.1, 1, 10``."""
        return ", ".join(f"{v:g}" for v in self.grid)

    def describe(self) -> str:
        """One line: the value, the end of which grid, and what that end means."""
        return (f"{self.name} = {self.value:g} is the {self.end} value of its grid "
                f"({self.grid_text}), {self.meaning} tried")

    def advice(self) -> str:
        """What to do: the grid is fixed by the protocol, so say where it is defined and
        how to look beyond it."""
        home = _GRID_HOME.get((self.name, self.method if self.name == "C" else "logistic"),
                              "probebench/evaluation/protocol.py")
        return (f"the best value on validation may lie beyond the grid; no option of "
                f"probebench train widens it (it is {home}): to look further, fit "
                f"probebench.evaluation.protocol.fit over wider values on the same "
                f"activations and compare their validation log-loss")


def grid_edges(grid_name: str, points: Sequence[GridPoint], chosen: float,
               chosen_hidden: int | None = None, *,
               method: str = DEFAULT_METHOD) -> list[GridEdge]:
    """The hyper-parameters chosen at an end of their grid (``points``, as
    ``grid_search`` returns them): ``grid_name`` (``C`` or ``alpha``) at ``chosen``, and
    the hidden size at ``chosen_hidden`` where the grid searched it. A grid of one value
    has no edge. Empty when every choice is inside its grid.

    >>> pts = [GridPoint(c, 1.0) for c in (0.1, 1.0, 10.0)]
    >>> [e.describe() for e in grid_edges("C", pts, 10.0)]
    ['C = 10 is the highest value of its grid (0.1, 1, 10), the weakest regularisation tried']
    >>> grid_edges("C", pts, 1.0)
    []
    """
    searched: list[tuple[str, float, list[float]]] = [
        (grid_name, chosen, [p.value for p in points])]
    if chosen_hidden is not None:
        searched.append(("hidden", float(chosen_hidden),
                         [float(p.hidden) for p in points if p.hidden is not None]))
    out = []
    for name, value, values in searched:
        grid = tuple(sorted(set(values)))
        if len(grid) < 2 or value not in grid:
            continue
        if value in (grid[0], grid[-1]):
            out.append(GridEdge(name, value, grid,
                                "lowest" if value == grid[0] else "highest", method))
    return out


@dataclass
class Trained:
    """What ``train`` fitted: the scikit-learn probe and scaler, the grid and the value
    chosen on validation, and the test split scored as ``submit`` scores it
    (``headline``, ``test_probs``). ``probebench.train.artifact.write_artifact`` writes
    it as an artifact folder."""

    config: TrainConfig
    data: TaskData
    probe: Any
    scaler: Any
    grid: list[GridPoint]
    chosen: float
    n_train: int
    n_val: int
    val_source: str
    test_probs: np.ndarray
    test_acts: np.ndarray
    headline: Headline
    model_identity: dict[str, Any] = field(default_factory=dict)
    #: a multi-class task's classes (the probe's output order); None when binary
    classes: tuple[str, ...] | None = None
    #: the MLP hidden size the grid chose (multi-class MLPs), else None
    chosen_hidden: int | None = None
    #: the task catalog it was trained on: ``write_artifact`` validates the artifact's
    #: test-set hash against it (an included task is unknown to the packaged catalog)
    catalog: TaskCatalog | None = None

    @property
    def grid_edges(self) -> list[GridEdge]:
        """The hyper-parameters chosen at an end of their grid (``grid_edges``); empty
        when every choice is inside its grid."""
        return grid_edges(self.config.grid_name, self.grid, self.chosen, self.chosen_hidden,
                          method=self.config.method)

    def describe(self) -> str:
        """A few lines on what was fitted: task, model, site, splits and the grid (and a
        note for each value chosen at an end of its grid)."""
        c = self.config
        kind = "" if self.classes is None else f", {len(self.classes)} classes"
        how = "" if c.method == DEFAULT_METHOD else f" ({c.method})"
        searched = any(p.hidden is not None for p in self.grid)
        lines = [f"task {c.task}, model {c.model}, site {c.site}, {c.probe_type} probe"
                 f"{how}, seed {c.seed}{kind}",
                 f"train {self.n_train} prompts, validation {self.n_val} prompts "
                 f"({self.val_source})",
                 f"{c.grid_name:>8}{'  hidden' if searched else ''}  validation log-loss"
                 "  accuracy"]
        for point in self.grid:
            chosen = point.value == self.chosen and point.hidden == self.chosen_hidden
            mark = "  <- chosen" if chosen else ""
            size = f"  {point.hidden:>6}" if searched else ""
            lines.append(f"{point.value:>8g}{size}  {point.val_log_loss:>19.4f}  "
                         f"{point.val_accuracy:>8.4f}{mark}")
        also = "" if self.chosen_hidden is None else f", hidden = {self.chosen_hidden}"
        if c.method == "mass-mean":
            lines.append("mass-mean: the difference of the class means, its scale and bias "
                         f"from a 1-d logistic regression ({c.grid_name}: its inverse L2 "
                         "penalty)")
        lines.append(f"lowest validation log-loss; refit on train + validation with "
                     f"{c.grid_name} = {self.chosen:g}{also}")
        lines.extend(f"at the grid's edge: {edge.describe()}" for edge in self.grid_edges)
        return "\n".join(lines)

    def metrics_table(self) -> str:
        """The test metrics (AUROC with its 95% CI, accuracy, ECE, ...) as text."""
        h = self.headline
        acc = h.accuracy.value
        name = "AUROC   " if self.classes is None else "macro AUROC"
        fpr = "n/a" if h.fpr_at_99tpr is None else f"{h.fpr_at_99tpr:.4f}"
        return "\n".join([
            f"test {name} {h.auroc.value:.4f}  95% CI [{h.auroc.ci_low:.4f}, "
            f"{h.auroc.ci_high:.4f}]",
            f"test accuracy {'n/a' if acc is None else f'{acc:.4f}'}",
            f"ECE {h.ece:.4f}  Brier {h.brier:.4f}  FPR@99%TPR {fpr}"])


def grid_search(config: TrainConfig, x_train: np.ndarray, y_train: np.ndarray,
                x_val: np.ndarray, y_val: np.ndarray) -> tuple[list[GridPoint], float]:
    """Every grid point fitted on train and scored on validation; (points, chosen)."""
    if config.method == "mass-mean":
        return search_mass_mean(x_train, y_train, x_val, y_val)
    return search(config.probe_type, x_train, y_train, x_val, y_val, seed=config.seed,
                  hidden=config.hidden)


def evaluate_weights(weights: Any, model: str, site: Site, task_id: str, *, seed: int = 0,
                     bootstrap: int = N_RESAMPLES, progress: bool = False,
                     catalog: TaskCatalog | None = None) -> Headline:
    """The headline metrics of loaded probe weights on a registered task's test split,
    exactly as ``submit`` computes them (used by the eval notebooks)."""
    from probebench.models.activations import extract

    data = (catalog or TaskCatalog.default()).load(task_id)
    flat = Flat.of(data.test)
    acts = extract(model, flat.prompts, [site], progress=progress)[site]
    classes = data.format.classes(data)
    if classes is not None:
        return headline(task_id, data.format, data.test, weights.predict_proba(acts),
                        classes=classes, seed=seed, n_resamples=bootstrap)
    probs = weights.predict_proba(acts)[:, 1]
    return headline(task_id, data.format, data.test, probs, seed=seed,
                    n_resamples=bootstrap)


@dataclass
class SplitActivations:
    """A task's train/validation/test activations at some sites, with the labels."""

    data: TaskData
    acts: dict[str, Any]  # split -> ExtractionResult
    y_train: np.ndarray
    y_val: np.ndarray
    val_source: str
    identity: Any  # ModelIdentity
    #: a multi-class task's classes; then y_train and y_val hold class labels (strings)
    classes: tuple[str, ...] | None = None


def split_activations(data: TaskData, model: str, sites: Sequence[Site], *,
                      device: str = "auto", dtype: str = "auto",
                      batch_tokens: int | None = None, max_batch_size: int | None = None,
                      cache: bool = True, progress: bool = True) -> SplitActivations:
    """Activations of the labelled train and validation prompts and of every test prompt
    (keyed as ``submit`` keys them), loading the model at most once."""
    from probebench.models.activations import extract
    from probebench.models.loading import LoadedModel, ResolvedModel, resolve_model

    train_items, val_items, val_source = train_val_items(data)
    classes = data.format.classes(data)
    if classes is None:
        prompts = {"train": labelled_prompts(train_items), "val": labelled_prompts(val_items),
                   "test": Flat.of(data.test).prompts}
        y_train = labels_of(prompts["train"], "train")
        y_val = labels_of(prompts["val"], "validation")
    else:  # every prompt of a multi-class task has a class
        prompts = {"train": Flat.of(train_items).prompts, "val": Flat.of(val_items).prompts,
                   "test": Flat.of(data.test).prompts}
        y_train = class_labels(prompts["train"], classes, "train", data.format.prompt_class)
        y_val = class_labels(prompts["val"], classes, "validation", data.format.prompt_class)
    resolved = resolve_model(model, device=device, dtype=dtype, progress=progress)
    source: ResolvedModel | LoadedModel = resolved
    acts = {}
    for name, split in prompts.items():
        shown = ", ".join(map(str, sites)) if len(sites) <= 3 else f"{len(sites)} sites"
        result = extract(source, split, sites, cache=cache, progress=progress,
                         batch_tokens=batch_tokens, max_batch_size=max_batch_size,
                         desc=f"activations {data.spec.id}/{name} @ {shown}")
        if result.loaded is not None:
            source = result.loaded
        acts[name] = result
    return SplitActivations(data, acts, y_train, y_val, val_source, resolved.identity,
                            classes)


@dataclass
class Fitted:
    grid: list[GridPoint]
    chosen: float
    probe: Any
    scaler: Any
    test_probs: np.ndarray
    headline: Headline
    hidden: int | None = None


def fit_and_score(config: TrainConfig, split: SplitActivations) -> Fitted:
    """Grid on validation, refit on train + validation, test scored as ``submit`` does."""
    from probebench.artifact.weights import sklearn_to_weights

    x_train, x_val = split.acts["train"][config.site], split.acts["val"][config.site]
    if split.classes is not None:
        _binary_only(config, split.data)
        return _fit_multiclass(config, split, x_train, x_val)
    grid, chosen = grid_search(config, x_train, split.y_train, x_val, split.y_val)
    x_all = np.concatenate([x_train, x_val])
    y_all = np.concatenate([split.y_train, split.y_val])
    if config.method == "mass-mean":
        probe, scaler = fit_mass_mean(chosen, x_all, y_all)
    else:
        probe, scaler = fit(config.probe_type, chosen, x_all, y_all, seed=config.seed,
                            hidden=config.hidden)
    probs = sklearn_to_weights(probe, scaler).predict_proba(
        split.acts["test"][config.site])[:, 1]
    data = split.data
    head = headline(config.task, data.format, data.test, probs, seed=config.seed,
                    n_resamples=config.bootstrap)
    return Fitted(grid, chosen, probe, scaler, probs, head)


def _binary_only(config: TrainConfig, data: TaskData) -> None:
    """A mass-mean probe is one direction between two classes: refuse a multi-class
    task (before any model is loaded)."""
    classes = data.format.classes(data)
    if config.method == "mass-mean" and classes is not None:
        raise InputError(f"--method mass-mean needs a binary task; {data.spec.id} has "
                         f"{len(classes)} classes ({', '.join(classes)}); use --method "
                         "logistic")


def _fit_multiclass(config: TrainConfig, split: SplitActivations, x_train: np.ndarray,
                    x_val: np.ndarray) -> Fitted:
    """The SentEval protocol on a multi-class task: penalty (and MLP hidden size) chosen
    on validation, refit on train + validation, scored by accuracy and macro AUROC."""
    from probebench.artifact.weights import sklearn_to_weights

    assert split.classes is not None
    hiddens = HIDDEN_GRID if config.probe_type == "mlp" else (config.hidden,)
    grid, best = search_grid(config.probe_type, x_train, split.y_train, x_val, split.y_val,
                             seed=config.seed, hiddens=hiddens)
    hidden = best.hidden if best.hidden is not None else config.hidden
    probe, scaler = fit(config.probe_type, best.value, np.concatenate([x_train, x_val]),
                        np.concatenate([split.y_train, split.y_val]), seed=config.seed,
                        hidden=hidden)
    proba = sklearn_to_weights(probe, scaler).predict_proba(split.acts["test"][config.site])
    data = split.data
    head = headline(config.task, data.format, data.test, proba, classes=split.classes,
                    seed=config.seed, n_resamples=config.bootstrap)
    return Fitted(grid, best.value, probe, scaler, proba, head, best.hidden)


def train(config: TrainConfig, *, catalog: TaskCatalog | None = None, progress: bool = True,
          cache: bool = True) -> Trained:
    """Fit a probe on ``config.task`` of ``catalog`` (default: the packaged tasks)
    following the protocol in the module docstring of ``probebench.train``.

    The SentEval protocol: activations at ``config.site`` (through the activation
    cache), a small grid of regularisation strengths scored on the validation split,
    a refit on train + validation, and the test split scored with ``submit``'s code.
    Everything is seeded by ``config.seed``.

    Returns:
        a ``Trained``; ``probebench.train.artifact.write_artifact`` turns it into an
        artifact folder.
    """
    catalog = catalog or TaskCatalog.default()
    data = catalog.load(config.task)
    _binary_only(config, data)
    split = split_activations(data, config.model, [config.site], device=config.device,
                              dtype=config.dtype, batch_tokens=config.batch_tokens,
                              max_batch_size=config.max_batch_size, cache=cache,
                              progress=progress)
    f = fit_and_score(config, split)
    return Trained(config=config, data=split.data, probe=f.probe, scaler=f.scaler,
                   grid=f.grid, chosen=f.chosen, n_train=len(split.y_train),
                   n_val=len(split.y_val), val_source=split.val_source,
                   test_probs=f.test_probs, test_acts=split.acts["test"][config.site],
                   headline=f.headline, model_identity=split.identity.to_dict(),
                   classes=split.classes, chosen_hidden=f.hidden, catalog=catalog)


__all__ = [
    "ALPHA_GRID",
    "C_GRID",
    "DEFAULT_HIDDEN",
    "HIDDEN_GRID",
    "MAX_ITER",
    "METHODS",
    "PROBE_TYPES",
    "VAL_FRACTION",
    "Fitted",
    "GridEdge",
    "GridPoint",
    "SplitActivations",
    "TrainConfig",
    "Trained",
    "evaluate_weights",
    "fit",
    "fit_and_score",
    "grid_edges",
    "grid_search",
    "labelled_prompts",
    "labels_of",
    "make_estimator",
    "split_activations",
    "train",
    "train_val_items",
]
