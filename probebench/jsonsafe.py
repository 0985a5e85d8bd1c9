"""JSON files from strangers: read with a size cap, every failure a named error.

``json.loads`` raises ``ValueError`` for bad text, ``RecursionError`` for deep nesting
and ``UnicodeDecodeError`` for bad bytes; :func:`load_json` turns each into an
``InputError`` that names the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from probebench.errors import InputError

#: the largest JSON file probebench reads from an artifact or a model folder
MAX_JSON_BYTES = 64 << 20


def loads_json(text: str | bytes, source: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{source}: JSON nests too deeply; refused") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise InputError(f"{source}: not valid JSON ({str(exc)[:160]})") from None


def read_capped(path: Path, max_bytes: int, kind: str) -> bytes:
    """A file's bytes, refused (``InputError``) above ``max_bytes`` before reading."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(f"{path}: {size} bytes; {kind} files are limited to {max_bytes}")
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def load_json(path: Path, *, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse a JSON file of at most ``max_bytes``."""
    path = Path(path)
    return loads_json(read_capped(path, max_bytes, "JSON"), str(path))


__all__ = ["MAX_JSON_BYTES", "load_json", "loads_json", "read_capped"]
