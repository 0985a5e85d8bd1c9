"""Pull-request confinement: a submission adds or updates one entry and its artifact.

The one definition of the rule, used by ``probebench registry confine`` (the first step
of every pull-request job) and ``probebench registry check --changed``. A submission:

- adds or modifies exactly one entry file ``registry/probes/<org>/<name>.yaml``;
- may add or modify files in at most one artifact folder ``registry/artifacts/<folder>/``;
- deletes nothing, and touches nothing else: workflows, the package, ``tasks.yaml``,
  test sets, tests, build files and ``registry/results`` are maintainers' changes.

Renames are listed as a deletion plus an addition (``--no-renames``), so moving a file
from anywhere into an artifact folder is refused for its source. Paths are read with
``-z``, so no file name can hide from the rule. Run before any code from the pull
request is installed or any artifact is loaded.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from probebench.errors import ProbebenchError

ENTRY_DIR = "registry/probes/"
ARTIFACT_DIR = "registry/artifacts/"
#: ``registry/probes/<org>/<name>.yaml`` (the id's pattern: lower case, digits, - and .)
ENTRY_FILE = re.compile(r"^registry/probes/([a-z0-9][a-z0-9\-]*)/([a-z0-9][a-z0-9.\-]*)\.yaml$")
#: ``registry/artifacts/<folder>/<anything below it>``
ARTIFACT_FILE = re.compile(r"^registry/artifacts/([A-Za-z0-9][A-Za-z0-9._\-]*)/.+$")


@dataclass(frozen=True)
class Change:
    """One changed path: git's status letter (A, M, D, T...) and the path."""

    status: str
    path: str


def _git(repo: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                              check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise ProbebenchError(f"git {' '.join(args[:2])} failed in {repo}: "
                              f"{detail.strip()}") from None


def git_toplevel(path: Path) -> Path:
    """The root of the git work tree that holds ``path``."""
    start = path if path.is_dir() else path.parent
    return Path(_git(start, "rev-parse", "--show-toplevel").strip()).resolve()


def changes(repo: Path, base: str, head: str | None = "HEAD") -> list[Change]:
    """Every path that differs between the merge base of ``base`` and ``head``, renames
    split into a deletion and an addition; paths relative to the repository root. With
    ``head=None`` the working tree is compared instead, untracked files included (a
    local check before committing)."""
    if head is not None:
        out = _git(repo, "diff", "--name-status", "--no-renames", "-z", f"{base}...{head}")
    else:
        merge_base = _git(repo, "merge-base", base, "HEAD").strip()
        out = _git(repo, "diff", "--name-status", "--no-renames", "-z", merge_base)
        untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
        out += "".join(f"A\0{p}\0" for p in untracked.split("\0") if p)
    fields = out.split("\0")
    found = {}
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        if status:
            found[path] = Change(status[0], path)
    return sorted(found.values(), key=lambda c: c.path)


def changed_paths(repo: Path, base: str, head: str = "HEAD") -> list[str]:
    """The paths of :func:`changes`."""
    return [c.path for c in changes(repo, base, head)]


def entry_id_of(path: str) -> str | None:
    """``org/name`` for an entry file path, else None."""
    m = ENTRY_FILE.match(path)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def confinement_problems(found: list[Change] | list[str]) -> list[str]:
    """Why a set of changes is not a single-entry submission (empty when it is)."""
    items = [c if isinstance(c, Change) else Change("M", c) for c in found]
    problems = []
    entries = []
    artifacts = set()
    for c in items:
        if c.status == "D":
            problems.append(f"{c.path}: deleted (or moved away); a submission never deletes "
                            "or moves files")
            continue
        if entry_id_of(c.path):
            entries.append(c.path)
            continue
        m = ARTIFACT_FILE.match(c.path)
        if m:
            artifacts.add(m.group(1))
            continue
        hint = (" (an entry is registry/probes/<org>/<name>.yaml, one folder deep)"
                if c.path.startswith(ENTRY_DIR) else "")
        problems.append(f"{c.path}: outside one entry's YAML and its artifact folder "
                        "(workflows, the package, tasks.yaml, test sets, tests, build files "
                        "and registry/results are maintainers' changes, never part of a "
                        f"submission){hint}")
    if len(entries) != 1:
        problems.append(f"a submission adds or changes exactly one entry "
                        f"{ENTRY_DIR}<org>/<name>.yaml; this one changes {len(entries)}")
    if len(artifacts) > 1:
        problems.append(f"a submission brings at most one artifact folder; found "
                        f"{', '.join(sorted(artifacts))}")
    return problems


def submitted_entry(found: list[Change]) -> str | None:
    """The entry id of a confined submission (None when it is not confined)."""
    if confinement_problems(found):
        return None
    (entry,) = [e for c in found if (e := entry_id_of(c.path))]
    return entry


__all__ = ["ARTIFACT_DIR", "ENTRY_DIR", "Change", "changed_paths", "changes",
           "confinement_problems", "entry_id_of", "git_toplevel", "submitted_entry"]
