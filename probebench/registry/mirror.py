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
* a **URL** of a leaderboard's ``registry.json``, or of the leaderboard itself (a URL not
  ending in ``registry.json`` is read as ``<url>/registry.json``; ``https://``; ``http://``
  only to this machine): the index is fetched, and each file a command needs (an entry,
  its artifact, the guards) is downloaded into the cache (``$PROBEBENCH_HOME/mirrors/``) and checked
  against the index before anything reads it. Files already in the cache are reused,
  and offline (``PROBEBENCH_OFFLINE`` or ``HF_HUB_OFFLINE``, or the server unreachable)
  the last index fetched from that URL is used.

``open_registry`` takes them in this order: the argument, ``$PROBEBENCH_REGISTRY``, the
enclosing checkout's ``registry/``, the project's published leaderboard
(``PUBLISHED_REGISTRY``).

A URL's index must be **signed** (``registry.json.sig``, ``probebench.registry.signing``):
verified before it is parsed, against the public keys the package ships; unsigned, expired,
rolled-back or wrongly signed indexes are refused with named errors. A built leaderboard on
disk is verified when it holds a signature; folders on disk (a source folder, a built
leaderboard without a signature) are read unsigned, which ``RegistrySource.describe`` says.

The index can also be **pinned** by its SHA-256 (``sha256=``, ``--registry-sha256``, or
``#sha256=HEX`` at the end of the URL): then any other index, even a later signed one, is
refused, which is why the docs recommend the pin for citing a result. A pinned index must
still verify (it expires, and a newer verified one makes it a rollback).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import from_json

from probebench.errors import InputError
from probebench.hashing import atomic_write_bytes, sha256_bytes
from probebench.jsonsafe import read_capped
from probebench.paths import enclosing_repo, home
from probebench.registry.entry import EntryId
from probebench.registry.signing import (
    MAX_SIGNATURE_BYTES,
    SIGNATURE_SUFFIX,
    UnsignedIndexError,
    Verified,
    check_statement,
    sign_file,
    verify_index,
)
from probebench.sources import http as http_source
from probebench.sources.budget import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, FetchBudget
from probebench.sources.http import DeadlineError, OfflineError, fetch

if TYPE_CHECKING:
    from datetime import datetime

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from probebench.registry.entry import Entry
    from probebench.registry.store import ResultRecord

INDEX_FILE = "registry.json"
#: the mirror's files, by content, under the leaderboard's root
BLOBS = "registry/blobs"
INDEX_FORMAT: Literal["probebench-registry/1"] = "probebench-registry/1"
#: the format of an index that links an artifact hosted elsewhere (``MirrorEntry``'s
#: ``artifact_url``): a client that reads only ``INDEX_FORMAT`` refuses it, naming the
#: unknown field, rather than read an entry without its files
INDEX_FORMAT_LINKED: Literal["probebench-registry/2"] = "probebench-registry/2"
REGISTRY_ENV = "PROBEBENCH_REGISTRY"
#: the project's published leaderboard, whose registry.json a pip user reads by default
PUBLISHED_REGISTRY = "https://probebench.github.io/probebench/registry.json"
#: Bounds on a registry index, sized for a registry of 100,000 entries like the reference
#: entries (10.6 files each on average: eight artifact files, the entry, its results and
#: a share of the baselines), and checked before pydantic builds anything
#: (``parse_index``). Entries:
MAX_INDEX_ENTRIES = 100_000
#: files listed in ``files``: twelve per entry
MAX_INDEX_FILES = 12 * MAX_INDEX_ENTRIES
#: the largest registry.json read: 4 KiB per entry with its files, as ``to_json`` writes
#: it (the reference mirror takes 3.4 KiB per entry)
MAX_INDEX_BYTES = MAX_INDEX_ENTRIES * (4 << 10)
#: JSON values in it, over-counted before parsing as its commas, brackets and braces: 80
#: per entry (the reference mirror has about 60 per entry with its files)
MAX_INDEX_VALUES = 80 * MAX_INDEX_ENTRIES
#: tasks in the catalog an index names
MAX_INDEX_TASKS = 10_000
#: the longest mirror path, and the longest part of one in UTF-8 bytes (room for the
#: name of the temporary file a write adds, within the file systems' 255)
MAX_MIRROR_PATH = 1024
MAX_PATH_PART = 200
#: seconds all the downloads of one ``RegistrySource`` (one command) may take together,
#: from its first; each one also keeps to ``sources.http.DEADLINE``
MIRROR_DEADLINE = 1800.0
#: where every artifact folder of a mirror lies
ARTIFACTS = "registry/artifacts/"
#: files and bytes one command may download from a mirror (an entry's artifact is
#: bounded by the artifact limits; the rest is entries, results and guards)
MAX_DOWNLOAD_FILES = 4 * MAX_FILES
MAX_DOWNLOAD_BYTES = 2 * MAX_TOTAL_BYTES
_PIN = re.compile(r"#sha256=([0-9a-f]{64})\Z")
_SHA = re.compile(r"[0-9a-f]{64}\Z")
#: a plain name of a repository or folder (``sources.urls``' rule: letters, digits, '.',
#: '_' and '-', not first; never '.' or '..'), and the common linked artifact, a Hub
#: repository at a commit: an ``artifact_url`` of this form is accepted without parsing
#: (``_pinned_on_hub``); any other goes through ``registry_artifact_problem``
_PLAIN = r"(?!-)(?!\.\.?(?:[/@]|\Z))[A-Za-z0-9_.\-]+"
_HUB_AT_COMMIT = re.compile(rf"hf://(?:datasets/)?(?!(?:datasets|spaces|models)/)"
                            rf"{_PLAIN}/{_PLAIN}@[0-9a-f]{{40}}(?:/{_PLAIN})*")


# --- the index ----------------------------------------------------------------------

#: what every path of an index is, as its errors say
PATH_RULE = ("a mirror path is relative, under registry/, with no empty, '.' or '..' part, "
             "no backslash and no control character")
#: control characters: C0, DEL and C1
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _path_problem(path: str) -> str | None:
    """What breaks the path rule in ``path`` (None: nothing)."""
    parts = path.split("/")
    control = _CONTROL.search(path)
    if path.startswith("/"):
        return "is absolute"
    if ".." in parts:
        return "has a '..' part"
    if any(part in ("", ".") for part in parts):
        return "has an empty or '.' part"
    if "\\" in path:
        return "holds a backslash"
    if control is not None:
        return f"holds the control character {control.group()!r}"
    if parts[0] != "registry" or len(parts) < 2:
        return "is not under registry/"
    if len(path) > MAX_MIRROR_PATH:
        return f"is {len(path)} characters long (at most {MAX_MIRROR_PATH})"
    longest = max(len(part.encode("utf-8", "surrogatepass")) for part in parts)
    if longest > MAX_PATH_PART:
        return f"has a part of {longest} bytes (at most {MAX_PATH_PART})"
    return None


def _mirror_path(path: str, under: str = "registry/", name: str = "",
                 key: int | str | None = None) -> str:
    """``path`` when it keeps the path rule (``PATH_RULE``) and lies under ``under`` (a
    folder, ending in ``/``); else a ``ValueError`` that starts with where it is:
    ``name``, and ``[key]`` when given (the index's field, for its errors)."""
    # the common case at a glance: a million paths are checked in well under a second
    if (path.startswith(under) and len(path) > len(under) and path.isprintable()
            and len(path) <= MAX_PATH_PART and "\\" not in path and "//" not in path
            and "/./" not in path and "/../" not in path
            and not path.endswith(("/", "/.", "/.."))):
        return path
    problem = _path_problem(path)
    if problem is None and not (path.startswith(under) and len(path) > len(under)):
        problem = f"is not under {under}"
    if problem is None:
        return path
    if key is not None:
        name += f"[{key[:120]!r}]" if isinstance(key, str) else f"[{key}]"
    shown = repr(path[:120]) + ("..." if len(path) > 120 else "")
    raise ValueError(f"{name}{': ' if name else ''}{shown} {problem}; {PATH_RULE}"
                     + (f" (this one under {under})" if under != "registry/" else ""))


def _pinned_on_hub(url: str) -> bool:
    """Whether ``url`` is plainly a Hub repository at a commit
    (``hf://[datasets/]ORG/REPO@<commit>[/FOLDER...]``), which ``registry_artifact_problem``
    accepts: a fast path for the index's linked entries (most of a large registry's),
    each of which that function would parse. False says only: check it in full.

    >>> _pinned_on_hub("hf://lab/probes@" + "a" * 40 + "/verb"), _pinned_on_hub("hf://lab/p@main")
    (True, False)
    """
    return len(url) <= 2000 and _HUB_AT_COMMIT.fullmatch(url) is not None


def _folders(paths: Iterable[str]) -> set[str]:
    """Every folder that holds one of ``paths``, up to the top."""
    found: set[str] = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in found:
            found.add(folder)
            folder = folder.rpartition("/")[0]
    return found


class MirrorFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class MirrorEntry(BaseModel):
    """One entry of the mirror: what ``registry list`` shows, and where its files are."""

    model_config = ConfigDict(extra="forbid")

    id: EntryId
    status: str
    name: str
    model: str
    layer: int
    position: str
    probe_type: str
    license: str
    tasks: list[str] = Field(fail_fast=True)
    artifact_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="The bundle hash "
                                 "the entry registers (probebench hash).")
    entry_file: str = Field(description="The entry's YAML, relative to the leaderboard's "
                            "root: ``registry/probes/<id>.yaml``.")
    artifact_path: str = Field(description="The artifact folder in the mirror, under "
                               "``registry/artifacts/``.")
    artifact_files: list[str] = Field(fail_fast=True, description="Every file of the "
                                      "artifact folder; none where ``artifact_url`` is set.")
    results: dict[str, str] = Field(default_factory=dict, fail_fast=True,
                                    description="Task -> the stored results file.")
    #: the latest stored AUROC per task (for listing; the results files are the record)
    auroc: dict[str, float | None] = Field(default_factory=dict, fail_fast=True)
    artifact_url: str | None = Field(default=None, description="Where the artifact is "
                                     "hosted (the Hugging Face Hub or GitHub, pinned to a "
                                     "commit): the mirror links it instead of copying it, and "
                                     "a reader fetches it there and checks its bundle hash "
                                     "against ``artifact_sha256``. Format 2 only.")

    @model_validator(mode="after")
    def _paths_kept(self) -> MirrorEntry:
        """Every path keeps the path rule, under its own folder (the field named first
        in an error)."""
        _mirror_path(self.entry_file, "registry/probes/", "entry_file")
        if self.entry_file != f"registry/probes/{self.id}.yaml":
            raise ValueError(f"entry_file: {self.entry_file[:120]!r} is not "
                             f"'registry/probes/{self.id}.yaml', the file of the entry's id")
        if self.artifact_url is not None:
            from probebench.sources.resolve import registry_artifact_problem
            from probebench.sources.urls import parse_artifact_ref

            url = self.artifact_url
            problem = None if _pinned_on_hub(url) else registry_artifact_problem(url[:2000])
            # accepted there: remote and pinned, or a repository folder; of those, only
            # the remote forms hold '://' (so a short URL is parsed once, not twice)
            if problem is None and not ("://" in url if len(url) <= 2000
                                        else parse_artifact_ref(url).remote):
                problem = "a repository folder is mirrored, not linked"
            if problem is not None:
                raise ValueError(f"artifact_url: expected the Hugging Face Hub or GitHub at a "
                                 f"commit; {problem}")
            if self.artifact_files:
                raise ValueError("artifact_files: an artifact linked by artifact_url lists "
                                 f"no file in the mirror; found {len(self.artifact_files)}")
        elif not self.artifact_files:
            raise ValueError("artifact_files: List should have at least 1 item (the artifact "
                             "folder's files; none only where artifact_url links it)")
        _mirror_path(self.artifact_path, ARTIFACTS, "artifact_path")
        folder = self.artifact_path + "/"
        for i, path in enumerate(self.artifact_files):
            _mirror_path(path, folder, "artifact_files", i)
        for task, path in self.results.items():
            _mirror_path(path, "registry/results/", "results", task)
        return self


class CatalogTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    test_sha256: str


class RegistryIndex(BaseModel):
    """``registry.json``: a published registry, file by file."""

    model_config = ConfigDict(extra="forbid")

    #: format 1, or 2 where an entry links its artifact (``artifact_url``)
    format: Literal["probebench-registry/1", "probebench-registry/2"] = INDEX_FORMAT
    probebench_version: str
    spec_version: str = Field(description="The ProbeScore spec the leaderboard ranks with.")
    catalog: dict[str, CatalogTask] = Field(description="Task id -> the version and test "
                                            "hash the results were made on.")
    guards: dict[str, str] = Field(default_factory=dict, fail_fast=True,
                                   description="Model -> its guard.")
    guards_file: str | None = None
    entries: list[MirrorEntry] = Field(fail_fast=True)
    baselines: list[str] = Field(default_factory=list, fail_fast=True)
    files: dict[str, MirrorFile] = Field(fail_fast=True, description="Every file of the "
                                         "mirror, by path relative to the leaderboard's root.")

    @model_validator(mode="after")
    def _paths_listed(self) -> RegistryIndex:
        """Every path keeps the path rule; no path is both a file and a folder; no
        artifact folder lies inside another; every path named is listed in ``files``;
        no id twice. An error starts with where: ``entries[3].artifact_path: ...``."""
        for path in self.files:
            _mirror_path(path, name="files", key=path)
        if self.guards_file is not None:
            _mirror_path(self.guards_file, name="guards_file")
        for i, path in enumerate(self.baselines):
            _mirror_path(path, "registry/baselines/", "baselines", i)
        artifact_folders = {e.artifact_path for e in self.entries}
        folders = _folders(self.files) | artifact_folders
        for path in sorted(folders.intersection(self.files))[:1]:
            inside = next((f for f in self.files if f.startswith(path + "/")), path + "/")
            raise ValueError(f"files[{path[:120]!r}]: listed as a file, and also a folder "
                             f"of {inside[:120]!r}: a path is a file or a folder, never "
                             "both")
        nested = _folders(artifact_folders) & artifact_folders
        listed = self.files
        seen: set[str] = set()
        for i, entry in enumerate(self.entries):
            if entry.artifact_url is not None and self.format == INDEX_FORMAT:
                raise ValueError(f"entries[{i}].artifact_url: an index of format "
                                 f"{INDEX_FORMAT} links no artifact; expected format "
                                 f"{INDEX_FORMAT_LINKED}")
            if entry.artifact_path in nested:
                inner = next(f for f in sorted(artifact_folders)
                             if f.startswith(entry.artifact_path + "/"))
                raise ValueError(f"entries[{i}].artifact_path: {entry.artifact_path!r} holds "
                                 f"another entry's artifact folder ({inner!r})")
            named = [entry.entry_file, *entry.artifact_files, *entry.results.values()]
            if not all(path in listed for path in named):
                missing = next(path for path in named if path not in listed)
                raise ValueError(f"entries[{i}]: {missing[:120]!r} is named but not listed in "
                                 "files (with its sha256 and size)")
            if entry.id in seen:
                raise ValueError(f"entries[{i}].id: {entry.id!r} is listed twice")
            seen.add(entry.id)
        others = [("guards_file", self.guards_file or ""),
                  *((f"baselines[{i}]", p) for i, p in enumerate(self.baselines))]
        for name, path in others:
            if path and path not in listed:
                raise ValueError(f"{name}: {path[:120]!r} is named but not listed in files "
                                 "(with its sha256 and size)")
        return self

    def entry(self, entry_id: str) -> MirrorEntry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def to_json(self) -> str:
        import json

        doc = self.model_dump(mode="json")
        for entry in doc["entries"]:  # format 1 as a format-1 client reads it
            if entry["artifact_url"] is None:
                del entry["artifact_url"]
        return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def _where_in(loc: tuple[int | str, ...]) -> str:
    """``entries[3].artifact_path`` for pydantic's ``("entries", 3, "artifact_path")``."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i and loc[i - 1] in ("files", "results", "auroc", "catalog", "guards"):
            out += f"[{str(part)[:120]!r}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _index_problem(exc: ValidationError) -> str:
    """The first error of a ``RegistryIndex`` validation, where first: a validator's own
    message already starts with its field."""
    first = exc.errors(include_url=False)[0]
    where = _where_in(tuple(first["loc"]))
    if first["type"] == "value_error":
        message = str(first["ctx"]["error"])
        return f"{where}.{message}" if where else message
    return f"{where or '(top level)'}: {first['msg']}"


def _keys_fit(value: object, model: type[BaseModel], where: str) -> None:
    """A JSON object for ``model`` with more keys than it has fields holds unknown ones:
    refused here, naming a few, before pydantic would report each of them."""
    if isinstance(value, dict) and len(value) > len(model.model_fields):
        unknown = [str(k)[:40] for k in value if k not in model.model_fields][:3]
        raise InputError(f"{where}: {len(value)} keys where a {model.__name__} has "
                         f"{len(model.model_fields)} fields (unknown: {', '.join(unknown)})")


def _check_counts(raw: object, where: str) -> None:
    """The index's counts, checked on the parsed JSON before pydantic validates (and
    builds) anything: entries, files and tasks within their bounds, and no object with
    more keys than its model has fields (pydantic would report every extra key)."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: not a probebench registry index (expected a JSON object, "
                         f"found {type(raw).__name__})")
    _keys_fit(raw, RegistryIndex, where)
    entry_fields, file_fields = len(MirrorEntry.model_fields), len(MirrorFile.model_fields)
    entries, files, catalog = raw.get("entries"), raw.get("files"), raw.get("catalog")
    for name, value, most in (("entries", entries, MAX_INDEX_ENTRIES),
                              ("files", files, MAX_INDEX_FILES),
                              ("catalog", catalog, MAX_INDEX_TASKS),
                              ("guards", raw.get("guards"), MAX_INDEX_ENTRIES),
                              ("baselines", raw.get("baselines"), MAX_INDEX_FILES)):
        if isinstance(value, list | dict) and len(value) > most:
            raise InputError(f"{where}: {name}: {len(value)} items; a registry index holds "
                             f"at most {most} (it is sized for {MAX_INDEX_ENTRIES} entries "
                             f"and {MAX_INDEX_FILES} files); refused before validating them")
    # a plain loop first (a hundred thousand entries, a million files), names on a find
    if isinstance(entries, list) and any(
            isinstance(entry, dict) and len(entry) > entry_fields for entry in entries):
        for i, entry in enumerate(entries):
            _keys_fit(entry, MirrorEntry, f"{where}: entries[{i}]")
    if isinstance(files, dict) and any(
            isinstance(item, dict) and len(item) > file_fields for item in files.values()):
        for key, item in files.items():
            _keys_fit(item, MirrorFile, f"{where}: files[{key[:120]!r}]")
    if isinstance(catalog, dict):
        for key, item in catalog.items():
            _keys_fit(item, CatalogTask, f"{where}: catalog[{key[:120]!r}]")


