"""Layer sweeps: the ``train`` protocol at every layer of a model, one position.

All layers are read in one forward pass per batch (one cache entry per site), then each
layer gets its own grid search on validation, refit and test scoring with the headline
code of ``submit``. The result is a JSON file (deterministic: no timings) that the leaderboard
draws and ``markdown`` turns into the docs table.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from probebench.errors import InputError
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.hashing import atomic_write_bytes
from probebench.models.builtin import DEFAULT_MODEL
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.train.trainer import TrainConfig, fit_and_score, grid_edges, split_activations

SWEEP_VERSION = 1


@dataclass
class LayerRow:
    layer: int
    chosen: float
    val_accuracy: float
    auroc: float | None
    auroc_ci_low: float | None
    auroc_ci_high: float | None
    accuracy: float | None
    accuracy_ci_low: float | None
    accuracy_ci_high: float | None
    #: the validation log-loss at the chosen C/alpha (None in sweeps written before it
    #: was recorded)
    val_log_loss: float | None = None
    #: where the chosen C/alpha lies at an end of its grid, what ``GridEdge.describe``
    #: says of it (the best value may lie beyond the grid); None inside the grid, and in
    #: sweeps written before it was recorded
    grid_edge: str | None = None


@dataclass
class Sweep:
    task: str
    task_version: int
    test_sha256: str
    model: str
    model_sha256: str
    position: str
    probe_type: str
    seed: int
    bootstrap: int
    accuracy_name: str
    rows: list[LayerRow] = field(default_factory=list)
    version: int = SWEEP_VERSION

    def best(self) -> LayerRow:
        """The layer of the highest test AUROC (what the sweep's chart marks; choosing a
        probe's layer by it would select on the test set: ``chosen_on_validation``)."""
        scored = [r for r in self.rows if r.auroc is not None]
        return max(scored, key=lambda r: (r.auroc or 0.0, -r.layer))

    def chosen_on_validation(self) -> LayerRow | None:
        """The layer a probe should read, chosen on validation data only: the lowest
        validation log-loss at each layer's chosen regularisation (ties: the shallower
        layer); None for a sweep written before the log-loss was recorded."""
        scored = [r for r in self.rows if r.val_log_loss is not None]
        if not scored:
            return None
        return min(scored, key=lambda r: (r.val_log_loss or 0.0, r.layer))

    def grid_edges(self) -> list[LayerRow]:
        """The layers whose C/alpha was chosen at an end of its grid (``grid_edge``)."""
        return [r for r in self.rows if r.grid_edge]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    def markdown(self) -> str:
        best = self.best().layer
        lines = [f"| layer | {self.probe_type} AUROC [95% CI] | {self.accuracy_name} [95% CI] | "
                 "chosen C/alpha | validation accuracy |",
                 "| ---: | --- | --- | ---: | ---: |"]
        for r in self.rows:
            mark = " **best**" if r.layer == best else ""
            edge = " (grid edge)" if r.grid_edge else ""
            acc = ("n/a" if r.accuracy is None else
                   f"{r.accuracy:.3f} [{r.accuracy_ci_low:.3f}, {r.accuracy_ci_high:.3f}]")
            lines.append(f"| {r.layer}{mark} | {r.auroc:.3f} [{r.auroc_ci_low:.3f}, "
                         f"{r.auroc_ci_high:.3f}] | {acc} | {r.chosen:g}{edge} | "
                         f"{r.val_accuracy:.3f} |")
        return "\n".join(lines) + "\n"


def read_sweep(path: Path) -> Sweep:
    try:
        data = json.loads(path.read_text("utf-8"))
        if "kind" in data:  # sweeps written before the field was renamed
            data["probe_type"] = data.pop("kind")
        rows = [LayerRow(**r) for r in data.pop("rows")]
        return Sweep(**data, rows=rows)
    except (ValueError, TypeError, KeyError) as exc:
        raise InputError(f"{path}: not a probebench layer sweep ({exc})") from None


def layer_sweep(task: str, model: str = DEFAULT_MODEL, position: str = "last_token", *,
                probe_type: str = "linear", seed: int = 0, bootstrap: int = N_RESAMPLES,
                layers: list[int] | None = None, catalog: TaskCatalog | None = None,
                progress: bool = True, device: str = "auto", dtype: str = "auto",
                batch_tokens: int | None = None,
                max_batch_size: int | None = None) -> Sweep:
    """The train protocol at every layer (or ``layers``) of ``model`` at ``position``:
    one forward pass per batch serves every layer."""
    from probebench.models.loading import resolve_model

    data = (catalog or TaskCatalog.default()).load(task)
    ident = resolve_model(model, device=device, dtype=dtype, progress=progress).identity
    chosen_layers = list(range(ident.num_layers + 1)) if layers is None else layers
    sites = [Site(layer, position) for layer in chosen_layers]
    split = split_activations(data, model, sites, device=device, dtype=dtype,
                              batch_tokens=batch_tokens, max_batch_size=max_batch_size,
                              progress=progress)
    sweep = Sweep(task=task, task_version=data.spec.version, test_sha256=data.spec.test_sha256,
                  model=model, model_sha256=ident.weights_sha256, position=position,
                  probe_type=probe_type, seed=seed, bootstrap=bootstrap,
                  accuracy_name=data.format.accuracy_name)
    iterator: Any = sites
    if progress:
        from tqdm import tqdm

        iterator = tqdm(sites, desc=f"sweep {task}", unit="layer")
    for site in iterator:
        config = TrainConfig(task=task, site=site, model=model, probe_type=probe_type,
                             seed=seed, bootstrap=bootstrap)
        f = fit_and_score(config, split)
        auroc, accuracy = f.headline.auroc, f.headline.accuracy
        point = next(p for p in f.grid if p.value == f.chosen)
        edges = grid_edges(config.grid_name, f.grid, f.chosen, method=config.method)
        sweep.rows.append(LayerRow(
            layer=site.layer, chosen=f.chosen, val_accuracy=round(point.val_accuracy, 6),
            val_log_loss=round(point.val_log_loss, 6),
            grid_edge="; ".join(e.describe() for e in edges) or None,
            auroc=auroc.value, auroc_ci_low=auroc.ci_low, auroc_ci_high=auroc.ci_high,
            accuracy=accuracy.value, accuracy_ci_low=accuracy.ci_low,
            accuracy_ci_high=accuracy.ci_high))
    return sweep


def write_sweep(sweep: Sweep, path: Path) -> Path:
    atomic_write_bytes(path, sweep.to_json().encode("utf-8"))
    return path
