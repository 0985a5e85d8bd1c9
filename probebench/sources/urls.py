"""Where an artifact lives, parsed: the URL forms researchers write, as one typed value.

Accepted (``ACCEPTED_FORMS``): a folder (a path relative to the repository in a
registry entry, any folder on the command line), ``file://PATH``,
``hf://[datasets/]ORG/REPO@REV[/SUBFOLDER]`` (the form of ``huggingface_hub``'s
``HfFileSystem``), the hub's own pages ``https://huggingface.co/[datasets/]ORG/REPO/tree/
REV[/SUBFOLDER]`` and GitHub's ``https://github.com/ORG/REPO/tree/REV[/PATH]``.

Every remote form names a revision: a registry entry's must be the 40-hex commit (a
branch or tag moves), local use may name a branch and is told the commit it got.

Every pattern matches the whole text (``fullmatch`` or ``\\Z``: ``$`` would let a trailing
newline through). Names are plain ASCII, never percent-encoded, and no part of a location
holds a control character: what reaches git or the hub is exactly what was parsed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import unquote

from probebench.errors import InputError

RefKind = Literal["path", "file", "hub", "github"]
RepoType = Literal["model", "dataset"]

#: a full commit id (``COMMIT.match`` is anchored at both ends)
COMMIT = re.compile(r"[0-9a-f]{40}\Z")
#: an owner, repository or folder name: ASCII letters, digits, '.', '_' and '-', no
#: slashes or URL syntax (a leading '-' would read as an option to git); '.' and '..'
#: are refused apart
_NAME = re.compile(r"(?!-)[A-Za-z0-9_.\-]+")
#: a revision: a name that git and the hub take as a branch, tag or commit (no '..', no
#: leading '.', no trailing '.' or '.lock', see git-check-ref-format)
_REVISION = re.compile(r"(?!-)(?!\.)(?!.*\.\.)(?!.*\.lock\Z)(?!.*\.\Z)[A-Za-z0-9_.\-]+")
#: C0 and C1 control characters and DEL: no part of any artifact location
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ESCAPES = re.compile(r"(%[0-9A-Fa-f]{2})+")

ACCEPTED_FORMS = (
    "a folder (in a registry entry: registry/artifacts/<folder>)",
    "file:///ABSOLUTE/FOLDER",
    "hf://ORG/REPO@REV[/SUBFOLDER]",
    "hf://datasets/ORG/REPO@REV[/SUBFOLDER]",
    "https://huggingface.co/ORG/REPO/tree/REV[/SUBFOLDER]",
    "https://huggingface.co/datasets/ORG/REPO/tree/REV[/SUBFOLDER]",
    "https://github.com/ORG/REPO/tree/REV[/PATH]",
)


def accepted() -> str:
    return "accepted: " + "; ".join(ACCEPTED_FORMS)


@dataclass(frozen=True)
class ArtifactRef:
    """One artifact location. ``path`` is set for the local kinds, ``repo_id`` and
    ``revision`` for the remote ones (``hub``: ``repo_type`` too)."""

    url: str
    kind: RefKind
    path: str | None = None
    repo_type: RepoType | None = None
    repo_id: str | None = None
    revision: str | None = None
    #: the artifact folder inside the remote repository, "" for its root
    subfolder: str = ""

    @property
    def remote(self) -> bool:
        return self.kind in ("hub", "github")

    @property
    def pinned(self) -> bool:
        """Whether the revision is a full commit (a branch or tag can move)."""
        return self.revision is not None and bool(COMMIT.match(self.revision))

    @property
    def name(self) -> str:
        """The artifact folder's own name: the last folder of the path or repository."""
        tail = (self.subfolder or self.repo_id or self.path or "").rstrip("/")
        return tail.rsplit("/", 1)[-1]

    def web_url(self) -> str | None:
        """The page of a remote artifact at its revision (None for local kinds)."""
        if self.kind == "hub":
            prefix = "datasets/" if self.repo_type == "dataset" else ""
            base = f"https://huggingface.co/{prefix}{self.repo_id}/tree/{self.revision}"
        elif self.kind == "github":
            base = f"https://github.com/{self.repo_id}/tree/{self.revision}"
        else:
            return None
        return base + (f"/{self.subfolder}" if self.subfolder else "")

    def at(self, revision: str) -> str:
        """This URL in the form it was written, at ``revision`` (e.g. the commit a
        branch is now)."""
        if self.kind == "hub" and self.url.strip().startswith("hf://"):
            prefix = "datasets/" if self.repo_type == "dataset" else ""
            return (f"hf://{prefix}{self.repo_id}@{revision}"
                    + (f"/{self.subfolder}" if self.subfolder else ""))
        return replace(self, revision=revision).web_url() or self.url


def _problem(url: str, what: str) -> InputError:
    return InputError(f"artifact {url!r}: {what}; {accepted()}")


def _names(url: str, parts: list[str], what: str) -> None:
    for part in parts:
        if part in ("", ".", "..") or not _NAME.fullmatch(part):
            shown = part or "(empty)"
            raise _problem(url, f"{what} holds {shown!r}, which is not a plain name "
                                "(letters, digits, '.', '_', and '-' but not first; no "
                                "'..', no empty parts)")


def _revision(url: str, revision: str) -> str:
    if not _REVISION.fullmatch(revision):
        raise _problem(url, f"revision {revision!r} is not a commit, branch or tag name "
                            "(branch names with '/' cannot be written in a URL: use the "
                            "commit)")
    return revision


