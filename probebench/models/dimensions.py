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
from probebench.models.builtin import BUILTIN_MODELS, KNOWN_DIMENSIONS
from probebench.models.names import alias_typo, cached_hub_models, check_on_hub, did_you_mean
from probebench.paths import hub_offline


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
    if name.count("/") > 1 or name.startswith((".", "/", "~")):
        raise _unknown(name, "no such folder exists")
    if alias_typo(name) is not None and name not in cached_hub_models():
        raise _unknown(name, "it looks like a typo of a built-in alias, so the hub was not asked")
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    offline = hub_offline()
    try:
        path = hf_hub_download(name, "config.json", local_files_only=True)
    except (LocalEntryNotFoundError, HfHubHTTPError, ValueError, OSError):
        if offline:
            raise _unknown(name, "its config.json is not in the local Hugging Face cache "
                           "(HF_HUB_OFFLINE is set)") from None
        # one quick question first: the download retries for ~25 s when it fails
        check_on_hub(name)
        try:
            path = hf_hub_download(name, "config.json")
        except (LocalEntryNotFoundError, HfHubHTTPError, ValueError, OSError):
            raise _unknown(name, "its config.json could not be read from the Hugging Face "
                           "hub") from None
    return _from_config(_config(Path(path)), name)


def _unknown(name: str, why: str) -> ModelError:
    return ModelError(f"cannot find the dimensions of model {name!r}: not a built-in alias "
                      f"({', '.join(BUILTIN_MODELS)}), not in probebench's table of known "
                      f"models, not a local folder, and {why}.{did_you_mean(name)}")


def _config(path: Path) -> Any:
    try:
        return load_json(path)
    except InputError as exc:
        raise ModelError(f"cannot read the model config: {exc}") from None
