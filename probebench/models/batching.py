"""How many prompts and padded tokens one forward batch holds, sized from the device.

On the CPU the budget is the one measured best on small machines (``BATCH_TOKENS``
padded tokens, at most ``CPU_MAX_ROWS`` prompts; BENCHMARKS.md, "Extraction"). On a GPU
a small batch leaves the device idle most of the time, so the budget is sized from the
device's total memory less the model's weights, over an estimate of the memory one
token needs in flight (the residual stream, attention and MLP intermediates of the
widest block, in the model's dtype). The estimate uses only the device's *total*
memory and the model's config and weights headers, never the free memory of the
moment, so the same model on the same kind of GPU always gets the same batches: with
reduced precision the batch composition changes the numbers, and it is part of the
activation cache key there.

Either number can be given instead (``--batch-tokens``, ``--max-batch-size``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from probebench.errors import SiteError
from probebench.jsonsafe import load_json

#: padded tokens per batch on the CPU (the measured optimum on 2-16 cores)
BATCH_TOKENS = 4096
#: prompts per batch on the CPU
CPU_MAX_ROWS = 64
#: the GPU budget's bounds: at least the CPU's, at most what stops paying off (issue 16:
#: 262k tokens and 1,024 rows saturate an H100 for a 135M-1B model)
GPU_MIN_TOKENS, GPU_MAX_TOKENS = BATCH_TOKENS, 262_144
GPU_MIN_ROWS, GPU_MAX_ROWS = CPU_MAX_ROWS, 1024
#: share of the memory left after the weights that activations in flight may use
GPU_ACTIVATION_SHARE = 0.5
#: memory kept free on a GPU (CUDA context, allocator slack), bytes
GPU_RESERVE = 2 * 2**30

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class Budget:
    """At most ``tokens`` padded tokens and ``rows`` prompts per forward batch."""

    tokens: int
    rows: int

    def __post_init__(self) -> None:
        if self.tokens < 1 or self.rows < 1:
            raise SiteError(f"a batch budget needs at least 1 token and 1 prompt; "
                            f"found {self.tokens} tokens, {self.rows} prompts")

    def describe(self) -> str:
        return f"{self.tokens} tokens, {self.rows} prompts per batch"


def token_bytes(hidden: int, intermediate: int, dtype: str) -> int:
    """Bytes one token needs in flight through a block: about 16 hidden-size vectors
    (residual, norms, q/k/v, attention output, sdpa workspace) and 4 MLP-width ones
    (gate, up, their product, the activation), in ``dtype``; pooling is float32."""
    return DTYPE_BYTES[dtype] * (16 * hidden + 4 * intermediate)


def weight_count(folder: Path) -> int:
    """Parameters stored in a folder's safetensors files (headers only, nothing loaded)."""
    from safetensors import safe_open

    total = 0
    for path in sorted(folder.glob("*.safetensors")):
        with safe_open(str(path), framework="np") as handle:
            for name in handle.keys():  # noqa: SIM118 (safe_open is not a dict)
                total += math.prod(handle.get_slice(name).get_shape())
    return total


def intermediate_size(folder: Path, hidden: int) -> int:
    config = load_json(folder / "config.json")
    for source in (config, config.get("text_config") or {}):
        for key in ("intermediate_size", "n_inner", "ffn_dim", "d_ff"):
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, int) and value > 0:
                return value
    return 4 * hidden


def gpu_budget(total_memory: int, weights: int, hidden: int, intermediate: int,
               dtype: str) -> Budget:
    """The GPU budget for a device of ``total_memory`` bytes holding ``weights``
    parameters in ``dtype``.

    >>> gpu_budget(80 * 2**30, 135_000_000, 576, 1536, "bfloat16")
    Budget(tokens=262144, rows=1024)
    >>> gpu_budget(80 * 2**30, 8_000_000_000, 4096, 14336, "bfloat16")
    Budget(tokens=137841, rows=1024)
    >>> gpu_budget(16 * 2**30, 8_000_000_000, 4096, 14336, "bfloat16")  # offloaded
    Budget(tokens=4096, rows=64)
    """
    free = total_memory - GPU_RESERVE - weights * DTYPE_BYTES[dtype]
    per_token = token_bytes(hidden, intermediate, dtype)
    tokens = int(max(0, free) * GPU_ACTIVATION_SHARE // per_token)
    tokens = min(GPU_MAX_TOKENS, max(GPU_MIN_TOKENS, tokens))
    rows = min(GPU_MAX_ROWS, max(GPU_MIN_ROWS, tokens // 64))
    return Budget(tokens=tokens, rows=rows)


def device_total_memory(device: str) -> int:
    import torch

    return int(torch.cuda.get_device_properties(torch.device(device)).total_memory)


def batch_budget(folder: Path, *, device: str, dtype: str, hidden: int,
                 tokens: int | None = None, rows: int | None = None) -> Budget:
    """The budget for a model (its folder, hidden size and dtype) on ``device``; a
    given ``tokens`` or ``rows`` replaces the sized one."""
    if tokens is not None and rows is not None:
        return Budget(tokens=tokens, rows=rows)  # given: no device query, no file read
    if device == "cpu":
        sized = Budget(BATCH_TOKENS, CPU_MAX_ROWS)
    else:
        sized = gpu_budget(device_total_memory(device), weight_count(folder), hidden,
                           intermediate_size(folder, hidden), dtype)
    return Budget(tokens=tokens if tokens is not None else sized.tokens,
                  rows=rows if rows is not None else sized.rows)
