"""A small registry whose guards.yaml names a guard for smollm2-135m, and a second probe
on the same model: the world of the guard's and the run policy's tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.artifact.checks import validate
from probebench.sites import Site
from probebench.train import TrainConfig, train
from probebench.train.artifact import write_artifact

TASK = "eval_awareness"
GUARD_ID = "testorg/guard-smollm2-135m-l4-v1"


def guard_world(root: Path, activation_cache: Path) -> dict[str, Any]:
    """Under ``root``: ``registry/`` with the guard's entry, artifact and guards.yaml, and
    ``probe/``, a probe at another layer (both trained on ``TASK``, activations through
    ``activation_cache``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROBEBENCH_ACTIVATION_CACHE", str(activation_cache))
        day = dt.date(2026, 11, 1)
        guard = write_artifact(train(TrainConfig(task=TASK, site=Site(4, "last_token"),
                                                 bootstrap=100), progress=False),
                               root / "registry" / "artifacts" / "guard", created_at=day)
        probe = write_artifact(train(TrainConfig(task=TASK, site=Site(6, "last_token"),
                                                 bootstrap=100), progress=False),
                               root / "probe", created_at=day)
    bundle = validate(guard).bundle_sha256
    entry = {
        "id": GUARD_ID, "name": "Test guard", "short_name": "guard", "author": "T",
        "org": "testorg", "category": "eval-awareness", "probe_type": "linear",
        "model": "smollm2-135m", "layer": 4, "position": "last_token",
        "artifact_url": "registry/artifacts/guard", "artifact_sha256": bundle,
        "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
        "release": "2026-11-01", "param_count": 577, "size_mb": 0.1, "tagline": "guard",
        "description": "A test guard.", "status": "live", "tasks": [TASK]}
    path = root / "registry" / "probes" / "testorg" / "guard-smollm2-135m-l4-v1.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(entry))
    (root / "registry" / "guards.yaml").write_text(f"smollm2-135m: {GUARD_ID}\n")
    return {"root": root, "registry": root / "registry", "guard": guard, "probe": probe,
            "entry": path}