def parse_index(data: bytes, where: str) -> RegistryIndex:
    """``registry.json``'s bytes as a ``RegistryIndex``; anything else an ``InputError``
    that names the field (``where: entries[3].artifact_path: ...``).

    The work a hostile index can cause is bounded before it is done: at most
    ``MAX_INDEX_BYTES``; at most ``MAX_INDEX_VALUES`` JSON values, over-counted on the
    bytes before parsing; at most ``MAX_INDEX_ENTRIES`` entries, ``MAX_INDEX_FILES``
    files and ``MAX_INDEX_TASKS`` tasks, counted on the parsed JSON before pydantic
    builds a model; and the first error ends validation (``fail_fast``), so a million
    bad items are one error, not a million. The bounds are sized for a registry of
    100,000 entries like the reference entries (400 MiB, 8 million values, 1.2 million
    files): such an index parses in about 15 s of CPU and 1.9 GiB of memory, and the
    audit's million empty entries (3 MB) are refused in a tenth of a second.
    """
    if len(data) > MAX_INDEX_BYTES:
        raise InputError(f"{where}: {len(data)} bytes; a registry index holds at most "
                         f"{MAX_INDEX_BYTES} (MAX_INDEX_BYTES)")
    values = data.count(b",") + data.count(b"[") + data.count(b"{") + 1
    if values > MAX_INDEX_VALUES:
        raise InputError(f"{where}: about {values} JSON values (its commas, brackets and "
                         f"braces); a registry index holds at most {MAX_INDEX_VALUES} (it "
                         f"is sized for {MAX_INDEX_ENTRIES} entries); refused before "
                         "parsing it")
    try:
        raw = from_json(data)
    except ValueError as exc:
        raise InputError(f"{where}: not a probebench registry index: not JSON "
                         f"({str(exc)[:160]})") from None
    _check_counts(raw, where)
    try:
        return RegistryIndex.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{where}: {_index_problem(exc)}") from None


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
    #: the index's verified signature (None: a folder, or a built leaderboard read
    #: unsigned)
    verified: Verified | None = None
    _bytes: int = field(default=0, repr=False)
    _count: int = field(default=0, repr=False)
    #: when this source's downloads must be over (``time.monotonic``; set by the first)
    _deadline_at: float | None = field(default=None, repr=False)

    def describe(self) -> str:
        pin = f", index sha256 {self.index_sha256[:16]}..." if self.index_sha256 else ""
        trust = self.verified.describe() if self.verified is not None else \
            "read unsigned: a local folder, trusted as your own files"
        return f"registry {self.given} ({self.kind}, {self.why}{pin}, {trust})"

    def origin(self) -> str:
        """The registry in a few words, for a record read from it: the folder, or the
        URL / leaderboard with its index digest and signature."""
        if self.index_sha256 is None:
            return f"{self.given} (unsigned folder)"
        signed = (f", signed version {self.verified.version}" if self.verified is not None
                  else ", unsigned")
        return f"{self.given} (index sha256 {self.index_sha256[:16]}...{signed})"

    def reference(self) -> dict[str, str | int | None]:
        """What ``submission.json`` records of the registry a run read: where, the
        index's SHA-256, and who signed which version (None: read unsigned)."""
        v = self.verified
        return {"source": self.given, "kind": self.kind, "index_sha256": self.index_sha256,
                "signed_by": None if v is None else v.key_id,
                "index_version": None if v is None else v.version,
                "expires": None if v is None else v.expires}

    # -- what commands ask for -----------------------------------------------------
    def entry_ids(self) -> list[str]:
        if self.index is not None:
            return sorted(e.id for e in self.index.entries)
        probes = self.registry / "probes"
        return sorted(f"{p.parent.name}/{p.stem}" for p in probes.glob("*/*.yaml"))

    def ensure_entry(self, entry_id: str, *, artifact: bool = True,
                     results: bool = False, budget: FetchBudget | None = None) -> None:
        """Make the entry's file (and its artifact's files, its results files) present
        and checked (a folder source has nothing to do).

        The artifact is held to the artifact limits (``budget``, default
        ``FetchBudget.default()``: files, bytes per file and in all, folder depth) on the
        index's listing, before any byte of it is downloaded; a call that fails leaves
        none of the files it wrote in the cache."""
        if self.index is None:
            return
        found = self.index.entry(entry_id)
        if found is None:
            return  # the caller reports an unknown id with its close matches
        paths = [found.entry_file]
        if artifact and found.artifact_url is None:  # a linked one: mirror_artifact_folder
            self._check_artifact(found, budget if budget is not None else
                                 FetchBudget.default())
            paths += found.artifact_files
        if results:
            paths += list(found.results.values())
        self._ensure(paths)

    def _check_artifact(self, found: MirrorEntry, budget: FetchBudget) -> None:
        """Raise unless the artifact the index lists for ``found`` keeps ``budget``."""
        assert self.index is not None
        folder = found.artifact_path + "/"
        where = f"the registry index of {self.given}"
        relative = [path[len(folder):] for path in found.artifact_files]
        budget.check_paths(found.artifact_path, where, relative)
        budget.check_sizes(found.artifact_path, where,
                           {rel: self.index.files[path].size
                            for rel, path in zip(relative, found.artifact_files, strict=True)},
                           before="download")

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
        """Make ``paths`` present in the cache and checked against the index. Those
        missing or changed are downloaded, after the command's budget
        (``MAX_FILE_BYTES`` each, ``MAX_DOWNLOAD_FILES`` and ``MAX_DOWNLOAD_BYTES`` in
        all) is checked on the index's sizes; if one fails, every file this call wrote
        is removed again."""
        assert self.index is not None
        needed: list[tuple[str, MirrorFile]] = []
        for path in dict.fromkeys(paths):
            listed = self.index.files.get(path)
            if listed is None:
                raise InputError(f"{self.given}: the index names {path} without its hash")
            if not self._cached(path, listed):
                needed.append((path, listed))
        for path, listed in needed:
            if listed.size > MAX_FILE_BYTES:
                raise InputError(f"{self.given}: {path} is {listed.size} bytes; a mirror file "
                                 f"may hold at most {MAX_FILE_BYTES} (refused before the "
                                 "download)")
        count = self._count + len(needed)
        size = self._bytes + sum(listed.size for _, listed in needed)
        if count > MAX_DOWNLOAD_FILES or size > MAX_DOWNLOAD_BYTES:
            raise InputError(f"{self.given}: more than {MAX_DOWNLOAD_FILES} files or "
                             f"{MAX_DOWNLOAD_BYTES} bytes to download for one command ({count} "
                             f"files, {size} bytes); refused before the download")
        written: list[Path] = []
        try:
            for path, listed in needed:
                written.append(self.repo / path)
                self._fetch(path, listed)
        except BaseException:
            _remove_written(written, self.repo)
            raise

    def _local(self, path: str) -> Path:
        """Where ``path`` goes in the cache: refused when a folder on its way is a link
        that leads out of the cache (nothing is read or written through it)."""
        local = self.repo / path
        root = self.repo.resolve()
        if not local.parent.resolve().is_relative_to(root):
            raise InputError(f"{self.given}: {path}: a folder of it in the cache "
                             f"({self.repo}) is a link out of the cache; refused")
        return local

    def _cached(self, path: str, listed: MirrorFile) -> bool:
        """Whether the cache holds ``path`` with the bytes the index lists."""
        local = self._local(path)
        try:
            if not local.is_file() or local.is_symlink() or \
                    local.stat().st_size != listed.size:
                return False
            return sha256_bytes(local.read_bytes()) == listed.sha256
        except OSError:
            return False

    def _fetch(self, path: str, listed: MirrorFile) -> None:
        """Bring the blob of ``path`` from the leaderboard folder or the server, check it
        against the index, and write it under its path in the cache. A download keeps
        to ``sources.http.DEADLINE`` and to what is left of this source's
        ``MIRROR_DEADLINE``."""
        assert self.base_url is not None or self.folder is not None
        blob = blob_path(listed.sha256)
        if self.folder is not None:
            where = str(self.folder / blob)
            source = self.folder / blob
            if not source.is_file() or source.is_symlink():
                raise InputError(f"{where}: missing from the built leaderboard ({path}; "
                                 "registry.json lists it)")
            try:
                with source.open("rb") as handle:
                    got = handle.read(listed.size + 1)
            except OSError as exc:
                raise InputError(f"{where}: cannot read ({exc.strerror})") from None
        else:
            assert self.base_url is not None
            where = urljoin(self.base_url, blob)
            got = self._download(where, path, listed)
        if len(got) != listed.size or sha256_bytes(got) != listed.sha256:
            raise InputError(f"{where} ({path}): its bytes do not match the registry index "
                             f"(sha256 {sha256_bytes(got)[:16]}..., the index says "
                             f"{listed.sha256[:16]}...); refused, nothing was written")
        self._count += 1
        self._bytes += len(got)
        target = self._local(path)
        try:
            atomic_write_bytes(target, got)
        except OSError as exc:
            raise InputError(f"{target}: cannot write the mirror file into the cache "
                             f"({exc.strerror or exc})") from None

    def _download(self, url: str, path: str, listed: MirrorFile) -> bytes:
        """``url``'s bytes within the per-download deadline and this source's."""
        now = time.monotonic()
        if self._deadline_at is None:
            self._deadline_at = now + MIRROR_DEADLINE
        left = self._deadline_at - now
        budget = f"the downloads of one command from {self.given} may take {MIRROR_DEADLINE:g} s " \
            "in all (MIRROR_DEADLINE)"
        if left <= 0:
            raise DeadlineError(f"{url} ({path}): not downloaded: {budget}, and they have")
        per_download = http_source.DEADLINE
        try:
            return fetch(url, max_bytes=listed.size, what="mirror file",
                         deadline=min(per_download, left)).data
        except DeadlineError as exc:
            if left < per_download:
                raise DeadlineError(f"{exc}: {budget}") from None
            raise


