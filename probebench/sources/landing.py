"""Where a remote artifact lands: a folder of regular files keyed by source and commit.

A hub snapshot is a tree of symlinks into the cache's ``blobs/`` and a git checkout sits
beside its repository's files; neither is an artifact folder that ``validate`` accepts
(it refuses symlinks). So each fetch writes its folder's files, and nothing else, into
``artifact_cache_dir()/<host>/<repo>/<commit>/<~sub~folder>/<name>``, staged beside it
and moved into place in one rename: a folder that is there is complete.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from probebench.errors import InputError
from probebench.sources.urls import ArtifactRef


@dataclass(frozen=True)
class Fetched:
    """A remote artifact on this machine."""

    folder: Path
    #: the 40-hex commit the folder was taken from
    commit: str
    #: how it was found, for the user ("hub", "hub cache (offline)", "git", ...)
    how: str


def landing_place(root: Path, ref: ArtifactRef, commit: str) -> Path:
    """The folder ``ref`` at ``commit`` lands in, under ``root`` (one host's cache)."""
    assert ref.repo_id is not None
    # '~' is no part of a name (see urls._NAME): the key is unique per subfolder
    key = "~" + ref.subfolder.replace("/", "~")
    return root / ref.repo_id / commit / key / ref.name


def staging_folder(final: Path) -> Path:
    """An empty private folder beside ``final``, to be moved there by ``land``."""
    final.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".staging-", dir=final.parent))


def land(staged: Path, final: Path) -> Path:
    """Move the complete ``staged`` folder to ``final``; another process that got there
    first wrote the same commit, so its folder is kept."""
    try:
        staged.rename(final)
    except OSError:
        if not final.is_dir():
            raise
        shutil.rmtree(staged, ignore_errors=True)
    return final


def refuse_links(folder: Path, url: str) -> None:
    """Raise unless everything under ``folder`` is a plain folder or regular file."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in (*dirnames, *filenames):
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            rel = path.relative_to(folder).as_posix()
            if stat.S_ISLNK(mode):
                raise InputError(f"artifact {url!r}: {rel} is a symlink (to "
                                 f"{path.readlink()}); an artifact holds regular files only")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise InputError(f"artifact {url!r}: {rel} is not a regular file")
