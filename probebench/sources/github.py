"""Artifacts in a GitHub repository, fetched with plain git at a commit.

One bare repository per GitHub repository under ``artifact_cache_dir()/git`` receives a
shallow, blobless fetch of the one commit (``--depth 1 --filter=blob:none``); checking
out the artifact's folder then fetches only that folder's files. The URL is always
``https://github.com/ORG/REPO``: git's own ``url.<base>.insteadOf`` configuration may
point it elsewhere (a mirror, or a local repository in the tests). With
``HF_HUB_OFFLINE`` set nothing is fetched and only folders already landed are used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from probebench.errors import InputError
from probebench.paths import artifact_cache_dir, hub_offline
from probebench.sources.landing import (
    Fetched,
    land,
    landing_place,
    refuse_links,
    staging_folder,
)
from probebench.sources.urls import COMMIT, ArtifactRef

#: seconds one git command may take
GIT_TIMEOUT = 300
#: git tree modes that are not a plain file or folder: a symlink, a submodule
_REFUSED_MODES = {"120000": "a symlink", "160000": "a submodule"}


def fetch_github(ref: ArtifactRef) -> Fetched:
    """The folder ``ref`` names, at the commit its revision is (see module docstring)."""
    assert ref.kind == "github" and ref.repo_id and ref.revision
    root = artifact_cache_dir()
    gitdir = root / "git" / "github.com" / f"{ref.repo_id}.git"
    offline = hub_offline()
    known = ref.revision if ref.pinned else (
        _recorded(gitdir, ref.revision, ref.url) if offline else None)
    if known is not None:
        final = landing_place(root / "github.com", ref, known)
        if final.is_dir():
            return Fetched(final, known, "git cache (offline)" if offline else "git cache")
    if offline:
        raise InputError(f"artifact {ref.url!r}: not in probebench's artifact cache {root} "
                         "(HF_HUB_OFFLINE is set, so git fetches nothing); fetch it once "
                         "online")
    if not (gitdir / "HEAD").is_file():
        _init(gitdir, ref)
    commit = _fetch(gitdir, ref)
    final = landing_place(root / "github.com", ref, commit)
    if final.is_dir():
        return Fetched(final, commit, "git cache")
    _check_tree(gitdir, commit, ref)
    staged = staging_folder(final)
    try:
        _git(gitdir, ref, "--work-tree", str(staged), "checkout", "--quiet", commit, "--",
             ref.subfolder or ".")
        folder = staged / ref.subfolder if ref.subfolder else staged
        refuse_links(folder, ref.url)
        if not folder.resolve().is_relative_to(staged.resolve()):
            raise InputError(f"artifact {ref.url!r}: the checkout leads outside its folder")
        land(folder, final)
    finally:
        if staged.exists():
            shutil.rmtree(staged, ignore_errors=True)
    return Fetched(final, commit, "git")


def _git(gitdir: Path, ref: ArtifactRef, *args: str) -> str:
    """Run ``git --git-dir=GITDIR ARGS`` (never a shell) and return its output."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", f"--git-dir={gitdir}", *args], capture_output=True,
                              text=True, env=env, timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise InputError(f"artifact {ref.url!r}: git is needed for github.com artifacts "
                         "and is not installed") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"artifact {ref.url!r}: git {args[0]} took more than "
                         f"{GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.strip()
                 and not ln.startswith(("warning:", "hint:"))]
        raise InputError(f"artifact {ref.url!r}: git {args[0]} failed: "
                         f"{lines[-1] if lines else done.returncode}")
    return done.stdout


def _init(gitdir: Path, ref: ArtifactRef) -> None:
    gitdir.parent.mkdir(parents=True, exist_ok=True)
    _git(gitdir, ref, "init", "--quiet", "--bare")
    _git(gitdir, ref, "remote", "add", "origin", f"https://github.com/{ref.repo_id}")


def _ref_name(revision: str) -> str:
    return f"refs/probebench/revs/{revision}"


def _recorded(gitdir: Path, revision: str, url: str) -> str | None:
    """The commit a branch or tag was when last fetched (None: never fetched here)."""
    if not (gitdir / "HEAD").is_file():
        return None
    done = subprocess.run(["git", f"--git-dir={gitdir}", "rev-parse", "--verify", "--quiet",
                           f"{_ref_name(revision)}^{{commit}}"], capture_output=True,
                          text=True, check=False, timeout=GIT_TIMEOUT)
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and COMMIT.match(commit) else None


def _fetch(gitdir: Path, ref: ArtifactRef) -> str:
    """Fetch the commit (only its trees), record which commit a branch was, and return
    the commit, checked against a pinned one."""
    assert ref.revision is not None
    name = _ref_name(ref.revision)
    _git(gitdir, ref, "fetch", "--quiet", "--no-tags", "--depth", "1", "--filter=blob:none",
         "origin", f"+{ref.revision}:{name}")
    commit = _git(gitdir, ref, "rev-parse", "--verify", f"{name}^{{commit}}").strip()
    if not COMMIT.match(commit) or (ref.pinned and commit != ref.revision):
        raise InputError(f"artifact {ref.url!r}: git fetched commit {commit}, not the "
                         f"pinned {ref.revision}")
    return commit


def _check_tree(gitdir: Path, commit: str, ref: ArtifactRef) -> None:
    """The folder exists at the commit and holds only plain files and folders."""
    where = f"https://github.com/{ref.repo_id} at commit {commit}"
    if ref.subfolder:
        kind = subprocess.run(["git", f"--git-dir={gitdir}", "cat-file", "-t",
                               f"{commit}:{ref.subfolder}"], capture_output=True, text=True,
                              check=False, timeout=GIT_TIMEOUT).stdout.strip()
        if kind != "tree":
            raise InputError(f"artifact {ref.url!r}: {where} has no folder {ref.subfolder}"
                             + (" (it is a file)" if kind == "blob" else ""))
    listing = _git(gitdir, ref, "ls-tree", "-r", "-z", "--full-tree", commit, "--",
                   *([ref.subfolder] if ref.subfolder else []))
    for line in filter(None, listing.split("\0")):
        meta, _, path = line.partition("\t")
        mode = meta.split(" ", 1)[0]
        if mode in _REFUSED_MODES:
            raise InputError(f"artifact {ref.url!r}: {path} is {_REFUSED_MODES[mode]} in "
                             f"{where}; an artifact holds regular files only")
