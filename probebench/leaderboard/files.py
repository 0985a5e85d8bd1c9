"""The files the leaderboard links to: artifact files, notebooks, stored results, REPORT.md.

Every number on the leaderboard can be traced to a file. Where the link goes:

* ``source_url`` given (``leaderboard build --source-url``, e.g. the GitHub blob URL
  of the repository at the commit the leaderboard is built from): repository files are linked
  there, as ``<source_url>/<path in the repository>``;
* otherwise (the default), each small file is stored once, by content, in the registry
  mirror's blob store (``registry/blobs/<sha256>``, ``probebench.registry.mirror.blob_path``),
  and the page links that blob with the file's name to save it under (``download``): the
  mirror and the pages share one copy, every link works from ``file://`` and on any
  static host. A file over ``MAX_COPY_BYTES`` is listed with its size but not linked.

A **stored result** (``<registry>/results/<entry id>/<task>.json``, ``stored_result``) is
stored as the same JSON written compact (``compact_json``: no indentation, the same keys in
the same order, every number as written): the repository indents it for its diffs, and at
10,000 entries the indentation alone was about 470 MB of the site. The registry mirror
stores the same compact bytes (one blob for both), and ``registry.json`` lists their
SHA-256 and size, which is what a reader checks; nothing signs the repository's own bytes
of a result. Every other file (an artifact's, whose bytes its bundle hash covers, an
entry's YAML, a task's data) is stored byte for byte.

REPORT.md is always generated into the leaderboard (``files/<entry>/reports/``), rendered
from the stored result the page shows. Only files whose suffix is in ``LINKABLE`` are ever
stored or linked, and only under plain names: an artifact folder cannot put an HTML, SVG or
script file on the leaderboard's origin. A hub artifact (``hf://ORG/REPO@COMMIT``) is
linked to its pinned revision on huggingface.co.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from probebench.errors import InputError
from probebench.hashing import sha256_bytes
from probebench.registry.mirror import blob_path
from probebench.sources.urls import parse_artifact_ref

#: files larger than this are listed, not copied into the leaderboard
MAX_COPY_BYTES = 2_000_000
#: the only kinds of file the leaderboard copies or links (never HTML, SVG or scripts)
LINKABLE = (".md", ".txt", ".yaml", ".yml", ".json", ".jsonl", ".csv", ".tsv", ".ipynb",
            ".safetensors", ".joblib", ".skops", ".pkl", ".pickle", ".npz", ".npy",
            ".sha256")
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]*(/[A-Za-z0-9][A-Za-z0-9._\-]*)*\Z")
#: folders below an artifact's root that are walked (as the bundle's MAX_PATH_DEPTH)
_MAX_DEPTH = 8
#: a stored result's path below the repository: <registry>/results/<org>/<name>/<task>.json
_STORED_RESULT = re.compile(r"^[^/]+/results/[^/]+/[^/]+/[^/]+\.json\Z")


@dataclass(frozen=True)
class FileLink:
    """One file a page lists: its name, where it is linked (None: listed only)."""

    name: str
    href: str | None
    size: int | None = None
    note: str = ""
    #: the name a browser saves the file under (a blob's href has no name of its own)
    download: str | None = None

    def from_page(self, root: str) -> str | None:
        """The href as written on a page ``root`` below the leaderboard's root."""
        if self.href is None or "://" in self.href:
            return self.href
        return root + self.href


def slug(entry_id: str) -> str:
    return entry_id.replace("/", "__")


def stored_result(rel: str) -> bool:
    """Whether ``rel`` (a path below the repository) is a stored result, which the
    leaderboard and its registry mirror store compact (``compact_json``).

    >>> stored_result("registry/results/lab/verb-v1/verb_grammar.json")
    True
    >>> stored_result("registry/artifacts/verb/config.json")
    False
    """
    return bool(_STORED_RESULT.match(rel))


def compact_json(data: bytes) -> bytes:
    """``data``, a JSON document, written compact: no indentation or spaces between
    tokens, the same keys in the same order, the same numbers (a float is written as the
    shortest text that reads back as the same float, which is how the repository wrote
    it), non-ASCII text as UTF-8; ending in a newline. Bytes that are not a JSON document
    are returned as they are.

    >>> compact_json(b'{ "b": [ 1.5, 1e-07, null ],  "a": "caf\\u00e9" }')
    b'{"b":[1.5,1e-07,null],"a":"caf\\xc3\\xa9"}\\n'
    """
    try:
        value = json.loads(data)
    except ValueError:
        return data
    return (json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            + "\n").encode("utf-8")


