"""Where probebench keeps converted models, hashes and cached activations."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "PROBEBENCH_HOME"
ACTIVATION_CACHE_ENV = "PROBEBENCH_ACTIVATION_CACHE"
ARTIFACT_CACHE_ENV = "PROBEBENCH_ARTIFACT_CACHE"


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


def artifact_cache_dir() -> Path:
    """Remote artifacts fetched at a commit (hub copies, git checkouts):
    ``$PROBEBENCH_ARTIFACT_CACHE`` or HOME/artifacts."""
    value = os.environ.get(ARTIFACT_CACHE_ENV)
    return Path(value).expanduser() if value else home() / "artifacts"


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache as ``huggingface_hub`` finds it (``HF_HUB_CACHE``,
    ``HF_HOME``/hub, ``XDG_CACHE_HOME``/huggingface/hub, ``~/.cache/huggingface/hub``),
    read from the environment now rather than when ``huggingface_hub`` was imported."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return Path(os.environ[name]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "huggingface" / "hub"


def enclosing_repo(start: Path | None = None) -> Path:
    """The git checkout holding ``start`` (default: the current folder), else ``start``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here
