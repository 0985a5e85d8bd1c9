"""The eval-awareness guard a submission uses, as plain data.

Where a model's guard comes from (``registry/guards.yaml``, a ``--guard`` folder or
none) is decided by the caller; ``submit`` only receives a lookup from model name to
``Guard``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Guard:
    """An eval-awareness guard: a probe artifact that scores how evaluation-like a prompt
    is. ``bundle_sha256`` identifies it, so a guard is never used to correct itself."""

    folder: Path
    name: str
    bundle_sha256: str | None = None


#: model name -> the model's guard, or None when it has none
GuardLookup = Callable[[str], "Guard | None"]


def no_guards(model: str) -> Guard | None:
    """A lookup under which no model has a guard (every correction is imputed)."""
    return None


def fixed_guard(guard: Guard) -> GuardLookup:
    """A lookup that answers ``guard`` for every model (``submit --guard DIR``)."""
    def lookup(model: str) -> Guard | None:
        return guard
    return lookup


__all__ = ["Guard", "GuardLookup", "fixed_guard", "no_guards"]
