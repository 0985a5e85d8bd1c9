"""``probebench registry check``: every entry is well-formed and points at its artifact."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from probebench.artifact.checks import validate
from probebench.errors import InputError, ProbebenchError
from probebench.licenses import check_license
from probebench.registry.confine import (
    Change,
    changed_artifact_folders,
    changes,
    git_toplevel,
)
from probebench.registry.entry import Entry, entry_path, read_entry
from probebench.registry.resolve import registry_artifact_problem, resolve_artifact
from probebench.tasks.catalog import TaskCatalog


@dataclass
class EntryCheck:
    path: Path
    entry_id: str | None
    problems: list[str]
    notes: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def entry_files(root: Path) -> list[Path]:
    """Every entry YAML of a registry; the registry must exist (a mistyped --registry
    is an error, not an empty leaderboard)."""
    probes = root / "probes"
    if not probes.is_dir():
        raise InputError(f"{root}: not a registry (no probes/ folder); give --registry or "
                         "--repo")
    return sorted(probes.rglob("*.yaml"))


def changed_entry_files(root: Path, base: str, head: str | None = None) -> list[Path]:
    """Entry files added or modified since the merge base of ``base`` (the same diff as
    ``confine``; by default against the working tree, so uncommitted entries count), as
    absolute paths. Git runs at the repository root that holds the registry ``root``,
    whatever the working directory."""
    return [path for path, _ in _changed(root, base, head)[0]]


def _changed(root: Path, base: str, head: str | None
             ) -> tuple[list[tuple[Path, str]], list[Change], Path]:
    root = Path(root).resolve()
    top = git_toplevel(root)
    prefix = root.relative_to(top).as_posix() + "/probes/"
    if prefix.startswith("./"):
        prefix = prefix[2:]
    found = changes(top, base, head)
    entries = [(top / c.path, c.path) for c in found
               if c.status in ("A", "M") and c.path.startswith(prefix)
               and c.path.endswith(".yaml")]
    return sorted(entries), found, top


def pull_request_problems(root: Path, base: str, results: list[EntryCheck],
                          head: str | None = None) -> None:
    """The rules of a submission beyond one entry's own checks, added to ``results``: a
    changed entry is ``pending_review`` (a live or deprecated entry becomes pending
    again when changed), and every changed artifact folder is the one a changed entry
    points at."""
    _, found, _ = _changed(root, base, head)
    wanted = set()
    for r in results:
        try:
            entry = read_entry(r.path)
        except ProbebenchError:
            continue
        if entry.status != "pending_review":
            r.problems.append(f"{r.path}: status is {entry.status!r}; a submission sets "
                              "status: pending_review (it becomes live after review and "
                              "merge)")
        wanted.add(entry.artifact_url.rstrip("/"))
    for folder in sorted(changed_artifact_folders(found) - wanted):
        target = results[0] if results else None
        message = (f"{folder}: changed, but no changed entry's artifact_url points at it "
                   "(a submission brings its own entry's artifact only)")
        if target is not None:
            target.problems.append(message)


def check_entry(path: Path, root: Path, repo_root: Path, catalog: TaskCatalog) -> EntryCheck:
    """One entry: schema, file name, license, registered tasks, artifact and its hash."""
    try:
        entry: Entry = read_entry(path)
    except ProbebenchError as exc:
        return EntryCheck(path, None, [str(exc)], [])
    problems: list[str] = []
    notes: list[str] = []
    expected = entry_path(root, entry.id)
    if path.resolve() != expected.resolve():
        problems.append(f"{path}: id {entry.id!r} belongs in {expected.relative_to(root)}")
    reason = check_license(entry.license)
    if reason:
        problems.append(f"{path}: {reason}")
    where = registry_artifact_problem(entry.artifact_url)
    if where:
        problems.append(f"{path}: {where}")
        return EntryCheck(path, entry.id, problems, notes)
    unknown = [t for t in entry.tasks if t not in catalog.specs]
    if unknown:
        problems.append(f"{path}: tasks not registered in tasks.yaml: {', '.join(unknown)} "
                        f"(tasks from {catalog.describe()})")
    try:
        folder, how = resolve_artifact(entry.artifact_url, repo_root)
        notes.append(f"artifact found via {how}")
    except ProbebenchError as exc:
        return EntryCheck(path, entry.id, [*problems, f"{path}: {exc}"], notes)
    report = validate(folder, catalog=catalog, expected_sha256=entry.artifact_sha256)
    for check in report.failed():
        problems.append(f"{path}: artifact check {check.name}: {check.message}")
    meta = report.meta
    if meta is not None:
        for field, ours, theirs in (("model", entry.model, meta.model),
                                    ("layer", entry.layer, meta.layer),
                                    ("position", entry.position, meta.position),
                                    ("probe_type", entry.probe_type, meta.probe_type),
                                    ("license", entry.license, meta.license)):
            if ours != theirs:
                problems.append(f"{path}: {field} is {ours!r} but the artifact's meta.yaml "
                                f"says {theirs!r}")
    return EntryCheck(path, entry.id, problems, notes)


def check_registry(root: Path, repo_root: Path, *, catalog: TaskCatalog,
                   files: list[Path] | None = None) -> list[EntryCheck]:
    all_files = entry_files(root)
    results = [check_entry(p, root, repo_root, catalog) for p in (files or all_files)]
    # ids are unique across the whole registry, not just the checked files
    seen: dict[str, Path] = {}
    for p in all_files:
        try:
            eid = read_entry(p).id
        except ProbebenchError:
            continue
        if eid in seen:
            for r in results:
                if r.path in (p, seen[eid]):
                    r.problems.append(f"{r.path}: id {eid!r} is also used by "
                                      f"{(seen[eid] if r.path == p else p)}")
        seen.setdefault(eid, p)
    return results
