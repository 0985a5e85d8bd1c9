"""One identity per model: the weights hash covers the tensors (name, dtype, shape,
bytes), never a safetensors header's order, metadata or JSON spacing; the tokenizer hash
covers what its JSON files say, not their formatting; and the embedded GGUF converts to
the same bytes every time. Small files written here, the real MiniLM and SmolLM2."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors import safe_open

from probebench.errors import ModelError
from probebench.hashing import sha256_file
from probebench.models import resolve_model
from probebench.models.builtin import BUILTIN_MODELS
from probebench.models.embedded import MARKER, WEIGHTS_METADATA, _convert, write_weights
from probebench.models.identity import IDENTITY_SCHEME, tokenizer_sha256, weights_sha256

#: (name, safetensors dtype, shape, raw bytes)
Tensor = tuple[str, str, list[int], bytes]


def _tensors() -> list[Tensor]:
    rng = np.random.default_rng(0)
    bf16 = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16).view(torch.int16).numpy()
    return [
        ("model.layers.0.weight", "F32", [2, 3], rng.standard_normal((2, 3)).astype("<f4")
         .tobytes()),
        ("model.embed.weight", "F16", [4], rng.standard_normal(4).astype("<f2").tobytes()),
        ("model.index", "I64", [2, 2], np.arange(4, dtype="<i8").tobytes()),
        ("model.scale", "BF16", [3], bf16.astype("<i2").tobytes()),
        ("lm_head.bias", "F32", [], np.float32(0.5).tobytes()),
    ]


def write_safetensors(path: Path, tensors: list[Tensor], *, header_order: list[str] | None
                      = None, metadata: dict[str, str] | None = None,
                      metadata_last: bool = False, indent: int | None = None) -> Path:
    """A safetensors file written by hand: the data in ``tensors``' order, the header's
    keys in ``header_order``, with the given metadata and JSON spacing."""
    entries: dict[str, Any] = {}
    offset = 0
    for name, dtype, shape, data in tensors:
        entries[name] = {"dtype": dtype, "shape": shape,
                         "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    header: dict[str, Any] = {}
    if metadata is not None and not metadata_last:
        header["__metadata__"] = metadata
    for name in header_order or list(entries):
        header[name] = entries[name]
    if metadata is not None and metadata_last:
        header["__metadata__"] = metadata
    text = json.dumps(header, indent=indent).encode("utf-8")
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors))
    return path


def _raw(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_header_order_metadata_and_spacing_do_not_count(tmp_path: Path) -> None:
    tensors = _tensors()
    names = [t[0] for t in tensors]
    a = write_safetensors(tmp_path / "a.safetensors", tensors, metadata={"format": "pt"})
    b = write_safetensors(tmp_path / "b.safetensors", tensors[::-1], header_order=names[::-1],
                          metadata={"format": "pt", "converted_by": "someone else"},
                          metadata_last=True, indent=2)
    c = write_safetensors(tmp_path / "c.safetensors", sorted(tensors), metadata=None)
    assert len({_raw(a), _raw(b), _raw(c)}) == 3  # three different files
    for path in (a, b, c):  # each a valid safetensors file with the same tensors
        with safe_open(str(path), framework="pt") as handle:
            assert sorted(handle.keys()) == sorted(names)
    same = weights_sha256([a], memo=False)
    assert len(same) == 64
    assert weights_sha256([b], memo=False) == weights_sha256([c], memo=False) == same
    # shards: the split into files does not count either
    first = write_safetensors(tmp_path / "s1.safetensors", tensors[:2])
    second = write_safetensors(tmp_path / "s2.safetensors", tensors[2:], indent=1)
    assert weights_sha256([second, first], memo=False) == same


@pytest.mark.parametrize("change", ["byte", "name", "dtype", "shape", "dropped"])
def test_what_the_tensors_are_does_count(tmp_path: Path, change: str) -> None:
    tensors = _tensors()
    same = weights_sha256([write_safetensors(tmp_path / "a.safetensors", tensors)],
                          memo=False)
    name, dtype, shape, data = tensors[0]  # F32 [2, 3]
    if change == "byte":
        flipped = bytearray(data)
        flipped[5] ^= 1
        tensors[0] = (name, dtype, shape, bytes(flipped))
    elif change == "name":
        tensors[0] = ("model.layers.1.weight", dtype, shape, data)
    elif change == "dtype":
        tensors[0] = (name, "I32", shape, data)  # the same bytes read as integers
    elif change == "shape":
        tensors[0] = (name, dtype, [3, 2], data)
    else:
        tensors = tensors[1:]
    other = write_safetensors(tmp_path / "b.safetensors", tensors)
    assert weights_sha256([other], memo=False) != same


def test_a_tensor_in_two_shards_is_refused(tmp_path: Path) -> None:
    tensors = _tensors()
    first = write_safetensors(tmp_path / "s1.safetensors", tensors[:2])
    second = write_safetensors(tmp_path / "s2.safetensors", tensors[1:])
    with pytest.raises(ModelError, match="also in another safetensors file"):
        weights_sha256([first, second], memo=False)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00not json")
    with pytest.raises(ModelError, match="not a readable safetensors file"):
        weights_sha256([bad], memo=False)


def test_the_memo_misses_when_a_file_changes(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBEBENCH_HOME", str(tmp_path / "home"))
    tensors = _tensors()
    path = write_safetensors(tmp_path / "a.safetensors", tensors)
    first = weights_sha256([path])
    assert weights_sha256([path]) == first  # from the memo
    memo = json.loads((tmp_path / "home" / "file-hashes.json").read_text())
    assert list(memo.values()) == [first]
    assert sha256_file(path) == _raw(path) != first  # the bytes' hash is kept apart
    name, dtype, shape, _ = tensors[-1]
    tensors[-1] = (name, dtype, shape, np.float32(0.25).tobytes())
    write_safetensors(path, tensors)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert weights_sha256([path]) == weights_sha256([path], memo=False) != first


def test_tokenizer_json_is_hashed_by_what_it_says(tmp_path: Path) -> None:
    doc = {"model": {"vocab": {"a": 0, "b": 1}, "type": "BPE"}, "added_tokens": [],
           "version": "1.0"}
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, text in ((one, json.dumps(doc)),
                         (two, json.dumps(doc, indent=4, sort_keys=True) + "\n")):
        folder.mkdir()
        (folder / "tokenizer.json").write_text(text)
        (folder / "vocab.txt").write_text("a\nb\n")
    files = ["tokenizer.json", "vocab.txt"]
    assert _raw(one / "tokenizer.json") != _raw(two / "tokenizer.json")
    same = tokenizer_sha256([one / f for f in files], one, memo=False)
    assert tokenizer_sha256([two / f for f in files], two, memo=False) == same
    # a token's id is what a tokenizer says: it counts, as do other files' bytes
    doc["model"]["vocab"]["b"] = 2  # type: ignore[index]
    (two / "tokenizer.json").write_text(json.dumps(doc))
    assert tokenizer_sha256([two / f for f in files], two, memo=False) != same
    (one / "vocab.txt").write_text("a\nb \n")
    assert tokenizer_sha256([one / f for f in files], one, memo=False) != same


def test_how_a_tokenizer_was_loaded_does_not_count(tmp_path: Path) -> None:
    """transformers writes ``local_files_only`` (``HF_HUB_OFFLINE``) and ``is_local`` into
    tokenizer_config.json; what the tokenizer is does not change with them."""
    config = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "model_max_length": 8}
    hashes = []
    for k, extra in enumerate(({}, {"is_local": True, "local_files_only": False},
                               {"is_local": True, "local_files_only": True})):
        folder = tmp_path / str(k)
        folder.mkdir()
        (folder / "tokenizer_config.json").write_text(json.dumps({**config, **extra}))
        hashes.append(tokenizer_sha256([folder / "tokenizer_config.json"], folder,
                                       memo=False))
    assert len(set(hashes)) == 1
    (tmp_path / "0" / "tokenizer_config.json").write_text(
        json.dumps({**config, "bos_token": "<|endoftext|>"}))
    assert tokenizer_sha256([tmp_path / "0" / "tokenizer_config.json"], tmp_path / "0",
                            memo=False) != hashes[0]


def _reconverted(source: Path, target: Path) -> None:
    """``source``'s folder with its weights written again in another header order, with
    other metadata and spacing, and its tokenizer JSON files reformatted."""
    shutil.copytree(source, target)
    with safe_open(str(source / "model.safetensors"), framework="pt") as handle:
        names = list(handle.keys())
        tensors = []
        for name in sorted(names, reverse=True):
            part = handle.get_slice(name)
            tensor = handle.get_tensor(name).contiguous().reshape(-1)
            tensors.append((name, str(part.get_dtype()), list(part.get_shape()),
                            tensor.view(torch.uint8).numpy().tobytes()))
    write_safetensors(target / "model.safetensors", tensors, header_order=sorted(names),
                      metadata={"format": "pt", "source": "another converter"}, indent=1)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        path = target / name
        if path.is_file():
            path.write_text(json.dumps(json.loads(path.read_text()), indent=3,
                                       sort_keys=True), "utf-8")


def test_two_conversions_of_minilm_have_one_identity(tmp_path: Path) -> None:
    source = BUILTIN_MODELS["minilm-l6"].source_path()
    _reconverted(source, tmp_path / "other")
    assert _raw(tmp_path / "other" / "model.safetensors") != _raw(source / "model.safetensors")
    assert _raw(tmp_path / "other" / "tokenizer.json") != _raw(source / "tokenizer.json")
    a = resolve_model("minilm-l6", device="cpu", progress=False).identity
    b = resolve_model(str(tmp_path / "other"), device="cpu", progress=False).identity
    assert a.hash_scheme == b.hash_scheme == IDENTITY_SCHEME
    assert (a.weights_sha256, a.tokenizer_sha256) == (b.weights_sha256, b.tokenizer_sha256)
    assert a.to_dict()["hash_scheme"] == IDENTITY_SCHEME  # stored with every result
    # one byte of one tensor: another model
    weights = tmp_path / "other" / "model.safetensors"
    with weights.open("r+b") as f:
        data_start = 8 + struct.unpack("<Q", f.read(8))[0]
        f.seek(data_start + 1000)
        byte = f.read(1)
        f.seek(data_start + 1000)
        f.write(bytes([byte[0] ^ 0x40]))
    c = resolve_model(str(tmp_path / "other"), device="cpu", progress=False).identity
    assert c.weights_sha256 != a.weights_sha256 and c.tokenizer_sha256 == a.tokenizer_sha256


def test_smollm2_weights_are_written_the_same_every_time(smollm: Any, tmp_path: Path) -> None:
    """The loaded model, written again in this process, gives the converted file's bytes
    (written by another process): one header order, one metadata, one layout."""
    folder = smollm.resolved.path
    write_weights(smollm.model, tmp_path / "a.safetensors")
    converted = folder / "model.safetensors"
    assert (tmp_path / "a.safetensors").stat().st_size == converted.stat().st_size
    assert _raw(tmp_path / "a.safetensors") == sha256_file(converted)
    with safe_open(str(converted), framework="pt") as handle:
        assert handle.metadata() == WEIGHTS_METADATA
        names = set(handle.keys())
    # the tied embedding once, under the name transformers saves it
    assert "model.embed_tokens.weight" in names and "lm_head.weight" not in names
    assert smollm.identity.weights_sha256 == weights_sha256([tmp_path / "a.safetensors"],
                                                            memo=False)


@pytest.mark.slow
def test_converting_the_gguf_again_gives_the_same_folder(smollm: Any, tmp_path: Path) -> None:
    folder = smollm.resolved.path
    _convert(BUILTIN_MODELS["smollm2-135m"].source_path(), tmp_path, verbose=False)
    ours = sorted(p.name for p in tmp_path.iterdir())
    assert ours == sorted(p.name for p in folder.iterdir() if p.name != MARKER)
    for name in ours:
        assert _raw(tmp_path / name) == _raw(folder / name), name
