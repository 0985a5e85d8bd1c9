"""Reading a registry from wherever it is: a source folder, a built leaderboard, a URL.

``leaderboard build`` writes a **registry mirror** beside the leaderboard:
``registry.json`` (``RegistryIndex``: every entry with its bundle hash and file list, the
guards, the baselines, the task catalog's version and hashes, and the SHA-256 and size of
every file of the mirror, by its path in a repository: ``registry/probes/...``,
``registry/artifacts/...``) and the files' bytes under ``registry/blobs/<sha256>``, named by
content with no extension, so that a web server sends an artifact's HTML or SVG as bytes
to save, never as a page of the leaderboard. A reader puts each file it needs at its path
in the cache (``$PROBEBENCH_HOME/mirrors/<index sha256>/``), laid out as a repository, so
the rest of probebench reads it as a checkout's registry. So the leaderboard is a
registry too:

* a **source folder** holding ``probes/`` (a checkout's ``registry/``), read in place;
* a **built leaderboard folder** holding ``registry.json``: each file a command needs is
  checked against the index and copied into the cache before it is read;
* a **URL** of a leaderboard's ``registry.json`` (``https://``; ``http://`` only to this
  machine): the index is fetched, and each file a command needs (an entry, its artifact,
  the guards) is downloaded into the cache (``$PROBEBENCH_HOME/mirrors/``) and checked
  against the index before anything reads it. Files already in the cache are reused,
  and offline (``PROBEBENCH_OFFLINE`` or ``HF_HUB_OFFLINE``, or the server unreachable)
  the last index fetched from that URL is used.

``open_registry`` takes them in this order: the argument, ``$PROBEBENCH_REGISTRY``, the
enclosing checkout's ``registry/``, the project's published leaderboard
(``PUBLISHED_REGISTRY``).

The index can be **pinned** by its SHA-256 (``sha256=``, ``--registry-sha256``, or
``#sha256=HEX`` at the end of the URL): then a changed index is refused outright. Without
a pin, a changed file is caught only where the index and the file disagree, which is why
the docs recommend the pin for citing a result.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from probebench.errors import InputError, field_problem
from probebench.hashing import atomic_write_bytes, sha256_bytes
from probebench.jsonsafe import read_capped
from probebench.paths import enclosing_repo, home
from probebench.sources.budget import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES
from probebench.sources.http import OfflineError, fetch

if TYPE_CHECKING:
    from probebench.registry.entry import Entry
    from probebench.registry.store import ResultRecord

INDEX_FILE = "registry.json"
#: the mirror's files, by content, under the leaderboard's root
BLOBS = "registry/blobs"
INDEX_FORMAT: Literal["probebench-registry/1"] = "probebench-registry/1"
REGISTRY_ENV = "PROBEBENCH_REGISTRY"
#: the project's published leaderboard, whose registry.json a pip user reads by default
PUBLISHED_REGISTRY = "https://probebench.github.io/probebench/registry.json"
#: the largest registry.json read
MAX_INDEX_BYTES = 32 << 20
#: files and bytes one command may download from a mirror (an entry's artifact is
#: bounded by the artifact limits; the rest is entries, results and guards)
MAX_DOWNLOAD_FILES = 4 * MAX_FILES
MAX_DOWNLOAD_BYTES = 2 * MAX_TOTAL_BYTES
_PIN = re.compile(r"#sha256=([0-9a-f]{64})\Z")
_SHA = re.compile(r"[0-9a-f]{64}\Z")


# --- the index ----------------------------------------------------------------------

def _mirror_path(path: str) -> str:
    parts = path.split("/")
    if (not path.startswith("registry/") or any(p in ("", ".", "..") for p in parts)
            or "\\" in path or len(path) > 1024):
        raise ValueError(f"{path!r}: a mirror path is relative, under registry/, with no "
                         "empty, '.' or '..' part")
    return path


class MirrorFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class MirrorEntry(BaseModel):
    """One entry of the mirror: what ``registry list`` shows, and where its files are."""

    model_config = ConfigDict(extra="forbid")

    id: str
    status: str
    name: str
    model: str
    layer: int
    position: str
    probe_type: str
    license: str
    tasks: list[str]
    artifact_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="The bundle hash "
                                 "the entry registers (probebench hash).")
    entry_file: str = Field(description="The entry's YAML, relative to the leaderboard's root.")
    artifact_path: str = Field(description="The artifact folder in the mirror.")
    artifact_files: list[str] = Field(description="Every file of the artifact folder.")
    results: dict[str, str] = Field(default_factory=dict,
                                    description="Task -> the stored results file.")
    #: the latest stored AUROC per task (for listing; the results files are the record)
    auroc: dict[str, float | None] = Field(default_factory=dict)


class CatalogTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    test_sha256: str


class RegistryIndex(BaseModel):
    """``registry.json``: a published registry, file by file."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["probebench-registry/1"] = INDEX_FORMAT
    probebench_version: str
    spec_version: str = Field(description="The ProbeScore spec the leaderboard ranks with.")
    catalog: dict[str, CatalogTask] = Field(description="Task id -> the version and test "
                                            "hash the results were made on.")
    guards: dict[str, str] = Field(default_factory=dict, description="Model -> its guard.")
    guards_file: str | None = None
    entries: list[MirrorEntry]
    baselines: list[str] = Field(default_factory=list)
    files: dict[str, MirrorFile] = Field(description="Every file of the mirror, by path "
                                         "relative to the leaderboard's root.")

    @model_validator(mode="after")
    def _paths_listed(self) -> RegistryIndex:
        for path in self.files:
            _mirror_path(path)
        named = [*self.baselines, *([self.guards_file] if self.guards_file else [])]
        for entry in self.entries:
            named += [entry.entry_file, *entry.artifact_files, *entry.results.values()]
            for f in entry.artifact_files:
                if not f.startswith(entry.artifact_path.rstrip("/") + "/"):
                    raise ValueError(f"entry {entry.id}: {f} is outside its artifact folder")
        missing = sorted(set(named) - set(self.files))
        if missing:
            raise ValueError(f"paths named but not listed in files: {missing[:3]}")
        ids = [e.id for e in self.entries]
        if len(set(ids)) != len(ids):
            raise ValueError("an entry id is listed twice")
        return self

    def entry(self, entry_id: str) -> MirrorEntry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def to_json(self) -> str:
        import json

        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"


