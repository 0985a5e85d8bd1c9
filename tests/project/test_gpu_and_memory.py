"""The CUDA path (skipped cleanly without a GPU) and peak memory (slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.models import Site, extract, load_model

REPO = Path(__file__).resolve().parents[2]


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


needs_cuda = pytest.mark.skipif(not _cuda(), reason="no CUDA device")
REFERENCE = "blimp-det-noun-smollm2-135m-l15-v1"
TASK = "blimp_determiner_noun_agreement_1"


@pytest.mark.gpu
@needs_cuda
def test_cuda_extraction_matches_cpu(smollm: Any) -> None:
    prompts = ["The cat sleeps on the mat.", "They were walking home.", "¿Dónde está?"]
    sites = [Site(15, "last_token"), Site(30, "token_avg")]
    cpu = extract(smollm, prompts, sites, cache=False, progress=False)
    gpu_lm = load_model("smollm2-135m", device="cuda", progress=False)
    assert (gpu_lm.device, gpu_lm.identity.dtype) == ("cuda", "float32")  # auto: float32
    gpu = extract(gpu_lm, prompts, sites, cache=False, progress=False)
    for site in sites:
        np.testing.assert_allclose(gpu[site], cpu[site], atol=1e-4, rtol=1e-5)
    half = extract("smollm2-135m", prompts, sites, device="cuda", dtype="bfloat16",
                   cache=False, progress=False)
    assert half.model.identity.dtype == "bfloat16"


def _submit(device: str, dtype: str) -> Any:
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.evaluation.submit import submit
    from probebench.tasks.catalog import TaskCatalog

    session = Session(TaskCatalog.default(), SubmitOptions(
        device=device, dtype=dtype, cache=False, progress=False, bootstrap=200))
    return submit(REPO / "registry/artifacts" / REFERENCE, [TASK], session=session)


@pytest.mark.gpu
@needs_cuda
def test_cuda_submit_agrees_with_the_cpu_under_the_precision_policy() -> None:
    """float32 on CUDA: the CPU's numbers within the reproducibility contract;
    bfloat16 on CUDA: within the precision policy's tolerances."""
    from probebench.evaluation.precision import beyond_tolerance
    from probebench.evaluation.reproducibility import differences

    cpu = _submit("cpu", "auto")
    cuda = _submit("cuda", "auto")
    assert cuda.device == "cuda" and cuda.model["dtype"] == "float32"
    assert not differences(cpu.tasks[0].model_dump(mode="json"),
                           cuda.tasks[0].model_dump(mode="json"))
    half = _submit("cuda", "bfloat16")
    assert half.model["dtype"] == "bfloat16"
    assert beyond_tolerance(cpu.tasks[0], half.tasks[0]) == {}


@pytest.mark.gpu
@needs_cuda
def test_cuda_train_and_registry_evaluate_reproduce_the_cpu(tmp_path: Path) -> None:
    import shutil

    from probebench.cli import main
    from probebench.train import TrainConfig, train

    site = Site(15, "last_token")
    cpu = train(TrainConfig(task=TASK, site=site, bootstrap=200, device="cpu"),
                progress=False, cache=False)
    cuda = train(TrainConfig(task=TASK, site=site, bootstrap=200, device="cuda"),
                 progress=False, cache=False)
    assert cuda.chosen == cpu.chosen
    np.testing.assert_allclose(cuda.test_probs, cpu.test_probs, atol=1e-5)
    # the stored CPU float32 results are reproduced on CUDA: nothing new is stored
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "registry", repo / "registry")
    entry = f"probebench/{REFERENCE}"
    assert main(["registry", "evaluate", entry, "--repo", str(repo), "--device", "cuda",
                 "--allow-dirty", "--quiet"]) == 0


@pytest.mark.slow
def test_peak_memory_of_10k_sentences_stays_under_1_5_gb() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "memory.py"),
                           "--n", "10000"], capture_output=True, text=True, check=True)
    line = proc.stdout.strip().splitlines()[-1].split()
    peak_gb = float(line[2])
    assert peak_gb < 1.5, proc.stdout
