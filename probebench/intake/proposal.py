"""``probebench registry check-task``: the checks of a task proposal.

A task proposal is a pull request that adds one folder ``tasks/proposed/<task id>/``
(the confinement rule is in ``intake/confine.py``): its ``tasks.yaml``, a tasks file
holding the one task (what ``probebench tasks add --to tasks/proposed/<task id>``
writes; the entry a maintainer appends verbatim to the catalog's ``tasks.yaml``), the
data under ``data/<task id>/`` (the paths the entry names, relative to the folder, so
they stay valid once the folder's ``data/`` is moved into the catalog's), optionally a
data card ``README.md`` and the author's own training data under ``training/``. The
folder is also a tasks file to ``--include`` while the proposal waits.

Checks, in order (a check whose inputs failed is skipped, and says why):

1. ``files``: the folder holds regular files only (no symbolic link), in that layout,
   each within the size limits of the confinement rule;
2. ``schema``: ``tasks.yaml`` holds exactly one valid ``TaskSpec``, whose id is the
   folder's name and is not registered yet (registered tasks are immutable: a new
   version is a new id), of a registered format, every path relative and under
   ``data/<task id>/``, every file pinned in ``files_sha256`` and every data file
   named by the entry;
3. ``provenance``: a non-empty ``source`` and a license that lets the catalog be
   redistributed (OSI-approved, open content, or restricted: NC/ND/RAIL); ``custom``,
   ``closed`` and unknown ids are refused;
4. ``hashes``: every ``files_sha256`` recomputed and equal, the data read by its format
   (errors name the file and line), and the canonical test set (and every holdout's)
   equal to ``test_sha256``;
5. ``personal_data``: the scan of ``tasks/pii.py`` over every prompt text of every
   split and holdout; each finding names the file and line that holds it;
6. ``splits``: no prompt text (compared with case and whitespace folded) occurs in two
   of the train, val and test splits and the holdouts;
7. ``leakage``: when ``training/`` declares the author's training data, no test or
   holdout prompt equals (case and whitespace folded) a line, a tab-separated field or
   a JSON string value of a line of it; each hit names the training file and line.

Nothing here runs code from the proposal: its files are read as YAML (the safe loader)
and as data by the format's reader.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from probebench.errors import InputError
from probebench.hashing import sha256_file
from probebench.intake.comment import capped, code_block, md_text
from probebench.intake.confine import (
    MAX_PROPOSAL_BYTES,
    MAX_PROPOSAL_FILE_BYTES,
    PROPOSAL_DIR,
    PROPOSAL_TASK_FILE,
    PROPOSAL_TRAINING_DIR,
    proposal_layout_problem,
)
from probebench.licenses import license_kind
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog, effective_license
from probebench.tasks.datapaths import data_path_problem
from probebench.tasks.families import TaskData, get_format
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.pii import Finding, scan_lines
from probebench.tasks.spec import TaskSpec, read_tasks_file

Status = Literal["pass", "fail", "skip"]
_TASK_ID = re.compile(r"^[a-z0-9][a-z0-9_\-]*\Z")
#: the license classes a registered task may carry: the catalog ships in the wheel
_REDISTRIBUTABLE = {"osi": "OSI-approved", "open-content": "an open content license",
                    "restricted": "restricted (NC, ND or RAIL): accepted, the task page "
                                  "says so"}
#: problems listed per check; the count says how many more there are
MAX_LISTED = 50
#: what a maintainer does with a proposal (the comment and docs/tasks.md say the same)
REVIEW_NOTE = ("No workflow merges a task proposal: a maintainer (`maintainers` in "
               "registry/owners.yaml) reviews its provenance, license, data card, personal "
               "data and leakage, and on acceptance appends its task to the catalog "
               "and moves its data in.")


@dataclass
class ProposalCheck:
    """One line of the proposal's report."""

    name: str
    title: str
    status: Status
    detail: str
    problems: list[str] = field(default_factory=list)


