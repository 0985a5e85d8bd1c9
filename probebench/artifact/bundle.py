"""The artifact folder as a bundle: limits, the manifest and the bundle hash.

Manifest: one line ``"<sha256>  <path>\\n"`` per regular file (the ``sha256sum``
format), paths relative to the folder in POSIX form, sorted by their UTF-8 bytes. The
bundle hash is the SHA-256 of the manifest text. Only names and contents count, never
timestamps, permissions or owners, so the hash is the same on every machine. The file
``MANIFEST.sha256`` (written by ``probebench hash --write``) is left out of its own
manifest. The registry's ``artifact_sha256`` is this hash.

Limits refused before any file is opened: symlinks (anywhere), special files, names
that are not plain UTF-8, more than ``MAX_FILES`` files, files over ``MAX_FILE_BYTES``
or a total over ``MAX_TOTAL_BYTES``, and archives inside the bundle (zip, tar, 7z,
rar, or compressed streams outside the ``.joblib``/``.pkl`` files that use them).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from probebench.hashing import manifest_text, sha256_bytes, sha256_file

# the limits are named once, where a fetch checks them before any byte arrives
from probebench.sources.budget import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_MANIFEST_BYTES,
    MAX_PATH_CHARS,
    MAX_PATH_DEPTH,
    MAX_TOTAL_BYTES,
)

MANIFEST_NAME = "MANIFEST.sha256"
#: files whose format may itself be a compressed stream or a zip
_COMPRESSED_OK = (".joblib", ".pkl", ".pickle")
_ZIP_OK = (".skops",)


@dataclass
class BundleScan:
    """What is in a folder, and every rule it breaks."""

    root: Path
    files: dict[str, int] = field(default_factory=dict)  #: relative path -> size
    problems: list[str] = field(default_factory=list)


def _archive_kind(path: Path, name: str) -> str | None:
    with path.open("rb") as handle:
        head = handle.read(512)
    lower = name.lower()
    if head.startswith(b"PK\x03\x04") and not lower.endswith(_ZIP_OK):
        return "zip archive"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar archive"
    if head.startswith(b"7z\xbc\xaf\x27\x1c"):
        return "7z archive"
    if head.startswith(b"Rar!"):
        return "rar archive"
    if not lower.endswith(_COMPRESSED_OK) and (
            head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"))):
        return "compressed archive"
    return None


def scan(root: Path) -> BundleScan:
    """Walk ``root`` without following links and record files and rule breaks."""
    result = BundleScan(root=root)
    total = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            result.problems.append(f"{folder}: cannot list ({exc.strerror})")
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            if "\\" in entry.name or any(ord(c) < 32 for c in entry.name):
                result.problems.append(f"{rel!r}: file names may not hold backslashes or "
                                       "control characters")
                continue
            try:
                entry.name.encode("utf-8")
            except UnicodeEncodeError:
                result.problems.append(f"{rel!r}: file name is not valid UTF-8")
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:  # removed or renamed while being listed
                result.problems.append(f"{rel}: changed while being listed "
                                       f"({exc.strerror}); validate again")
                continue
            if stat.S_ISLNK(info.st_mode):
                target = Path(entry.path).readlink()
                result.problems.append(f"{rel}: is a symlink (to {target}); symlinks are "
                                       "refused")
            elif stat.S_ISDIR(info.st_mode):
                if rel.count("/") + 1 > MAX_PATH_DEPTH or len(rel) > MAX_PATH_CHARS:
                    result.problems.append(f"{rel[:80]}...: folders nest deeper than "
                                           f"{MAX_PATH_DEPTH} levels or {MAX_PATH_CHARS} "
                                           "characters; refused (limit MAX_PATH_DEPTH)")
                    continue
                stack.append(Path(entry.path))
            elif not stat.S_ISREG(info.st_mode):
                result.problems.append(f"{rel}: not a regular file")
            elif rel != MANIFEST_NAME:
                if len(result.files) >= MAX_FILES:
                    result.problems.append(f"more than {MAX_FILES} files; an artifact holds a "
                                           "probe, its metadata and notebooks")
                    return result
                if info.st_size > MAX_FILE_BYTES:
                    result.problems.append(f"{rel}: {info.st_size / 2**20:.0f} MiB; files are "
                                           f"limited to {MAX_FILE_BYTES >> 20} MiB")
                    continue
                total += info.st_size
                result.files[rel] = info.st_size
                kind = _archive_kind(Path(entry.path), entry.name)
                if kind:
                    result.problems.append(f"{rel}: a {kind}; nested archives are refused")
    if total > MAX_TOTAL_BYTES:
        result.problems.append(f"{total / 2**20:.0f} MiB in all; artifacts are limited to "
                               f"{MAX_TOTAL_BYTES >> 20} MiB")
    return result


@dataclass(frozen=True)
class Manifest:
    entries: dict[str, str]  #: relative path -> SHA-256

    @property
    def text(self) -> str:
        return manifest_text(self.entries.items())

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.text.encode("utf-8"))


def manifest(bundle: BundleScan) -> Manifest:
    """Hash every file of a scan (call only on a scan without problems)."""
    return Manifest({rel: sha256_file(bundle.root / rel, memo=False) for rel in bundle.files})


def read_manifest_file(path: Path) -> dict[str, str]:
    """Parse a ``MANIFEST.sha256`` file (``sha256sum`` lines) of at most
    MAX_MANIFEST_BYTES (a line per file of at most MAX_FILES)."""
    size = path.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise ValueError(f"{path}: {size} bytes; a manifest of at most {MAX_FILES} files is "
                         f"under {MAX_MANIFEST_BYTES} (limit MAX_MANIFEST_BYTES)")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    entries = {}
    for number, line in enumerate(text.splitlines(), start=1):
        sha, sep, rel = line.partition("  ")
        if not sep or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise ValueError(f"{path}:{number}: expected '<sha256>  <path>'")
        entries[rel] = sha
    return entries


def compare_manifests(recorded: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Human-readable differences; empty when the files are exactly those recorded."""
    out = [f"{rel}: changed since it was hashed" for rel in sorted(recorded)
           if rel in actual and actual[rel] != recorded[rel]]
    out += [f"{rel}: missing (recorded in the manifest)" for rel in sorted(recorded)
            if rel not in actual]
    out += [f"{rel}: added after hashing" for rel in sorted(actual) if rel not in recorded]
    return out
