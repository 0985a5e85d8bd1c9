"""Pull-request confinement: a pull request proposes a probe or a task, never both.

The one definition of the rule, used by ``probebench registry confine`` (the first step
of every pull-request job) and ``probebench registry check --changed``. A pull request
is of one type, never both (:func:`pr_kind`): it is a **task proposal** when it touches
anything under ``tasks/proposed/``, else a **probe pull request**. A probe pull request:

- adds or modifies exactly one entry file ``registry/probes/<org>/<name>.yaml``;
- may add or modify files in at most one artifact folder ``registry/artifacts/<folder>/``;
- deletes nothing, and touches nothing else: workflows, the package, ``tasks.yaml``,
  test sets, tests, build files, ``registry/results`` and ``registry/baselines`` are
  maintainers' changes;
- adds only regular files: no symbolic link, no submodule, no type change;
- is opened by an owner of the entry's org (:func:`owner_problems`: the author is
  required, ``registry/owners.yaml`` and the orgs with entries are read from the base
  branch; ``registry/owners.yaml`` itself is a maintainers' file, never part of a probe
  pull request).

A task proposal (docs/tasks.md, "Proposing a task") adds one new task, and nothing else:

- only added files, all under one folder ``tasks/proposed/<task id>/``: its
  ``tasks.yaml`` (a tasks file holding that one task, as ``probebench tasks add --to
  tasks/proposed/<task id>`` writes it; its entry is appended verbatim to the catalog
  when a maintainer accepts it), the data under ``data/<task id>/``, optionally a data
  card ``README.md`` and the author's declared training data under ``training/``;
- no modification, deletion or move of any file: registered tasks (the catalog
  ``probebench/catalog/tasks.yaml`` and its ``data/``) and proposals already on the
  base branch are immutable, and a new version of a task is a new task id;
- regular files only, each at most :data:`MAX_PROPOSAL_FILE_BYTES`, together at most
  :data:`MAX_PROPOSAL_BYTES` (sizes read from git; GitHub's file list has none).

A proposal never touches the catalog itself: the rule is checked from the list of
changed paths and their status alone, so ``comment.yml`` applies it again from
GitHub's file list, without reading any file of the pull request.

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
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from probebench.errors import InputError, ProbebenchError
from probebench.yamlsafe import loads_yaml

ENTRY_DIR = "registry/probes/"
ARTIFACT_DIR = "registry/artifacts/"
#: ``registry/probes/<org>/<name>.yaml`` (the id's pattern: lower case, digits, - and .)
ENTRY_FILE = re.compile(r"^registry/probes/([a-z0-9][a-z0-9\-]*)/([a-z0-9][a-z0-9.\-]*)\.yaml\Z")
#: ``registry/artifacts/<folder>/<anything below it>``
ARTIFACT_FILE = re.compile(r"^registry/artifacts/([A-Za-z0-9][A-Za-z0-9._\-]*)/.+\Z")
PROPOSAL_DIR = "tasks/proposed/"
#: ``tasks/proposed/<task id>/<anything below it>`` (the task id's pattern)
PROPOSAL_FILE = re.compile(r"^tasks/proposed/([a-z0-9][a-z0-9_\-]*)/(.+)\Z")
#: a proposal's tasks file (one task), relative to its folder
PROPOSAL_TASK_FILE = "tasks.yaml"
#: the author's declared training data in a proposal (checked for leakage, never
#: registered)
PROPOSAL_TRAINING_DIR = "training/"
MAX_PROPOSAL_FILE_BYTES = 16 * 2**20
MAX_PROPOSAL_BYTES = 64 * 2**20
#: where registered tasks live: changed by the maintainers only
_CATALOG_PATH = re.compile(r"^(?:probebench/catalog/.*|(?:.*/)?tasks\.ya?ml)\Z")
PrKind = Literal["probe", "task"]
#: who may publish under each org (a maintainers' file; a pull request never changes it)
OWNERS_PATH = "registry/owners.yaml"
#: a GitHub login: letters, digits and inner hyphens (a GitHub App's account ends in [bot])
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\[bot\])?\Z")
_ORG = re.compile(r"^[a-z0-9][a-z0-9\-]*\Z")  # an entry id's org (ENTRY_FILE)


#: git modes a probe pull request may add: regular files (plain and executable)
REGULAR_MODES = ("100644", "100755")
_PLAIN_PATH = re.compile(r"^[A-Za-z0-9._/+=@,-]+\Z")
#: GitHub's pull-request file statuses -> git's letters
_API_STATUS = {"added": "A", "modified": "M", "removed": "D", "changed": "T",
               "copied": "A", "unchanged": "M"}


@dataclass(frozen=True)
class ChangedPath:
    """One changed path: git's status letter (A, M, D, T...), the path, and the new
    file mode ("" when unknown or deleted)."""

    status: str
    path: str
    mode: str = ""
    #: the new file's size in bytes (None when unknown: deleted, or from GitHub's list)
    size: int | None = None


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


def changes(repo: Path, base: str, head: str | None = "HEAD") -> list[ChangedPath]:
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
    found: dict[str, ChangedPath] = {}
    blobs: dict[str, str] = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) < 5:
            continue
        status, mode = parts[4][0], parts[1]
        found[path] = ChangedPath(status, path, "" if status == "D" else mode)
        if status != "D" and parts[3].strip("0"):
            blobs[path] = parts[3]
    sizes = _blob_sizes(repo, set(blobs.values()))
    for path, blob in blobs.items():
        found[path] = replace(found[path], size=sizes.get(blob))
    if head is None:
        untracked = _git(repo, "ls-files", "--others", "--exclude-standard", "-z")
        for p in untracked.split("\0"):
            if p:
                mode = "120000" if (repo / p).is_symlink() else "100644"
                found[p] = ChangedPath("A", p, mode)
        for path, change in found.items():  # the working tree's files have no blob yet
            if change.size is None and change.status != "D" and (repo / path).is_file():
                found[path] = replace(change, size=(repo / path).lstat().st_size)
    return sorted(found.values(), key=lambda c: c.path)


def _blob_sizes(repo: Path, blobs: set[str]) -> dict[str, int]:
    """Blob id -> size in bytes (``git cat-file --batch-check``), read without loading
    any content."""
    if not blobs:
        return {}
    try:
        out = subprocess.run(["git", "cat-file", "--batch-check=%(objectname) %(objectsize)"],
                             cwd=repo, input="\n".join(sorted(blobs)) + "\n",
                             capture_output=True, text=True, check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        raise ProbebenchError(f"git cat-file failed in {repo}: {exc}") from None
    sizes = {}
    for line in out.splitlines():
        name, _, size = line.partition(" ")
        if size.isdigit():
            sizes[name] = int(size)
    return sizes


def read_changes_file(path: Path) -> list[ChangedPath]:
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
            found += [ChangedPath("D", previous), ChangedPath("A", filename)]
            continue
        letter = _API_STATUS.get(status, status)
        if letter not in ("A", "M", "D", "T"):
            raise ProbebenchError(f"{path}:{number}: unknown status {status!r}")
        found.append(ChangedPath(letter, filename))
    return sorted(found, key=lambda c: c.path)


def changed_paths(repo: Path, base: str, head: str = "HEAD") -> list[str]:
    """The paths of :func:`changes`."""
    return [c.path for c in changes(repo, base, head)]


def entry_id_of(path: str) -> str | None:
    """``org/name`` for an entry file path, else None."""
    m = ENTRY_FILE.match(path)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def _as_changes(found: list[ChangedPath] | list[str]) -> list[ChangedPath]:
    return [c if isinstance(c, ChangedPath) else ChangedPath("M", c) for c in found]


def pr_kind(found: list[ChangedPath] | list[str]) -> PrKind:
    """``task`` when the pull request touches anything under ``tasks/proposed/`` (a task
    proposal), else ``probe`` (a probe pull request). The rule of that kind then judges
    every path, so a pull request that mixes both is refused by it."""
    return "task" if any(c.path.startswith(PROPOSAL_DIR) for c in _as_changes(found)) \
        else "probe"


def confinement_problems(found: list[ChangedPath] | list[str]) -> list[str]:
    """Why a set of changes is not one confined pull request of its kind (a single-entry
    probe pull request or a single-task proposal; empty when it is)."""
    items = _as_changes(found)
    return _RULES[pr_kind(items)](items)


#: said wherever a pull request mixes the two kinds
ONE_KIND = ("a pull request proposes a probe or a task, never both; "
            "propose a task in a pull request of its own")


def _probe_pr_problems(items: list[ChangedPath]) -> list[str]:
    """The probe pull-request rule (module docstring)."""
    problems = []
    entries = []
    artifacts = set()
    for c in items:
        where = shown(c.path)
        if c.status == "D":
            problems.append(f"{where}: deleted (or moved away); a probe pull request never "
                            "deletes or moves files")
            continue
        if c.status == "T" or (c.mode and c.mode not in REGULAR_MODES):
            kind = {"120000": "a symbolic link", "160000": "a submodule"}.get(
                c.mode, "not a regular file")
            problems.append(f"{where}: {kind}; a probe pull request adds regular files only")
            continue
        if entry_id_of(c.path):
            entries.append(c.path)
            continue
        m = ARTIFACT_FILE.match(c.path)
        if m:
            artifacts.add(m.group(1))
            continue
        hint = (" (an entry is registry/probes/<org>/<name>.yaml, one folder deep)"
                if c.path.startswith(ENTRY_DIR) else
                "; who may publish under an org is the maintainers' to change: they add a "
                "new org's first submitter when they merge that pull request"
                if c.path == OWNERS_PATH else
                f"; a new task is proposed under {PROPOSAL_DIR}<task id>/: {ONE_KIND}"
                if _CATALOG_PATH.match(c.path) else "")
        problems.append(f"{where}: outside one entry's YAML and its artifact folder "
                        "(workflows, the package, tasks.yaml, test sets, tests, build files, "
                        "registry/results and registry/baselines are maintainers' changes, "
                        f"never part of a probe pull request){hint}")
    if len(entries) != 1:
        problems.append(f"a probe pull request adds or changes exactly one entry "
                        f"{ENTRY_DIR}<org>/<name>.yaml; this one changes {len(entries)}")
    if len(artifacts) > 1:
        problems.append(f"a probe pull request brings at most one artifact folder; found "
                        f"{', '.join(sorted(artifacts))}")
    return problems


def proposal_layout_problem(task_id: str, rel: str) -> str | None:
    """Why ``rel`` (a path relative to ``tasks/proposed/<task_id>/``) is no part of a
    proposal (None when it is one)."""
    if rel in (PROPOSAL_TASK_FILE, "README.md") or rel.startswith(
            (f"data/{task_id}/", PROPOSAL_TRAINING_DIR)):
        return None
    return (f"not part of a proposal: a proposal folder holds {PROPOSAL_TASK_FILE}, the "
            f"data under data/{task_id}/, and optionally README.md and "
            f"{PROPOSAL_TRAINING_DIR}")


def _proposal_problems(items: list[ChangedPath]) -> list[str]:
    """The task-proposal rule (module docstring)."""
    problems = []
    folders: dict[str, set[str]] = {}
    total = 0
    for c in items:
        where = shown(c.path)
        m = PROPOSAL_FILE.match(c.path)
        if c.status == "D":
            problems.append(f"{where}: deleted (or moved away); a task proposal never "
                            "deletes or moves files")
        elif c.status == "T" or (c.mode and c.mode not in REGULAR_MODES):
            kind = {"120000": "a symbolic link", "160000": "a submodule"}.get(
                c.mode, "not a regular file")
            problems.append(f"{where}: {kind}; a task proposal adds regular files only")
        elif entry_id_of(c.path) or ARTIFACT_FILE.match(c.path):
            problems.append(f"{where}: a probe pull request's file in a task proposal; "
                            f"{ONE_KIND}")
        elif m is None:
            hint = (f" (a proposal folder is {PROPOSAL_DIR}<task id>/, the id in lower "
                    "case, digits, _ and -)" if c.path.startswith(PROPOSAL_DIR) else "")
            problems.append(f"{where}: outside the proposal's folder {PROPOSAL_DIR}<task id>/ "
                            "(the catalog, probebench/catalog/tasks.yaml and its data/, is "
                            "changed by the maintainers when they move an accepted proposal "
                            "in; workflows, the package, tests and the registry are never "
                            f"part of a proposal){hint}")
        elif c.status != "A":
            problems.append(f"{where}: changed, not added; a task proposal only adds files "
                            "(a task on the base branch is immutable: a new version is a "
                            "new task id)")
        else:
            task_id, rel = m.group(1), m.group(2)
            folders.setdefault(task_id, set()).add(rel)
            why = proposal_layout_problem(task_id, rel)
            if why:
                problems.append(f"{where}: {why}")
            if c.size is not None:
                total += c.size
                if c.size > MAX_PROPOSAL_FILE_BYTES:
                    problems.append(f"{where}: {c.size} bytes, over the limit of "
                                    f"{MAX_PROPOSAL_FILE_BYTES} bytes per file")
    if len(folders) != 1:
        problems.append(f"a task proposal adds exactly one task, one folder "
                        f"{PROPOSAL_DIR}<task id>/; this one adds {len(folders)}"
                        + (f" ({', '.join(sorted(folders))})" if folders else ""))
    else:
        ((task_id, rels),) = folders.items()
        if PROPOSAL_TASK_FILE not in rels:
            problems.append(f"{PROPOSAL_DIR}{task_id}/{PROPOSAL_TASK_FILE}: missing; it holds "
                            "the proposed task's entry")
    if total > MAX_PROPOSAL_BYTES:
        problems.append(f"the proposal's files hold {total} bytes, over the limit of "
                        f"{MAX_PROPOSAL_BYTES} bytes")
    return problems


_RULES: dict[str, Callable[[list[ChangedPath]], list[str]]] = {
    "probe": _probe_pr_problems, "task": _proposal_problems}


def proposed_task(found: list[ChangedPath]) -> str | None:
    """The task id of a confined task proposal (None when it is not one)."""
    if pr_kind(found) != "task" or confinement_problems(found):
        return None
    (task_id,) = {m.group(1) for c in found if (m := PROPOSAL_FILE.match(c.path))}
    return task_id


def changed_artifact_folders(found: list[ChangedPath]) -> set[str]:
    """``registry/artifacts/<folder>`` of every added or modified artifact file."""
    return {f"{ARTIFACT_DIR}{m.group(1)}" for c in found if c.status != "D"
            and (m := ARTIFACT_FILE.match(c.path))}


def published_artifacts(repo: Path, base: str, head: str | None = "HEAD") -> dict[str, str]:
    """``registry/artifacts/<folder>`` -> the id of the entry that references it on the
    merge base of ``base`` and ``head`` (the working tree's ``HEAD`` when ``head`` is
    None): the artifacts already published, read from git, never from the PR's files."""
    merge_base = _git(repo, "merge-base", base, head or "HEAD").strip()
    listing = _git(repo, "ls-tree", "-r", "-z", "--name-only", merge_base, "--", ENTRY_DIR)
    found: dict[str, str] = {}
    for name in sorted(n for n in listing.split("\0") if n.endswith(".yaml")):
        try:
            data = loads_yaml(_git(repo, "show", f"{merge_base}:{name}"), name)
        except ProbebenchError:
            continue  # a broken entry on the base branch references nothing we can read
        url = data.get("artifact_url") if isinstance(data, dict) else None
        if isinstance(url, str) and url.startswith(ARTIFACT_DIR):
            folder = ARTIFACT_DIR + url[len(ARTIFACT_DIR):].strip("/").split("/")[0]
            found.setdefault(folder, str(data.get("id", name)))
    return found


