"""A content-addressed, on-disk cache of pooled activations.

One entry holds the activations of one site for one ordered list of prompts. Its key
is the SHA-256 of a canonical JSON record of everything that decides the numbers:

* the model identity (weights hash, tokenizer hash, dtype, layers, hidden size),
* the device kind (``cpu`` or ``cuda``: kernels differ in the last bits),
* every prompt's exact text and spans, in order,
* the site, and
* the versions of probebench, torch and transformers and the cache format.

Batch sizes are not part of the key: they change results only by float rounding.

Entries are safetensors files written atomically (temporary file, fsync, rename). The
SHA-256 of the array bytes is stored in the file's metadata and checked on every
read; an entry that fails the check (truncated, edited, bit-flipped) is reported,
deleted and rebuilt, never used.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from probebench import paths
from probebench.errors import CacheError
from probebench.hashing import atomic_writer, sha256_bytes, sha256_json
from probebench.models.loading import ModelIdentity
from probebench.prompts import Prompt
from probebench.sites import Site

FORMAT_VERSION = 1
_TENSOR = "activations"
log = logging.getLogger(__name__)


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("probebench", "torch", "transformers"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


def prompts_sha256(prompts: Sequence[Prompt], prefix: str | None = None) -> str:
    """Hash of the prompts' texts and spans (and of a shared prefix, when there is one)."""
    records: list[object] = [p.canonical() for p in prompts]
    if prefix:
        records.append({"prefix": prefix})
    return sha256_json(records)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    corrupt: int = 0


class ActivationCache:
    """The cache folder (default ``$PROBEBENCH_HOME/activations``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.activation_cache_dir()
        self.stats = CacheStats()

    def key(self, identity: ModelIdentity, device: str, prompts_hash: str, site: Site) -> str:
        record = {
            "format": FORMAT_VERSION,
            "model": identity.to_dict(),
            "device": device,
            "prompts_sha256": prompts_hash,
            "site": {"layer": site.layer, "position": site.position},
            "versions": _versions(),
        }
        return sha256_json(record)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.safetensors"

    def get(self, key: str, shape: tuple[int, int]) -> np.ndarray | None:
        """The cached array, or None on a miss or a corrupt entry (which is deleted)."""
        path = self.path(key)
        if not path.is_file():
            self.stats.misses += 1
            return None
        problem = self._check(path, key, shape)
        if isinstance(problem, np.ndarray):
            self.stats.hits += 1
            return problem
        log.warning("activation cache entry %s is corrupt (%s); rebuilding it", path, problem)
        self.stats.corrupt += 1
        self.stats.misses += 1
        with contextlib.suppress(OSError):
            path.unlink()
        return None

    @staticmethod
    def _check(path: Path, key: str, shape: tuple[int, int]) -> np.ndarray | str:
        from safetensors import SafetensorError
        from safetensors.numpy import load

        try:
            data = path.read_bytes()
            arrays = load(data)
            meta = _metadata(data)
        except (OSError, SafetensorError, ValueError) as exc:
            return f"unreadable: {exc}"
        array = arrays.get(_TENSOR)
        if array is None:
            return "no activations tensor"
        if meta.get("key") != key:
            return "stored key differs from its file name"
        if tuple(array.shape) != shape or array.dtype != np.float32:
            return f"shape {array.shape} {array.dtype}, expected {shape} float32"
        if sha256_bytes(np.ascontiguousarray(array).tobytes()) != meta.get("sha256"):
            return "checksum mismatch"
        return array

    def put(self, key: str, array: np.ndarray, info: dict[str, str] | None = None) -> Path:
        from safetensors.numpy import save

        array = np.ascontiguousarray(array, dtype=np.float32)
        meta = {"key": key, "sha256": sha256_bytes(array.tobytes()), **(info or {})}
        path = self.path(key)
        try:
            with atomic_writer(path) as handle:
                handle.write(save({_TENSOR: array}, metadata=meta))
        except OSError as exc:
            raise CacheError(f"cannot write the activation cache at {self.root} ({exc}); "
                             "set PROBEBENCH_ACTIVATION_CACHE or use --no-cache") from exc
        return path


def _metadata(data: bytes) -> dict[str, Any]:
    """The ``__metadata__`` of a safetensors file held in memory."""
    if len(data) < 8:
        raise ValueError("file shorter than its header")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise ValueError("header longer than the file")
    header = json.loads(data[8:8 + size])
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict):
        raise ValueError("metadata is not an object")
    return meta
