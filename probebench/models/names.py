"""Telling a typo from a model: suggestions and a hub lookup that fails fast.

A mistyped model name (``smollm2-135n``, ``HuggingFaceTB/SmolLM2-135M-Instrct``) must
be answered at once with the names it was probably meant to be, never with the hub
client's retries (about 25 s of ``Retrying in 8s`` lines when the network is down).
Names are compared without case against the built-in aliases (and the hub ids the
embedded models come from), probebench's table of known models and the models in the
local Hugging Face cache.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from probebench.errors import ModelError
from probebench.models.builtin import BUILTIN_MODELS, KNOWN_DIMENSIONS

#: how close (difflib ratio, lower-cased) a name must be to a candidate to be suggested
SUGGEST_CUTOFF = 0.6
#: suggestions less close than the closest by more than this are left out
SUGGEST_MARGIN = 0.05
#: how close a name without an org must be to a built-in alias to be taken for its typo
#: and answered without asking the hub (hub ids without an org are a few legacy models)
ALIAS_TYPO_CUTOFF = 0.8


def _hub_cache() -> Path:
    """The local Hugging Face hub cache, as ``huggingface_hub`` finds it (``HF_HUB_CACHE``,
    ``HF_HOME``/hub or ``~/.cache/huggingface/hub``), read without importing it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    hf_home = os.environ.get("HF_HOME")
    if hf_home:
        return Path(hf_home).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def cached_hub_models() -> list[str]:
    """Hub ids of the models in the local Hugging Face cache (``models--ORG--NAME``)."""
    try:
        folders = sorted(p.name for p in _hub_cache().iterdir() if p.is_dir())
    except OSError:
        return []
    return [f[len("models--"):].replace("--", "/") for f in folders if f.startswith("models--")]


def _candidates() -> dict[str, str]:
    """lower-cased name -> the name to suggest for it."""
    found: dict[str, str] = {}
    for name in (*KNOWN_DIMENSIONS, *cached_hub_models()):
        found[name.lower()] = name
    for alias, model in BUILTIN_MODELS.items():
        # the embedded model answers for the hub id it was converted from
        found[model.hub_id.lower()] = alias
        found[alias.lower()] = alias
    return found


def suggest_models(name: str, *, n: int = 3) -> list[str]:
    """The known names closest to ``name``: those within ``SUGGEST_MARGIN`` of the
    closest, at most ``n``.

    >>> suggest_models("smollm2-135n")
    ['smollm2-135m']
    >>> suggest_models("HuggingFaceTB/SmolLM2-135M-Instrct")[0]
    'smollm2-135m'
    """
    candidates = _candidates()
    scored = sorted(((difflib.SequenceMatcher(None, name.lower(), key).ratio(), key)
                     for key in candidates), reverse=True)
    scored = [(r, k) for r, k in scored if r >= SUGGEST_CUTOFF]
    out: list[str] = []
    for ratio, key in scored:
        suggestion = candidates[key]
        if ratio < scored[0][0] - SUGGEST_MARGIN or len(out) == n:
            break
        if suggestion not in out and suggestion != name:
            out.append(suggestion)
    return out


def did_you_mean(name: str) -> str:
    """`` Did you mean 'a' or 'b'?`` (with a leading space), or "" when nothing is close."""
    close = suggest_models(name)
    if not close:
        return ""
    described = [f"{c!r} (the embedded {BUILTIN_MODELS[c].hub_id})" if c in BUILTIN_MODELS
                 and BUILTIN_MODELS[c].hub_id.lower() != c.lower() else repr(c) for c in close]
    return f" Did you mean {' or '.join(described)}?"


def alias_typo(name: str) -> str | None:
    """The built-in alias ``name`` is a typo of, if it has no org and is that close."""
    if "/" in name:
        return None
    close = difflib.get_close_matches(name.lower(), list(BUILTIN_MODELS), n=1,
                                      cutoff=ALIAS_TYPO_CUTOFF)
    return close[0] if close else None


def check_on_hub(name: str, revision: str | None = None) -> None:
    """Ask the hub once, without retries, whether model ``name`` exists; raise a
    ``ModelError`` with suggestions if it does not or the hub cannot be reached.

    ``huggingface_hub``'s downloads retry a failed metadata request five times with
    back-off when nothing is cached; one ``model_info`` call answers in a second.
    """
    import huggingface_hub
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        huggingface_hub.model_info(name, revision=revision, timeout=10)
    except GatedRepoError:
        return  # it exists; the download says what access it needs
    except RepositoryNotFoundError:
        raise ModelError(f"unknown model {name!r}: the Hugging Face hub has no model of that "
                         f"name (or it is private and HF_TOKEN cannot read it), it is not a "
                         f"built-in alias ({', '.join(BUILTIN_MODELS)}) and not a local "
                         f"folder.{did_you_mean(name)}") from None
    except ValueError as exc:  # huggingface_hub's HFValidationError: not a repo id at all
        raise ModelError(f"unknown model {name!r}: not a local folder, not a built-in alias "
                         f"({', '.join(BUILTIN_MODELS)}) and not a valid hub id ({exc})."
                         f"{did_you_mean(name)}") from None
    except RevisionNotFoundError:
        raise ModelError(f"model {name!r} has no revision {revision!r} on the Hugging Face "
                         "hub") from None
    except HfHubHTTPError as exc:
        raise ModelError(f"model {name!r} is not in the local Hugging Face cache and the hub "
                         f"refused to describe it ({str(exc).splitlines()[0]})."
                         f"{did_you_mean(name)}") from None
    except Exception as exc:  # network errors come from the HTTP library, many types
        raise ModelError(f"model {name!r} is not in the local Hugging Face cache and the hub "
                         f"could not be reached ({type(exc).__name__}: {exc}); connect, or "
                         f"set HF_HUB_OFFLINE=1 and use a cached model.{did_you_mean(name)}"
                         ) from None
