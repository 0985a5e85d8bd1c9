"""Where an entry's artifact lives: a repository path, ``file://``, or a remote folder
pinned to a revision (the forms are parsed in ``urls``, fetched by ``hub`` and
``github``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from probebench.errors import InputError
from probebench.sources.budget import FetchBudget
from probebench.sources.github import fetch_github
from probebench.sources.hub import fetch_hub
from probebench.sources.landing import Fetched
from probebench.sources.urls import ArtifactRef, parse_artifact_ref

#: the first two forms a registry entry could use (a registry folder, ``hf://`` of a model
#: at a commit); ``registry_artifact_problem`` is the whole rule
REGISTRY_ARTIFACT = re.compile(r"(registry/artifacts/[A-Za-z0-9][A-Za-z0-9._\-]*/?|"
                               r"hf://[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9_.\-]+"
                               r"@[0-9a-f]{40}(/[A-Za-z0-9_.\-]+)*)\Z")
_REGISTRY_FOLDER = re.compile(r"registry/artifacts/[A-Za-z0-9][A-Za-z0-9._\-]*/?\Z")
REGISTRY_RULE = ("a registry entry's artifact is a folder registry/artifacts/<folder> or "
                 "hf://[datasets/]ORG/REPO@COMMIT[/SUBFOLDER], "
                 "https://huggingface.co/[datasets/]ORG/REPO/tree/COMMIT[/SUBFOLDER] or "
                 "https://github.com/ORG/REPO/tree/COMMIT[/PATH], with COMMIT the 40-hex "
                 "revision (a branch or tag can move); file:// and other paths are for "
                 "local use only")

#: remote kind -> how it is fetched, within a budget (None: the artifact's limits)
_FETCHERS: dict[str, Callable[[ArtifactRef, FetchBudget | None], Fetched]] = {
    "hub": fetch_hub,
    "github": fetch_github,
}


def registry_artifact_problem(url: str) -> str | None:
    """Why ``url`` may not be a registry entry's ``artifact_url`` (None when it may)."""
    try:
        ref = parse_artifact_ref(url)
    except InputError as exc:
        return f"artifact_url {url!r}: {REGISTRY_RULE} ({exc})"
    if ref.remote and ref.pinned:
        return None
    if ref.kind == "path" and _REGISTRY_FOLDER.match(url) and ".." not in url.split("/"):
        return None
    found = (f"; found the revision {ref.revision!r}, not a commit" if ref.remote else "")
    return f"artifact_url {url!r}: {REGISTRY_RULE}{found}"


def fetch_artifact(ref: ArtifactRef, budget: FetchBudget | None = None) -> Fetched:
    """A remote artifact's folder on this machine, at the commit its revision is now (a
    branch is followed; offline, as the local cache last saw it). A folder over
    ``budget`` (default: the artifact's limits) is refused before its files are
    downloaded or checked out."""
    if not ref.remote:
        raise InputError(f"artifact {ref.url!r}: not a remote artifact")
    return _FETCHERS[ref.kind](ref, budget)


def resolve_artifact(url: str, repo_root: Path) -> tuple[Path, str]:
    """(local folder, how it was found) for a registry entry's ``artifact_url``: a path
    relative to ``repo_root``, ``file://`` or a remote form (``urls.ACCEPTED_FORMS``),
    fetched at its revision; offline (``HF_HUB_OFFLINE``), only local caches are used."""
    ref = parse_artifact_ref(url)
    if ref.remote:
        fetched = fetch_artifact(ref)
        return fetched.folder, f"{fetched.how}, commit {fetched.commit}"
    assert ref.path is not None
    if ref.kind == "file":
        path = Path(ref.path)
        how = "file"
    else:
        rel = Path(ref.path)
        if rel.is_absolute() or ".." in rel.parts:
            raise InputError(f"artifact_url {url!r}: a repository path is relative and stays "
                             "inside the repository")
        path = repo_root / rel
        how = "repository path"
        if path.exists() and not path.resolve().is_relative_to(Path(repo_root).resolve()):
            raise InputError(f"artifact_url {url!r}: leads outside the repository")
    if not path.is_dir():
        raise InputError(f"artifact_url {url!r}: {path} is not a folder")
    return path, how