def _remote_url(url: str, body: str) -> str:
    if any(c in body for c in "?#\\"):
        raise _problem(url, "query strings, fragments and backslashes are not part of an "
                            "artifact URL")
    if "%" in body:
        # a plain name needs no escape; decoding one would let '%2e%2e' become '..'
        escaped = _ESCAPES.search(body)
        shown = (f" ({escaped.group()!r} would be {unquote(escaped.group())!r})"
                 if escaped else "")
        raise _problem(url, f"percent-encoding is not part of an artifact URL{shown}: "
                            "names are written as they are")
    return body[:-1] if body.endswith("/") else body


def _hf(url: str) -> ArtifactRef:
    parts = _remote_url(url, url[len("hf://"):]).split("/")
    repo_type: RepoType = "model"
    if parts[0] in ("datasets", "spaces", "models"):
        if parts[0] == "spaces":
            raise _problem(url, "a Space is an app, not a place for artifacts")
        if parts[0] == "models":
            raise _problem(url, "hf:// names models without a prefix: hf://ORG/REPO@REV")
        repo_type, parts = "dataset", parts[1:]
    if len(parts) < 2 or "@" not in parts[1]:
        raise _problem(url, "hf:// URLs pin a revision: hf://[datasets/]ORG/REPO@<commit>"
                            "[/SUBFOLDER]")
    name, _, revision = parts[1].partition("@")
    _names(url, [parts[0], name], "the repository")
    _names(url, parts[2:], "the subfolder")
    return ArtifactRef(url, "hub", repo_type=repo_type, repo_id=f"{parts[0]}/{name}",
                       revision=_revision(url, revision), subfolder="/".join(parts[2:]))


def _tree(url: str, host: str, parts: list[str]) -> tuple[str, str, str]:
    """(repo id, revision, subfolder) from ``ORG/REPO/tree/REV[/SUB]``."""
    if len(parts) >= 3 and parts[2] in ("blob", "resolve", "raw"):
        raise _problem(url, f"/{parts[2]}/ names one file; an artifact is a folder: "
                            f"https://{host}/ORG/REPO/tree/REV/FOLDER")
    if len(parts) < 4 or parts[2] != "tree":
        raise _problem(url, f"pin a revision: https://{host}/ORG/REPO/tree/<commit>"
                            "[/FOLDER] (a repository's front page follows its default "
                            "branch)")
    _names(url, parts[:2], "the repository")
    _names(url, parts[4:], "the folder")
    return f"{parts[0]}/{parts[1]}", _revision(url, parts[3]), "/".join(parts[4:])


def _huggingface(url: str) -> ArtifactRef:
    parts = _remote_url(url, url[len("https://huggingface.co/"):]).split("/")
    repo_type: RepoType = "model"
    if parts[0] == "spaces":
        raise _problem(url, "a Space is an app, not a place for artifacts")
    if parts[0] == "datasets":
        repo_type, parts = "dataset", parts[1:]
    repo_id, revision, sub = _tree(url, "huggingface.co", parts)
    return ArtifactRef(url, "hub", repo_type=repo_type, repo_id=repo_id, revision=revision,
                       subfolder=sub)


def _github(url: str) -> ArtifactRef:
    parts = _remote_url(url, url[len("https://github.com/"):]).split("/")
    repo_id, revision, sub = _tree(url, "github.com", parts)
    if repo_id.endswith(".git"):
        raise _problem(url, "name the repository without .git")
    return ArtifactRef(url, "github", repo_id=repo_id, revision=revision, subfolder=sub)


def _file(url: str) -> ArtifactRef:
    path = url[len("file://"):]
    if not path.startswith("/"):
        raise _problem(url, "a file:// URL holds an absolute path: file:///ABSOLUTE/FOLDER")
    return ArtifactRef(url, "file", path=path)


#: URL prefix -> parser; anything else with '://' is refused, the rest is a folder path
_PARSERS: dict[str, Callable[[str], ArtifactRef]] = {
    "file://": _file,
    "hf://": _hf,
    "https://huggingface.co/": _huggingface,
    "https://github.com/": _github,
}


def parse_artifact_ref(url: str) -> ArtifactRef:
    """Parse where an artifact lives; an ``InputError`` names what was found and lists
    the accepted forms.

    >>> ref = parse_artifact_ref("https://huggingface.co/datasets/lab/probes/tree/main/verb")
    >>> (ref.kind, ref.repo_type, ref.repo_id, ref.revision, ref.subfolder, ref.pinned)
    ('hub', 'dataset', 'lab/probes', 'main', 'verb', False)
    >>> parse_artifact_ref("registry/artifacts/verb").kind
    'path'
    """
    control = _CONTROL.search(url)
    if control:
        raise _problem(url, f"holds the control character {control.group()!r}, which is "
                            "no part of an artifact location")
    text = url.strip()
    if not text:
        raise _problem(url, "empty")
    for prefix, parse in _PARSERS.items():
        if text.startswith(prefix):
            return parse(text)
    if "://" in text or text.startswith(("http:", "https:")):
        raise InputError(f"artifact {url!r}: only repository paths, file://, hf://, "
                         "https://huggingface.co/ and https://github.com/ URLs are "
                         f"supported; {accepted()}")
    return ArtifactRef(url, "path", path=text)
