"""Synthetic registries for site tests and benchmarks: real files, made-up results."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import yaml

from probebench.evaluation.metrics import (
    auroc_score,
    brier_score_loss,
    expected_calibration_error,
    fpr_at_tpr_error,
    item_bootstrap,
    weighted_auroc,
)
from probebench.evaluation.results import (
    BaselineOut,
    FlaggedOut,
    IntervalOut,
    MarkOut,
    ProbeInfo,
    PromptScores,
    RunInfo,
    SliceOut,
    TaskResult,
)
from probebench.registry.entry import entry_path
from probebench.registry.store import ResultHistory, ResultRecord, result_path

TASKS = {"verb_grammar": "verbs", "blimp_passive_1": "blimp",
         "blimp_determiner_noun_agreement_1": "blimp"}
VERB_SLICES = {"language": ["en", "es"], "tense": ["past_simple", "future"],
               "reason_code": ["none", "wrong_person", "over_regularisation"]}


def _interval(value: float, low: float, high: float) -> IntervalOut:
    return IntervalOut(value=value, ci_low=low, ci_high=high, resamples=100, dropped=0)


def synthetic_result(task: str, strength: float, rng: np.random.Generator,
                     n_items: int = 60) -> TaskResult:
    labels = np.tile([1, 0], n_items)
    items = np.repeat(np.arange(n_items), 2)
    probs = np.clip(0.5 + strength * (labels - 0.5) + rng.normal(0, 0.2, 2 * n_items), 0, 1)
    iv = item_bootstrap(auroc_score(labels, probs), partial(weighted_auroc, labels, probs),
                        items, n_resamples=100, seed=0)
    auroc = _interval(iv.value, iv.low, iv.high)
    acc = _interval(0.5 + strength / 2, 0.45 + strength / 2, min(1.0, 0.55 + strength / 2))
    slices = {}
    if TASKS[task] == "verbs":
        slices = {name: {v: SliceOut(n_items=10, accuracy=acc) for v in values}
                  for name, values in VERB_SLICES.items()}
    base = BaselineOut(auroc=_interval(0.5, 0.5, 0.5), accuracy=_interval(0.5, 0.45, 0.55),
                       note="constant")
    return TaskResult(
        id=task, version=1, format=TASKS[task], test_sha256="ab" * 32, n_items=n_items,
        n_prompts=2 * n_items, n_labelled_prompts=2 * n_items,
        accuracy_name="mc_accuracy" if TASKS[task] == "verbs" else "pair_accuracy",
        auroc=auroc, accuracy=acc, ece=expected_calibration_error(labels, probs),
        brier=brier_score_loss(labels, probs), fpr_at_99tpr=fpr_at_tpr_error(labels, probs),
        distshift_auroc=FlaggedOut(value=max(0.0, auroc_score(labels, probs) - 0.05),
                                   imputed=False, note="measured"),
        evalaware_auroc=FlaggedOut(value=0.85 * iv.value, imputed=True, note="no guard"),
        transfer={"undeclared": FlaggedOut(value=0.5, imputed=True, note="undeclared")},
        slices=slices, baselines={"majority": base},
        marks={"auroc": MarkOut(mark="B" if iv.value > 0.8 else "C")},
        predictions=PromptScores(prompt_ids=[f"p{i}" for i in range(2 * n_items)],
                                 items=items.tolist(), labels=labels.tolist(),
                                 probs=probs.tolist()))


def synthetic_record(result: TaskResult, *, latency_ms: float | None = 10.0,
                     license: str = "MIT", bundle_sha256: str = "cd" * 32) -> ResultRecord:
    """A stored record around ``result``, as ``registry evaluate`` writes one."""
    probe = ProbeInfo(id="synthetic", bundle_sha256=bundle_sha256, probe_type="linear",
                      model="smollm2-135m", layer=1, position="last_token", license=license)
    run = RunInfo(evaluated_at="2026-11-02T10:00:00Z", probebench_commit="ab" * 20,
                  hardware="Synthetic CPU (2 cores)", python="3.11.7")
    return ResultRecord(result=result, probe=probe,
                        model={"name": "smollm2-135m", "dtype": "float32"}, seed=0,
                        bootstrap_resamples=100, versions={"probebench": "0.1.0"},
                        device="cpu", latency_ms=latency_ms, run=run)


def synthetic_artifact(folder: Path, k: int, *, weights_bytes: int = 14_000) -> None:
    """An artifact folder of real file kinds and sizes (a README, the weights, a reproducer
    notebook): what the site and its registry mirror store per entry."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(f"# Synthetic probe {k}\n\nA linear probe.\n" * 20)
    (folder / "meta.yaml").write_text(yaml.safe_dump({"probe_type": "linear", "layer": k % 30}))
    rng = np.random.default_rng(k)
    (folder / "probe.safetensors").write_bytes(rng.bytes(weights_bytes))
    (folder / "train.ipynb").write_text('{"cells": [], "nbformat": 4, "nbformat_minor": 5}')


