"""The activations file written by ``probebench extract``.

A safetensors file with one float32 tensor ``(n_prompts, hidden_size)`` per site, named
``layer{L}.{position}``, and string metadata: ``probebench_version``, ``model`` (the
model identity as JSON), ``sites`` (JSON list of ``LAYER:POSITION``), ``prompt_ids``
(JSON list; the line number when a prompt has no id) and ``prompts_sha256``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from probebench.hashing import atomic_writer
from probebench.models.activations import ExtractionResult
from probebench.models.cache import prompts_sha256
from probebench.prompts import Prompt
from probebench.version import __version__


def write_activations(path: Path, result: ExtractionResult, prompts: Sequence[Prompt]) -> None:
    """Write the file atomically: a failed run never leaves a partial file behind."""
    from safetensors.numpy import save

    tensors = {site.tensor_name: np.ascontiguousarray(arr) for site, arr in result.arrays.items()}
    metadata = {
        "probebench_version": __version__,
        "model": json.dumps(result.model.identity.to_dict(), sort_keys=True),
        "sites": json.dumps([str(s) for s in result.arrays]),
        "prompt_ids": json.dumps([p.id if p.id is not None else str(i + 1)
                                  for i, p in enumerate(prompts)]),
        "prompts_sha256": prompts_sha256(prompts),
    }
    with atomic_writer(Path(path)) as handle:
        handle.write(save(tensors, metadata=metadata))