def republished_problems(found: list[ChangedPath], published: dict[str, str]) -> list[str]:
    """A pull request changes only artifact folders that no entry on the base branch
    references: a published artifact never changes (a new version is a new folder and a
    new entry ``-vN``), so no pull request can rewrite another entry's probe."""
    return [f"{shown(folder)}/: the artifact of {published[folder]} on the base branch; a "
            "published artifact never changes: bring a new version in a new folder, with "
            "a new entry version (-vN)"
            for folder in sorted(changed_artifact_folders(found)) if folder in published]


@dataclass(frozen=True)
class Owners:
    """``registry/owners.yaml``: for each org, the GitHub logins (lower case: GitHub
    compares them so) that may add or change its entries; and the maintainers."""

    #: org -> the logins that may publish under it
    orgs: dict[str, frozenset[str]]
    #: the maintainers' logins (they review task proposals and own the reference org)
    maintainers: frozenset[str]


def _logins(value: object, where: str, source: str) -> frozenset[str]:
    if not isinstance(value, list) or not value:
        raise InputError(f"{source}: {where}: expected a non-empty list of GitHub logins, "
                         f"found {value!r}"[:400])
    bad = [x for x in value if not isinstance(x, str) or not LOGIN.match(x)]
    if bad:
        raise InputError(f"{source}: {where}: {bad[0]!r} is not a GitHub login (letters, "
                         "digits and inner hyphens)"[:400])
    return frozenset(x.lower() for x in value)


