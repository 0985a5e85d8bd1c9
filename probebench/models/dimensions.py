"""Layer count and hidden size of a model, without loading its weights.

Validation must know a probe's expected input width without loading a model: the
built-in aliases and a small table of well-known hub ids answer at once; any other
name is looked up in its ``config.json`` (a local folder, or the hub's config only,
honouring ``HF_HUB_OFFLINE``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probebench.errors import InputError, ModelError
from probebench.jsonsafe import load_json
from probebench.models.builtin import BUILTIN_MODELS
from probebench.paths import hub_offline

#: (num_layers, hidden_size) of well-known models, from their published configs
KNOWN_DIMENSIONS: dict[str, tuple[int, int]] = {
    "HuggingFaceTB/SmolLM2-135M": (30, 576),
    "HuggingFaceTB/SmolLM2-135M-Instruct": (30, 576),
    "HuggingFaceTB/SmolLM2-360M": (32, 960),
    "HuggingFaceTB/SmolLM2-360M-Instruct": (32, 960),
    "HuggingFaceTB/SmolLM2-1.7B": (24, 2048),
    "HuggingFaceTB/SmolLM2-1.7B-Instruct": (24, 2048),
    "sentence-transformers/all-MiniLM-L6-v2": (6, 384),
    "gpt2": (12, 768),
    "openai-community/gpt2": (12, 768),
    "gpt2-medium": (24, 1024),
    "gpt2-large": (36, 1280),
    "gpt2-xl": (48, 1600),
    "bert-base-uncased": (12, 768),
    "google-bert/bert-base-uncased": (12, 768),
    "Qwen/Qwen2.5-0.5B": (24, 896),
    "Qwen/Qwen2.5-0.5B-Instruct": (24, 896),
    "meta-llama/Llama-3.2-1B": (16, 2048),
    "meta-llama/Llama-3.1-8B": (32, 4096),
    "meta-llama/Llama-3.1-8B-Instruct": (32, 4096),
    "mistralai/Mistral-7B-v0.1": (32, 4096),
}


def _from_config(config: dict[str, Any], source: str) -> tuple[int, int]:
    scope = [config, config.get("text_config") or {}]
    layers = next((s[k] for s in scope for k in ("num_hidden_layers", "n_layer", "num_layers")
                   if isinstance(s.get(k), int)), None)
    hidden = next((s[k] for s in scope for k in ("hidden_size", "n_embd", "d_model")
                   if isinstance(s.get(k), int)), None)
    if layers is None or hidden is None:
        raise ModelError(f"{source}: the config gives no layer count or hidden size")
    return int(layers), int(hidden)


def model_dimensions(name: str) -> tuple[int, int]:
    """(num_layers, hidden_size) of a model alias, hub id or local folder."""
    builtin = BUILTIN_MODELS.get(name)
    if builtin is not None:
        return builtin.num_layers, builtin.hidden_size
    if name in KNOWN_DIMENSIONS:
        return KNOWN_DIMENSIONS[name]
    local = Path(name).expanduser()
    if (local / "config.json").is_file():
        return _from_config(_config(local / "config.json"), str(local))
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    offline = hub_offline()
    try:
        path = hf_hub_download(name, "config.json", local_files_only=offline)
    except (LocalEntryNotFoundError, HfHubHTTPError, ValueError, OSError):
        where = "the local Hugging Face cache" if offline else "the Hugging Face hub"
        raise ModelError(f"cannot find the dimensions of model {name!r}: not a built-in alias "
                         f"({', '.join(BUILTIN_MODELS)}), not in probebench's table of known "
                         f"models, and its config.json is not in {where}") from None
    return _from_config(_config(Path(path)), name)


def _config(path: Path) -> Any:
    try:
        return load_json(path)
    except InputError as exc:
        raise ModelError(f"cannot read the model config: {exc}") from None
