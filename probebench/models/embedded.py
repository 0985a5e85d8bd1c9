"""One-time conversion of the embedded GGUF model into a cached Hugging Face folder.

Dequantising the Q4_1 GGUF with transformers takes ~20 s on two cores; the result
(float32 safetensors, config and tokenizer) is written once under
``$PROBEBENCH_HOME/models/<alias>-<gguf sha256[:16]>`` and loads in well under a second.
The folder is built in a temporary sibling and renamed into place, so a killed
conversion never leaves a folder that looks complete.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from probebench import paths
from probebench.errors import ModelError
from probebench.hashing import sha256_file
from probebench.models._hf import quiet_transformers
from probebench.models.builtin import BuiltinModel

#: Bumped when the conversion recipe changes, so old folders are not reused.
CONVERSION_VERSION = 2
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


def _convert(gguf_path: Path, out: Path, *, verbose: bool) -> None:
    import torch
    from safetensors.torch import save_model
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
    save_model(model, str(out / "model.safetensors"), metadata={"format": "pt"})
    model.config.save_pretrained(out)
    tokenizer.save_pretrained(out)
