"""The CUDA path (skipped cleanly without a GPU) and peak memory (slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.models import Site, extract, load_model

REPO = Path(__file__).resolve().parents[1]


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="no CUDA device")
def test_cuda_extraction_matches_cpu(smollm: Any) -> None:
    prompts = ["The cat sleeps on the mat.", "They were walking home.", "¿Dónde está?"]
    sites = [Site(15, "last_token"), Site(30, "token_avg")]
    cpu = extract(smollm, prompts, sites, cache=False, progress=False)
    gpu_lm = load_model("smollm2-135m", device="cuda", dtype="float32", progress=False)
    assert gpu_lm.device == "cuda"
    gpu = extract(gpu_lm, prompts, sites, cache=False, progress=False)
    for site in sites:
        np.testing.assert_allclose(gpu[site], cpu[site], atol=1e-2, rtol=1e-3)
    auto = load_model("smollm2-135m", progress=False)
    assert (auto.device, auto.identity.dtype) == ("cuda", "bfloat16")


@pytest.mark.slow
def test_peak_memory_of_10k_sentences_stays_under_1_5_gb() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "memory.py"),
                           "--n", "10000"], capture_output=True, text=True, check=True)
    line = proc.stdout.strip().splitlines()[-1].split()
    peak_gb = float(line[2])
    assert peak_gb < 1.5, proc.stdout
