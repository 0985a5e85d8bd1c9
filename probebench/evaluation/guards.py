"""The eval-awareness guard a submission uses, as plain data.

Where a model's guard comes from (``registry/guards.yaml``, a ``--guard`` folder or
none) is decided by the caller (``probebench.runs.submit`` for ``probebench.submit`` and
the CLI); ``submit`` only receives a lookup from model name to ``Guard``. A lookup that
finds none also says why (``GuardLookup.missing``), and that reason is what the imputed
correction's note says: "the registry names none", "the registry could not be reached"
and "no guard was asked for" are different facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Guard:
    """An eval-awareness guard: a probe artifact that scores how evaluation-like a prompt
    is. ``bundle_sha256`` identifies it, so a guard is never used to correct itself."""

    folder: Path
    name: str
    bundle_sha256: str | None = None


class GuardLookup(Protocol):
    """model name -> the model's guard, or None; ``missing`` says why a model has none."""

    def __call__(self, model: str) -> Guard | None: ...

    def missing(self, model: str) -> str:
        """Why ``model`` has no guard, as the imputed correction's note begins."""
        ...


@dataclass(frozen=True)
class NoGuards:
    """A lookup under which no model has a guard (every correction is imputed), for a
    stated ``reason`` (e.g. "no guard asked for (--no-guard)")."""

    reason: str

    def __call__(self, model: str) -> Guard | None:
        return None

    def missing(self, model: str) -> str:
        return self.reason


#: the registry-free default of ``SubmitOptions.guards``: ``probebench.submit`` and the
#: CLI resolve the registry's guards instead (``probebench.runs.submit``)
no_guards = NoGuards("no guard lookup given (probebench.evaluation.submit without a registry)")


@dataclass(frozen=True)
class FixedGuard:
    """A lookup that answers ``guard`` for every model (``submit --guard DIR``)."""

    guard: Guard

    def __call__(self, model: str) -> Guard | None:
        return self.guard

    def missing(self, model: str) -> str:  # never asked: every model has the guard
        return f"the guard {self.guard.name} was given"


def fixed_guard(guard: Guard) -> GuardLookup:
    """A lookup that answers ``guard`` for every model (``submit --guard DIR``)."""
    return FixedGuard(guard)


__all__ = ["FixedGuard", "Guard", "GuardLookup", "NoGuards", "fixed_guard", "no_guards"]
