"""A model's identity hashes: what its weights and tokenizer *are*, not how a converter
happened to write them.

A safetensors file is an 8-byte length, a JSON header (each tensor's dtype, shape and
byte offsets, plus free-form ``__metadata__``) and the tensors' bytes. Two conversions
of the same tensors can differ in the header's key order (safetensors writes its
``__metadata__`` from a hash map, whose order changes from one process to the next),
in its metadata, its JSON spacing or the tensors' layout, so a hash of the files'
bytes gives the same weights several identities. The identity here reads the files
with the ``safetensors`` library and hashes the tensors themselves:

* **weights** (``WEIGHTS_SCHEME``): every tensor of every ``*.safetensors`` file of the
  folder (shards together), sorted by name; each contributes one line of canonical JSON
  ``{"bytes": N, "dtype": "F32", "name": ..., "shape": [...]}`` followed by its N raw
  bytes (little-endian, as stored). The header's order and formatting, ``__metadata__``
  and the split into shards do not count. Tensors are read one at a time, so memory
  holds at most the largest tensor once.
* **tokenizer** (``TOKENIZER_SCHEME``): the manifest (``hashing.manifest_text``) of the
  tokenizer files, each hashed by what it says: a ``.json`` file as canonical JSON
  (parsed, then written with sorted keys and fixed separators), any other file by its
  bytes. ``tokenizer_config.json``'s ``LOADER_KEYS`` are left out: transformers writes
  there how the tokenizer was loaded (``local_files_only`` is ``HF_HUB_OFFLINE``), not
  what it is.

Both are memoised by file state (``hashing.memoised``), so a warm run hashes nothing.
``IDENTITY_SCHEME`` names the pair and is stored in every identity (``hash_scheme``):
identities stored before it lack the field, and their hashes are of the files' bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from probebench.errors import ModelError
from probebench.hashing import canonical_json, manifest_text, memoised, sha256_bytes

WEIGHTS_SCHEME = "safetensors-tensors-v1"
TOKENIZER_SCHEME = "tokenizer-canonical-v1"
#: stored in ``ModelIdentity.hash_scheme``
IDENTITY_SCHEME = "canonical-v1"
#: keys of tokenizer_config.json that say how a tokenizer was loaded, not what it is
LOADER_KEYS = frozenset({"is_local", "local_files_only", "cache_dir", "force_download",
                         "proxies", "revision", "subfolder", "token", "trust_remote_code",
                         "_commit_hash", "gguf_file"})


def _tensor_bytes(tensor: Any) -> Any:
    """A tensor's raw bytes as a buffer hashlib reads without another copy."""
    import torch

    flat = tensor.contiguous().reshape(-1)
    if flat.dtype != torch.uint8:
        flat = flat.view(torch.uint8)
    return flat.numpy()


def _weights_digest(files: Sequence[Path]) -> str:
    from safetensors import safe_open

    digest = hashlib.sha256(f"{WEIGHTS_SCHEME}\n".encode("ascii"))
    with ExitStack() as stack:
        where: dict[str, Any] = {}
        for path in files:
            try:
                handle = stack.enter_context(safe_open(str(path), framework="pt"))
            except Exception as exc:  # safetensors raises its own error types
                raise ModelError(f"{path}: not a readable safetensors file ({exc})") from exc
            for name in handle.keys():  # noqa: SIM118 - a safe_open handle, not a dict
                if name in where:
                    raise ModelError(f"{path}: tensor {name!r} is also in another "
                                     "safetensors file of the folder")
                where[name] = handle
        for name in sorted(where, key=lambda n: n.encode("utf-8")):
            handle = where[name]
            part = handle.get_slice(name)
            data = _tensor_bytes(handle.get_tensor(name))
            head = {"bytes": int(data.nbytes), "dtype": str(part.get_dtype()),
                    "name": name, "shape": [int(d) for d in part.get_shape()]}
            digest.update(canonical_json(head).encode("utf-8") + b"\n")
            digest.update(data)
            del data
    return digest.hexdigest()


def weights_sha256(files: Sequence[Path], *, memo: bool = True) -> str:
    """The canonical hash of the tensors in ``files`` (see the module docstring)."""
    ordered = sorted(Path(f) for f in files)
    return memoised(ordered, WEIGHTS_SCHEME, lambda: _weights_digest(ordered), memo=memo)


def _file_digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".json":
        try:
            value = json.loads(data)
            if path.name == "tokenizer_config.json" and isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in LOADER_KEYS}
            return sha256_bytes(b"json:" + canonical_json(value).encode("utf-8"))
        except ValueError:
            pass  # not JSON after all (or NaN in it): its bytes are what it says
    return sha256_bytes(b"bytes:" + data)


def tokenizer_sha256(files: Sequence[Path], root: Path, *, memo: bool = True) -> str:
    """The canonical hash of a folder's tokenizer files (see the module docstring)."""
    ordered = sorted(Path(f) for f in files)

    def compute() -> str:
        text = manifest_text((f.relative_to(root).as_posix(), _file_digest(f))
                             for f in ordered)
        return sha256_bytes(f"{TOKENIZER_SCHEME}\n{text}".encode())

    return memoised(ordered, TOKENIZER_SCHEME, compute, memo=memo)


__all__ = ["IDENTITY_SCHEME", "LOADER_KEYS", "TOKENIZER_SCHEME", "WEIGHTS_SCHEME",
           "tokenizer_sha256", "weights_sha256"]
