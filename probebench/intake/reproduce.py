"""The reproducer check: run an entry's notebook in the sandbox, read the metrics it
prints, and compare them with probebench's own re-evaluation of the artifact.

The ``PROBEBENCH_METRICS`` contract (also in docs/artifacts.md and the artifact spec): the
notebook prints, on a line of its own, ``PROBEBENCH_METRICS`` then a JSON object
``{"<task id>": {"<metric>": <number or null>, ...}, ...}``. Every task it names must be
one the entry declares, every declared task needs at least its ``auroc``, and each metric
must be one of :data:`METRIC_NAMES`. Each printed number must lie within
:data:`TOLERANCE` (absolute) of probebench's re-evaluation of the published artifact on
that task; a notebook whose metrics do not all agree, or that agrees on nothing, fails.

Running and judging are split so that a workflow can run the notebook in a job of its own
with no token (:func:`reproduce_entry`, whose only output is a :class:`ReproducerRun`) and
judge it elsewhere (:func:`judge_reproduction`).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.artifact import manifest, scan
from probebench.errors import InputError, ProbebenchError, field_problem
from probebench.evaluation.results import Submission, TaskResult
from probebench.registry.entry import Entry, entry_path, read_entry
from probebench.sandbox.bwrap import (
    SCRATCH,
    TMP,
    SandboxLimits,
    SandboxResult,
    run_sandboxed,
    sandbox_script,
)
from probebench.sandbox.limits import size_text
from probebench.sandbox.notebook_runner import MAX_LINES, METRICS_MARK
from probebench.sources.resolve import registry_artifact_problem, resolve_artifact

#: seconds a reproducer notebook's cell may run unless told otherwise
NOTEBOOK_TIMEOUT = 600
#: the largest absolute difference between a printed metric and the re-evaluation
TOLERANCE = 0.02
#: the metrics a notebook may print, and where the re-evaluation keeps each
METRIC_NAMES = ("auroc", "auroc_ci_low", "auroc_ci_high", "accuracy", "ece", "brier",
                "fpr_at_99tpr")
#: the largest report the sandboxed runner may hand back
MAX_REPORT_BYTES = 2 * 1024 * 1024
#: the optional extra that runs reproducer notebooks, and the packages it brings
REVIEW_EXTRA = "review"
NOTEBOOK_PACKAGES = ("nbclient", "nbformat", "ipykernel")


class MissingExtraError(ProbebenchError):
    """A command needs packages of an optional extra that is not installed."""


def require_notebook_runner() -> None:
    """Raise ``MissingExtraError``, naming the extra, when a package that runs reproducer
    notebooks is missing. Looked up without importing them (the runner imports them
    inside the sandbox, with the same interpreter)."""
    missing = []
    for name in NOTEBOOK_PACKAGES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    if missing:
        raise MissingExtraError(
            f"running a reproducer notebook needs {', '.join(missing)}, from probebench's "
            f"optional extra `{REVIEW_EXTRA}`, which is not installed: "
            f"pip install 'probebench[{REVIEW_EXTRA}]' (`review --reproduced FILE` judges a "
            "report made elsewhere without them)")


class ReproducerRun(BaseModel):
    """What the sandboxed run of a reproducer notebook produced: the only thing that
    leaves the sandbox."""

    model_config = ConfigDict(extra="forbid")

    entry: str
    notebook: str
    ran: bool = Field(description="The notebook executed end to end without an error.")
    error: str | None = Field(description="Why it did not run, when it did not.")
    metrics: dict[str, dict[str, float | None]] = Field(
        description="task -> metric -> value, from its PROBEBENCH_METRICS lines.")
    problems: list[str] = Field(description="Malformed PROBEBENCH_METRICS lines.")
    sandbox: str | None = Field(default=None, description=(
        "How the sandbox held its limits (cgroup v2, cgroup v1 or rlimits) and the limits "
        "in force, with any clamped to the caller's own."))
    peak_memory_bytes: int | None = Field(default=None, description=(
        "The most memory the sandbox's process tree held at once (/tmp and /scratch "
        "included), as the cgroup or the watchdog counted it."))
    peak_processes: int | None = Field(default=None, description=(
        "The most processes and threads the sandbox had at once."))

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True,
                          allow_nan=False) + "\n"


def read_reproducer_run(path: Path) -> ReproducerRun:
    """A :class:`ReproducerRun` written by ``probebench registry reproduce``."""
    try:
        size = path.stat().st_size
        if size > MAX_REPORT_BYTES:
            raise InputError(f"{path}: {size} bytes; a reproducer report is at most "
                             f"{MAX_REPORT_BYTES}")
        return ReproducerRun.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except ValidationError as exc:
        raise InputError(f"{path}: {field_problem(exc)} (not a reproducer report)") from None


def parse_metrics_lines(lines: list[str]) -> tuple[dict[str, dict[str, float | None]],
                                                   list[str]]:
    """Metrics from ``PROBEBENCH_METRICS`` lines, and a named problem for each line that
    breaks the contract (never an exception)."""
    metrics: dict[str, dict[str, float | None]] = {}
    problems: list[str] = []
    for number, line in enumerate(lines[:MAX_LINES], start=1):
        where = f"{METRICS_MARK} line {number}"
        try:
            data = json.loads(line[len(METRICS_MARK):])
        except (ValueError, RecursionError) as exc:
            problems.append(f"{where}: not JSON ({str(exc)[:120]})")
            continue
        if not isinstance(data, dict):
            problems.append(f"{where}: expected an object of tasks, got "
                            f"{type(data).__name__}")
            continue
        for task, values in data.items():
            if not isinstance(values, dict):
                problems.append(f"{where}: task {str(task)[:80]!r}: expected an object of "
                                "metrics")
                continue
            for name, value in values.items():
                if value is None:
                    metrics.setdefault(task, {})[name] = None
                elif isinstance(value, bool) or not isinstance(value, int | float) or \
                        not math.isfinite(value):
                    problems.append(f"{where}: {str(task)[:80]}.{str(name)[:80]}: expected a "
                                    f"number, got {str(value)[:40]!r}")
                else:
                    metrics.setdefault(task, {})[name] = float(value)
    return metrics, problems


def notebook_path(entry: Entry, folder: Path, repo: Path) -> Path:
    """The entry's reproducer notebook: inside its artifact folder, or a path relative to
    the repository that stays inside it."""
    rel = Path(entry.reproducer_notebook)
    if rel.is_absolute() or ".." in rel.parts:
        raise InputError(f"reproducer_notebook {entry.reproducer_notebook!r}: give a path "
                         "inside the artifact folder or the repository")
    for base in (folder, repo):
        path = base / rel
        if path.is_symlink():
            raise InputError(f"{path}: a symbolic link; give the notebook itself")
        if path.is_file() and path.resolve().is_relative_to(base.resolve()):
            return path
    raise InputError(f"reproducer notebook {entry.reproducer_notebook} not found in "
                     f"{folder} or the repository")


def _copy_tree(src: Path, dest: Path) -> None:
    for path in src.rglob("*"):
        if path.is_symlink():
            raise InputError(f"{path}: a symbolic link in a submitted folder")
    shutil.copytree(src, dest)


def sandbox_limits(timeout: int = NOTEBOOK_TIMEOUT, *, memory_gib: float | None = None,
                   time_limit: float | None = None) -> SandboxLimits:
    """The sandbox's limits for a notebook run: ``memory_gib`` for the whole process tree
    (default :class:`SandboxLimits`'s), ``time_limit`` seconds for the whole run (default
    three times the per-cell ``timeout`` plus two minutes, at most SandboxLimits's 30
    minutes)."""
    base = SandboxLimits()
    return SandboxLimits(
        wall_seconds=time_limit if time_limit is not None else
        min(timeout * 3 + 120, base.wall_seconds),
        memory_bytes=round(memory_gib * 1024**3) if memory_gib is not None else
        base.memory_bytes)


def reproduce_entry(entry_id: str, registry: Path, repo: Path, *,
                    timeout: int = NOTEBOOK_TIMEOUT,
                    limits: SandboxLimits | None = None) -> ReproducerRun:
    """Run ``entry_id``'s reproducer notebook in the sandbox on a scratch copy of its
    artifact folder (raises ``SandboxUnavailableError`` rather than run it unsandboxed, and
    ``MissingExtraError`` without the ``review`` extra)."""
    require_notebook_runner()
    entry = read_entry(entry_path(registry, entry_id))
    where = registry_artifact_problem(entry.artifact_url)
    if where:
        raise InputError(where)
    folder, _ = resolve_artifact(entry.artifact_url, repo)
    bundle = manifest(scan(folder)).sha256  # the limits of an artifact, before any copy
    if bundle != entry.artifact_sha256:
        raise InputError(f"the artifact's bundle hash {bundle} differs from the entry's "
                         f"artifact_sha256 {entry.artifact_sha256}")
    notebook = notebook_path(entry, folder, repo)
    limits = limits or sandbox_limits(timeout)
    with tempfile.TemporaryDirectory(prefix="probebench-sandbox-") as tmp:
        scratch = Path(tmp)
        _copy_tree(folder, scratch / "artifact")
        if notebook.resolve().is_relative_to(folder.resolve()):
            inner = f"{SCRATCH}/artifact/{notebook.resolve().relative_to(folder.resolve())}"
        else:  # a notebook elsewhere in the repository runs beside the artifact copy
            shutil.copy2(notebook, scratch / "artifact" / notebook.name)
            inner = f"{SCRATCH}/artifact/{notebook.name}"
        read_fd, write_fd = os.pipe()
        try:
            result = run_sandboxed(
                [*sandbox_script("notebook_runner"), inner,
                 "--timeout", str(timeout), "--result-fd", str(write_fd)],
                scratch=scratch, cwd=str(Path(inner).parent), limits=limits,
                pass_fds=[write_fd])
            os.close(write_fd)
            write_fd = -1
            with os.fdopen(read_fd, "rb") as fh:
                read_fd = -1
                raw = fh.read(MAX_REPORT_BYTES + 1)
        finally:
            for fd in (read_fd, write_fd):
                if fd >= 0:
                    os.close(fd)
    return _run_report(entry_id, entry.reproducer_notebook, raw, result)


#: a tmpfs with less than this free is full
_FULL_BELOW = 1024**2
_NO_PROCESS = ("BlockingIOError", "Resource temporarily unavailable", "can't start new thread")


def limits_named(result: SandboxResult, report: Mapping[str, Any] | None,
                 error: str | None) -> list[str]:
    """Each limit the run hit, named with its size: those the sandbox counted (memory and
    processes over the whole tree), a full ``/tmp`` or ``/scratch`` (from the runner's
    report), and those a notebook's own error shows (address space, file size, a fork
    refused)."""
    force = result.limits
    named = list(result.limits_hit)
    space = report.get("space") if report else None
    for mount in (TMP, SCRATCH):
        used_size = space.get(mount) if isinstance(space, Mapping) else None
        if isinstance(used_size, list) and len(used_size) == 2 and all(
                isinstance(v, int) for v in used_size) and used_size[1] > 0 and \
                used_size[1] - used_size[0] < _FULL_BELOW:
            named.append(f"the sandbox's {mount} is full: its limit of "
                         f"{size_text(used_size[1])} (memory, counted in the memory limit) "
                         "was reached")
    text = error or ""
    if "MemoryError" in text and force.address_space_bytes is not None:
        named.append(f"the address-space limit of {size_text(force.address_space_bytes)} per "
                     "process was reached")
    if "File too large" in text:
        named.append(f"the sandbox's largest-file limit of {size_text(force.file_bytes)} was "
                     "reached")
    if any(s in text for s in _NO_PROCESS) and not any("processes" in n for n in named):
        how = "RLIMIT_NPROC" if force.mechanism.kind == "rlimits" else force.mechanism.kind
        named.append(f"the sandbox's limit of {force.processes} processes and threads ({how}) "
                     "was reached")
    return named


def _run_report(entry_id: str, notebook: str, raw: bytes,
                result: SandboxResult) -> ReproducerRun:
    usage: dict[str, Any] = {"sandbox": result.limits.describe(),
                             "peak_memory_bytes": result.peak_memory_bytes,
                             "peak_processes": result.peak_processes}

    def failed(why: str) -> ReproducerRun:
        return ReproducerRun(entry=entry_id, notebook=notebook, ran=False, error=why,
                             metrics={}, problems=[], **usage)

    try:
        report = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_REPORT_BYTES else None
    except (UnicodeDecodeError, ValueError):
        report = None
    if not isinstance(report, dict):
        report = None
    error = None if report is None or report.get("error") is None else \
        plain_text(str(report["error"]))
    named = limits_named(result, report, error)
    if result.timed_out:
        return failed("; ".join([f"killed after the sandbox's wall-clock limit of "
                                 f"{result.limits.wall_seconds:.0f} s", *named]))
    if report is None:
        tail = result.output.strip().splitlines()
        shown = f": {plain_text(tail[-1], 300)}" if tail and not named else ""
        return failed("; ".join([*named, "the sandboxed runner reported nothing (exit "
                                 f"{result.returncode}{shown})"]))
    lines = [str(x) for x in report.get("lines", [])][:MAX_LINES]
    metrics, problems = parse_metrics_lines(lines)
    if named:
        error = "; ".join(named) + (f": {error}" if error else "")
    return ReproducerRun(entry=entry_id, notebook=notebook,
                         ran=bool(report.get("ran")),
                         error=error, metrics=metrics, problems=problems, **usage)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def plain_text(text: str, limit: int = 2000) -> str:
    """Text from the sandbox made safe to show: no terminal colours or control
    characters, at most ``limit`` characters."""
    return _CONTROL.sub("", _ANSI.sub("", text))[:limit]


def _reevaluated(task: TaskResult, name: str) -> float | None:
    values: Mapping[str, float | None] = {
        "auroc": task.auroc.value, "auroc_ci_low": task.auroc.ci_low,
        "auroc_ci_high": task.auroc.ci_high, "accuracy": task.accuracy.value,
        "ece": task.ece, "brier": task.brier, "fpr_at_99tpr": task.fpr_at_99tpr}
    return values[name]


def contract_problems(entry: Entry, run: ReproducerRun) -> list[str]:
    """Breaches of the ``PROBEBENCH_METRICS`` contract that need no re-evaluation to see:
    malformed lines, no line, undeclared tasks, unknown metrics, a declared task without
    its AUROC."""
    problems = list(run.problems)
    if not run.metrics and not problems:
        problems.append(f"prints no {METRICS_MARK} line")
    for task, metrics in sorted(run.metrics.items()):
        if task not in entry.tasks:
            problems.append(f"names task {task[:80]!r}, which the entry does not declare "
                            f"(it declares {', '.join(entry.tasks)})")
            continue
        problems += [f"{task}.{name[:80]}: not a metric of the contract (one of "
                     f"{', '.join(METRIC_NAMES)})" for name in sorted(metrics)
                     if name not in METRIC_NAMES]
    if run.metrics or not problems:
        problems += [f"{task}.auroc: not printed (every declared task needs one)"
                     for task in entry.tasks if run.metrics.get(task, {}).get("auroc") is None]
    return problems


def judge_reproduction(entry: Entry, run: ReproducerRun,
                       evaluation: Submission | None) -> tuple[bool, str]:
    """Whether the notebook reproduced probebench's re-evaluation, and the detail
    (``evaluation`` may be None only when :func:`contract_problems` already fails it)."""
    if not run.ran:
        return False, f"{run.notebook} failed: {run.error}"
    problems = contract_problems(entry, run)
    if problems or evaluation is None:
        return False, f"{run.notebook}: " + "; ".join(problems or ["no re-evaluation"])
    ours = {t.id: t for t in evaluation.tasks}
    agreed = 0
    for task, metrics in sorted(run.metrics.items()):
        if task not in ours:
            problems.append(f"{task}: probebench did not re-evaluate it")
            continue
        for name, value in sorted(metrics.items()):
            expected = _reevaluated(ours[task], name)
            if value is None or expected is None:
                continue
            if abs(value - expected) <= TOLERANCE:
                agreed += 1
            else:
                problems.append(f"{task}.{name}: printed {value:.4f}, probebench re-evaluated "
                                f"{expected:.4f} (tolerance {TOLERANCE})")
    if not agreed and not problems:
        problems.append("no printed metric could be compared")
    if problems:
        return False, f"{run.notebook}: " + "; ".join(problems)
    return True, (f"{run.notebook} ran in the sandbox; {agreed} metric(s) agree with "
                  f"probebench's re-evaluation within {TOLERANCE}")


__all__ = ["METRIC_NAMES", "NOTEBOOK_PACKAGES", "NOTEBOOK_TIMEOUT", "REVIEW_EXTRA", "TOLERANCE",
           "MissingExtraError", "ReproducerRun", "contract_problems", "judge_reproduction",
           "limits_named", "notebook_path", "parse_metrics_lines", "read_reproducer_run",
           "reproduce_entry", "require_notebook_runner", "sandbox_limits"]