def parse_owners(text: str, source: str = OWNERS_PATH) -> Owners:
    """Read an owners file: ``orgs`` (org -> list of logins, required) and ``maintainers``
    (list of logins, optional); any other key, an org that is no entry id's org or a
    value that is no login is an error naming the field."""
    data = loads_yaml(text, source)
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping with 'orgs' (org -> list of GitHub "
                         f"logins) and 'maintainers', found {type(data).__name__}")
    unknown = sorted(map(str, set(data) - {"orgs", "maintainers"}))
    if unknown:
        hint = (" (an org of the maintainers is listed under orgs with their logins)"
                if "reserved" in unknown else "")
        raise InputError(f"{source}: unknown field(s) {', '.join(unknown)}; expected 'orgs' "
                         f"and 'maintainers'{hint}")
    orgs = data.get("orgs")
    if not isinstance(orgs, dict):
        raise InputError(f"{source}: field 'orgs': expected a mapping of org -> list of "
                         f"GitHub logins, found {orgs!r}"[:400])
    bad = [k for k in orgs if not isinstance(k, str) or not _ORG.match(k)]
    if bad:
        raise InputError(f"{source}: field 'orgs': {bad[0]!r} is not an org (lower case, "
                         "digits and -, as in registry/probes/<org>/)"[:400])
    maintainers = data.get("maintainers", [])
    return Owners(orgs={k: _logins(v, f"field 'orgs.{k}'", source) for k, v in orgs.items()},
                  maintainers=_logins(maintainers, "field 'maintainers'", source)
                  if maintainers else frozenset())


