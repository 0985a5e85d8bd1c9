"""Where probebench keeps converted models, hashes and cached activations."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "PROBEBENCH_HOME"
ACTIVATION_CACHE_ENV = "PROBEBENCH_ACTIVATION_CACHE"


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` asks for the local Hugging Face cache only."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def home() -> Path:
    """The probebench data folder: ``$PROBEBENCH_HOME`` or ``~/.cache/probebench``."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".cache" / "probebench"


def models_dir() -> Path:
    """Converted embedded models (Hugging Face folders with safetensors)."""
    return home() / "models"


def activation_cache_dir() -> Path:
    """Content-addressed activation cache: ``$PROBEBENCH_ACTIVATION_CACHE`` or HOME/activations."""
    value = os.environ.get(ACTIVATION_CACHE_ENV)
    return Path(value).expanduser() if value else home() / "activations"
