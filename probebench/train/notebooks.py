"""The reproducer notebooks: ``train.ipynb`` (fit the probe again from scratch) and
``eval.ipynb`` (score the published artifact), both ending with a
``PROBEBENCH_METRICS {...}`` line that ``probebench review`` compares with the reported
metrics. Written with fixed cell ids so the same parameters give the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from probebench.hashing import atomic_write_bytes


def _cell(kind: str, index: int, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "id": f"cell-{index}", "metadata": {},
                            "source": source.strip("\n").splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(cells: list[tuple[str, str]]) -> dict[str, Any]:
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"}},
            "cells": [_cell(kind, i, src) for i, (kind, src) in enumerate(cells, start=1)]}


def _params(values: dict[str, Any]) -> str:
    return "\n".join(f"{k} = {v!r}" for k, v in values.items())


def train_notebook(*, task: str, model: str, site: str, probe_type: str, seed: int,
                   hidden: int, bootstrap: int, artifact: str,
                   multiclass: bool = False, method: str = "logistic") -> dict[str, Any]:
    """``train.ipynb``. A ``method`` other than logistic becomes a ``METHOD`` parameter
    passed to ``TrainConfig``; a logistic probe's notebook has none, so its bytes (and
    its artifact's bundle hash) are those written before methods existed."""
    values: dict[str, Any] = {"TASK": task, "MODEL": model, "SITE": site,
                              "PROBE_TYPE": probe_type}
    if method != "logistic":
        values["METHOD"] = method
    values.update({"SEED": seed, "HIDDEN": hidden, "BOOTSTRAP": bootstrap,
                   "ARTIFACT": artifact})
    params = _params(values)
    fits = (f"a **{probe_type}** probe" if method == "logistic" else
            f"a **{method}** {probe_type} probe (the difference of the class means, with a "
            "one-dimensional calibration)")
    grid = ("a small regularisation grid" if method == "logistic" else
            "the calibration's regularisation grid")
    passed = "" if method == "logistic" else ",\n                     method=METHOD"
    # a multi-class probe is compared on every class's probability
    diff = ("diff = np.abs(published.predict_proba(trained.test_acts) - trained.test_probs)"
            if multiclass else "diff = np.abs(published.predict_proba(trained.test_acts)[:, 1]"
            " - trained.test_probs)")
    return _notebook([
        ("markdown", f"""
# Reproduce the probe from scratch

Fits {fits} on the `{task}` task at site `{site}` of `{model}` with
probebench's SentEval protocol ({grid} scored on the validation
split, then a refit on train + validation), scores it on the registered test split
exactly as `probebench submit` does, and compares it with the published artifact in
`ARTIFACT`. It runs offline: the embedded model ships inside a Python package.
The last cell prints a `PROBEBENCH_METRICS` line that `probebench review` reads.
"""),
        ("code", params),
        ("code", """
import json
from pathlib import Path

import numpy as np

from probebench.models import Site
from probebench.train import TrainConfig, train

config = TrainConfig(task=TASK, model=MODEL, site=Site.parse(SITE), probe_type=PROBE_TYPE,
                     seed=SEED, hidden=HIDDEN, bootstrap=BOOTSTRAP{METHOD})
trained = train(config, progress=False)
print(trained.describe())
""".replace("{METHOD}", passed)),
        ("markdown", "## Test metrics (the same code as `probebench submit`)"),
        ("code", """
print(trained.metrics_table())
"""),
        ("markdown", "## Against the published artifact"),
        ("code", """
from probebench.artifact.forms import load_weights

published = load_weights(Path(ARTIFACT))
{DIFF}
print(f"max |P(published) - P(reproduced)| on the test prompts: {diff.max():.2e}")
print("PROBEBENCH_METRICS", json.dumps({TASK: trained.headline.printable()}))
""".replace("{DIFF}", diff)),
    ])


def eval_notebook(*, tasks: list[str], seed: int, bootstrap: int,
                  artifact: str) -> dict[str, Any]:
    params = _params({"ARTIFACT": artifact, "TASKS": tasks, "SEED": seed,
                      "BOOTSTRAP": bootstrap})
    return _notebook([
        ("markdown", """
# Evaluate the published artifact

Validates the artifact in `ARTIFACT` (safe loading: no pickle is ever executed), then
scores it on each registered task's test split with the code `probebench submit` uses.
The last cell prints a `PROBEBENCH_METRICS` line that `probebench review` reads.
"""),
        ("code", params),
        ("code", """
import json
from pathlib import Path

from probebench.artifact.checks import validate
from probebench.models import Site

report = validate(Path(ARTIFACT))
for check in report.checks:
    print(f"{check.status:<5} {check.name}: {check.message}")
assert report.valid, "the artifact does not validate"
meta, weights = report.meta, report.weights
"""),
        ("code", """
from probebench.train import evaluate_weights

metrics = {}
for task in TASKS:
    head = evaluate_weights(weights, meta.model, Site(meta.layer, meta.position), task,
                            seed=SEED, bootstrap=BOOTSTRAP)
    metrics[task] = head.printable()
    print(f"{task}: AUROC {head.auroc.value:.4f} [{head.auroc.ci_low:.4f}, "
          f"{head.auroc.ci_high:.4f}]")
print("PROBEBENCH_METRICS", json.dumps(metrics))
"""),
    ])


def notebook_bytes(notebook: dict[str, Any]) -> bytes:
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            ).encode("utf-8")


def write_notebook(notebook: dict[str, Any], path: Path) -> Path:
    atomic_write_bytes(path, notebook_bytes(notebook))
    return path
