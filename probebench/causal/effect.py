"""The causal test of a linear probe's direction: does moving along it move the model?

A probe that reads a property does not show that the model uses it. Following Marks &
Tegmark (steering the truth direction changes P(True) - P(False)) and Arditi et al.
(ablating the refusal direction removes refusal), the test:

1. takes the probe's unit direction ``u``, oriented to label 1 (``classes[1]``), and the
   standard deviation ``s`` of the site's activations along it over the task's prompts;
2. adds ``alpha * s * u`` at the positions the site pools, for each ``alpha`` of a grid
   (``DEFAULT_ALPHAS``, -4..4 standard deviations), and reads the model's own behaviour
   (``readouts``); each unit's *effect* is the least-squares slope of its readout over the
   grid (readout units per standard deviation); the probe's effect is the mean over
   units, with an item-bootstrap 95% interval (``evaluation.metrics.item_bootstrap``);
3. does the same for ``n_controls`` (default 16) random directions drawn from the
   activations' own covariance (Gaussian with that covariance, normalised, each scaled by
   the activations' standard deviation along it), and reports the probe's percentile
   among them; the wrong sign (``-u``) is the grid mirrored, so its effect is the
   probe's negated, read from the same passes;
4. projects ``u`` out of the site's layer at every position and reports the change in
   the readout's accuracy on the task's labels (a value above 0 means label 1) and in
   its AUROC.

``causal_effect`` is the model-free core (any ``evaluate(add, ablate)``); ``causal_test``
runs it for a probe and a task on the probe's model. Everything random is drawn from
``seed``; an MLP probe gets a result that says it is not linear, not an error.

``SUBMISSION_METHOD`` is the test as ``submit --causal`` runs it
(``probebench.evaluation.causal_stage``): the evaluation floor sits below this package, so
the method reaches it through ``SubmitOptions.causal_method``, as the guard lookup does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from probebench.causal.readouts import ReadoutPlan, build_plan, describe, task_readout
from probebench.errors import InputError
from probebench.evaluation.metrics import auroc_score, item_bootstrap, weighted_mean
from probebench.evaluation.session import CausalMethod
from probebench.probe import NoDirectionError, Probe, load_probe

if TYPE_CHECKING:
    from probebench.artifact.meta import ProbeMeta
    from probebench.artifact.weights import ProbeWeights
    from probebench.models.loading import LoadedModel
    from probebench.tasks.catalog import TaskCatalog

__all__ = ["CAUSAL_VERSION", "DEFAULT_ALPHAS", "N_CONTROLS", "SUBMISSION_METHOD",
           "CausalResult", "causal_effect", "causal_test", "control_directions",
           "grid_slopes", "oriented_direction", "submission_run"]

#: the version of the test's code (readouts, steering, effect): part of the cache record
#: of a submission's causal block; bump it whenever a number the test gives changes
CAUSAL_VERSION = "1"

#: the steering strengths, in standard deviations of the activations along the direction
DEFAULT_ALPHAS: tuple[float, ...] = (-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0)
#: random control directions per test
N_CONTROLS = 16
#: items of a task's test split the test reads by default (the first, in split order)
MAX_ITEMS = 200
N_RESAMPLES = 1000

Evaluate = Callable[[np.ndarray | None, np.ndarray | None], np.ndarray]


@dataclass
class CausalResult:
    """What one causal test found; ``to_dict`` is the ``causal`` block of a submission."""

    applicable: bool
    reason: str | None = None              #: why not, when not applicable
    probe: str | None = None
    task: str | None = None
    model: str | None = None
    site: str | None = None
    readout: dict[str, Any] | None = None
    alphas: list[float] = field(default_factory=list)
    seed: int = 0
    #: mean slope of the readout over the alpha grid (readout units per std), with CI
    effect: float | None = None
    ci: tuple[float, float] | None = None
    wrong_sign_effect: float | None = None
    #: the mean readout change from alpha = 0 at each alpha of the grid
    curve: list[float] = field(default_factory=list)
    controls: list[float] = field(default_factory=list)
    #: percent of control effects below the probe's (ties count half)
    control_percentile: float | None = None
    direction_std: float | None = None
    ablation: dict[str, float | None] = field(default_factory=dict)
    items: dict[str, Any] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        return out


def oriented_direction(probe: Probe) -> np.ndarray:
    """The probe's unit direction, float64, pointing to ``classes[1]`` (its score's
    class). Raises ``NoDirectionError`` for a probe that is not linear."""
    w = np.asarray(probe.direction, dtype=np.float64)
    norm = float(np.linalg.norm(w))
    if norm == 0.0 or not np.isfinite(norm):
        raise NoDirectionError(f"probe {probe.id}: its direction has norm {norm}")
    return w / norm


def control_directions(activations: np.ndarray, n: int, rng: np.random.Generator
                       ) -> np.ndarray:
    """``n`` unit directions ``(n, d)`` drawn from a Gaussian with the activations'
    covariance: ``g @ (x - mean) / sqrt(rows - 1)`` with ``g`` standard normal has exactly
    that covariance, without forming the ``(d, d)`` matrix."""
    x = np.asarray(activations, dtype=np.float64)
    if x.shape[0] < 2:
        raise InputError(f"control directions need at least 2 activation rows; found "
                         f"{x.shape[0]}")
    centred = x - x.mean(axis=0)
    draws = rng.standard_normal((n, x.shape[0])) @ centred / np.sqrt(x.shape[0] - 1)
    norms = np.linalg.norm(draws, axis=1, keepdims=True)
    return np.asarray(draws / np.where(norms > 0, norms, 1.0))


def grid_slopes(values: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """Per unit, the least-squares slope of ``values`` (``(len(alphas), units)``) on the
    alphas.

    >>> grid_slopes(np.array([[-2.0, 0.0], [0.0, 0.0], [2.0, 0.0]]), [-1, 0, 1]).tolist()
    [2.0, 0.0]
    """
    a = np.asarray(alphas, dtype=np.float64)
    a = a - a.mean()
    return np.asarray(a @ np.asarray(values, dtype=np.float64) / (a @ a))


def _grid(evaluate: Evaluate, u: np.ndarray, std: float, alphas: Sequence[float],
          base: np.ndarray) -> np.ndarray:
    return np.stack([base if a == 0 else evaluate(a * std * u, None) for a in alphas])


def _accuracy(values: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean((values > 0) == (labels == 1)))


def _auroc(values: np.ndarray, labels: np.ndarray) -> float | None:
    return auroc_score(labels, values) if len(set(labels.tolist())) == 2 else None


def causal_effect(evaluate: Evaluate, *, direction: np.ndarray, activations: np.ndarray,
                  labels: np.ndarray, items: np.ndarray,
                  alphas: Sequence[float] = DEFAULT_ALPHAS, n_controls: int = N_CONTROLS,
                  seed: int = 0, n_resamples: int = N_RESAMPLES) -> CausalResult:
    """The test's numbers for one direction (see the module doc).

    Args:
        evaluate: ``evaluate(add, ablate)`` -> each unit's readout ``(units,)``: ``add``
            a ``(d,)`` vector added at the site's positions, ``ablate`` a unit ``(d,)``
            projected out (both None: the model unsteered).
        direction: the unit direction ``(d,)``, oriented to label 1.
        activations: the site's activations ``(n, d)`` over the task's prompts (the
            scale along each direction and the controls' covariance).
        labels, items: per unit, its label (1: a value above 0 is right) and item id.
    """
    grid = [float(a) for a in alphas]
    if 0.0 not in grid or len(set(grid)) < 2:
        raise InputError(f"alphas must hold 0 and at least one other value; found {grid}")
    u = np.asarray(direction, dtype=np.float64)
    x = np.asarray(activations, dtype=np.float64)
    rng = np.random.default_rng(seed)
    base = evaluate(None, None)
    std = float(np.std(x @ u, ddof=1))
    values = _grid(evaluate, u, std, grid, base)
    slopes = grid_slopes(values, grid)
    effect = float(slopes.mean())
    interval = item_bootstrap(effect, lambda w: weighted_mean(slopes, w), items,
                              n_resamples=n_resamples, seed=seed)
    controls = []
    for c in control_directions(x, n_controls, rng):
        c_std = float(np.std(x @ c, ddof=1))
        controls.append(float(grid_slopes(_grid(evaluate, c, c_std, grid, base), grid).mean()))
    ctrl = np.asarray(controls)
    percentile = (float(100.0 * (np.sum(ctrl < effect) + 0.5 * np.sum(ctrl == effect))
                        / len(ctrl)) if len(ctrl) else None)
    ablated = evaluate(None, u)
    before, after = _accuracy(base, labels), _accuracy(ablated, labels)
    auc_before, auc_after = _auroc(base, labels), _auroc(ablated, labels)
    return CausalResult(
        applicable=True, alphas=grid, seed=seed, effect=effect,
        ci=(interval.low, interval.high), wrong_sign_effect=-effect,
        curve=[float(v) for v in (values - base).mean(axis=1)], controls=controls,
        control_percentile=percentile, direction_std=std,
        ablation={"accuracy_before": before, "accuracy_after": after,
                  "accuracy_change": after - before, "auroc_before": auc_before,
                  "auroc_after": auc_after,
                  "auroc_change": (auc_after - auc_before
                                   if auc_after is not None and auc_before is not None
                                   else None),
                  "mean_readout_change": float((ablated - base).mean())},
        items={"n_units": len(labels), "n_items": len(set(items.tolist())),
               "per_unit_slope": [round(float(s), 6) for s in slopes]})


def _task_of(probe: Probe, task: str | None) -> str:
    if task is not None:
        return task
    if probe.entry is not None and probe.entry.tasks:
        return str(probe.entry.tasks[0])
    reported = list(probe.meta.reported_metrics)
    if len(reported) == 1:
        return reported[0]
    raise InputError(f"probe {probe.id}: give the task to test on (its meta.yaml reports "
                     f"{len(reported)} tasks: {', '.join(reported) or 'none'})")


def _label_sign(probe: Probe) -> float:
    """+1 when the probe's ``classes[1]`` is label 1 (the usual case), -1 when it is 0."""
    second = probe.classes[1] if len(probe.classes) == 2 else 1
    return -1.0 if str(second).lower() in ("0", "false") else 1.0


def causal_test(probe: Probe | str | Path, *, task: str | None = None,
                catalog: TaskCatalog | None = None, lm: LoadedModel | None = None,
                device: str = "auto", alphas: Sequence[float] = DEFAULT_ALPHAS,
                n_controls: int = N_CONTROLS, seed: int = 0,
                max_items: int | None = MAX_ITEMS,
                n_resamples: int = N_RESAMPLES,
                load: Callable[[], LoadedModel] | None = None) -> CausalResult:
    """The causal test of ``probe``'s direction on ``task`` (default: its entry's first
    task, or the one task its meta.yaml reports), on the first ``max_items`` items of the
    task's test split (None: all), with the task's readout (``readouts.task_readout``).

    Returns a ``CausalResult``; a probe that is not linear, or a task without a readout,
    gives one with ``applicable=False`` and the reason, before any model is loaded.
    ``lm`` reuses a loaded model (it must be the probe's); ``load`` gives it only when
    the test applies (a session's ``lm``)."""
    from probebench.causal.steer import SteeringRunner, hf_stack
    from probebench.models.activations import extract, pad_id_of
    from probebench.models.loading import load_model
    from probebench.tasks.catalog import TaskCatalog

    started = time.perf_counter()
    if not isinstance(probe, Probe):
        probe = load_probe(probe)
    task_id = _task_of(probe, task)
    def not_applicable(reason: str) -> CausalResult:
        return CausalResult(applicable=False, reason=reason, probe=probe.id, task=task_id,
                            model=probe.model, site=str(probe.site), seed=seed)

    try:
        u = oriented_direction(probe) * _label_sign(probe)
    except NoDirectionError as exc:
        return not_applicable(f"not a linear probe: {exc}")
    catalog = catalog if catalog is not None else TaskCatalog.default()
    spec = catalog.spec(task_id)
    readout = task_readout(spec)
    if readout is None:
        return not_applicable(f"task {task_id} declares no readout (steering_readout or "
                              "readout in tasks.yaml)")
    if max_items is not None and max_items < 1:
        raise InputError(f"max_items must be at least 1; found {max_items}")
    items = catalog.load(task_id).test[:max_items]
    if lm is None:
        lm = load() if load is not None else load_model(probe.model, device=device,
                                                        progress=False)
    if not lm.is_causal:  # an encoder has no next token to read
        return not_applicable(f"model {lm.identity.name!r} is an {lm.identity.architecture} "
                              "model, not a causal language model: no next token to read")
    if lm.identity.hidden_size != u.shape[0]:
        raise InputError(f"probe {probe.id} reads {u.shape[0]} features; model "
                         f"{lm.identity.name!r} has hidden size {lm.identity.hidden_size}")
    plan: ReadoutPlan = build_plan(lm, items, readout, probe.site)
    activations = extract(lm, plan.prompts, [probe.site], progress=False)[probe.site]
    loaded = time.perf_counter()
    runner = SteeringRunner(hf_stack(lm, probe.site.layer), plan.rows, pad_id=pad_id_of(lm))
    cached = time.perf_counter()

    def evaluate(add: np.ndarray | None, ablate: np.ndarray | None) -> np.ndarray:
        return plan.values(runner.log_probs(add=add, ablate=ablate))

    result = causal_effect(evaluate, direction=u, activations=activations,
                           labels=plan.labels, items=plan.items, alphas=alphas,
                           n_controls=n_controls, seed=seed, n_resamples=n_resamples)
    done = time.perf_counter()
    result.probe, result.task, result.model = probe.id, task_id, probe.model
    result.site, result.readout = str(probe.site), describe(readout)
    result.items.update({"skipped": dict(plan.skipped), "max_items": max_items})
    result.cost = {"seconds": round(done - started, 3),
                   "lower_pass_seconds": round(cached - loaded, 3),
                   "upper_passes": float(runner.passes),
                   "seconds_per_upper_pass": round((done - cached) / max(runner.passes, 1),
                                                   4)}
    return result


def submission_run(*, meta: ProbeMeta, weights: ProbeWeights, bundle_sha256: str,
                   task: str, catalog: TaskCatalog, load: Callable[[], LoadedModel],
                   alphas: Sequence[float], n_controls: int, seed: int, max_items: int,
                   n_resamples: int) -> dict[str, Any]:
    """``causal_test`` of a validated artifact's numbers (``submit`` has validated it) on
    ``task``, with the session's catalog and model; ``CausalResult.to_dict()``."""
    probe = Probe(id=f"bundle {bundle_sha256[:12]}", meta=meta, entry=None, weights=weights,
                  folder=Path(),  # only its numbers are read, never its folder
                  bundle_sha256=bundle_sha256)
    return causal_test(probe, task=task, catalog=catalog, load=load, alphas=alphas,
                       n_controls=n_controls, seed=seed, max_items=max_items,
                       n_resamples=n_resamples).to_dict()


#: the test as ``submit --causal`` runs it (``SubmitOptions.causal_method``): the defaults
#: of this module and its code version
SUBMISSION_METHOD = CausalMethod(run=submission_run, version=CAUSAL_VERSION,
                                 alphas=DEFAULT_ALPHAS, n_controls=N_CONTROLS,
                                 max_items=MAX_ITEMS)
