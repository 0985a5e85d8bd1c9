"""``probebench review``: the reviewer's checklist, automated.

Items, each passed or failed with its reason:

1. ``artifact``: the artifact at ``artifact_url`` validates and its bundle hash equals
   ``artifact_sha256``;
2. ``notebook``: the reproducer notebook runs end to end in the sandbox
   (``sandbox/bwrap.py``: no network, no secrets, no files outside a scratch copy; memory,
   processes, ``/tmp``, ``/scratch`` and wall clock limited over the whole process tree,
   ``limits`` or the ``--memory-limit``/``--time-limit`` options)
   and the metrics it prints on ``PROBEBENCH_METRICS`` lines name the entry's tasks and
   agree with probebench's own re-evaluation of the artifact (``intake/reproduce.py``
   states the contract and the tolerance);
3. ``test_sets``: every test-set hash the artifact reports is registered in tasks.yaml;
4. ``license``: open (OSI-approved or an open content license such as CC-BY), restricted
   (NC, ND, RAIL: accepted and scored as such), or declared ``custom``/``closed``;
5. ``personal_data``: the entry's test sets hold no e-mail, phone, card, national-id or
   street-address pattern (line-numbered report);
6. ``evalaware``: an eval-awareness-corrected AUROC is declared, or the imputation is
   acknowledged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probebench.artifact.checks import validate
from probebench.errors import ProbebenchError
from probebench.evaluation.definitions import EVALAWARE_IMPUTE
from probebench.evaluation.results import Submission
from probebench.evaluation.session import Session, SubmitOptions
from probebench.intake.comment import capped, md_text
from probebench.intake.reproduce import (
    NOTEBOOK_TIMEOUT,
    ReproducerRun,
    contract_problems,
    judge_reproduction,
    reproduce_entry,
)
from probebench.licenses import license_kind
from probebench.registry.entry import Entry, entry_path, read_entry
from probebench.runs.evaluate import evaluate_entry
from probebench.sandbox.bwrap import SandboxLimits
from probebench.sources.resolve import resolve_artifact
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import get_format
from probebench.tasks.pii import scan_file


@dataclass
class CheckItem:
    """One line of the reviewer's checklist."""

    name: str
    title: str
    passed: bool
    detail: str


@dataclass
class Review:
    entry_id: str
    items: list[CheckItem] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(i.passed for i in self.items)

    def markdown(self) -> str:
        """The checklist as a PR comment: every detail is escaped (``comment.md_text``),
        since it quotes the submitter's files."""
        lines = [f"## probebench review: {md_text(self.entry_id, 200)}", ""]
        for item in self.items:
            lines.append(f"- [{'x' if item.passed else ' '}] **{item.title}**: "
                         f"{md_text(item.detail)}")
        verdict = "All checks pass." if self.passed else (
            f"{sum(not i.passed for i in self.items)} check(s) fail.")
        return capped("\n".join([*lines, "", verdict, ""]))

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry_id, "passed": self.passed,
                "items": [{"name": i.name, "title": i.title, "passed": i.passed,
                           "detail": i.detail} for i in self.items]}


LICENSE_VERDICTS = {
    "osi": (True, "OSI-approved"),
    "open-content": (True, "an open content license"),
    "restricted": (True, "restricts use or derivatives (NC, ND or RAIL): accepted, shown on "
                   "the entry page and scored as restricted in ProbeScore"),
    "custom": (True, "custom terms, declared"),
    "closed": (True, "closed, declared"),
    "unknown": (False, "is not a license probebench knows; use an SPDX id, custom or closed"),
}


def _license_item(value: str) -> CheckItem:
    ok, why = LICENSE_VERDICTS[license_kind(value)]
    return CheckItem("license", "license is open, restricted, custom or closed (declared)",
                     ok, f"{value}: {why}")


NOTEBOOK_TITLE = "reproducer notebook runs in the sandbox and reproduces the re-evaluation"


