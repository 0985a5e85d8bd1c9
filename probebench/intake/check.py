"""``probebench registry check``: every entry is well-formed and points at its artifact."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from probebench.artifact.checks import ValidationReport, validate
from probebench.errors import ProbebenchError
from probebench.intake.confine import (
    ChangedPath,
    base_orgs,
    changed_artifact_folders,
    changes,
    git_toplevel,
    owner_problems,
    published_artifacts,
    republished_problems,
)
from probebench.licenses import check_license
from probebench.registry.entry import (
    SIZE_TOLERANCE_MB,
    SIZE_TOLERANCE_SHARE,
    Entry,
    artifact_megabytes,
    entry_files,
    entry_path,
    read_entry,
    size_agrees,
    trained_parameters,
)
from probebench.sources.resolve import registry_artifact_problem, resolve_artifact
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


def changed_entry_files(root: Path, base: str, head: str | None = None) -> list[Path]:
    """Entry files added or modified since the merge base of ``base`` (the same diff as
    ``confine``; by default against the working tree, so uncommitted entries count), as
    absolute paths. Git runs at the repository root that holds the registry ``root``,
    whatever the working directory."""
    return [path for path, _ in _changed(root, base, head)[0]]


def _changed(root: Path, base: str, head: str | None
             ) -> tuple[list[tuple[Path, str]], list[ChangedPath], Path]:
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
                          head: str | None = None, *, author: str | None) -> None:
    """The rules of a probe pull request beyond one entry's own checks, added to ``results``:

    - a changed entry is ``pending_review`` (a live or deprecated entry becomes pending
      again when changed: a PR never sets a status);
    - every changed artifact folder is the one a changed entry points at;
    - ``author`` (the PR's GitHub login, required: None refuses every entry) may publish
      under the entry's org: :func:`~probebench.intake.confine.owner_problems`, the rule
      ``registry confine`` applies too, with ``registry/owners.yaml`` and the orgs with
      entries read from the base branch, never from the pull request's files; and the
      entry's ``org`` field is its id's org.
    """
    _, found, top = _changed(root, base, head)
    registry = Path(root).resolve().relative_to(top).as_posix()
    registry = "" if registry == "." else registry
    rels = {r.path: r.path.resolve().relative_to(top).as_posix() for r in results}
    owned = owner_problems(sorted(rels.values()), base_orgs(top, base, head, registry=registry),
                           author, registry=registry)
    wanted = set()
    for r in results:
        r.problems.extend(problem for path, problem in owned if path == rels[r.path])
        try:
            entry = read_entry(r.path)
        except ProbebenchError:
            continue
        if entry.status != "pending_review":
            r.problems.append(f"{r.path}: status is {entry.status!r}; a probe pull request sets "
                              "status: pending_review (it becomes live after review and "
                              "merge)")
        wanted.add(entry.artifact_url.rstrip("/"))
        org = entry.id.split("/", 1)[0]
        if entry.org != org:
            r.problems.append(f"{r.path}: org is {entry.org!r} but the id's org is {org!r}")
    for problem in republished_problems(found, published_artifacts(top, base, head)):
        if results:
            results[0].problems.append(problem)
    for folder in sorted(changed_artifact_folders(found) - wanted):
        target = results[0] if results else None
        message = (f"{folder}: changed, but no changed entry's artifact_url points at it "
                   "(a probe pull request brings its own entry's artifact only)")
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
        problems.append(f"{path}: tasks not registered in the tasks used, "
                        f"{catalog.describe()}: {', '.join(unknown)} (your own task: "
                        "`registry check --include TASKS_YAML` checks the entry against "
                        "it locally; the registry accepts only registered tasks)")
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
    problems.extend(f"{path}: {p}" for p in _claimed_numbers(entry, report))
    return EntryCheck(path, entry.id, problems, notes)


def _claimed_numbers(entry: Entry, report: ValidationReport) -> list[str]:
    """``param_count`` and ``size_mb`` against the artifact they describe."""
    problems = []
    if report.weights is not None:
        actual = trained_parameters(report.weights)
        if entry.param_count != actual:
            problems.append(f"param_count is {entry.param_count} but the artifact's probe has "
                            f"{actual} trained parameters (every weight and bias of its "
                            "layers; the scaler is not counted)")
    if report.file_sizes:
        actual_mb = artifact_megabytes(report.file_sizes)
        if not size_agrees(entry.size_mb, actual_mb):
            problems.append(f"size_mb is {entry.size_mb} but the artifact's "
                            f"{len(report.file_sizes)} files hold {actual_mb:.4f} MB "
                            f"({sum(report.file_sizes.values())} bytes; rounding within "
                            f"{SIZE_TOLERANCE_MB} MB or {SIZE_TOLERANCE_SHARE:.0%} is "
                            "accepted)")
    return problems


def _unique(files: list[Path], results: list[EntryCheck], key: Callable[[Entry], str],
            message: Callable[[EntryCheck, str, Path], str]) -> None:
    """A problem on each checked entry that shares ``key`` with another entry file."""
    seen: dict[str, Path] = {}
    for p in files:
        try:
            value = key(read_entry(p))
        except ProbebenchError:
            continue
        if value in seen:
            for r in results:
                if r.path in (p, seen[value]):
                    r.problems.append(message(r, value, seen[value] if r.path == p else p))
        seen.setdefault(value, p)


def check_registry(root: Path, repo_root: Path, *, catalog: TaskCatalog,
                   files: list[Path] | None = None, changed_since: str | None = None,
                   author: str | None = None) -> list[EntryCheck]:
    """Check the entries of the registry ``root`` (every one, the entry ``files`` given,
    or with ``changed_since`` a git revision: the entries changed since its merge base,
    none when none changed): schema, file name = id, license, tasks registered in
    ``catalog``, artifact resolvable (from ``repo_root``) and valid with the bundle hash
    the entry registers, declared parameters and size; ids and artifacts unique across
    the whole registry. With ``changed_since`` also a probe pull request's rules
    (``pull_request_problems``, with the pull request's ``author``).
    One ``EntryCheck`` per file, with its problems (none: it passes)."""
    if changed_since is not None:
        files = changed_entry_files(root, changed_since)
        if not files:
            return []
    all_files = entry_files(root)
    results = [check_entry(p, root, repo_root, catalog) for p in (files or all_files)]
    # ids are unique across the whole registry, not just the checked files; and one
    # artifact backs one entry (re-registering someone's artifact under a new id)
    _unique(all_files, results, lambda e: e.id,
            lambda r, key, other: f"{r.path}: id {key!r} is also used by {other}")
    _unique(all_files, results, lambda e: e.artifact_sha256,
            lambda r, key, other: f"{r.path}: artifact {key[:12]} is already registered "
                                  f"by {other}")
    if changed_since is not None:
        pull_request_problems(root, changed_since, results, author=author)
    return results
