"""The registry mirror a leaderboard build writes beside the leaderboard: ``registry.json`` and
the files under ``registry/`` (``probebench.registry.mirror`` reads them).

Every entry of the registry is mirrored (live, pending, deprecated: an id once cited
must still load), with its YAML, its stored results, and every file of its artifact folder
where the artifact is in the repository (``registry/artifacts/<folder>``); and the guards
file, the baselines. An artifact hosted elsewhere (the Hugging Face Hub or GitHub, pinned
to a commit) is **linked, not copied**: the index gives its ``artifact_url`` and no file,
the build fetches nothing, and a reader fetches it there through ``sources`` (within the
artifact limits) and refuses it unless its bundle hash is the index's ``artifact_sha256``
(``probebench.registry.mirror.linked_artifact_folder``). An index with such an entry is of
format 2 (``INDEX_FORMAT_LINKED``), which a format-1 client refuses by name; one without
is of format 1, as before. A stored result is mirrored as the same JSON written compact
(``probebench.leaderboard.files.compact_json``: the blob the entry page links too); every
other file byte for byte. Each file is listed in the index with its SHA-256 and size, so a
reader checks it before anything loads it; the index names the task catalog's version and
test hashes the results were made on.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pydantic import ValidationError

from probebench.errors import InputError, field_problem
from probebench.hashing import sha256_bytes
from probebench.leaderboard.files import compact_json
from probebench.registry.entry import Entry, entry_path
from probebench.registry.guards import GUARDS_FILE, guard_ids
from probebench.registry.mirror import (
    INDEX_FILE,
    INDEX_FORMAT,
    INDEX_FORMAT_LINKED,
    CatalogTask,
    MirrorEntry,
    MirrorFile,
    RegistryIndex,
    blob_path,
)
from probebench.registry.store import latest_results, result_path
from probebench.sources.resolve import resolve_artifact
from probebench.sources.urls import parse_artifact_ref
from probebench.tasks.catalog import TaskCatalog
from probebench.version import __version__

#: folder levels below an artifact's root that are mirrored (the bundle's own limit)
_MAX_DEPTH = 8


def _slug(entry_id: str) -> str:
    return entry_id.replace("/", "__")


def _artifact_dest(entry: Entry) -> str:
    url = entry.artifact_url.rstrip("/")
    if "://" not in url and url.startswith("registry/artifacts/") and ".." not in url:
        return url
    return f"registry/artifacts/_remote/{_slug(entry.id)}"


def _hosted_elsewhere(artifact_url: str) -> str | None:
    """``artifact_url`` where it is a remote artifact pinned to a commit (the hub, GitHub):
    linked by the mirror; None: a folder the mirror copies."""
    try:
        ref = parse_artifact_ref(artifact_url)
    except InputError:
        return None
    return artifact_url if ref.remote and ref.pinned else None


def _walk(folder: Path) -> list[Path]:
    out = []
    for here, dirs, names in os.walk(folder, followlinks=False):
        depth = len(Path(here).relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if depth < _MAX_DEPTH and d != ".git"
                         and not (Path(here) / d).is_symlink())
        for name in sorted(names):
            path = Path(here) / name
            if path.is_file() and not path.is_symlink():
                out.append(path)
    return out


class _Writer:
    """Lists each file under its repository path and stores its bytes once, by content."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: dict[str, MirrorFile] = {}

    def copy(self, src: Path, dest: str, *, compact: bool = False) -> str:
        """List ``src`` at ``dest``; ``compact``: a JSON document stored compact."""
        data = src.read_bytes()
        if compact:
            data = compact_json(data)
        digest = sha256_bytes(data)
        if dest in self.files:  # two entries sharing an artifact folder
            if self.files[dest].sha256 != digest:
                raise InputError(f"mirror: {dest} would hold two different files")
            return dest
        blob = self.out / blob_path(digest)
        if not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True)
            if compact:
                blob.write_bytes(data)
            else:
                shutil.copyfile(src, blob)
        self.files[dest] = MirrorFile(sha256=digest, size=len(data))
        return dest


def write_mirror(out: Path, registry: Path, entries: list[Entry], *,
                 catalog: TaskCatalog, spec_version: str) -> tuple[RegistryIndex, list[str]]:
    """Copy ``entries`` (with artifacts, results, guards and baselines) under
    ``out/registry/`` and write ``out/registry.json``; returns the index and, for each
    entry left out because its artifact cannot be resolved, why."""
    registry, repo = Path(registry), Path(registry).parent
    writer = _Writer(out)
    mirrored: list[MirrorEntry] = []
    left_out: list[str] = []
    for entry in sorted(entries, key=lambda e: e.id):
        linked = _hosted_elsewhere(entry.artifact_url)
        folder = None
        if linked is None:
            try:
                folder, _ = resolve_artifact(entry.artifact_url, repo)
            except InputError as exc:
                left_out.append(f"{entry.id}: not in the registry mirror: {exc}")
                continue
        entry_file = writer.copy(entry_path(registry, entry.id),
                                 f"registry/probes/{entry.id}.yaml")
        dest = _artifact_dest(entry)
        files = [] if folder is None else [
            writer.copy(p, f"{dest}/{p.relative_to(folder).as_posix()}") for p in _walk(folder)]
        stored = latest_results(registry, entry.id)
        results = {}
        for task in sorted(stored):
            results[task] = writer.copy(result_path(registry, entry.id, task),
                                        f"registry/results/{entry.id}/{task}.json",
                                        compact=True)
        try:
            mirrored.append(MirrorEntry(
                id=entry.id, status=entry.status, name=entry.name, model=entry.model,
                layer=entry.layer, position=entry.position, probe_type=entry.probe_type,
                license=entry.license, tasks=list(entry.tasks),
                artifact_sha256=entry.artifact_sha256, entry_file=entry_file,
                artifact_path=dest, artifact_files=files, results=results,
                auroc={t: r.result.auroc.value for t, r in sorted(stored.items())},
                artifact_url=linked))
        except ValidationError as exc:
            # a file name the mirror's path rule refuses (a control character, a part
            # too long): the entry is left out of the mirror, and the build says why
            left_out.append(f"{entry.id}: not in the registry mirror: "
                            f"{field_problem(exc, '')}")
            for path in [entry_file, *files, *results.values()]:
                writer.files.pop(path, None)
    guards_file = None
    if (registry / GUARDS_FILE).is_file():
        guards_file = writer.copy(registry / GUARDS_FILE, f"registry/{GUARDS_FILE}")
    baselines = [writer.copy(p, f"registry/{p.relative_to(registry).as_posix()}")
                 for p in sorted((registry / "baselines").rglob("*.json"))
                 if p.is_file() and not p.is_symlink()]
    linking = any(e.artifact_url is not None for e in mirrored)
    index = RegistryIndex(
        format=INDEX_FORMAT_LINKED if linking else INDEX_FORMAT,
        probebench_version=__version__, spec_version=spec_version,
        catalog={t: CatalogTask(version=catalog.spec(t).version,
                                test_sha256=catalog.spec(t).test_sha256)
                 for t in catalog.ids},
        guards=guard_ids(registry), guards_file=guards_file, entries=mirrored,
        baselines=baselines, files=dict(sorted(writer.files.items())))
    (out / INDEX_FILE).write_text(index.to_json(), encoding="utf-8")
    return index, left_out


__all__ = ["write_mirror"]
