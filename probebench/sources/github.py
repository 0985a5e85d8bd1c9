"""Artifacts in a GitHub repository, fetched with plain git at a commit, within a budget.

One bare repository per GitHub repository under ``artifact_cache_dir()/git`` keeps what
was fetched. The artifact's folder is sized up before any of its bytes is written out:

1. a shallow fetch of the one commit without blobs (``--depth 1 --filter=blob:none``):
   its trees name every file, so the folder's file count, folder depth and modes (no
   symlink, no submodule) are checked with no file downloaded;
2. a fetch of the folder's own tree with ``--filter=blob:limit=<FetchBudget.file_bytes
   + 1>``: only files within the one-file limit arrive, and only the folder's (the
   pack is watched and stopped past ``FetchBudget.download_bytes``);
3. ``git cat-file --batch-check`` reads every blob's size from the object store (a blob
   left out by the filter is over the limit): the folder's sizes are checked;
4. only then is the folder checked out, from a view that cannot fetch.

git runs apart from the host (``gitrun``): no system or global configuration, hooks,
attributes, filters or LFS, and only the protocol of the base URL. The base is
``https://github.com/``; ``PROBEBENCH_GITHUB_BASE`` names another (a mirror, or a local
``file://`` folder of repositories in the tests) and its protocol. With
``HF_HUB_OFFLINE`` set nothing is fetched and only folders already landed are used.
"""

from __future__ import annotations

import os
import shutil

from probebench.errors import InputError
from probebench.paths import artifact_cache_dir, hub_offline
from probebench.sources.budget import FetchBudget
from probebench.sources.gitrun import IsolatedGit
from probebench.sources.landing import (
    Fetched,
    land,
    landing_place,
    refuse_links,
    staging_folder,
)
from probebench.sources.urls import COMMIT, ArtifactRef

#: where repositories are fetched from: ``BASE + ORG/REPO``
GITHUB_BASE_ENV = "PROBEBENCH_GITHUB_BASE"
GITHUB_BASE = "https://github.com/"
#: the protocols a base may use (git is allowed that one alone)
_BASE_PROTOCOLS = ("https", "http", "file")
#: git tree modes that are not a plain file or folder: a symlink, a submodule
_REFUSED_MODES = {"120000": "a symlink", "160000": "a submodule"}


def github_base() -> tuple[str, str]:
    """(base URL ending in '/', its protocol): ``$PROBEBENCH_GITHUB_BASE`` or github.com."""
    base = os.environ.get(GITHUB_BASE_ENV, "").strip() or GITHUB_BASE
    protocol, sep, _ = base.partition("://")
    if not sep or protocol not in _BASE_PROTOCOLS or not base.endswith("/"):
        raise InputError(f"{GITHUB_BASE_ENV}={base!r}: expected a URL ending in '/' with "
                         f"one of the protocols {', '.join(_BASE_PROTOCOLS)}, e.g. "
                         f"{GITHUB_BASE}")
    return base, protocol


def fetch_github(ref: ArtifactRef, budget: FetchBudget | None = None) -> Fetched:
    """The folder ``ref`` names, at the commit its revision is, within ``budget``
    (default: the artifact's limits; see module docstring)."""
    assert ref.kind == "github" and ref.repo_id and ref.revision
    budget = budget or FetchBudget.default()
    root = artifact_cache_dir()
    gitdir = root / "git" / "github.com" / f"{ref.repo_id}.git"
    offline = hub_offline()
    base, protocol = github_base()
    with IsolatedGit(gitdir, ref.url, (protocol,)) as git:
        known = ref.revision if ref.pinned else (
            _recorded(git, ref.revision) if offline else None)
        if known:
            final = landing_place(root / "github.com", ref, known)
            if final.is_dir():
                return Fetched(final, known,
                               "git cache (offline)" if offline else "git cache")
        if offline:
            raise InputError(f"artifact {ref.url!r}: not in probebench's artifact cache "
                             f"{root} (HF_HUB_OFFLINE is set, so git fetches nothing); "
                             "fetch it once online")
        if not (gitdir / "HEAD").is_file():
            git.init(base + ref.repo_id)
        remote = git.run("config", "--get", "remote.origin.url", check=False).stdout.strip()
        if remote != base + ref.repo_id:  # written only when it changes: no lock taken
            git.run("config", "remote.origin.url", base + ref.repo_id)
        commit = _fetch(git, ref, budget)
        final = landing_place(root / "github.com", ref, commit)
        if final.is_dir():
            return Fetched(final, commit, "git cache")
        where = f"https://github.com/{ref.repo_id} at commit {commit}"
        tree, blobs = _listing(git, commit, ref, where, budget)
        sizes = _sizes(git, blobs)
        if None in sizes.values():
            git.fetch("--refetch", f"--filter=blob:limit={budget.file_bytes + 1}",
                      "origin", tree, max_bytes=budget.download_bytes,
                      what=f"the folder {ref.subfolder or '(root)'} of {where}",
                      updates_refs=False)
            sizes = _sizes(git, blobs)
        budget.check_sizes(ref.url, f"{where}, folder {ref.subfolder or '(root)'},",
                           sizes, before="checkout")
        staged = staging_folder(final)
        try:
            index = {"GIT_INDEX_FILE": str(git.scratch / "index")}
            git.run("--work-tree", str(staged), "read-tree", tree, view=True, env=index)
            git.run("--work-tree", str(staged), "checkout-index", "--all", "--force",
                    view=True, env=index, cwd=staged)
            refuse_links(staged, ref.url)
            land(staged, final)
        finally:
            if staged.exists():
                shutil.rmtree(staged, ignore_errors=True)
    return Fetched(final, commit, "git")