@dataclass(frozen=True)
class BaseOrgs:
    """What the base branch says about orgs, never the pull request's files: its owners
    file and the orgs that have entries there."""

    owners: Owners
    #: orgs with at least one entry ``registry/probes/<org>/<name>.yaml``
    with_entries: frozenset[str]
    #: where it was read, for messages ("the base branch, merge base 0123abcd4567")
    where: str


def _org_of(path: str, registry: str) -> str | None:
    """``<org>`` of ``<registry>/probes/<org>/<name>.yaml`` (None for any other path)."""
    prefix = f"{registry}/probes/" if registry else "probes/"
    if not path.startswith(prefix) or not path.endswith(".yaml"):
        return None
    org, sep, _ = path[len(prefix):].partition("/")
    return org if sep else None


def base_orgs(repo: Path, base: str, head: str | None = "HEAD", *,
              registry: str = "registry") -> BaseOrgs:
    """The owners file and the orgs with entries on the merge base of ``base`` and
    ``head`` (the working tree's ``HEAD`` when None), read from git. ``registry`` is the
    registry folder relative to the repository root. No owners file there: no org has
    owners (every org with entries is then closed)."""
    merge_base = _git(repo, "merge-base", base, head or "HEAD").strip()
    where = f"the base branch, merge base {merge_base[:12]}"
    listing = _git(repo, "ls-tree", "-r", "-z", "--name-only", merge_base, "--",
                   f"{registry}/probes/" if registry else "probes/")
    orgs = frozenset(org for n in listing.split("\0") if (org := _org_of(n, registry)))
    path = f"{registry}/owners.yaml" if registry else "owners.yaml"
    present = _git(repo, "ls-tree", "--name-only", merge_base, "--", path).strip()
    owners = (parse_owners(_git(repo, "show", f"{merge_base}:{path}"), f"{path} on {where}")
              if present else Owners({}, frozenset()))
    return BaseOrgs(owners, orgs, where)