@dataclass
class ProposalReport:
    task_id: str
    folder: str
    checks: list[ProposalCheck] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def failed(self) -> int:
        return sum(c.status == "fail" for c in self.checks)

    def text(self) -> str:
        lines = [f"task proposal {self.task_id} ({self.folder})"]
        for c in self.checks:
            lines.append(f"  {c.status.upper():<4}  {c.title}: {c.detail}")
            lines += [f"          {p}" for p in c.problems]
        lines.append("all checks pass; a maintainer reviews the proposal" if self.passed
                     else f"{self.failed} check(s) fail")
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        """The PR comment: every quoted text escaped (``comment.md_text``, fenced
        blocks no line can close), since it comes from the proposer's files."""
        lines = [f"## probebench task proposal: {md_text(self.task_id, 200)}", "",
                 f"**task proposal: needs a maintainer's review.** {REVIEW_NOTE}",
                 ""]
        for c in self.checks:
            mark = {"pass": "- [x]", "fail": "- [ ]", "skip": "- (skipped)"}[c.status]
            lines.append(f"{mark} **{c.title}**: {md_text(c.detail)}")
            if c.problems:
                lines += ["", code_block(c.problems), ""]
        verdict = ("All checks pass: the proposal waits for a maintainer's review."
                   if self.passed else
                   f"{self.failed} check(s) fail. Fix the proposal and push again; "
                   f"`probebench registry check-task {PROPOSAL_DIR}<task id>` shows the "
                   "same locally.")
        return capped("\n".join([*lines, "", verdict, ""]))

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task_id, "folder": self.folder, "passed": self.passed,
                "checks": [{"name": c.name, "title": c.title, "status": c.status,
                            "detail": c.detail, "problems": c.problems}
                           for c in self.checks]}


TITLES = {
    "files": "one folder of regular files within the size limits",
    "schema": "tasks.yaml holds one valid TaskSpec of a new task",
    "provenance": "provenance (source) given and license accepted",
    "hashes": "every pinned hash recomputed and matching",
    "personal_data": "no personal data in any prompt",
    "splits": "train, val, test and holdouts share no prompt text",
    "leakage": "no test prompt in the author's declared training data",
}


