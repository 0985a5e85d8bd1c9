"""``probebench review``: the reviewer's checklist, automated.

Items, each passed or failed with its reason:

1. ``artifact``: the artifact at ``artifact_url`` validates and its bundle hash equals
   ``artifact_sha256``;
2. ``notebook``: the reproducer notebook executes end to end (nbclient, a time limit,
   ``HF_HUB_OFFLINE=1``) and every metric it prints on a line
   ``PROBEBENCH_METRICS {"task": {"auroc": ...}}`` agrees with the artifact's reported
   metrics: inside the reported 95% CI when one is given, else within 0.02;
3. ``test_sets``: every test-set hash the artifact reports is registered in tasks.yaml;
4. ``license``: OSI-approved, or declared ``custom``/``closed``;
5. ``personal_data``: the entry's test sets hold no e-mail, phone, card, national-id or
   street-address pattern (line-numbered report);
6. ``evalaware``: an eval-awareness-corrected AUROC is declared, or the imputation
   imputation is acknowledged.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probebench.artifact.checks import validate
from probebench.errors import ProbebenchError
from probebench.evaluation.definitions import EVALAWARE_IMPUTE
from probebench.licenses import NON_SPDX, OSI_APPROVED
from probebench.registry.entry import Entry, entry_path, read_entry
from probebench.registry.pii import scan_file
from probebench.registry.resolve import resolve_artifact
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import get_format

METRICS_MARK = "PROBEBENCH_METRICS"
#: seconds a reproducer notebook's cell may run unless told otherwise
NOTEBOOK_TIMEOUT = 600
TOLERANCE = 0.02


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
        lines = [f"## probebench review: `{self.entry_id}`", ""]
        for item in self.items:
            lines.append(f"- [{'x' if item.passed else ' '}] **{item.title}**: {item.detail}")
        verdict = "All checks pass." if self.passed else (
            f"{sum(not i.passed for i in self.items)} check(s) fail.")
        return "\n".join([*lines, "", verdict, ""])

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry_id, "passed": self.passed,
                "items": [{"name": i.name, "title": i.title, "passed": i.passed,
                           "detail": i.detail} for i in self.items]}


@contextlib.contextmanager
def _offline_env() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_notebook(path: Path, *, timeout: int, cwd: Path) -> list[str]:
    """Execute a notebook; returns its stream output lines. Raises on any cell error."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}})
    with _offline_env():
        client.execute()
    lines = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                lines.extend(str(out.get("text", "")).splitlines())
    return lines


def printed_metrics(lines: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in lines:
        if line.startswith(METRICS_MARK):
            data = json.loads(line[len(METRICS_MARK):])
            for task, metrics in data.items():
                out.setdefault(task, {}).update({k: float(v) for k, v in metrics.items()})
    return out


def _notebook_item(entry: Entry, folder: Path, repo: Path, reported: dict[str, Any],
                   timeout: int) -> CheckItem:
    title = "reproducer notebook runs offline and reproduces the reported metrics"
    candidates = [repo / entry.reproducer_notebook, folder / entry.reproducer_notebook]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        return CheckItem("notebook", title, False, f"{entry.reproducer_notebook} not found")
    try:
        lines = run_notebook(path, timeout=timeout, cwd=path.parent)
    except Exception as exc:  # nbclient raises CellExecutionError, timeouts, kernel deaths
        first = str(exc).strip().splitlines()
        return CheckItem("notebook", title, False,
                    f"{path.name} failed: {first[-1] if first else type(exc).__name__}")
    printed = printed_metrics(lines)
    problems, checked = [], 0
    for task, metrics in reported.items():
        for name in ("auroc", "ece", "brier", "fpr_at_99tpr", "accuracy"):
            value = getattr(metrics, name)
            if value is None:
                continue
            got = printed.get(task, {}).get(name)
            if got is None:
                problems.append(f"{task}.{name} reported but not printed")
                continue
            checked += 1
            low, high = value - TOLERANCE, value + TOLERANCE
            if name == "auroc" and metrics.auroc_ci_low is not None \
                    and metrics.auroc_ci_high is not None:
                low, high = metrics.auroc_ci_low, metrics.auroc_ci_high
            if not low <= got <= high:
                problems.append(f"{task}.{name}: printed {got:.4f}, reported {value:.4f} "
                                f"(allowed [{low:.4f}, {high:.4f}])")
    if not printed:
        problems.append(f"prints no {METRICS_MARK} line")
    if problems:
        return CheckItem("notebook", title, False, f"{path.name}: " + "; ".join(problems))
    return CheckItem("notebook", title, True, f"{path.name} ran; {checked} metric(s) agree")


def review_entry(entry_id: str, registry: Path, repo: Path, *, catalog: TaskCatalog,
                 timeout: int = NOTEBOOK_TIMEOUT) -> Review:
    """Every checklist item for one entry (see the module docstring)."""
    entry = read_entry(entry_path(registry, entry_id))
    review = Review(entry_id)
    try:
        folder, how = resolve_artifact(entry.artifact_url, repo)
    except ProbebenchError as exc:
        review.items.append(CheckItem("artifact", "artifact found, valid, hash matches", False,
                                 str(exc)))
        folder = None
    reported: dict[str, Any] = {}
    if folder is not None:
        report = validate(folder, catalog=catalog, expected_sha256=entry.artifact_sha256)
        failed = [c for c in report.failed() if c.name != "reported_metrics"]
        detail = ("; ".join(f"{c.name}: {c.message}" for c in failed) if failed else
                  f"found via {how}; bundle sha256 {report.bundle_sha256} matches")
        review.items.append(CheckItem("artifact", "artifact found, valid, hash matches",
                                 not failed, detail))
        if report.meta is not None:
            reported = dict(report.meta.reported_metrics)
        review.items.append(_notebook_item(entry, folder, repo, reported, timeout))
        metrics_check = next(c for c in report.checks if c.name == "reported_metrics")
        review.items.append(CheckItem("test_sets", "reported test-set hashes are registered",
                                 metrics_check.status == "pass", metrics_check.message))
    ok = entry.license in OSI_APPROVED or entry.license in NON_SPDX
    review.items.append(CheckItem("license", "license is OSI-approved, custom or closed", ok,
                             f"{entry.license}" + ("" if ok else " is not OSI-approved; "
                                                   "declare custom or closed")))
    root = catalog.root
    files: set[Path] = set()
    for spec in (catalog.specs[t] for t in entry.tasks if t in catalog.specs):
        roles = get_format(spec.format).test_roles
        files |= {root / rel for role, rel in spec.files.items() if role in roles}
        files |= {root / rel for h in spec.holdouts for rel in h.files.values()}
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