def tree_orgs(repo: Path) -> BaseOrgs:
    """:class:`BaseOrgs` from the files of a trusted checkout ``repo`` (``comment.yml``
    checks the pull request's file list against the default branch's checkout)."""
    path = repo / OWNERS_PATH
    owners = (parse_owners(path.read_text("utf-8"), str(path)) if path.is_file()
              else Owners({}, frozenset()))
    probes = repo / ENTRY_DIR
    orgs = frozenset(p.name for p in probes.iterdir()
                     if p.is_dir() and any(p.glob("*.yaml"))) if probes.is_dir() else frozenset()
    return BaseOrgs(owners, orgs, f"the checkout {repo.name}/")


def owner_problems(paths: list[str], base: BaseOrgs, author: str | None, *,
                   registry: str = "registry") -> list[tuple[str, str]]:
    """The ownership rule of a probe pull request, one ``(path, problem)`` per changed
    entry file (``<registry>/probes/<org>/<name>.yaml``, relative to the repository
    root) that ``author``, the pull request's GitHub login, may not publish:

    - the author is required: none (or an empty one) refuses every entry;
    - an org in the owners file takes entries from its logins only (compared case-
      insensitively, as GitHub does);
    - an org that has entries on the base branch but no owners is closed until the
      maintainers list its owners;
    - any other org is new: open to its first submitter, whom the maintainers add to the
      owners file when they merge the pull request.

    Read from the base branch only (:class:`BaseOrgs`): a pull request cannot list itself
    as an owner (and one that touches the owners file is refused by the confinement
    rule)."""
    found = []
    login = (author or "").strip()
    for path in paths:
        org = _org_of(path, registry)
        if org is None:
            continue
        where = shown(path)
        owners = base.owners.orgs.get(org)
        if not login:
            found.append((path, f"{where}: the pull request's author is missing: give "
                                "--author LOGIN, the GitHub login that opened it "
                                "(validate-pr.yml passes github.event.pull_request.user."
                                f"login), checked against {OWNERS_PATH} on the base branch"))
        elif not LOGIN.match(login):
            found.append((path, f"{where}: --author {shown(login)}: not a GitHub login "
                                "(letters, digits and inner hyphens)"))
        elif owners is not None and login.lower() not in owners:
            found.append((path, f"{where}: org {org!r} belongs to {', '.join(sorted(owners))} "
                                f"({OWNERS_PATH}); {login} may not add or change its "
                                "entries: publish under an org of your own (a new org "
                                "becomes its first submitter's when the maintainers merge "
                                f"that pull request; owners as on {base.where})"))
        elif owners is None and org in base.with_entries:
            found.append((path, f"{where}: org {org!r} has entries on {base.where} but no "
                                f"owners in {OWNERS_PATH}; nobody may add or change its "
                                "entries until the maintainers list its owners there"))
    return found