def linkable(name: str) -> bool:
    """Whether a relative path may be copied or linked: a plain name with a known suffix.

    >>> linkable("train.ipynb"), linkable("x/../y.md"), linkable("page.html")
    (True, False, False)
    """
    return bool(_PLAIN_NAME.match(name)) and ".." not in name.split("/") and \
        name.lower().endswith(LINKABLE)


def hub_url(artifact_url: str) -> str | None:
    """The web page of a remote artifact pinned to a commit, on the Hugging Face Hub or
    GitHub (None for a repository path, an unpinned URL or anything malformed).

    >>> hub_url("hf://datasets/lab/probes@" + "a" * 40 + "/verb")[:58]
    'https://huggingface.co/datasets/lab/probes/tree/aaaaaaaaaa'
    >>> hub_url("https://github.com/lab/probes/tree/main/verb") is None
    True
    """
    try:
        ref = parse_artifact_ref(artifact_url)
    except InputError:
        return None
    return ref.web_url() if ref.pinned else None


class LeaderboardFiles:
    """Links to repository files from the leaderboard being written into ``out``."""

    def __init__(self, out: Path, repo: Path, source_url: str | None = None) -> None:
        self.out = out
        self.repo = repo.resolve()
        self.source_url = source_url.rstrip("/") if source_url else None

    def repository_file(self, path: Path, dest: str, *, note: str = "",
                        name: str | None = None) -> FileLink | None:
        """A link to the repository file ``path`` (None when there is no such file or
        it is outside the repository): under the source URL, or a copy at ``dest``."""
        if path.is_symlink() or not path.is_file():
            return None
        try:
            rel = path.resolve().relative_to(self.repo).as_posix()
        except ValueError:
            return None
        size = path.stat().st_size
        shown = name or path.name
        if not linkable(rel) or not linkable(dest):
            return FileLink(shown, None, size, note)
        if self.source_url:
            return FileLink(shown, f"{self.source_url}/{quote(rel)}", size, note)
        if size > MAX_COPY_BYTES:
            return FileLink(shown, None, size, f"{note}; not copied (over "
                                                f"{MAX_COPY_BYTES / 1e6:g} MB)".lstrip("; "))
        data = path.read_bytes()
        if stored_result(rel):
            data = compact_json(data)  # as the registry mirror stores it: one blob
        return self.stored(data, name=shown, note=note)

    def stored(self, data: bytes, *, name: str, note: str = "") -> FileLink:
        """A link to ``data`` in the blob store, written there unless it already is (the
        registry mirror writes the same path for the same bytes: one copy for both)."""
        href = blob_path(sha256_bytes(data))
        target = self.out / href
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return FileLink(name, href, len(data), note, download=name.rpartition("/")[2])

    def generated(self, dest: str, text: str, *, name: str, note: str = "") -> FileLink:
        """A file made for the leaderboard (e.g. REPORT.md), written at ``dest``."""
        target = self.out / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        target.write_bytes(data)
        return FileLink(name, quote(dest), len(data), note)

    def artifact_folder(self, artifact_url: str) -> Path | None:
        """The artifact's folder in the repository (None: on the hub, or elsewhere)."""
        if "://" in artifact_url or artifact_url.startswith("/"):
            return None
        folder = self.repo / artifact_url
        if ".." in Path(artifact_url).parts or folder.is_symlink() or not folder.is_dir():
            return None
        return folder

    def artifact_files(self, folder: Path, dest: str) -> list[FileLink]:
        """Every regular file of an artifact folder, linked when it may be (sorted by
        path; symbolic links and deep folders are skipped, as the bundle refuses them)."""
        out = []
        for here, dirs, names in os.walk(folder, followlinks=False):
            depth = len(Path(here).relative_to(folder).parts)
            dirs[:] = sorted(d for d in dirs if depth < _MAX_DEPTH
                             and not (Path(here) / d).is_symlink())
            for name in sorted(names):
                path = Path(here) / name
                if path.is_symlink() or not path.is_file():
                    continue
                rel = path.relative_to(folder).as_posix()
                link = (self.repository_file(path, f"{dest}/{rel}", name=rel)
                        if linkable(rel) else None)
                out.append(link or FileLink(rel, None, path.stat().st_size,
                                            "not linked (not a file kind the leaderboard serves)"))
        return sorted(out, key=lambda f: f.name)


__all__ = ["LINKABLE", "MAX_COPY_BYTES", "FileLink", "LeaderboardFiles", "compact_json",
           "hub_url", "linkable", "slug", "stored_result"]