def _listed(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_LISTED:
        return problems
    return [*problems[:MAX_LISTED], f"... and {len(problems) - MAX_LISTED} more"]


def _check(name: str, problems: list[str], ok_detail: str) -> ProposalCheck:
    if problems:
        return ProposalCheck(name, TITLES[name], "fail", f"{len(problems)} problem(s)",
                             _listed(problems))
    return ProposalCheck(name, TITLES[name], "pass", ok_detail)


def _skip(name: str, why: str) -> ProposalCheck:
    return ProposalCheck(name, TITLES[name], "skip", why)


def fold(text: str) -> str:
    """A text as the overlap checks compare it: case and whitespace folded."""
    return " ".join(text.casefold().split())


# --- 1. files -------------------------------------------------------------------------

def _files(folder: Path, label: str, task_id: str) -> tuple[ProposalCheck, list[str]]:
    """The folder's files (relative POSIX paths) and the check of their layout, kind and
    size; symbolic links are never followed."""
    problems: list[str] = []
    found: list[str] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        here = Path(dirpath)
        for name in sorted([*dirnames, *filenames]):
            path = here / name
            rel = path.relative_to(folder).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                problems.append(f"{label}/{rel}: a symbolic link; a proposal holds regular "
                                "files only")
            elif stat.S_ISDIR(info.st_mode):
                continue
            elif not stat.S_ISREG(info.st_mode):
                problems.append(f"{label}/{rel}: not a regular file")
            else:
                found.append(rel)
                total += info.st_size
                why = proposal_layout_problem(task_id, rel)
                if why:
                    problems.append(f"{label}/{rel}: {why}")
                if info.st_size > MAX_PROPOSAL_FILE_BYTES:
                    problems.append(f"{label}/{rel}: {info.st_size} bytes, over the limit "
                                    f"of {MAX_PROPOSAL_FILE_BYTES} bytes per file")
    if total > MAX_PROPOSAL_BYTES:
        problems.append(f"{label}: {total} bytes in all, over the limit of "
                        f"{MAX_PROPOSAL_BYTES} bytes")
    if PROPOSAL_TASK_FILE not in found:
        problems.append(f"{label}/{PROPOSAL_TASK_FILE}: missing")
    return _check("files", problems, f"{len(found)} file(s), {total} bytes"), sorted(found)


# --- 2. schema ------------------------------------------------------------------------

def _path_problem(rel: str, task_id: str) -> str | None:
    problem = data_path_problem(rel)  # the rule every tasks file obeys
    if problem:
        return f"path {rel!r} {problem}"
    if not rel.startswith(f"data/{task_id}/"):
        return (f"path {rel!r} must lie under data/{task_id}/ (the folder a maintainer "
                "moves into the catalog's data/)")
    return None


def _schema(folder: Path, label: str, task_id: str, found: list[str],
            catalog: TaskCatalog) -> tuple[ProposalCheck, TaskSpec | None]:
    where = f"{label}/{PROPOSAL_TASK_FILE}"
    try:
        parsed = read_tasks_file(folder / PROPOSAL_TASK_FILE)
    except InputError as exc:
        return _check("schema", [str(exc).replace(str(folder), label)], ""), None
    if len(parsed.tasks) != 1:
        return _check("schema", [f"{where}: a proposal holds exactly one task; this file "
                                 f"holds {len(parsed.tasks)}"], ""), None
    (spec,) = parsed.tasks
    problems = []
    if parsed.format_defaults:
        # a maintainer moves the task alone into the catalog, whose own defaults would
        # then fill what this file's defaults said: the task spells out its fields
        problems.append(f"{where}: 'format_defaults' belongs to the catalog; write the "
                        "fields into the task itself")
    if spec.id != task_id:
        problems.append(f"{where}: field 'id' is {spec.id!r}; the folder says {task_id!r}")
    if spec.id in catalog.specs:
        problems.append(f"{where}: task {spec.id!r} is registered already ({catalog.describe()}); "
                        "a registered task never changes: propose a new version as a new "
                        f"task id (e.g. {spec.id}_v{spec.version + 1})")
    try:
        get_format(spec.format)
    except InputError as exc:
        problems.append(f"{where}: field 'format': {exc}")
    pinned: list[tuple[str, dict[str, str], dict[str, str]]] = [
        ("", spec.files, spec.files_sha256)]
    pinned += [(f"holdouts v{h.version} ", h.files, h.files_sha256) for h in spec.holdouts]
    named: set[str] = set()
    for what, files, hashes in pinned:
        for rel in sorted(set(files.values()) | set(hashes)):
            why = _path_problem(rel, task_id)
            if why:
                problems.append(f"{where}: {what}{why}")
        for rel in sorted(set(files.values()) - set(hashes)):
            problems.append(f"{where}: {what}{rel} is not pinned in files_sha256")
        for rel in sorted(set(hashes) - set(files.values())):
            problems.append(f"{where}: {what}files_sha256 pins {rel}, which no role names")
        named |= set(files.values())
    for rel in found:
        if rel.startswith("data/") and rel not in named:
            problems.append(f"{label}/{rel}: not a file of the task (every data file is named "
                            "in files and pinned in files_sha256)")
    for rel in sorted(named - set(found)):
        if not _path_problem(rel, task_id):
            problems.append(f"{label}/{rel}: missing (named in {PROPOSAL_TASK_FILE})")
    detail = f"{spec.id} v{spec.version}, format {spec.format}, {len(named)} file(s)"
    return _check("schema", problems, detail), (None if problems else spec)


# --- 3. provenance --------------------------------------------------------------------

def _provenance(spec: TaskSpec, label: str) -> ProposalCheck:
    where = f"{label}/{PROPOSAL_TASK_FILE}"
    problems = []
    if not spec.source.strip():
        problems.append(f"{where}: field 'source' is empty; say where the data comes from "
                        "(a paper, a repository and commit, or 'written by hand for ...')")
    license = effective_license(spec)  # its control set's data ships too
    kind = license_kind(license)
    if kind not in _REDISTRIBUTABLE:
        problems.append(f"{where}: field 'license' is {license!r} ({kind}); the "
                        "catalog ships inside probebench's package, so its data needs a "
                        "license that lets it be redistributed: an SPDX id that is "
                        "OSI-approved, an open content license (CC-BY, CC0, ODC-By...), or "
                        "a restricted one (NC, ND, RAIL)")
    return _check("provenance", problems,
                  f"license {license} ({_REDISTRIBUTABLE.get(kind, kind)}); "
                  f"source: {spec.source.strip()[:200]}")


# --- 4. hashes ------------------------------------------------------------------------

def _hashes(folder: Path, label: str, spec: TaskSpec
            ) -> tuple[ProposalCheck, dict[str, list[Item]] | None]:
    """The check of every hash, and the task's evaluation sets by name (train, val,
    test, ``holdout vN``) when the data could be read."""
    problems = []
    pins = {**spec.files_sha256}
    for h in spec.holdouts:
        pins.update(h.files_sha256)
    for rel, expected in sorted(pins.items()):
        actual = sha256_file(folder / rel, memo=False)
        if actual != expected:
            problems.append(f"{label}/{rel}: sha256 is {actual}, {PROPOSAL_TASK_FILE} pins "
                            f"{expected}")
    fmt = get_format(spec.format)
    sets: dict[str, list[Item]] = {}
    try:
        data: TaskData = fmt.load(spec, folder)
        sets.update(data.splits)
        if not data.test:
            problems.append(f"{label}: the test split is empty")
        actual = canonical_test_sha256(data.test)
        if actual != spec.test_sha256:
            problems.append(f"{label}/{PROPOSAL_TASK_FILE}: the canonical test set hashes to "
                            f"{actual}, test_sha256 is {spec.test_sha256}")
        for h in spec.holdouts:
            held = fmt.read_holdout(spec, h, folder).test
            sets[f"holdout v{h.version}"] = held
            actual = canonical_test_sha256(held)
            if actual != h.test_sha256:
                problems.append(f"{label}/{PROPOSAL_TASK_FILE}: holdout v{h.version}'s test "
                                f"set hashes to {actual}, its test_sha256 is {h.test_sha256}")
    except InputError as exc:
        problems.append(str(exc).replace(str(folder), label))
        return _check("hashes", problems, ""), None
    sizes = ", ".join(f"{name} {len(items)}" for name, items in sets.items())
    return (_check("hashes", problems, f"{len(pins)} file(s) and {1 + len(spec.holdouts)} "
                   f"test set(s) match; items: {sizes}"), sets)


# --- where a prompt lies --------------------------------------------------------------

class _Lines:
    """The lines of the task's files, to name the file and line a prompt text comes
    from (every line that holds it)."""

    def __init__(self, folder: Path, label: str, spec: TaskSpec) -> None:
        rels = sorted(set(spec.files.values()) | {r for h in spec.holdouts
                                                  for r in h.files.values()})
        self.lines: list[tuple[str, int, str]] = []
        for rel in rels:
            text = (folder / rel).read_text("utf-8", errors="replace")
            self.lines += [(f"{label}/{rel}", n, line)
                           for n, line in enumerate(text.splitlines(), start=1)]

    def find(self, text: str, limit: int = 4) -> list[tuple[str, int]]:
        out = [(path, n) for path, n, line in self.lines if text in line]
        return out[:limit]


def _prompts(sets: dict[str, list[Item]]) -> list[tuple[str, str, str]]:
    """(set name, prompt id, text) of every prompt."""
    return [(name, p.id or item.id, p.text) for name, items in sets.items()
            for item in items for p in item.prompts]


# --- 5. personal data -----------------------------------------------------------------

def _masked(text: str) -> str:
    """A finding as a report shows it (as ``pii.Finding`` does): never in full."""
    return text if len(text) <= 6 else text[:3] + "…" + text[-2:]


def _personal_data(sets: dict[str, list[Item]], lines: _Lines) -> ProposalCheck:
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    prompts = _prompts(sets)
    for name, pid, text in prompts:
        for finding in scan_lines(Path(f"{name} prompt {pid}"), [text]):
            at = lines.find(text, 1) or lines.find(finding.text, 1)
            if at:
                path, number = at[0]
                shown = f"{Finding(Path(path), number, finding.kind, finding.text)} in"
            else:  # a text the format assembles (e.g. regions): name the prompt alone
                shown = f"{finding.kind} ({_masked(finding.text)}) in"
            if (shown, pid) not in seen:
                seen.add((shown, pid))
                problems.append(f"{shown} the {name} prompt {pid}")
    return _check("personal_data", problems,
                  f"{len(prompts)} prompt(s) scanned (e-mail, phone, card, bank account, "
                  "national id, street address), nothing found")


# --- 6. splits ------------------------------------------------------------------------

def _splits(sets: dict[str, list[Item]], lines: _Lines) -> ProposalCheck:
    homes: dict[str, dict[str, tuple[str, str]]] = {}
    for name, pid, text in _prompts(sets):
        homes.setdefault(fold(text), {}).setdefault(name, (pid, text))
    problems = []
    for texts in homes.values():
        if len(texts) < 2:
            continue
        names = " and ".join(f"{name} ({pid})" for name, (pid, _) in sorted(texts.items()))
        where = sorted({f"{path}:{n}" for _, text in texts.values()
                        for path, n in lines.find(text)})
        shown = next(iter(texts.values()))[1]
        problems.append(f"{', '.join(where) or '(assembled text)'}: the prompt "
                        f"{shown[:80]!r} occurs in the {names} splits")
    return _check("splits", sorted(problems),
                  f"{len(homes)} distinct prompt text(s) across {', '.join(sets)}")


# --- 7. leakage -----------------------------------------------------------------------

def _candidates(line: str) -> set[str]:
    """What a line of training data may hold a prompt as: the line, each tab-separated
    field, and every string in it when it is a JSON value."""
    found = {line, *line.split("\t")}
    stripped = line.strip()
    if stripped[:1] in ("{", "[", '"'):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                found.add(v)
            elif isinstance(v, dict):
                stack += list(v.values())
            elif isinstance(v, list):
                stack += v
    return {fold(c) for c in found if c.strip()}


def _leakage(folder: Path, label: str, found: list[str], sets: dict[str, list[Item]],
             lines: _Lines) -> ProposalCheck:
    training = [rel for rel in found if rel.startswith(PROPOSAL_TRAINING_DIR)]
    if not training:
        return _skip("leakage", f"no training data declared (optional: the author's "
                                f"training data under {label}/{PROPOSAL_TRAINING_DIR})")
    evaluated: dict[str, list[tuple[str, str, str]]] = {}
    for name, pid, text in _prompts(sets):
        if name == "test" or name.startswith("holdout"):
            evaluated.setdefault(fold(text), []).append((name, pid, text))
    problems = []
    n_lines = 0
    for rel in training:
        text = (folder / rel).read_text("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            n_lines += 1
            for key in sorted(_candidates(line) & evaluated.keys()):
                for name, pid, prompt in evaluated[key]:
                    at = ", ".join(f"{p}:{n}" for p, n in lines.find(prompt, 2))
                    problems.append(f"{label}/{rel}:{number}: holds the {name} prompt {pid}"
                                    + (f" ({at})" if at else ""))
    return _check("leakage", problems,
                  f"{len(evaluated)} test prompt(s) against {n_lines} line(s) of "
                  f"{len(training)} training file(s): none occurs")


def check_proposal(folder: Path, *, catalog: TaskCatalog,
                   label: str | None = None) -> ProposalReport:
    """Every check of a task proposal's folder ``tasks/proposed/<task id>``, against the
    registered tasks of ``catalog``. ``label`` is how messages name the folder (default:
    the path as given)."""
    folder = Path(folder)
    label = label or folder.as_posix().rstrip("/")
    task_id = folder.resolve().name
    report = ProposalReport(task_id, label)
    if not folder.is_dir() or folder.is_symlink():
        raise InputError(f"{label}: no such proposal folder (a proposal is a folder "
                         f"{PROPOSAL_DIR}<task id>/ holding {PROPOSAL_TASK_FILE})")
    folder = folder.resolve()
    files_check, found = _files(folder, label, task_id)
    report.checks.append(files_check)
    later = ("provenance", "hashes", "personal_data", "splits", "leakage")
    if not _TASK_ID.match(task_id):
        report.checks.append(_check("schema", [f"{label}: the folder's name {task_id!r} is "
                                               "no task id (lower case, digits, _ and -)"], ""))
        report.checks += [_skip(n, "the schema check failed") for n in later]
        return report
    if files_check.status == "fail":
        report.checks += [_skip(n, "the files check failed") for n in ("schema", *later)]
        return report
    schema_check, spec = _schema(folder, label, task_id, found, catalog)
    report.checks.append(schema_check)
    if spec is None:
        report.checks += [_skip(n, "the schema check failed") for n in later]
        return report
    report.checks.append(_provenance(spec, label))
    hashes_check, sets = _hashes(folder, label, spec)
    report.checks.append(hashes_check)
    if sets is None:
        report.checks += [_skip(n, "the data could not be read") for n in later[2:]]
        return report
    lines = _Lines(folder, label, spec)
    report.checks += [_personal_data(sets, lines), _splits(sets, lines),
                      _leakage(folder, label, found, sets, lines)]
    return report


__all__ = ["MAX_LISTED", "REVIEW_NOTE", "ProposalCheck", "ProposalReport", "check_proposal",
           "fold"]