def synthetic_registry(root: Path, n_entries: int, seed: int = 0, *, artifacts: bool = False,
                       n_items: int = 60, history: int = 1, start: int = 0,
                       hosted_share: float = 0.0) -> list[str]:
    """``n_entries`` entries (numbered from ``start``) with stored results; returns their
    ids. ``artifacts``: each entry's artifact folder exists (``artifacts/p<k>`` beside the
    registry), so the registry mirror holds it; ``n_items`` and ``history`` (records per
    stored result) set a result's size: 150 items and 3 records make a result of a real
    stored result's size (about 100 KB). ``hosted_share``: that share of the entries (every
    k-th, spread evenly) has its artifact on the Hugging Face Hub at a commit
    (``hf://lab/probes@<commit>/p<k>``), as most of a real registry's will: the mirror links
    it, and no folder is written for it."""
    rng = np.random.default_rng(seed + start)
    ids = []
    for k in range(start, start + n_entries):
        entry_id = f"org{k % 7}/probe{k}-smollm2-135m-l{k % 30}-v1"
        tasks = ["verb_grammar", "blimp_passive_1"] if k % 3 else ["blimp_passive_1"]
        entry = {
            "id": entry_id, "name": f"Probe number {k}", "short_name": f"probe-{k}",
            "author": "Synthetic Author", "org": f"org{k % 7}",
            "category": ["grammar", "syntax"][k % 2], "probe_type": "linear",
            "model": "smollm2-135m", "layer": k % 30, "position": "last_token",
            "paper": None, "paper_title": None, "artifact_url": f"artifacts/p{k}",
            "artifact_sha256": f"{k:064x}", "reproducer_notebook": "train.ipynb",
            "colab_url": None, "license": ["Apache-2.0", "MIT", "closed"][k % 3],
            "release": "2026-11-01", "param_count": 577, "size_mb": 0.01,
            "tagline": f"Synthetic probe {k}", "description": "A synthetic entry.",
            "status": ["live", "pending_review", "deprecated"][k % 3 if k % 5 == 0 else 0],
            "tasks": tasks, "transfer_targets": []}
        if entry["status"] == "deprecated":
            entry["notice"] = f"Deprecated by re-evaluation: probe {k} fell 12 points."
        hosted = int((k + 1) * hosted_share) > int(k * hosted_share)
        if hosted:
            entry["artifact_url"] = f"hf://lab/probes@{k:040x}/p{k}"
        path = entry_path(root, entry_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(entry, sort_keys=False))
        if artifacts and not hosted:
            synthetic_artifact(root.parent / "artifacts" / f"p{k}", k)
        strength = float(rng.uniform(0.0, 0.6))
        for task in tasks:
            records = []
            for _ in range(history):
                result = synthetic_result(task, strength, rng, n_items=n_items)
                records.append(synthetic_record(result, latency_ms=float(rng.uniform(5, 50)),
                                                bundle_sha256=f"{k:064x}"))
            out = result_path(root, entry_id, task)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(ResultHistory(entry=entry_id, task=task,
                                         history=records).to_json())
        ids.append(entry_id)
    return ids