def _remove_written(paths: list[Path], root: Path) -> None:
    """Remove the files a failed call wrote, and the folders left empty by that, up to
    ``root`` (the cache keeps only whole, checked calls)."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            continue
        folder = path.parent
        while folder != root and folder.is_relative_to(root):
            try:
                folder.rmdir()  # only an empty one
            except OSError:
                break
            folder = folder.parent


def sign_site(site: Path, key: Ed25519PrivateKey, *, version: int | None = None,
              expires: datetime | None = None, now: datetime | None = None) -> Path:
    """Sign a built leaderboard's ``registry.json`` into ``registry.json.sig``
    (``registry.signing``); returns the signature file."""
    return sign_file(site / INDEX_FILE, key, max_bytes=MAX_INDEX_BYTES, version=version,
                     expires=expires, now=now)


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


def index_url(url: str) -> tuple[str, str | None]:
    """(the URL of the ``registry.json`` to read, the site root it was made from or None).

    A URL whose path ends in ``registry.json`` is read as it is; any other is a
    leaderboard's address, its index at ``<url>/registry.json`` (a trailing slash is
    kept once).

    >>> index_url("https://x.org/board/")
    ('https://x.org/board/registry.json', 'https://x.org/board/')
    >>> index_url("https://x.org/registry.json")
    ('https://x.org/registry.json', None)
    """
    parts = urlsplit(url)
    if parts.path.rpartition("/")[2] == INDEX_FILE:
        return url, None
    path = parts.path.rstrip("/") + "/" + INDEX_FILE
    return urlunsplit(parts._replace(path=path)), url


def _fetch_signature(url: str, root: str | None = None) -> bytes:
    """The bytes of ``url``'s ``registry.json.sig``; a server without one (HTTP 404, ...)
    is an ``UnsignedIndexError``, an unreachable one an ``OfflineError``. ``root``: the
    site root ``url`` was made from, which the error names."""
    sig_url = url + SIGNATURE_SUFFIX
    try:
        return fetch(sig_url, max_bytes=MAX_SIGNATURE_BYTES, what="registry signature").data
    except OfflineError:
        raise
    except InputError as exc:
        tried = ("" if root is None else f"; {root} was read as a leaderboard's address, "
                 f"its index tried at {url}: give the URL of its {INDEX_FILE}")
        raise UnsignedIndexError(f"{url}: its signature cannot be read ({exc}); an "
                                 f"unsigned registry index is refused{tried}") from None


def _open_url(url: str, sha256: str | None, why: str) -> RegistrySource:
    """A URL's index, verified (``registry.signing``) before it is parsed; offline, the
    last verified copy, verified again (its expiry included). A URL not ending in
    ``registry.json`` is a site root: ``<url>/registry.json`` is read (``index_url``)."""
    url, pin = split_pin(url, sha256)
    url, site_root = index_url(url)
    cache = mirrors_dir()
    pointer = cache / "urls" / _url_key(url)
    try:
        # the signature first: it states the index's size, so a hostile mirror cannot
        # make this download more than the maintainers signed
        signature = _fetch_signature(url, site_root)
        # the statement is checked (trusted key, signature, expiry, rollback) before a
        # byte of the index is downloaded
        declared = check_statement(signature, url, cache=cache).index_bytes
        if declared > MAX_INDEX_BYTES:
            raise InputError(f"{url}: its signature declares an index of {declared} bytes; "
                             f"at most {MAX_INDEX_BYTES} are read; refused")
        data = fetch(url, max_bytes=declared, what="registry index").data
        digest = sha256_bytes(data)
        if pin is not None and digest != pin:
            raise InputError(f"{url}: the registry index's sha256 is {digest}, pinned "
                             f"{pin}; refused")
        verified = verify_index(data, signature, url, cache=cache)
        index = parse_index(data, url)
        root = cache / digest
        atomic_write_bytes(root / INDEX_FILE, data)
        atomic_write_bytes(root / (INDEX_FILE + SIGNATURE_SUFFIX), signature)
        atomic_write_bytes(pointer, (digest + "\n").encode("ascii"))
    except OfflineError as exc:
        digest = pin or (pointer.read_text("ascii").strip() if pointer.is_file() else "")
        cached = cache / digest / INDEX_FILE if digest else None
        if cached is None or not cached.is_file():
            raise OfflineError(f"{exc} [{why}]; and no copy of that registry index is "
                               f"cached ({cache})") from None
        data = read_capped(cached, MAX_INDEX_BYTES, "cached registry index")
        if sha256_bytes(data) != digest:
            raise InputError(f"{cached}: the cached index changed; delete it") from None
        sig_path = cached.with_name(INDEX_FILE + SIGNATURE_SUFFIX)
        cached_sig = read_capped(sig_path, MAX_SIGNATURE_BYTES, "cached registry signature") \
            if sig_path.is_file() else None
        verified = verify_index(data, cached_sig, f"{url} (the cached copy, {cached})",
                                cache=cache)
        index = parse_index(data, str(cached))
        root = cache / digest
        why += ", offline: the cached copy"
    return RegistrySource("url", url, why, root / "registry", root, index, digest, url,
                          verified=verified)


def _open_leaderboard(folder: Path, sha256: str | None, why: str) -> RegistrySource:
    """A built leaderboard on disk: verified when it holds ``registry.json.sig`` (a bad
    signature is refused), else read unsigned, which ``describe`` says."""
    path = folder / INDEX_FILE
    data = read_capped(path, MAX_INDEX_BYTES, "registry index")
    digest = sha256_bytes(data)
    if sha256 is not None and digest != sha256:
        raise InputError(f"{path}: its sha256 is {digest}, pinned {sha256}; refused")
    sig_path = path.with_name(INDEX_FILE + SIGNATURE_SUFFIX)
    verified = None
    if sig_path.is_symlink():
        raise InputError(f"{sig_path}: a symbolic link; a registry signature is a plain file")
    if sig_path.is_file():
        signature = read_capped(sig_path, MAX_SIGNATURE_BYTES, "registry signature")
        verified = verify_index(data, signature, str(path), cache=mirrors_dir())
    index = parse_index(data, str(path))
    root = mirrors_dir() / digest
    atomic_write_bytes(root / INDEX_FILE, data)
    return RegistrySource("leaderboard", str(folder), why, root / "registry", root, index,
                          digest, folder=folder, verified=verified)


def open_registry(given: str | Path | None = None, *, sha256: str | None = None,
                  start: Path | None = None, published: bool = True) -> RegistrySource:
    """The registry to read, in this order: ``given``, ``$PROBEBENCH_REGISTRY``, the
    enclosing checkout's ``registry/`` (from ``start``, default the current folder), the
    project's published leaderboard (unless ``published`` is False: then none found is an
    ``InputError``). ``given`` is a source folder (with ``probes/``), a built
    leaderboard (with ``registry.json``), or the URL of a ``registry.json`` or of the
    leaderboard it lies in (``https://host/board/`` reads ``.../board/registry.json``)."""
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
                     f"the https:// URL of a leaderboard or of its {INDEX_FILE}")


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


