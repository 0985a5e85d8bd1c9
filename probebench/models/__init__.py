"""Models: loading (embedded and Hugging Face), extraction, surprisal, cache.

Importing this package is cheap; torch and transformers load when a function needs them.
"""

from probebench.models.activations import ExtractionResult, extract
from probebench.models.builtin import BUILTIN_MODELS, DEFAULT_MODEL
from probebench.models.cache import ActivationCache
from probebench.models.loading import (
    LoadedModel,
    ModelIdentity,
    ResolvedModel,
    load_model,
    resolve_model,
)
from probebench.models.surprisal import (
    REGION_METRICS,
    TokenSurprisal,
    region_surprisal,
    token_surprisals,
)
from probebench.sites import POSITIONS, Site

__all__ = [
    "BUILTIN_MODELS",
    "DEFAULT_MODEL",
    "POSITIONS",
    "REGION_METRICS",
    "ActivationCache",
    "ExtractionResult",
    "LoadedModel",
    "ModelIdentity",
    "ResolvedModel",
    "Site",
    "TokenSurprisal",
    "extract",
    "load_model",
    "region_surprisal",
    "resolve_model",
    "token_surprisals",
]
