"""An artifact's size limits, named once, and the budget a fetch checks them with.

``validate`` refuses a folder over these limits (``artifact.bundle`` imports them from
here); a fetch refuses a remote folder over them *before* any of its files is downloaded
or checked out, from the source's own listing: the hub's file metadata, git's trees and
object sizes (see ``hub`` and ``github``). Nothing that breaks a limit is ever written out
in full only to be refused afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from probebench.errors import InputError

#: files in an artifact (``MANIFEST.sha256`` is counted apart)
MAX_FILES = 100
#: bytes in one file
MAX_FILE_BYTES = 64 << 20
#: bytes in all files (``MANIFEST.sha256`` apart)
MAX_TOTAL_BYTES = 256 << 20
#: MANIFEST.sha256: MAX_FILES lines of a hash, two spaces and a path
MAX_MANIFEST_BYTES = 128 << 10
#: folders below the artifact's root, and characters in a folder's relative path
MAX_PATH_DEPTH = 8
MAX_PATH_CHARS = 512


@dataclass(frozen=True)
class FetchBudget:
    """What one remote artifact folder may hold, checked on its listing before its bytes
    arrive. ``default()`` is the artifact's limits; tests pass smaller ones."""

    #: files in the folder (the limit's files and their ``MANIFEST.sha256``)
    files: int
    #: bytes in any one file
    file_bytes: int
    #: bytes in all files
    total_bytes: int
    #: folder levels below the artifact's root
    depth: int = MAX_PATH_DEPTH

    @classmethod
    def default(cls) -> FetchBudget:
        """The artifact's limits, read when called (so one place sets them all)."""
        return cls(files=MAX_FILES + 1, file_bytes=MAX_FILE_BYTES,
                   total_bytes=MAX_TOTAL_BYTES + MAX_MANIFEST_BYTES, depth=MAX_PATH_DEPTH)

    @property
    def download_bytes(self) -> int:
        """The most bytes one download of the folder may bring: its files compressed
        (a git pack), with room for the transfer's own framing."""
        return self.total_bytes + self.total_bytes // 64 + (1 << 20)

    def check_paths(self, url: str, where: str, paths: list[str], *,
                    more: bool = False, before: str = "download") -> None:
        """Raise unless ``paths`` (files, relative to the artifact's folder; ``more``:
        the listing was cut short, there are more) are few enough, shallow enough and
        plain names; sizes are ``check_sizes``'. ``before`` names what has not happened
        yet."""
        if more or len(paths) > self.files:
            count = f"more than {self.files}" if more else str(len(paths))
            raise InputError(f"artifact {url!r}: {where} holds {count} files; a fetch "
                             f"takes at most {self.files} (an artifact holds at most "
                             f"{MAX_FILES} files and its manifest); refused before "
                             f"{before} (limit MAX_FILES)")
        for path in paths:
            parts = path.split("/")
            if any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
                raise InputError(f"artifact {url!r}: {where} holds the path {path!r}, "
                                 f"which no folder may hold; refused before {before}")
            folder = "/".join(parts[:-1])
            if len(parts) - 1 > self.depth or len(folder) > MAX_PATH_CHARS:
                raise InputError(f"artifact {url!r}: {where} holds {path[:80]!r}, in "
                                 f"folders deeper than {self.depth} levels or "
                                 f"{MAX_PATH_CHARS} characters; refused before {before} "
                                 "(limit MAX_PATH_DEPTH)")

    def check_sizes(self, url: str, where: str, sizes: Mapping[str, int | None],
                    before: str) -> None:
        """Raise unless every file (path -> bytes; None: over ``file_bytes``, its size not
        even downloaded) and all of them together fit. ``before`` names what has not
        happened yet ("download", "checkout")."""
        total = 0
        for path, size in sorted(sizes.items()):
            if size is None or size > self.file_bytes:
                shown = f"over {_mib(self.file_bytes)}" if size is None else _mib(size)
                raise InputError(f"artifact {url!r}: {where} holds {path} ({shown}); a "
                                 f"file may hold at most {_mib(self.file_bytes)}: refused "
                                 f"before {before} (limit MAX_FILE_BYTES)")
            total += size
        if total > self.total_bytes:
            raise InputError(f"artifact {url!r}: {where} holds {_mib(total)} in "
                             f"{len(sizes)} files; artifacts are limited to "
                             f"{_mib(self.total_bytes)} in all: refused before {before} "
                             "(limit MAX_TOTAL_BYTES)")


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 1 << 20 else f"{size} bytes"
