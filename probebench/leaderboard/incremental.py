"""Incremental builds: an entry page whose inputs have not changed is reused from the
leaderboard being replaced, not rendered again.

Every build writes ``build-manifest.json`` into the leaderboard: for each entry page, the
digest of what it was rendered from and the files written for it (its REPORT.md files).
The digest covers the page's inputs whole: the bytes of the entry's YAML, of its stored
results, of its artifact folder's files and of its tasks' stored baselines; what the
build computed for it (its standing in its task-set group and on each task, its
ProbeScore breakdown and intervals, its gaps, whether it is a guard); its tasks' catalog
specs and holdout generations; and the build's own salt (probebench's version, the
templates, the ProbeScore spec, ``--source-url``, the navigation). A page is reused only
when the digest is equal and every file it lists is still there; rankings are always
computed afresh, so a change to one entry that moves another's rank re-renders that
other page too.

A value whose ``repr`` names a memory address would make the digest differ between two
runs (and could hide a change): such a page is always rendered (``digest`` gives None).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from probebench.errors import InputError
from probebench.hashing import atomic_write_bytes

#: the manifest of a build, at the leaderboard's root
MANIFEST = "build-manifest.json"
_FORMAT = "probebench-build/1"


def file_digest(paths: list[Path], root: Path) -> str:
    """One digest over the names (relative to ``root``, so a moved checkout keeps its
    digests) and bytes of ``paths``; a missing file counts as such."""
    h = hashlib.sha256()
    for path in paths:
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        h.update(name.encode("utf-8", "surrogatepass") + b"\0")
        try:
            h.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


def value_digest(*values: object) -> str | None:
    """A digest of ``values``' reprs, or None where a repr names a memory address."""
    text = repr(values)
    if " at 0x" in text:
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class PageCache:
    """The pages of the ``previous`` leaderboard that a build into ``folder`` may reuse,
    and the manifest it writes."""

    def __init__(self, previous: Path | None, folder: Path, salt: str) -> None:
        self.previous = previous
        self.folder = folder
        self.salt = salt
        self.pages: dict[str, dict[str, object]] = {}
        self.reused: list[str] = []
        self.rendered: list[str] = []
        self._old: dict[str, dict[str, object]] = {}
        if previous is not None:
            self._old = _read_manifest(previous / MANIFEST, salt)

    def digest(self, *values: object) -> str | None:
        return value_digest(self.salt, *values)

    def reuse(self, page: str, digest: str | None) -> bool:
        """Put the previous build's ``page`` (and its files) in the new leaderboard when it
        was rendered from the same inputs; False: render it."""
        old = self._old.get(page)
        if digest is None or old is None or old.get("digest") != digest \
                or self.previous is None:
            return False
        listed = old.get("files")
        if not isinstance(listed, list) or not all(isinstance(f, str) for f in listed):
            return False
        names = [page, *listed]
        if not all(_inside(self.previous, n) and (self.previous / n).is_file() for n in names):
            return False
        for name in names:
            target = self.folder / name
            if target.exists():  # a blob another page shares (stored by content)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(self.previous / name, target)
        self.record(page, digest, listed, reused=True)
        return True

    def record(self, page: str, digest: str | None, files: list[str], *,
               reused: bool = False) -> None:
        (self.reused if reused else self.rendered).append(page)
        if digest is not None:
            self.pages[page] = {"digest": digest, "files": sorted(files)}

    def write(self) -> None:
        doc = {"format": _FORMAT, "salt": self.salt,
               "pages": dict(sorted(self.pages.items()))}
        atomic_write_bytes(self.folder / MANIFEST,
                           json.dumps(doc, indent=0, sort_keys=True).encode())


def _inside(root: Path, name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and ".." not in parts \
        and not (root / name).is_symlink()


def _link_or_copy(src: Path, dest: Path) -> None:
    """A hard link where the file system allows one (the old leaderboard is deleted, never
    changed in place, so the two names never disagree), else a copy."""
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def _read_manifest(path: Path, salt: str) -> dict[str, dict[str, object]]:
    """The previous build's pages, or none: a missing, unreadable or foreign manifest, or
    one written with another salt (another version, templates or options), reuses
    nothing."""
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("salt") != salt:
        return {}
    pages = doc.get("pages")
    if not isinstance(pages, dict):
        return {}
    return {k: v for k, v in pages.items() if isinstance(k, str) and isinstance(v, dict)}


#: the files of the leaderboard package a page's HTML depends on
_CODE_SUFFIXES = (".py", ".j2", ".js", ".css", ".yaml")


def code_digest(package: Path) -> str:
    """A digest of the leaderboard package's code, templates, static files and specs: a
    page rendered by other code is never reused, even within one version."""
    paths = sorted(p for p in package.rglob("*") if p.suffix in _CODE_SUFFIXES
                   and "__pycache__" not in p.parts and p.is_file())
    if not paths:
        raise InputError(f"leaderboard build: no templates under {package}")
    return file_digest(paths, package)


__all__ = ["MANIFEST", "PageCache", "code_digest", "file_digest", "value_digest"]
