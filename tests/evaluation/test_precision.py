"""The precision policy: float32 is the reference everywhere, reduced precision is
accepted within measured tolerances, and devices alternate without new records."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probebench.evaluation.precision import REFERENCE_DTYPE, TOLERANCE, beyond_tolerance
from probebench.evaluation.results import ProbeInfo, Submission, TaskResult
from probebench.models.loading import resolve_dtype
from probebench.registry.store import (
    latest_results,
    precision_problems,
    read_history,
    result_path,
    store_submission,
)
from tests.registry_fixture import synthetic_result

ENTRY = "org/p-smollm2-135m-l1-v1"
TASK = "blimp_passive_1"


def _submission(task: TaskResult, dtype: str, device: str = "cpu") -> Submission:
    return Submission(spec_version="0.0.1", probebench_version="x",
                      probe=ProbeInfo(id="p", bundle_sha256="0" * 64, probe_type="linear",
                                      model="smollm2-135m", layer=1, position="last_token",
                                      license="MIT"),
                      model={"name": "smollm2-135m", "dtype": dtype}, device=device, seed=0,
                      bootstrap_resamples=100, versions={}, definitions={}, tasks=[task])


def _shifted(task: TaskResult, ece: float) -> TaskResult:
    return task.model_copy(update={"ece": task.ece + ece})


def test_auto_is_float32_on_every_device() -> None:
    assert resolve_dtype("auto", "cpu") == resolve_dtype("auto", "cuda") == REFERENCE_DTYPE
    assert resolve_dtype("bfloat16", "cuda") == "bfloat16"


def test_devices_alternate_without_new_records(tmp_path: Path) -> None:
    task = synthetic_result(TASK, 0.3, np.random.default_rng(0))
    assert len(store_submission(tmp_path, ENTRY, _submission(task, "float32", "cpu"))) == 1
    assert store_submission(tmp_path, ENTRY, _submission(task, "float32", "cuda")) == []
    assert store_submission(tmp_path, ENTRY, _submission(task, "float32", "cpu")) == []
    assert len(read_history(result_path(tmp_path, ENTRY, TASK))) == 1


def test_reduced_precision_is_accepted_within_tolerance_and_kept_apart_beyond(
        tmp_path: Path) -> None:
    task = synthetic_result(TASK, 0.3, np.random.default_rng(0))
    store_submission(tmp_path, ENTRY, _submission(task, "float32"))
    path = result_path(tmp_path, ENTRY, TASK)

    close = _submission(_shifted(task, TOLERANCE["ece"] / 2), "bfloat16", "cuda")
    assert precision_problems(tmp_path, ENTRY, close) == []
    assert store_submission(tmp_path, ENTRY, close) == []  # the float32 record stands
    assert len(read_history(path)) == 1

    far = _submission(_shifted(task, 2 * TOLERANCE["ece"]), "bfloat16", "cuda")
    (problem,) = precision_problems(tmp_path, ENTRY, far)
    gap = f"{2 * TOLERANCE['ece']:.4f}"
    assert problem.startswith(f"{TASK}: ece in bfloat16 is {gap} from the float32 result")
    assert store_submission(tmp_path, ENTRY, far) == [path]  # stored: nothing is hidden
    history = read_history(path)
    assert [r.dtype for r in history] == ["float32", "bfloat16"]
    # readers keep the float32 record
    assert latest_results(tmp_path, ENTRY)[TASK].dtype == "float32"
    assert latest_results(tmp_path, ENTRY)[TASK].result == history[0].result
    # the same bfloat16 numbers again add nothing
    assert store_submission(tmp_path, ENTRY, far) == []
    # a new float32 measurement becomes the reference
    newer = synthetic_result(TASK, 0.5, np.random.default_rng(0))
    store_submission(tmp_path, ENTRY, _submission(newer, "float32"))
    assert latest_results(tmp_path, ENTRY)[TASK].result == newer


def test_beyond_tolerance_names_each_metric() -> None:
    task = synthetic_result(TASK, 0.3, np.random.default_rng(0))
    assert beyond_tolerance(task, task) == {} and task.auroc.value is not None
    moved = task.model_copy(update={
        "auroc": task.auroc.model_copy(update={"value": task.auroc.value - 0.05}),
        "brier": task.brier + TOLERANCE["brier"] / 2})
    assert set(beyond_tolerance(task, moved)) == {"auroc"}


MODEL_COMMANDS = [["extract"], ["train"], ["sweep"], ["submit"], ["score-lm"],
                  ["registry", "evaluate"], ["registry", "publish"], ["reeval"],
                  ["reeval", "run"]]