def parse_index(data: bytes, where: str) -> RegistryIndex:
    try:
        return RegistryIndex.model_validate_json(data)
    except ValidationError as exc:
        raise InputError(f"{where}: not a probebench registry index "
                         f"({field_problem(exc, '')})") from None


# --- sources ------------------------------------------------------------------------

Kind = Literal["folder", "leaderboard", "url"]


@dataclass
class RegistrySource:
    """A registry to read: ``registry`` holds ``probes/`` (and the rest), and ``repo`` is
    the root its entries' ``registry/artifacts/...`` paths are relative to."""

    kind: Kind
    #: what was given (a path or a URL), and why it was chosen
    given: str
    why: str
    registry: Path
    repo: Path
    index: RegistryIndex | None = None
    #: the index's SHA-256 (for a leaderboard or URL)
    index_sha256: str | None = None
    base_url: str | None = None
    #: a built leaderboard read from disk (its blobs are copied into the cache)
    folder: Path | None = None
    _bytes: int = field(default=0, repr=False)
    _count: int = field(default=0, repr=False)

    def describe(self) -> str:
        pin = f", index sha256 {self.index_sha256[:16]}..." if self.index_sha256 else ""
        return f"registry {self.given} ({self.kind}, {self.why}{pin})"

    # -- what commands ask for -----------------------------------------------------
    def entry_ids(self) -> list[str]:
        if self.index is not None:
            return sorted(e.id for e in self.index.entries)
        probes = self.registry / "probes"
        return sorted(f"{p.parent.name}/{p.stem}" for p in probes.glob("*/*.yaml"))

    def ensure_entry(self, entry_id: str, *, artifact: bool = True,
                     results: bool = False) -> None:
        """Make the entry's file (and its artifact's files, its results files) present
        and checked (a folder source has nothing to do)."""
        if self.index is None:
            return
        found = self.index.entry(entry_id)
        if found is None:
            return  # the caller reports an unknown id with its close matches
        paths = [found.entry_file]
        if artifact:
            paths += found.artifact_files
        if results:
            paths += list(found.results.values())
        self._ensure(paths)

    def ensure_guards(self) -> None:
        """Make ``guards.yaml`` and every guard's entry and artifact present and checked."""
        if self.index is None:
            return
        if self.index.guards_file:
            self._ensure([self.index.guards_file])
        for entry_id in sorted(set(self.index.guards.values())):
            self.ensure_entry(entry_id)

    def ensure_baselines(self, paths: list[str]) -> None:
        """Make those of ``paths`` that the index lists as baselines files present and
        checked (``registry.baselines.RegistryBaselines``); one it does not list stays
        absent, so its baselines are computed."""
        if self.index is not None:
            listed = set(self.index.baselines)
            self._ensure([p for p in paths if p in listed])

    # -- files ---------------------------------------------------------------------
    def _ensure(self, paths: Iterable[str]) -> None:
        assert self.index is not None
        for path in paths:
            listed = self.index.files.get(path)
            if listed is None:
                raise InputError(f"{self.given}: the index names {path} without its hash")
            local = self.repo / path
            if local.is_file() and not local.is_symlink():
                data = local.read_bytes()
                if len(data) == listed.size and sha256_bytes(data) == listed.sha256:
                    continue
            self._fetch(path, listed)

    def _fetch(self, path: str, listed: MirrorFile) -> None:
        """Bring the blob of ``path`` from the leaderboard folder or the server, check it
        against the index, and write it under its path in the cache."""
        assert self.base_url is not None or self.folder is not None
        if listed.size > MAX_FILE_BYTES:
            raise InputError(f"{self.given}: {path} is {listed.size} bytes; a mirror file may "
                             f"hold at most {MAX_FILE_BYTES} (refused before the download)")
        if self._count + 1 > MAX_DOWNLOAD_FILES or \
                self._bytes + listed.size > MAX_DOWNLOAD_BYTES:
            raise InputError(f"{self.given}: more than {MAX_DOWNLOAD_FILES} files or "
                             f"{MAX_DOWNLOAD_BYTES} bytes to download for one command; "
                             "refused")
        blob = blob_path(listed.sha256)
        if self.folder is not None:
            where = str(self.folder / blob)
            source = self.folder / blob
            if not source.is_file() or source.is_symlink():
                raise InputError(f"{where}: missing from the built leaderboard ({path}; "
                                 "registry.json lists it)")
            got = source.read_bytes()[: listed.size + 1]
        else:
            assert self.base_url is not None
            where = urljoin(self.base_url, blob)
            got = fetch(where, max_bytes=listed.size, what="mirror file").data
        if len(got) != listed.size or sha256_bytes(got) != listed.sha256:
            raise InputError(f"{where} ({path}): its bytes do not match the registry index "
                             f"(sha256 {sha256_bytes(got)[:16]}..., the index says "
                             f"{listed.sha256[:16]}...); refused, nothing was written")
        self._count += 1
        self._bytes += len(got)
        atomic_write_bytes(self.repo / path, got)


