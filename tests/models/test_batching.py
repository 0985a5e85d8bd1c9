"""The device runtime: batch budgets are sized from the device and the model, reduced
precision is part of the cache key, and every model command has the runtime options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.cli import build_parser
from probebench.models.batching import (
    BATCH_TOKENS,
    CPU_MAX_ROWS,
    GPU_MAX_ROWS,
    GPU_MAX_TOKENS,
    Budget,
    batch_budget,
    gpu_budget,
    weight_count,
)
from probebench.models.loading import needs_offload


def test_gpu_budgets_come_from_total_memory_and_the_model() -> None:
    small = gpu_budget(80 * 2**30, 135_000_000, 576, 1536, "bfloat16")
    assert small == Budget(GPU_MAX_TOKENS, GPU_MAX_ROWS)
    big = gpu_budget(80 * 2**30, 8_000_000_000, 4096, 14336, "bfloat16")
    assert BATCH_TOKENS < big.tokens < GPU_MAX_TOKENS and big.rows == GPU_MAX_ROWS
    # the same inputs always give the same budget; less memory never gives more
    assert big == gpu_budget(80 * 2**30, 8_000_000_000, 4096, 14336, "bfloat16")
    assert gpu_budget(40 * 2**30, 8_000_000_000, 4096, 14336, "bfloat16").tokens < big.tokens
    assert gpu_budget(8 * 2**30, 8_000_000_000, 4096, 14336, "float32") == Budget(
        BATCH_TOKENS, CPU_MAX_ROWS)  # does not fit: offloaded, the floor budget
    assert needs_offload(8_000_000_000, "float32", 24 * 2**30)
    assert not needs_offload(8_000_000_000, "bfloat16", 80 * 2**30)


def test_cpu_budget_and_overrides(smollm: Any) -> None:
    folder = smollm.resolved.path
    assert batch_budget(folder, device="cpu", dtype="float32", hidden=576) == Budget(
        BATCH_TOKENS, CPU_MAX_ROWS)
    assert batch_budget(folder, device="cpu", dtype="float32", hidden=576, tokens=512,
                        rows=8) == Budget(512, 8)
    # the weights' headers give the parameter count the loaded model has (the tied LM
    # head counted once)
    assert weight_count(folder) == sum(t.numel() for t in smollm.model.parameters())


def test_reduced_precision_batching_is_part_of_the_cache_key(smollm: Any,
                                                              tmp_path: Path) -> None:
    """The keys ``extract`` uses (``cache_keys``, the one place that decides): two batch
    budgets share a float32 entry and never a bfloat16 one."""
    import dataclasses

    from probebench.models import ActivationCache, Site
    from probebench.models.activations import cache_keys
    from probebench.models.batching import Budget

    cache = ActivationCache(tmp_path)
    sites = [Site(3, "last_token"), Site(5, "token_avg")]
    small, large = Budget(4096, 64), Budget(262144, 1024)
    full = smollm.resolved
    half = dataclasses.replace(full, identity=dataclasses.replace(full.identity,
                                                                  dtype="bfloat16"))
    assert cache_keys(cache, full, "h", sites, small) == cache_keys(cache, full, "h", sites,
                                                                    large)
    one, other = cache_keys(cache, half, "h", sites, small), cache_keys(cache, half, "h",
                                                                         sites, large)
    assert set(one) == set(other) == set(sites)
    assert all(one[site] != other[site] for site in sites)
    # precision and prompts are part of every key
    assert cache_keys(cache, half, "h", sites, small) != cache_keys(cache, full, "h", sites,
                                                                    small)
    assert cache_keys(cache, full, "g", sites, small) != cache_keys(cache, full, "h", sites,
                                                                    small)


def test_bfloat16_extraction_on_the_cpu_is_recorded_and_close(smollm: Any,
                                                              tmp_path: Path) -> None:
    from probebench.models import ActivationCache, Site, extract

    prompts = ["The cat sleeps on the mat.", "They were walking home.", "¿Dónde está?"]
    site = Site(15, "last_token")
    full = extract(smollm, prompts, [site], cache=False, progress=False)[site]
    cache = ActivationCache(tmp_path)
    half = extract("smollm2-135m", prompts, [site], dtype="bfloat16", cache=cache,
                   progress=False)
    assert half.model.identity.dtype == "bfloat16"
    cos = (full * half[site]).sum(1) / (np.linalg.norm(full, axis=1)
                                        * np.linalg.norm(half[site], axis=1))
    assert cos.min() > 0.95  # close, not equal: why it is not the reference
    assert not np.array_equal(full, half[site])
    # another batch budget is another cache entry in reduced precision
    again = extract(half.model, prompts, [site], cache=cache, max_batch_size=1,
                    progress=False)
    assert again.cached == set() and len(list(tmp_path.rglob("*.safetensors"))) == 2


MODEL_COMMANDS = [["extract"], ["train"], ["sweep"], ["submit"], ["score-lm"],
                  ["registry", "evaluate"], ["registry", "publish"], ["reeval"],
                  ["reeval", "run"]]


@pytest.mark.parametrize("command", MODEL_COMMANDS, ids=" ".join)
def test_every_model_command_has_the_runtime_options(command: list[str]) -> None:
    parser = build_parser()
    sub: Any = parser
    for word in command:
        action = next(a for a in sub._actions if a.dest and hasattr(a, "choices")
                      and isinstance(a.choices, dict) and word in a.choices)
        sub = action.choices[word]
    options = {o for a in sub._actions for o in a.option_strings}
    assert {"--device", "--dtype"} <= options
    if command != ["score-lm"]:  # reads logits, not pooled activations
        assert {"--batch-tokens", "--max-batch-size"} <= options


def test_the_documented_examples_hold() -> None:
    import doctest

    from probebench.models import batching, loading

    for module in (batching, loading):
        assert doctest.testmod(module).failed == 0
