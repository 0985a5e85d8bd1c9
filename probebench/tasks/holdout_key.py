"""The holdout key: 32 random bytes that seal and open the sealed holdouts.

Written as 64 hex digits (base64 is read too) by ``probebench holdout keygen``
(:func:`write_key_file`, mode 0600, never overwritten). A function that needs it takes
it as its bytes, as a key file given explicitly (``--key FILE``), or from the
environment variable ``PROBEBENCH_HOLDOUT_KEY`` holding the key's text (as a GitHub
secret is passed); no default path is ever read (:func:`read_key`). Without one,
:class:`HoldoutKeyMissingError`. Each listed generation names the :func:`key_id` of the
key that sealed it, so that a wrong key is named as such.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import logging
import os
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path

from probebench.errors import InputError
from probebench.paths import enclosing_repo

log = logging.getLogger(__name__)

KEY_ENV = "PROBEBENCH_HOLDOUT_KEY"
KEY_BYTES = 32
KEY_HELP = ("give --key FILE (a key file written by `probebench holdout keygen`) or set "
            f"{KEY_ENV} to the key's text; no default path is read")


class HoldoutKeyMissingError(InputError):
    """A command needs the holdout key and none was given (``--key`` or the variable)."""


class HoldoutKeyInvalidError(InputError):
    """The key's text is not 32 bytes in hex or base64."""


def key_id(key: bytes) -> str:
    """A one-way fingerprint of a key (16 hex digits), listed with each generation so
    that a wrong key is named as such; it reveals nothing about the key."""
    return hashlib.sha256(b"probebench-holdout-key-id/1\0" + key).hexdigest()[:16]


def parse_key(text: str, where: str) -> bytes:
    """The 32 key bytes of ``text`` (64 hex digits, or base64); the error never shows
    the text."""
    value = text.strip()
    if len(value) == 2 * KEY_BYTES:
        with contextlib.suppress(ValueError):
            return bytes.fromhex(value)
    with contextlib.suppress(binascii.Error, ValueError):
        raw = base64.b64decode(value, validate=True)
        if len(raw) == KEY_BYTES:
            return raw
    raise HoldoutKeyInvalidError(f"{where}: not a holdout key (expected {KEY_BYTES} bytes as "
                            f"{2 * KEY_BYTES} hex digits or base64, found {len(value)} "
                            "characters); write one with `probebench holdout keygen`")


#: a holdout key as the functions here take it: the key's bytes, a key file, or None for
#: ``$PROBEBENCH_HOLDOUT_KEY`` (:func:`read_key`)
HoldoutKey = bytes | os.PathLike[str] | None


def read_key(key: HoldoutKey = None, *, environ: Mapping[str, str] | None = None,
             required: bool = True) -> bytes | None:
    """The holdout key: ``key`` itself when it is the key's bytes, else read from the key
    file ``key`` when given, else from ``$PROBEBENCH_HOLDOUT_KEY`` (the key's text). No
    default path is read. None of them: :class:`HoldoutKeyMissingError` when
    ``required``, else None."""
    if isinstance(key, bytes):
        if len(key) != KEY_BYTES:
            raise HoldoutKeyInvalidError(f"a holdout key is {KEY_BYTES} bytes, this one "
                                         f"{len(key)}")
        return key
    if key is not None:
        path = Path(key)
        if not path.is_file():
            raise HoldoutKeyMissingError(f"--key {path}: no such key file ({KEY_HELP})")
        with contextlib.suppress(OSError):
            if os.name == "posix" and path.stat().st_mode & 0o077:
                log.warning("%s: the key file is readable by others; chmod 600 it", path)
        try:
            text = path.read_text("ascii")
        except (OSError, UnicodeDecodeError):
            raise HoldoutKeyInvalidError(f"--key {path}: not a holdout key (not ASCII text)")\
                from None
        return parse_key(text, f"--key {path}")
    env = os.environ if environ is None else environ
    text = env.get(KEY_ENV, "")
    if text.strip():
        return parse_key(text, f"${KEY_ENV}")
    if required:
        raise HoldoutKeyMissingError(f"this needs the holdout key: {KEY_HELP}")
    return None


def key_bytes(key: HoldoutKey) -> bytes:
    """The key that a step needs (:func:`read_key`); a named error when none is given."""
    found = read_key(key)
    assert found is not None  # required: read_key raises instead of returning None
    return found


def write_key_file(path: Path) -> str:
    """Write a new random key to ``path`` (hex text, mode 0600) and return its key id.
    An existing file is never replaced: the file appears whole or not at all. A key
    written inside a git checkout is warned about (it must never be committed)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        raise InputError(f"{path}: already exists; a key file is never overwritten (a lost "
                         "key cannot open what it sealed)")
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:  # mkstemp: mode 0600
            handle.write(key.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # fails if the name was taken meanwhile
        except FileExistsError:
            raise InputError(f"{path}: already exists; a key file is never overwritten")\
                from None
    finally:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
    repo = enclosing_repo(path.parent.resolve())
    if (repo / ".git").exists():
        log.warning("%s is inside the git checkout %s: never commit it", path, repo)
    return key_id(key)


__all__ = [
    "KEY_BYTES",
    "KEY_ENV",
    "KEY_HELP",
    "HoldoutKey",
    "HoldoutKeyInvalidError",
    "HoldoutKeyMissingError",
    "key_bytes",
    "key_id",
    "parse_key",
    "read_key",
    "write_key_file",
]