def blob_path(sha256: str) -> str:
    """Where a mirror file's bytes are, relative to the leaderboard's root: named by
    their SHA-256 alone, with no extension, so that a web server sends any of them as
    bytes to save (an artifact's HTML or SVG never renders on the leaderboard's
    origin)."""
    if not _SHA.match(sha256):
        raise InputError(f"{sha256[:80]!r}: not a sha256")
    return f"{BLOBS}/{sha256}"


MIRROR_CACHE_ENV = "PROBEBENCH_MIRROR_CACHE"


def mirrors_dir() -> Path:
    """Downloaded registry mirrors: ``$PROBEBENCH_MIRROR_CACHE`` or
    ``$PROBEBENCH_HOME/mirrors``."""
    value = os.environ.get(MIRROR_CACHE_ENV)
    return Path(value).expanduser() if value else home() / "mirrors"


def split_pin(url: str, sha256: str | None) -> tuple[str, str | None]:
    """(the URL without ``#sha256=HEX``, the pin: given or from the URL; both must agree).

    >>> split_pin("https://x.org/registry.json#sha256=" + "a" * 64, None)[1] == "a" * 64
    True
    """
    found = _PIN.search(url)
    if found is not None:
        url = url[: found.start()]
        if sha256 is not None and sha256 != found.group(1):
            raise InputError("--registry-sha256 and the URL's #sha256= pin disagree")
        sha256 = found.group(1)
    if sha256 is not None and not _SHA.match(sha256):
        raise InputError(f"registry sha256 {sha256[:80]!r}: expected 64 lowercase hex digits")
    return url, sha256