def ownership_problems(found: list[ChangedPath], base: BaseOrgs,
                       author: str | None) -> list[str]:
    """:func:`owner_problems` for the changes of a probe pull request (a task proposal
    has no entry: nothing)."""
    if pr_kind(found) != "probe":
        return []
    paths = [c.path for c in found if c.status != "D" and entry_id_of(c.path)]
    return [problem for _, problem in owner_problems(paths, base, author)]


def submitted_entry(found: list[ChangedPath]) -> str | None:
    """The entry id of a confined pull request (None when it is not confined)."""
    if pr_kind(found) != "probe" or confinement_problems(found):
        return None
    (entry,) = [e for c in found if (e := entry_id_of(c.path))]
    return entry


__all__ = ["ARTIFACT_DIR", "ENTRY_DIR", "LOGIN", "MAX_PROPOSAL_BYTES", "MAX_PROPOSAL_FILE_BYTES",
           "ONE_KIND", "OWNERS_PATH", "PROPOSAL_DIR", "PROPOSAL_TASK_FILE",
           "PROPOSAL_TRAINING_DIR", "REGULAR_MODES", "BaseOrgs", "ChangedPath", "Owners",
           "PrKind", "base_orgs", "changed_artifact_folders", "changed_paths", "changes",
           "confinement_problems", "entry_id_of", "git_toplevel", "owner_problems",
           "ownership_problems", "parse_owners", "pr_kind", "proposal_layout_problem",
           "proposed_task", "published_artifacts", "read_changes_file", "republished_problems",
           "shown", "submitted_entry", "tree_orgs"]
