"""Builds real probe artifacts on disk for the tests: trained sklearn probes, real files."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import joblib
import numpy as np

NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print('hi')"],
                       "outputs": [], "execution_count": None}]}

META = {
    "spec_version": "0.0.1",
    "probe_type": "linear",
    "model": "smollm2-135m",
    "layer": 15,
    "position": "last_token",
    "training_data": "verb-grammar train split",
    "license": "Apache-2.0",
    "paper": None,
    "author": "Test Author",
    "contact": "author@example.org",
    "created_at": "2026-11-01",
}


def training_data(n_features: int, n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, n_features)) * rng.uniform(0.5, 20, size=n_features) + 3.0
    y = ((x[:, 0] - 3) / 10 + np.sin(x[:, 1]) > 0).astype(int)
    return x, y


def fit_probe(probe_type: str = "linear", *, n_features: int = 576, hidden: tuple[int, ...] = (8,),
              solver: str = "adam", seed: int = 0) -> tuple[Any, Any, np.ndarray]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    x, y = training_data(n_features, seed=seed)
    scaler = StandardScaler().fit(x)
    z = scaler.transform(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if probe_type == "linear":
            probe = LogisticRegression(max_iter=200).fit(z, y)
        else:
            probe = MLPClassifier(hidden, solver=solver, max_iter=60, random_state=seed).fit(z, y)
    return probe, scaler, x


def write_docs(folder: Path, meta: dict[str, Any]) -> None:
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    (folder / "README.md").write_text("# A test probe\n\nReads layer 15 of SmolLM2.\n")
    for name in ("train.ipynb", "eval.ipynb"):
        (folder / name).write_text(json.dumps(NOTEBOOK))


def make_artifact(folder: Path, *, probe_type: str = "linear", form: str = "joblib",
                  n_features: int = 576, hidden: tuple[int, ...] = (8,), solver: str = "adam",
                  meta: dict[str, Any] | None = None, **joblib_kw: Any) -> tuple[Path, Any, Any,
                                                                                 np.ndarray]:
    """A complete, valid artifact; returns (folder, probe, scaler, training inputs)."""
    probe, scaler, x = fit_probe(probe_type, n_features=n_features, hidden=hidden, solver=solver)
    full_meta = {**META, "probe_type": probe_type, **(meta or {})}
    write_docs(folder, full_meta)
    if form == "joblib":
        joblib.dump(probe, folder / "probe.joblib", **joblib_kw)
        joblib.dump(scaler, folder / "scaler.joblib", **joblib_kw)
    elif form == "skops":
        import skops.io as sio

        sio.dump(probe, folder / "probe.skops")
        sio.dump(scaler, folder / "scaler.skops")
    elif form == "native":
        from probebench.artifact.weights import sklearn_to_weights

        sklearn_to_weights(probe, scaler).save_native(folder)
    else:
        raise ValueError(form)
    return folder, probe, scaler, x


def train_task_probe(folder: Path, lm: Any, task_id: str, *, layer: int = 6,
                     position: str = "last_token", n_train: int = 400) -> Path:
    """A real probe: logistic regression on the task's train split, native form."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from probebench.artifact.weights import sklearn_to_weights
    from probebench.models import Site, extract
    from probebench.tasks.catalog import TaskCatalog

    data = TaskCatalog.default().load(task_id)
    prompts = [p for item in data.splits["train"][:n_train] for p in item.prompts
               if p.label is not None]
    site = Site(layer, position)
    x = extract(lm, prompts, [site], progress=False)[site]
    y = np.array([p.label for p in prompts])
    scaler = StandardScaler().fit(x)
    probe = LogisticRegression(max_iter=1000, C=0.1).fit(scaler.transform(x), y)
    write_docs(folder, {**META, "layer": layer, "position": position,
                        "training_data": f"{task_id} train ({len(prompts)} prompts)"})
    sklearn_to_weights(probe, scaler).save_native(folder)
    return folder


def entry_numbers(folder: Path) -> dict[str, Any]:
    """The ``param_count`` and ``size_mb`` an honest registry entry declares for the
    artifact in ``folder`` (``registry check`` compares them with the artifact)."""
    from probebench.artifact import scan
    from probebench.artifact.forms import detect_forms, load_forms
    from probebench.registry.entry import artifact_megabytes, trained_parameters

    files = scan(folder).files
    weights = load_forms(folder, detect_forms(set(files)))
    return {"param_count": trained_parameters(weights),
            "size_mb": round(artifact_megabytes(files), 4)}
