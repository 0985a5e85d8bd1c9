"""Line-numbered reading of JSONL files and field checks shared by the task formats."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from probebench.errors import InputError


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; errors name file and line."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not valid JSON ({exc.msg}, column "
                                 f"{exc.colno})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path}:{number}: expected a JSON object")
            yield number, obj


def require(obj: dict[str, Any], fields: Mapping[str, type | tuple[type, ...]],
            where: str) -> None:
    """Each field present with the given type; the error names the field and what it found."""
    for name, kind in fields.items():
        if name not in obj:
            raise InputError(f"{where}: field {name!r} is missing")
        value = obj[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            expected = kind.__name__ if isinstance(kind, type) else " or ".join(
                k.__name__ for k in kind)
            raise InputError(f"{where}: field {name!r} must be {expected}, found "
                             f"{type(value).__name__} {value!r}")
