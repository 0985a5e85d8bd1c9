"""Putting a built leaderboard in place of the old one, so that a kill leaves one whole.

``leaderboard build`` renders into ``.<out>.building`` beside ``out``; :func:`swap_in`
then puts it in place. On Linux the two folders trade places in one step,
``renameat2(RENAME_EXCHANGE)`` (called through ctypes on the C library); where that call
is missing or the file system refuses it, the old folder moves to ``.<out>.previous``,
the built one is renamed to ``out``, and the old one is deleted. Either way the old folder
is first renamed to ``.<out>.building`` and deleted under that name, so a
``.<out>.previous`` that exists always holds a whole leaderboard, and ``.<out>.building``
is never read.

What a killed build (SIGKILL, the out-of-memory killer) leaves, and how each is recovered:

* **killed while rendering pages or writing the registry mirror**: ``out`` is untouched;
  ``.<out>.building`` holds part of the new leaderboard. The next build deletes it before
  rendering (it holds the lock then).
* **killed after the exchange, while deleting the old leaderboard**: ``out`` holds the new
  leaderboard, whole; ``.<out>.building`` holds what is left of the old one, deleted by
  the next build as above.
* **killed between the two renames** (the fallback only): ``out`` is missing and
  ``.<out>.previous`` holds the old leaderboard, whole. :func:`restore_previous` renames it
  back: the next build does so (:func:`swap_in` starts with it), and :func:`recover` does
  it for a reader (it takes the lock, so it never races a build).
* **killed after the built folder is in place, before the old one is deleted** (the
  fallback only): ``out`` holds the new leaderboard, ``.<out>.previous`` the old one; the
  next build deletes the old one.
* **the lock file** ``.<out>.lock`` stays between builds by design: builds take turns with
  ``flock`` on it, and the kernel drops a dead process's lock, so a killed build never
  blocks the next one. Deleting the file would let a build that waits on the deleted file
  and one that creates a new file run together.

Renames are atomic against a killed process, not against a lost machine: the files are
not flushed to disk (a power cut can still leave empty files).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from probebench.errors import InputError

_AT_FDCWD = -100
_RENAME_EXCHANGE = 1 << 1
#: errors of renameat2 that mean "not here": the kernel or the file system lacks it
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP}


class LeaderboardSwapError(InputError):
    """The built leaderboard could not be put in place of ``out``."""


def building_path(out: Path) -> Path:
    """Where a build renders before :func:`swap_in` (never read as a leaderboard)."""
    return Path(out).with_name(f".{Path(out).name}.building")


def previous_path(out: Path) -> Path:
    """Where the fallback keeps the old leaderboard between its two renames."""
    return Path(out).with_name(f".{Path(out).name}.previous")


def lock_path(out: Path) -> Path:
    """The file builds into ``out`` take turns on (``flock``)."""
    return Path(out).with_name(f".{Path(out).name}.lock")


@contextlib.contextmanager
def hold_lock(out: Path) -> Iterator[None]:
    """Hold the lock builds into ``out`` take turns on, waiting for it. The same lock as
    ``build_leaderboard``'s; a process that holds it must not ask again (a second ``flock``
    from one process on a new open file waits for itself)."""
    with lock_path(out).open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        yield


def restore_previous(out: Path) -> bool:
    """Rename ``.<out>.previous`` back to ``out`` when ``out`` is missing (a build killed
    between the fallback's two renames); True when it did. The caller holds the lock."""
    out = Path(out)
    previous = previous_path(out)
    if os.path.lexists(out) or not previous.is_dir() or previous.is_symlink():
        return False
    _rename(previous, out, "restore the previous leaderboard")
    return True


def recover(out: Path) -> bool:
    """:func:`restore_previous` for a reader of ``out`` that does not hold the lock: takes
    the lock only when there is something to restore (so a reader waits for a running
    build only then). True when it restored ``out``."""
    out = Path(out)
    if os.path.lexists(out) or not previous_path(out).is_dir():
        return False
    with hold_lock(out):
        return restore_previous(out)


def swap_in(built: Path, out: Path) -> None:
    """Put the whole leaderboard ``built`` (``building_path(out)``) in place of ``out``,
    so that ``out`` is the old leaderboard or the new one at every moment a kill can
    come, and delete the old one. The caller holds the lock."""
    built, out = Path(built), Path(out)
    restore_previous(out)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        _discard(built)
        kind = "a symbolic link" if out.is_symlink() else "a file"
        raise LeaderboardSwapError(f"{out}: expected a leaderboard folder (or nothing) to "
                                   f"replace, found {kind}; give --out a folder path")
    previous = previous_path(out)
    if os.path.lexists(previous):  # the old one of a build killed before deleting it
        _discard(previous)
    if not out.exists():
        _move_in(built, out)
        return
    if _exchange(built, out):
        _discard(built)  # now the old leaderboard
        return
    _move_aside(out, previous)
    try:
        _move_in(built, out)
    except LeaderboardSwapError:
        restore_previous(out)
        raise
    _rename(previous, built, "move the old leaderboard away")
    _discard(built)


# --- the steps, one function each -------------------------------------------------------

def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (renameat2 with RENAME_EXCHANGE); False
    where the system or the file system has no such call."""
    call = _renameat2()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise LeaderboardSwapError(f"{b}: could not exchange it with {a}: {os.strerror(code)}")


def _move_aside(out: Path, previous: Path) -> None:
    """The fallback's first rename: the old leaderboard to ``.<out>.previous``."""
    _rename(out, previous, "move the old leaderboard aside")


def _move_in(built: Path, out: Path) -> None:
    """The built leaderboard to ``out`` (missing by now)."""
    _rename(built, out, "put the built leaderboard in place")


def _rename(src: Path, dest: Path, what: str) -> None:
    try:
        src.rename(dest)
    except OSError as exc:
        raise LeaderboardSwapError(f"{dest}: could not {what} (rename from {src}): "
                                   f"{exc.strerror}") from exc


def _discard(path: Path) -> None:
    """Delete a folder (or a file or link) that is not a leaderboard anyone reads."""
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    except OSError as exc:
        raise LeaderboardSwapError(f"{path}: could not delete it: {exc.strerror}") from exc


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """The C library's renameat2 (glibc 2.28+, musl 1.2+), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                     ctypes.c_uint]
    call.restype = ctypes.c_int
    result: Callable[..., int] = call
    return result


__all__ = [
    "LeaderboardSwapError",
    "building_path",
    "hold_lock",
    "lock_path",
    "previous_path",
    "recover",
    "restore_previous",
    "swap_in",
]
