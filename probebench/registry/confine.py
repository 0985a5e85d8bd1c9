"""Pull-request confinement: a submission adds or updates one entry and its artifact.

The one definition of the rule, used by ``probebench registry confine`` (the first step
of every pull-request job) and ``probebench registry check --changed``. A submission:

- adds or modifies exactly one entry file ``registry/probes/<org>/<name>.yaml``;
- may add or modify files in at most one artifact folder ``registry/artifacts/<folder>/``;
- deletes nothing, and touches nothing else: workflows, the package, ``tasks.yaml``,
  test sets, tests, build files, ``registry/results`` and ``registry/baselines`` are
  maintainers' changes;
- adds only regular files: no symbolic link, no submodule, no type change.

Renames are listed as a deletion plus an addition (``--no-renames``), so moving a file
from anywhere into an artifact folder is refused for its source. Paths are read with
``-z``, so no file name can hide from the rule, and printed quoted when they hold
anything but plain characters. Run before any code from the pull request is installed
or any artifact is loaded. The same rule reads GitHub's list of a pull request's files
(:func:`read_changes_file`), which ``comment.yml`` checks again from the default branch
before it posts any verdict.
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


#: git modes a submission may add: regular files (plain and executable)
REGULAR_MODES = ("100644", "100755")
_PLAIN_PATH = re.compile(r"^[A-Za-z0-9._/+=@,-]+$")
#: GitHub's pull-request file statuses -> git's letters
_API_STATUS = {"added": "A", "modified": "M", "removed": "D", "changed": "T",
               "copied": "A", "unchanged": "M"}


@dataclass(frozen=True)
class Change:
    """One changed path: git's status letter (A, M, D, T...), the path, and the new
    file mode ("" when unknown or deleted)."""

    status: str
    path: str
    mode: str = ""


def shown(path: str) -> str:
    """A path as it is safe to print in a log or a Markdown comment: quoted (JSON
    escapes) unless it holds only plain characters."""
    import json

    return path if _PLAIN_PATH.match(path) else json.dumps(path).replace("`", "\\u0060")


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
    split into a deletion and an addition, with the new file mode; paths relative to the
    repository root. With ``head=None`` the working tree is compared instead, untracked
    files included (a local check before committing)."""
    if head is not None:
        out = _git(repo, "diff", "--raw", "--no-renames", "--no-abbrev", "-z",
                   f"{base}...{head}")
    else:
        merge_base = _git(repo, "merge-base", base, "HEAD").strip()
        out = _git(repo, "diff", "--raw", "--no-renames", "--no-abbrev", "-z", merge_base)
    fields = out.split("\0")
    found: dict[str, Change] = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) < 5:
            continue
        status, mode = parts[4][0], parts[1]
        found[path] = Change(status, path, "" if status == "D" else mode)
    if head is None:
        untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
        for p in untracked.split("\0"):
            if p:
                mode = "120000" if (repo / p).is_symlink() else "100644"
                found[p] = Change("A", p, mode)
    return sorted(found.values(), key=lambda c: c.path)


def read_changes_file(path: Path) -> list[Change]:
    """Changes from a file of ``STATUS<TAB>PATH[<TAB>PREVIOUS_PATH]`` lines, STATUS a git
    letter or a GitHub API file status (``gh api repos/O/R/pulls/N/files --jq '.[] |
    [.status, .filename, .previous_filename // ""] | @tsv'``); a rename becomes a deletion
    of its previous path and an addition. Modes are unknown here (``check --changed``
    reads them from git)."""
    found = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        status, _, rest = line.partition("\t")
        filename, _, previous = rest.partition("\t")
        if not filename:
            raise ProbebenchError(f"{path}:{number}: expected STATUS<TAB>PATH")
        if status == "renamed":
            found += [Change("D", previous), Change("A", filename)]
            continue
        letter = _API_STATUS.get(status, status)
        if letter not in ("A", "M", "D", "T"):
            raise ProbebenchError(f"{path}:{number}: unknown status {status!r}")
        found.append(Change(letter, filename))
    return sorted(found, key=lambda c: c.path)


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
        where = shown(c.path)
        if c.status == "D":
            problems.append(f"{where}: deleted (or moved away); a submission never deletes "
                            "or moves files")
            continue
        if c.status == "T" or (c.mode and c.mode not in REGULAR_MODES):
            kind = {"120000": "a symbolic link", "160000": "a submodule"}.get(
                c.mode, "not a regular file")
            problems.append(f"{where}: {kind}; a submission adds regular files only")
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
        problems.append(f"{where}: outside one entry's YAML and its artifact folder "
                        "(workflows, the package, tasks.yaml, test sets, tests, build files, "
                        "registry/results and registry/baselines are maintainers' changes, "
                        f"never part of a submission){hint}")
    if len(entries) != 1:
        problems.append(f"a submission adds or changes exactly one entry "
                        f"{ENTRY_DIR}<org>/<name>.yaml; this one changes {len(entries)}")
    if len(artifacts) > 1:
        problems.append(f"a submission brings at most one artifact folder; found "
                        f"{', '.join(sorted(artifacts))}")
    return problems


def changed_artifact_folders(found: list[Change]) -> set[str]:
    """``registry/artifacts/<folder>`` of every added or modified artifact file."""
    return {f"{ARTIFACT_DIR}{m.group(1)}" for c in found if c.status != "D"
            and (m := ARTIFACT_FILE.match(c.path))}


def submitted_entry(found: list[Change]) -> str | None:
    """The entry id of a confined submission (None when it is not confined)."""
    if confinement_problems(found):
        return None
    (entry,) = [e for c in found if (e := entry_id_of(c.path))]
    return entry


__all__ = ["ARTIFACT_DIR", "ENTRY_DIR", "REGULAR_MODES", "Change", "changed_artifact_folders",
           "changed_paths", "changes", "confinement_problems", "entry_id_of", "git_toplevel",
           "read_changes_file", "shown", "submitted_entry"]
