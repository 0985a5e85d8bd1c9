"""SHA-256 helpers: files (memoised by stat), canonical JSON and atomic writes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from probebench import paths

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no extra whitespace and exact unicode: one text per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def sha256_json(value: Any) -> str:
    return sha256_bytes(canonical_json(value).encode("utf-8"))


def _hash_stream(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(_CHUNK), b""):
        digest.update(block)
    return digest.hexdigest()


def _stat_key(path: Path) -> str:
    stat = path.stat()
    return f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"


def _memo_paths(key: str) -> tuple[str, list[str]]:
    """(scheme, paths) of a memo key: ``PATH|size|mtime|inode`` for a file's SHA-256, or
    ``SCHEME`` then one such line per file, joined by newlines, for another hash."""
    lines = key.split("\n")
    scheme, files = ("", lines) if len(lines) == 1 else (lines[0], lines[1:])
    return scheme, [line.rsplit("|", 3)[0] for line in files]


def memoised(files: Sequence[Path], scheme: str, compute: Callable[[], str], *,
             memo: bool = True) -> str:
    """``compute()``, a hash of ``files`` under ``scheme``, memoised like ``sha256_file``:
    keyed by the scheme and each file's resolved path, size, modification time and
    inode, so any change to a file (or a new scheme) misses. ``scheme`` "" is the SHA-256
    of one file's bytes."""
    resolved = [Path(f).resolve() for f in files]
    stats = [_stat_key(p) for p in resolved]
    key = "\n".join([scheme, *stats]) if scheme else "\n".join(stats)
    memo_file = paths.home() / "file-hashes.json"
    table: dict[str, str] = {}
    if memo:
        with contextlib.suppress(OSError, ValueError):
            loaded = json.loads(memo_file.read_text("utf-8"))
            if isinstance(loaded, dict):
                table = {str(k): str(v) for k, v in loaded.items()}
        if key in table:
            return table[key]
    digest = compute()
    if memo:
        # forget files that are gone and older states of these: the memo stays small
        mine = (scheme, [str(p) for p in resolved])

        def keep(k: str) -> bool:
            found = _memo_paths(k)
            return found != mine and all(Path(p).exists() for p in found[1])

        table = {k: v for k, v in table.items() if keep(k)}
        table[key] = digest
        with contextlib.suppress(OSError):
            atomic_write_bytes(memo_file, json.dumps(table, indent=0, sort_keys=True).encode())
    return digest


def sha256_file(path: Path, *, memo: bool = True) -> str:
    """SHA-256 of a file's bytes.

    Model weights are hundreds of MB and are hashed on every run to build identities,
    so results are memoised in ``$PROBEBENCH_HOME/file-hashes.json`` keyed by the
    resolved path, size, modification time and inode: any change to the file misses.
    """
    path = Path(path).resolve()

    def compute() -> str:
        with path.open("rb") as handle:
            return _hash_stream(handle)

    return memoised([path], "", compute, memo=memo)


def manifest_text(entries: Iterable[tuple[str, str]]) -> str:
    """The manifest of (relative POSIX path, SHA-256) pairs: ``"<sha256>  <path>\n"`` lines
    sorted by the path's UTF-8 bytes (the ``sha256sum`` line format)."""
    rows = sorted(entries, key=lambda e: e[0].encode("utf-8"))
    return "".join(f"{sha}  {path}\n" for path, sha in rows)


@contextlib.contextmanager
def atomic_writer(path: Path, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """Write a file so that readers see either the old file or the complete new one.

    Bytes go to a temporary file in the same folder, are flushed to disk, and replace
    the target with one ``os.replace``; a crash leaves at most a stray ``.tmp`` file,
    never a truncated target. ``mode`` (e.g. ``0o600`` for a secret) is the new file's
    permission bits, set before it takes the target's name; default: what a plain
    ``open()`` would give.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            # mkstemp makes the file 0600; give it the mode a plain open() would
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        Path(tmp_name).chmod(mode)
        Path(tmp_name).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp_name).unlink()
        raise


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    with atomic_writer(path, mode=mode) as handle:
        handle.write(data)
