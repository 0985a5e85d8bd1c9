"""Errors that reach the user.

Every error says where (file, line, field or prompt), what was expected and what was
found. The CLI prints ``str(error)`` and exits with ``error.exit_code``; anything else
that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class ProbebenchError(Exception):
    """Base class of the errors probebench reports to users."""

    exit_code = 2


class InputError(ProbebenchError):
    """A file, field or argument given by the user is malformed."""


class ModelError(ProbebenchError):
    """A model cannot be found, converted or loaded."""


class SiteError(ProbebenchError):
    """A site cannot be read for a model or a prompt (layer out of range, missing span)."""


class CacheError(ProbebenchError):
    """The activation cache cannot be used (for example, its folder is not writable)."""


def field_problem(exc: Exception, top: str = "(top level)") -> str:
    """``field 'a.b': message`` for the first error of a pydantic ``ValidationError``
    (``top`` names the location when the error is about the whole object)."""
    first = exc.errors()[0]  # type: ignore[attr-defined]
    where = ".".join(str(p) for p in first["loc"]) or top
    return f"field {where!r}: {first['msg']}"