@dataclass(frozen=True)
class EntryArtifact:
    """A registry entry and its artifact folder on this machine (``entry_artifact``)."""

    source: RegistrySource
    entry: Entry
    #: the artifact folder: in the mirror cache (each file checked against the index),
    #: in the checkout, or fetched at its revision; not yet validated
    folder: Path


def entry_artifact(entry_id: str, registry: str | Path | None = None, *,
                   sha256: str | None = None, repo: Path | None = None) -> EntryArtifact:
    """The entry ``entry_id`` of a registry (``open_registry``'s order when ``registry``
    is None; with ``repo`` alone, ``REPO/registry``) and its artifact folder, the way
    ``load_probe`` finds it: from a mirror, the entry and every artifact file are
    downloaded into the cache and checked against the (signed) index, and a folder
    that leads out of the cache is refused before it is read; from a source folder, the
    entry's ``artifact_url`` is resolved (a remote one fetched at its commit).

    The folder is not validated here: validate it with the entry's ``artifact_sha256``
    (``validate(folder, expected_sha256=...)``) before using it. An unknown id is an
    ``InputError`` that names close ids."""
    import difflib

    from probebench.registry.entry import entry_path, read_entry
    from probebench.sources.resolve import resolve_artifact

    if registry is None and repo is not None:
        registry = Path(repo) / "registry"
    try:
        source = open_registry(registry, sha256=sha256)
    except InputError as exc:
        raise type(exc)(f"{exc}; pass registry= (--registry on the command line): a folder "
                        "holding probes/, a built leaderboard or the URL of its "
                        f"registry.json, or load an artifact folder, to find {entry_id!r}"
                        ) from None
    path = entry_path(source.registry, entry_id)  # refuses what is not org/name first
    source.ensure_entry(entry_id)
    if not path.is_file():
        ids = source.entry_ids()
        close = difflib.get_close_matches(entry_id, ids, n=3, cutoff=0.6)
        more = ", ..." if len(ids) > 20 else ""
        hint = (f"; did you mean {', '.join(close)}?" if close else
                f"; it holds {len(ids)} entries: {', '.join(ids[:20])}{more}")
        raise InputError(f"unknown probe id {entry_id!r} in {source.describe()}{hint}")
    entry = read_entry(path)
    if entry.id != entry_id:
        raise InputError(f"{path}: the entry's id is {entry.id!r}, its file says "
                         f"{entry_id!r}")
    if source.index is None:
        base = Path(repo) if repo is not None else source.repo
        folder, _ = resolve_artifact(entry.artifact_url, base)
        return EntryArtifact(source, entry, folder)
    listed = source.index.entry(entry_id)
    assert listed is not None  # ensure_entry wrote the entry's file from it
    folder = mirror_artifact_folder(source, listed)
    if listed.artifact_sha256 != entry.artifact_sha256:
        raise InputError(f"{source.describe()}: the index and the entry of {entry_id} name "
                         "different artifacts; refused")
    return EntryArtifact(source, entry, folder)