def _url_key(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def _open_url(url: str, sha256: str | None, why: str) -> RegistrySource:
    url, pin = split_pin(url, sha256)
    cache = mirrors_dir()
    pointer = cache / "urls" / _url_key(url)
    try:
        data = fetch(url, max_bytes=MAX_INDEX_BYTES, what="registry index").data
        digest = sha256_bytes(data)
        if pin is not None and digest != pin:
            raise InputError(f"{url}: the registry index's sha256 is {digest}, pinned "
                             f"{pin}; refused")
        index = parse_index(data, url)
        root = cache / digest
        atomic_write_bytes(root / INDEX_FILE, data)
        atomic_write_bytes(pointer, (digest + "\n").encode("ascii"))
    except OfflineError as exc:
        digest = pin or (pointer.read_text("ascii").strip() if pointer.is_file() else "")
        cached = cache / digest / INDEX_FILE if digest else None
        if cached is None or not cached.is_file():
            raise OfflineError(f"{exc} [{why}]; and no copy of that registry index is "
                               f"cached ({cache})") from None
        data = cached.read_bytes()
        if sha256_bytes(data) != digest:
            raise InputError(f"{cached}: the cached index changed; delete it") from None
        index = parse_index(data, str(cached))
        root = cache / digest
        why += ", offline: the cached copy"
    return RegistrySource("url", url, why, root / "registry", root, index, digest, url)


def _open_leaderboard(folder: Path, sha256: str | None, why: str) -> RegistrySource:
    path = folder / INDEX_FILE
    data = read_capped(path, MAX_INDEX_BYTES, "registry index")
    digest = sha256_bytes(data)
    if sha256 is not None and digest != sha256:
        raise InputError(f"{path}: its sha256 is {digest}, pinned {sha256}; refused")
    index = parse_index(data, str(path))
    root = mirrors_dir() / digest
    atomic_write_bytes(root / INDEX_FILE, data)
    return RegistrySource("leaderboard", str(folder), why, root / "registry", root, index,
                          digest, folder=folder)


def open_registry(given: str | Path | None = None, *, sha256: str | None = None,
                  start: Path | None = None, published: bool = True) -> RegistrySource:
    """The registry to read, in this order: ``given``, ``$PROBEBENCH_REGISTRY``, the
    enclosing checkout's ``registry/`` (from ``start``, default the current folder), the
    project's published leaderboard (unless ``published`` is False: then none found is an
    ``InputError``). ``given`` is a source folder (with ``probes/``), a built
    leaderboard (with ``registry.json``) or a URL of a ``registry.json``."""
    if given is not None and str(given).strip():
        return _open(given, sha256, "given")
    env = os.environ.get(REGISTRY_ENV, "").strip()
    if env:
        return _open(env, sha256, f"${REGISTRY_ENV}")
    repo = enclosing_repo(start)
    if (repo / "registry" / "probes").is_dir():
        return RegistrySource("folder", str(repo / "registry"), "the enclosing checkout",
                              repo / "registry", repo)
    if not published:
        raise InputError(f"no registry given, in ${REGISTRY_ENV} or in a checkout here")
    return _open(PUBLISHED_REGISTRY, sha256, "the published registry (no checkout here; "
                 f"give --registry or ${REGISTRY_ENV})")


def _open(given: str | Path, sha256: str | None, why: str) -> RegistrySource:
    text = str(given)
    if isinstance(given, str) and "://" in text:
        if urlsplit(text).scheme == "file":
            raise InputError(f"{text}: give a file:// registry as a folder path")
        return _open_url(text, sha256, why)
    folder = Path(given)
    if folder.is_file() and folder.name == INDEX_FILE:
        folder = folder.parent
    if (folder / "probes").is_dir():
        if sha256 is not None:
            raise InputError(f"{folder}: a source folder has no index to pin; "
                             "--registry-sha256 pins a built leaderboard's or a URL's "
                             "registry.json")
        return RegistrySource("folder", str(folder), why, folder, folder.resolve().parent)
    if (folder / INDEX_FILE).is_file():
        return _open_leaderboard(folder, sha256, why)
    raise InputError(f"{text}: not a registry: expected a folder holding probes/ (a "
                     f"checkout's registry/), a built leaderboard holding {INDEX_FILE}, or "
                     f"the https:// URL of a {INDEX_FILE}")


@dataclass(frozen=True)
class EntrySummary:
    """One line of ``probebench registry list``."""

    id: str
    status: str
    model: str
    layer: int
    position: str
    probe_type: str
    #: task -> the latest stored AUROC (None: none stored)
    auroc: dict[str, float | None]


def registry_entries(registry: str | Path | None = None, *, sha256: str | None = None,
                     status: str | None = None) -> tuple[RegistrySource, list[EntrySummary]]:
    """The entries of a registry (``open_registry``'s order when ``registry`` is None),
    sorted by id, only those of ``status`` when given. From a mirror only its index is
    read; from a folder, the entries and their stored results."""
    from probebench.registry.entry import read_entry
    from probebench.registry.store import latest_results

    source = open_registry(registry, sha256=sha256)
    out: list[EntrySummary] = []
    if source.index is not None:
        for e in sorted(source.index.entries, key=lambda e: e.id):
            out.append(EntrySummary(e.id, e.status, e.model, e.layer, e.position,
                                    e.probe_type, dict(e.auroc)))
    else:
        for entry_id in source.entry_ids():
            entry = read_entry(source.registry / "probes" / f"{entry_id}.yaml")
            stored = latest_results(source.registry, entry_id)
            out.append(EntrySummary(entry.id, entry.status, entry.model, entry.layer,
                                    entry.position, entry.probe_type,
                                    {t: r.result.auroc.value for t, r in stored.items()}))
    return source, [e for e in out if status is None or e.status == status]


def show_entry(entry_id: str, registry: str | Path | None = None, *,
               sha256: str | None = None) -> tuple[RegistrySource, Entry,
                                                   dict[str, ResultRecord]]:
    """(the registry, the entry, its latest stored result per task) of ``entry_id``;
    an unknown id is an ``InputError`` naming close ids. A mirror's entry and results
    files are downloaded and checked; its artifact is not (``load_probe`` does that)."""
    import difflib

    from probebench.registry.entry import entry_path, read_entry
    from probebench.registry.store import latest_results

    source = open_registry(registry, sha256=sha256)
    source.ensure_entry(entry_id, artifact=False, results=True)
    path = entry_path(source.registry, entry_id)
    if not path.is_file():
        close = difflib.get_close_matches(entry_id, source.entry_ids(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(f"unknown probe id {entry_id!r} in {source.describe()}{hint}")
    return source, read_entry(path), latest_results(source.registry, entry_id)


__all__ = [
    "BLOBS",
    "INDEX_FILE",
    "INDEX_FORMAT",
    "MAX_INDEX_BYTES",
    "MIRROR_CACHE_ENV",
    "PUBLISHED_REGISTRY",
    "REGISTRY_ENV",
    "CatalogTask",
    "EntrySummary",
    "MirrorEntry",
    "MirrorFile",
    "RegistryIndex",
    "RegistrySource",
    "blob_path",
    "mirrors_dir",
    "open_registry",
    "parse_index",
    "registry_entries",
    "show_entry",
    "split_pin",
]