def _notebook_item(entry: Entry, entry_id: str, registry: Path, repo: Path,
                   catalog: TaskCatalog, reproduced: ReproducerRun | None,
                   evaluation: Submission | None, timeout: int,
                   limits: SandboxLimits | None) -> CheckItem:
    try:
        run = reproduced if reproduced is not None else reproduce_entry(
            entry_id, registry, repo, timeout=timeout, limits=limits)
    except ProbebenchError as exc:  # SandboxUnavailableError included: never run unsandboxed
        return CheckItem("notebook", NOTEBOOK_TITLE, False, str(exc))
    if run.entry != entry_id:
        return CheckItem("notebook", NOTEBOOK_TITLE, False,
                         f"the reproducer report is for {run.entry!r}, not {entry_id!r}")
    if not run.ran or contract_problems(entry, run):  # fails without a re-evaluation
        return CheckItem("notebook", NOTEBOOK_TITLE, False,
                         judge_reproduction(entry, run, None)[1])
    if evaluation is None:
        try:
            session = Session(catalog, SubmitOptions(progress=False))
            evaluation = evaluate_entry(entry_id, registry, repo, session,
                                        store=False).submission
        except ProbebenchError as exc:
            return CheckItem("notebook", NOTEBOOK_TITLE, False,
                             f"probebench could not re-evaluate the artifact: {exc}")
    if evaluation.probe.bundle_sha256 != entry.artifact_sha256:
        return CheckItem("notebook", NOTEBOOK_TITLE, False,
                         f"the re-evaluation is of bundle {evaluation.probe.bundle_sha256}, "
                         f"not the entry's {entry.artifact_sha256}")
    problem = evaluation.registry_problem()
    if problem is not None:
        return CheckItem("notebook", NOTEBOOK_TITLE, False,
                         f"the re-evaluation is {problem}: review needs one of every "
                         "stage on whole test sets (submit without --limit, --quick, --skip "
                         "or --stages)")
    ok, detail = judge_reproduction(entry, run, evaluation)
    return CheckItem("notebook", NOTEBOOK_TITLE, ok, detail)


def review_entry(entry_id: str, registry: Path, repo: Path, *, catalog: TaskCatalog,
                 timeout: int = NOTEBOOK_TIMEOUT, reproduced: ReproducerRun | None = None,
                 evaluation: Submission | None = None,
                 limits: SandboxLimits | None = None) -> Review:
    """Every checklist item for one entry (see the module docstring). ``reproduced`` is
    the sandboxed notebook's report when a separate job made it (else the notebook is run
    here, in the sandbox); ``evaluation`` is probebench's re-evaluation of the entry when
    one was already made (else the artifact is evaluated here, nothing stored)."""
    entry = read_entry(entry_path(registry, entry_id))
    review = Review(entry_id)
    title = "artifact found, valid, hash matches"
    try:
        folder, how = resolve_artifact(entry.artifact_url, repo)
    except ProbebenchError as exc:
        review.items.append(CheckItem("artifact", title, False, str(exc)))
        folder = None
    if folder is not None:
        report = validate(folder, catalog=catalog, expected_sha256=entry.artifact_sha256)
        failed = [c for c in report.failed() if c.name != "reported_metrics"]
        detail = ("; ".join(f"{c.name}: {c.message}" for c in failed) if failed else
                  f"found via {how}; bundle sha256 {report.bundle_sha256} matches")
        review.items.append(CheckItem("artifact", title, not failed, detail))
        if failed:  # nothing of an invalid artifact is run or evaluated
            review.items.append(CheckItem("notebook", NOTEBOOK_TITLE, False,
                                          "not run: the artifact is not valid"))
        else:
            review.items.append(_notebook_item(entry, entry_id, registry, repo, catalog,
                                               reproduced, evaluation, timeout, limits))
        metrics_check = next(c for c in report.checks if c.name == "reported_metrics")
        review.items.append(CheckItem("test_sets", "reported test-set hashes are registered",
                                 metrics_check.status == "pass", metrics_check.message))
    review.items.append(_license_item(entry.license))
    root = catalog.root
    files: set[Path] = set()
    for spec in (catalog.specs[t] for t in entry.tasks if t in catalog.specs):
        roles = get_format(spec.format).test_roles
        home = catalog.root_of(spec.id)
        files |= {home / rel for role, rel in spec.files.items() if role in roles}
        files |= {home / rel for h in spec.holdouts for rel in h.files.values()}
    findings = [f for path in sorted(files) for f in scan_file(path)]
    shown = "; ".join(str(f).replace(str(root) + "/", "") for f in findings[:10])
    review.items.append(CheckItem("personal_data", "test sets hold no personal data",
                             not findings, f"{len(files)} file(s) scanned, nothing found"
                             if not findings else f"{len(findings)} finding(s): {shown}"))
    declared = entry.evalaware_auroc is not None
    ok = declared or entry.evalaware_imputation_acknowledged
    review.items.append(CheckItem(
        "evalaware", "eval-awareness-corrected AUROC declared or imputation acknowledged", ok,
        f"declared {entry.evalaware_auroc:.3f}" if declared else
        f"imputation ({EVALAWARE_IMPUTE} x AUROC) acknowledged" if ok else
        "neither evalaware_auroc nor evalaware_imputation_acknowledged is set"))
    return review