class ArtifactMismatchError(InputError):
    """An artifact fetched from where the index links it is not the one it registers."""


def linked_artifact_folder(listed: MirrorEntry, where: str, *,
                           budget: FetchBudget | None = None) -> Path:
    """The artifact an index links (``MirrorEntry.artifact_url``), fetched from the hub or
    GitHub at its commit by ``sources`` (within ``budget``, default the artifact limits)
    and refused (``ArtifactMismatchError``) unless its bundle hash is the index's
    ``artifact_sha256``."""
    from probebench.artifact.bundle import manifest, scan
    from probebench.sources.resolve import fetch_artifact
    from probebench.sources.urls import parse_artifact_ref

    assert listed.artifact_url is not None
    fetched = fetch_artifact(parse_artifact_ref(listed.artifact_url), budget)
    got = manifest(scan(fetched.folder)).sha256
    if got != listed.artifact_sha256:
        raise ArtifactMismatchError(
            f"{where}: the artifact of {listed.id} fetched from {listed.artifact_url} "
            f"(commit {fetched.commit}) has bundle sha256 {got[:16]}..., the registry index "
            f"says {listed.artifact_sha256[:16]}...; refused, nothing in it was used")
    return fetched.folder


def mirror_artifact_folder(source: RegistrySource, listed: MirrorEntry) -> Path:
    """The artifact folder of a mirror's entry, in the mirror's cache: refused, before
    anything in it is read or listed, unless the index lists files for it and the folder,
    every link on its way resolved, lies inside the cache's ``registry/artifacts/``. An
    artifact the index links (``artifact_url``) is fetched there and checked against the
    index's bundle hash (``linked_artifact_folder``)."""
    if listed.artifact_url is not None:
        return linked_artifact_folder(listed, source.describe())
    if not listed.artifact_files:
        raise InputError(f"{source.describe()}: the index lists no file of the artifact of "
                         f"{listed.id} ({listed.artifact_path!r}); refused")
    try:
        # the cache's own folder resolved, and nothing below it: a link there leads out
        root = source.repo.resolve() / "registry" / "artifacts"
        folder = (source.repo / listed.artifact_path).resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise InputError(f"{source.describe()}: the artifact folder of {listed.id} "
                         f"({listed.artifact_path[:120]!r}) is not a usable path ({exc}); "
                         "refused") from None
    if folder == root or not folder.is_relative_to(root):
        raise InputError(f"{source.describe()}: the artifact folder of {listed.id} "
                         f"({listed.artifact_path[:120]!r}) leads out of the mirror cache's "
                         f"registry/artifacts/ ({root}); refused, nothing was read there")
    return folder