def _ref_name(revision: str) -> str:
    return f"refs/probebench/revs/{revision}"


def _recorded(git: IsolatedGit, revision: str) -> str | None:
    """The commit a branch or tag was when last fetched (None: never fetched here)."""
    if not (git.gitdir / "HEAD").is_file():
        return None
    done = git.run("rev-parse", "--verify", "--quiet", f"{_ref_name(revision)}^{{commit}}",
                   check=False)
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and COMMIT.match(commit) else None


def _fetch(git: IsolatedGit, ref: ArtifactRef, budget: FetchBudget) -> str:
    """Fetch the commit (only its trees), record which commit a branch was, and return
    the commit, checked against a pinned one."""
    assert ref.revision is not None
    name = _ref_name(ref.revision)
    git.fetch("--depth", "1", "--filter=blob:none", "origin", f"+{ref.revision}:{name}",
              max_bytes=budget.download_bytes,
              what=f"the trees of https://github.com/{ref.repo_id} at {ref.revision}",
              updates_refs=True)
    commit = git.run("rev-parse", "--verify", f"{name}^{{commit}}").stdout.strip()
    if not COMMIT.match(commit) or (ref.pinned and commit != ref.revision):
        raise InputError(f"artifact {ref.url!r}: git fetched commit {commit}, not the "
                         f"pinned {ref.revision}")
    return commit


def _listing(git: IsolatedGit, commit: str, ref: ArtifactRef, where: str,
             budget: FetchBudget) -> tuple[str, dict[str, str]]:
    """(the folder's tree, its files: path in the folder -> blob id), from trees alone;
    refused unless it is a folder of plain files within the budget's count and depth."""
    if ref.subfolder:  # the entry in its parent tree says what it is, blob or not
        entry = git.run("ls-tree", "-z", commit, "--", ref.subfolder, view=True).stdout
        meta, _, path = entry.rstrip("\0").partition("\t")
        fields = meta.split(" ")  # mode, type, object id
        found = path == ref.subfolder and len(fields) == 3
        kind, tree = (fields[1], fields[2]) if found else ("", "")
        if kind != "tree":
            raise InputError(f"artifact {ref.url!r}: {where} has no folder "
                             f"{ref.subfolder}" + (" (it is a file)" if kind == "blob" else ""))
    else:
        tree = git.run("rev-parse", "--verify", f"{commit}^{{tree}}", view=True).stdout.strip()
    listing = git.run("ls-tree", "-r", "-z", tree, view=True).stdout
    blobs: dict[str, str] = {}
    prefix = f"{ref.subfolder}/" if ref.subfolder else ""
    for line in filter(None, listing.split("\0")):
        meta, _, path = line.partition("\t")
        mode, _, oid = meta.split(" ", 2)
        if mode in _REFUSED_MODES:
            raise InputError(f"artifact {ref.url!r}: {prefix}{path} is "
                             f"{_REFUSED_MODES[mode]} in {where}; an artifact holds "
                             "regular files only")
        blobs[path] = oid
    budget.check_paths(ref.url, f"{where}, folder {ref.subfolder or '(root)'},",
                       list(blobs))
    return tree, blobs


def _sizes(git: IsolatedGit, blobs: dict[str, str]) -> dict[str, int | None]:
    """Each file's size from the object store (None: its blob is not here), read through
    the view, so that a missing blob is never fetched to be measured."""
    wanted = sorted(set(blobs.values()))
    out = git.run("cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)",
                  view=True, stdin="".join(f"{oid}\n" for oid in wanted)).stdout
    found: dict[str, int] = {}
    for line in out.splitlines():
        oid, kind, *size = line.split(" ")
        if kind == "blob" and size:
            found[oid] = int(size[0])
    return {path: found.get(oid) for path, oid in blobs.items()}