def download_artifact(entry_id: str, out: str | Path | None = None, *,
                      registry: str | Path | None = None, sha256: str | None = None,
                      repo: Path | None = None, require_signed: bool = False
                      ) -> tuple[Path, EntryArtifact]:
    """Copy a registry entry's verified artifact folder to ``out`` (default:
    ``./<name>``, the part of the id after ``org/``), for a researcher to read, run or
    submit; what ``probebench registry download`` does.

    The entry and its artifact are found as ``entry_artifact`` finds them (from a
    mirror: downloaded into the cache and checked against the signed index). The files
    are copied into a new folder beside ``out``, that copy is validated with the entry's
    ``artifact_sha256`` (every ``validate`` check; nothing is executed), and only then
    renamed to ``out``: ``out`` is never half-written, and a failed call leaves nothing.
    An existing ``out`` that is not an empty folder is refused, and so, with
    ``require_signed``, is a registry read unsigned (a folder, or a built leaderboard
    without ``registry.json.sig``).

    Returns:
        (the folder written, the ``EntryArtifact`` it came from).

    Example::

        folder, found = download_artifact("probebench/blimp-det-noun-smollm2-135m-l15-v1",
                                          "det-noun", registry="https://example.org/board/")
    """
    import secrets
    import shutil

    from probebench.artifact.checks import validate
    from probebench.tasks.catalog import TaskCatalog

    name = entry_id.rpartition("/")[2]
    target = Path(out) if out is not None else Path.cwd() / name
    _check_target(target)  # before any download
    found = entry_artifact(entry_id, registry, sha256=sha256, repo=repo)
    if require_signed and found.source.verified is None:
        raise UnsignedIndexError(f"{found.source.given}: read unsigned, and a verified "
                                 f"{INDEX_FILE}{SIGNATURE_SUFFIX} was required; nothing was "
                                 "written")
    _check_target(target)
    parent = target.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        partial = parent / f".{target.name[:100]}.{secrets.token_hex(4)}.partial"
        partial.mkdir()
    except OSError as exc:
        raise InputError(f"{target}: cannot create the folder ({exc.strerror or exc})") \
            from None
    try:
        try:
            # links are copied as links, so that the check of the copy refuses them
            shutil.copytree(found.folder, partial, symlinks=True, dirs_exist_ok=True)
        except (OSError, shutil.Error) as exc:
            raise InputError(f"{found.folder}: cannot copy the artifact of {entry_id} to "
                             f"{target} ({exc})") from None
        catalog = TaskCatalog.for_repo(found.source.repo)
        report = validate(partial, catalog=catalog,
                          expected_sha256=found.entry.artifact_sha256)
        if not report.valid:
            failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
            raise InputError(f"{found.folder}: the artifact of {entry_id} does not validate "
                             f"({failed}); nothing was written to {target}")
        try:
            # rename(2) replaces an empty folder and refuses a non-empty one
            partial.rename(target)
        except OSError as exc:
            raise InputError(f"{target}: cannot write the artifact there ({exc.strerror or exc}"
                             "); an existing folder must be empty") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return target, found


def _check_target(target: Path) -> None:
    """Refuse ``target`` unless it is absent or an empty folder (nothing is overwritten)."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InputError(f"{target}: exists and is not a folder; give --out a new or empty "
                         "folder")
    if target.is_dir() and any(target.iterdir()):
        raise InputError(f"{target}: a folder that is not empty; nothing is overwritten: "
                         "give --out a new or empty folder")


__all__ = [
    "ARTIFACTS",
    "BLOBS",
    "INDEX_FILE",
    "INDEX_FORMAT",
    "INDEX_FORMAT_LINKED",
    "MAX_INDEX_BYTES",
    "MAX_INDEX_ENTRIES",
    "MAX_INDEX_FILES",
    "MAX_INDEX_TASKS",
    "MAX_INDEX_VALUES",
    "MIRROR_CACHE_ENV",
    "MIRROR_DEADLINE",
    "PATH_RULE",
    "PUBLISHED_REGISTRY",
    "REGISTRY_ENV",
    "ArtifactMismatchError",
    "CatalogTask",
    "EntryArtifact",
    "EntrySummary",
    "MirrorEntry",
    "MirrorFile",
    "RegistryIndex",
    "RegistrySource",
    "blob_path",
    "download_artifact",
    "entry_artifact",
    "index_url",
    "linked_artifact_folder",
    "mirror_artifact_folder",
    "mirrors_dir",
    "open_registry",
    "parse_index",
    "registry_entries",
    "show_entry",
    "sign_site",
    "split_pin",
]
