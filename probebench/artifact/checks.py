"""``probebench validate``: every check an artifact must pass, listed with its reason.

Checks run in a fixed order. Each needs the checks and the files it reads, nothing
more: a missing README fails ``required_files`` while the schema, safe loading and the
rest still run. A check whose inputs failed or are missing is reported as skipped
(naming what it needs), never silently passed. Nothing here imports torch, loads a
model or unpickles with plain ``pickle``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probebench.artifact import bundle
from probebench.artifact.forms import detect_forms, load_forms
from probebench.artifact.meta import (
    COMPANION_FILES,
    EVALUABLE_PROBE_TYPES,
    ProbeMeta,
    read_meta,
)
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, ProbebenchError
from probebench.jsonsafe import load_json
from probebench.licenses import check_license
from probebench.sites import POSITIONS
from probebench.tasks.catalog import TaskCatalog, include_hint
from probebench.tasks.families import get_format

REQUIRED_FILES = ("meta.yaml", *COMPANION_FILES)
PASS, FAIL, SKIP = "pass", "fail", "skip"


class CheckFailedError(Exception):
    """Raised inside a check with the reason it failed."""


@dataclass
class CheckResult:
    name: str
    status: str
    message: str
    description: str


@dataclass
class ValidationReport:
    """What ``validate`` found: one ``CheckResult`` per check, in ``CHECKS`` order, and
    what the passing checks read (the bundle hash, ``meta.yaml``, the weights)."""

    artifact: Path                   #: the artifact folder as given
    checks: list[CheckResult] = field(default_factory=list)  #: pass, fail or skip, each
    bundle_sha256: str | None = None  #: the bundle hash (None when it could not be made)
    #: every file of the bundle (what the hash covers) and its size in bytes
    file_sizes: dict[str, int] = field(default_factory=dict)
    meta: ProbeMeta | None = None
    weights: ProbeWeights | None = None

    @property
    def valid(self) -> bool:
        """True when every check passed (a skipped check is not a pass)."""
        return all(c.status == PASS for c in self.checks)

    def failed(self) -> list[CheckResult]:
        """The checks that failed, with their reasons."""
        return [c for c in self.checks if c.status == FAIL]

    def to_json(self) -> dict[str, Any]:
        """What ``probebench validate --json`` prints: validity, hash and every check."""
        return {
            "artifact": str(self.artifact),
            "valid": self.valid,
            "bundle_sha256": self.bundle_sha256,
            "checks": [{"name": c.name, "status": c.status, "message": c.message}
                       for c in self.checks],
        }


@dataclass
class _Context:
    root: Path            #: the folder the checks read: the private snapshot after limits
    original: Path        #: the artifact folder as given
    catalog: TaskCatalog | None
    expected_sha256: str | None
    scan: bundle.BundleScan | None = None
    report: ValidationReport | None = None
    dims: tuple[int, int] | None = None
    snapshots: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class _Check:
    name: str
    description: str
    needs: tuple[str, ...]
    run: Callable[[_Context], str]
    #: why the files it reads are not there (then it is skipped), or None
    missing: Callable[[_Context], str | None] = lambda ctx: None


def _files(*names: str) -> Callable[[_Context], str | None]:
    def missing(ctx: _Context) -> str | None:
        assert ctx.scan is not None
        absent = [n for n in names if n not in ctx.scan.files]
        return f"needs {', '.join(absent)} (missing)" if absent else None
    return missing


def _probe_form(ctx: _Context) -> str | None:
    assert ctx.scan is not None
    try:
        detect_forms(set(ctx.scan.files))
    except ProbebenchError as exc:
        return f"needs a complete probe form ({exc})"
    return None


def _limits(ctx: _Context) -> str:
    ctx.scan = bundle.scan(ctx.root)
    if ctx.scan.problems:
        raise CheckFailedError("; ".join(ctx.scan.problems))
    size = sum(ctx.scan.files.values())
    assert ctx.report is not None
    ctx.report.file_sizes = dict(ctx.scan.files)
    _snapshot(ctx)
    return f"{len(ctx.scan.files)} files, {size / 1024:.0f} KiB, no links or archives"


def _snapshot(ctx: _Context) -> None:
    """Read every file once into a private folder; every later check (the hash, the
    loads) reads that copy, so what is hashed is what is loaded even if the artifact
    changes meanwhile."""
    import tempfile

    assert ctx.scan is not None
    snap = Path(tempfile.mkdtemp(prefix="probebench-validate-"))
    ctx.snapshots.append(snap)
    for rel, size in ctx.scan.files.items():
        src = ctx.root / rel
        try:
            with src.open("rb") as handle:
                data = handle.read(size + 1)
        except OSError as exc:
            raise CheckFailedError(f"{rel}: cannot read ({exc.strerror})") from None
        if len(data) != size:
            raise CheckFailedError(f"{rel}: changed while it was being read ({size} bytes "
                                   f"listed, {len(data)} read); validate again")
        dest = snap / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    ctx.scan = bundle.BundleScan(root=snap, files=dict(ctx.scan.files))
    ctx.root = snap


def _required(ctx: _Context) -> str:
    assert ctx.scan is not None
    names = set(ctx.scan.files)
    missing = [n for n in REQUIRED_FILES if n not in names]
    try:
        forms = detect_forms(names)
    except ProbebenchError as exc:
        missing.append(str(exc))
        forms = []
    if missing:
        raise CheckFailedError("missing: " + "; ".join(missing))
    if ctx.scan.files["README.md"] == 0:
        raise CheckFailedError("README.md is empty")
    shown = " and ".join(f.name for f in forms)
    return f"{', '.join(REQUIRED_FILES)} and the {shown} probe form{'s' if len(forms) > 1 else ''}"


def _schema(ctx: _Context) -> str:
    assert ctx.report is not None
    try:
        ctx.report.meta = read_meta(ctx.root / "meta.yaml")
    except ProbebenchError as exc:
        raise CheckFailedError(str(exc).replace(str(ctx.root) + "/", "")) from None
    meta = ctx.report.meta
    how = "" if meta.method is None else f" ({meta.method})"
    return f"spec {meta.spec_version}, {meta.probe_type} probe{how} on {meta.model}"


def _notebooks(ctx: _Context) -> str:
    for name in ("train.ipynb", "eval.ipynb"):
        try:
            nb = load_json(ctx.root / name)
        except InputError as exc:
            raise CheckFailedError(f"{name}: not valid notebook JSON "
                                   f"({str(exc).split(': ', 1)[-1]})") from None
        if not isinstance(nb, dict) or nb.get("nbformat") != 4 or not isinstance(
                nb.get("cells"), list):
            raise CheckFailedError(f"{name}: expected a Jupyter notebook (nbformat 4 with cells)")
    return "train.ipynb and eval.ipynb are nbformat 4 notebooks"


def _hash(ctx: _Context) -> str:
    assert ctx.scan is not None and ctx.report is not None
    man = bundle.manifest(ctx.scan)
    ctx.report.bundle_sha256 = man.sha256
    notes = []
    recorded_path = ctx.original / bundle.MANIFEST_NAME
    if recorded_path.is_file():
        try:
            recorded = bundle.read_manifest_file(recorded_path)
        except ValueError as exc:
            raise CheckFailedError(str(exc)) from None
        diff = bundle.compare_manifests(recorded, man.entries)
        if diff:
            raise CheckFailedError("files differ from MANIFEST.sha256: " + "; ".join(diff))
        notes.append("matches MANIFEST.sha256")
    if ctx.expected_sha256 is not None:
        if ctx.expected_sha256 != man.sha256:
            raise CheckFailedError(f"bundle sha256 {man.sha256} differs from the expected "
                              f"{ctx.expected_sha256}")
        notes.append("matches the expected hash")
    return f"bundle sha256 {man.sha256}" + (f" ({', '.join(notes)})" if notes else "")


def _safe_load(ctx: _Context) -> str:
    assert ctx.scan is not None and ctx.report is not None
    forms = detect_forms(set(ctx.scan.files))
    try:
        ctx.report.weights = load_forms(ctx.root, forms)
    except ProbebenchError as exc:
        raise CheckFailedError(str(exc).replace(str(ctx.root) + "/", "")) from None
    w = ctx.report.weights
    layers = " -> ".join(str(n) for n in [w.n_features, *w.hidden_sizes, 1])
    names = " and ".join(f.name for f in forms)
    agree = ", which agree" if len(forms) > 1 else ""
    return f"{names} form{'s' if len(forms) > 1 else ''} loaded without running code{agree}: " \
        f"{w.probe_type} {layers}"


def _probe_type(ctx: _Context) -> str:
    assert ctx.report is not None and ctx.report.meta is not None
    declared = ctx.report.meta.probe_type
    if declared not in EVALUABLE_PROBE_TYPES:
        raise CheckFailedError(f"probe_type {declared!r} is not supported for re-evaluation "
                          f"(probebench scores {' and '.join(EVALUABLE_PROBE_TYPES)} probes)")
    weights = ctx.report.weights
    if weights is not None and weights.probe_type != declared:
        raise CheckFailedError(f"meta.yaml declares {declared!r} but the probe file holds a "
                          f"{weights.probe_type!r} probe")
    return f"{declared} probes can be re-evaluated"


def _weights(ctx: _Context) -> str:
    assert ctx.report is not None and ctx.report.weights is not None
    problems = ctx.report.weights.problems()
    if problems:
        raise CheckFailedError("; ".join(problems))
    return f"finite, scale > 0, classes {list(ctx.report.weights.classes)}"


def _model(ctx: _Context) -> str:
    from probebench.models.dimensions import model_dimensions

    assert ctx.report is not None and ctx.report.meta is not None
    meta = ctx.report.meta
    try:
        ctx.dims = model_dimensions(meta.model)
    except ProbebenchError as exc:
        raise CheckFailedError(str(exc)) from None
    layers, hidden = ctx.dims
    problems = []
    if meta.layer > layers:
        problems.append(f"layer {meta.layer} is out of range: {meta.model} has layers "
                        f"0..{layers} (0 = embeddings output)")
    if meta.position not in POSITIONS:
        problems.append(f"position {meta.position!r} is not one of {', '.join(POSITIONS)}")
    weights = ctx.report.weights
    if weights is not None and weights.n_features != hidden:
        problems.append(f"the probe reads {weights.n_features} features but {meta.model}'s "
                        f"hidden size is {hidden}")
    if problems:
        raise CheckFailedError("; ".join(problems))
    return f"site {meta.layer}:{meta.position} fits {meta.model} ({layers} layers, hidden {hidden})"


def _license(ctx: _Context) -> str:
    assert ctx.report is not None and ctx.report.meta is not None
    reason = check_license(ctx.report.meta.license)
    if reason:
        raise CheckFailedError(reason)
    return f"license {ctx.report.meta.license}"


def _metrics(ctx: _Context) -> str:
    assert ctx.report is not None and ctx.report.meta is not None
    reported = ctx.report.meta.reported_metrics
    if not reported:
        return "no reported metrics"
    try:
        catalog = ctx.catalog if ctx.catalog is not None else TaskCatalog.default()
    except ProbebenchError as exc:
        raise CheckFailedError(str(exc)) from None
    registered = catalog.test_hashes()
    problems = []
    for task, metrics in reported.items():
        owner = registered.get(metrics.test_sha256)
        if owner is None:
            problems.append(f"reported_metrics.{task}: test_sha256 {metrics.test_sha256[:12]}... "
                            f"is not registered in the tasks used, {catalog.describe()}"
                            + _unregistered_hint(ctx, catalog, task))
        elif owner != task:
            problems.append(f"reported_metrics.{task}: test_sha256 belongs to task {owner!r}")
        elif ctx.report.weights is not None:
            problems += _class_problems(catalog, task, ctx.report.weights)
    if problems:
        raise CheckFailedError("; ".join(problems))
    return f"{len(reported)} task(s), every test-set hash registered"


def _unregistered_hint(ctx: _Context, catalog: TaskCatalog, task: str) -> str:
    """Why a reported test-set hash may be unknown: the task is registered with another
    test set (another version), or it is not registered at all, and then the
    ``--include`` to add it: the nearby tasks.yaml that registers it, else a general one."""
    spec = catalog.specs.get(task)
    if spec is not None:
        return (f": task {task!r} is registered there with test_sha256 "
                f"{spec.test_sha256[:12]}... (version {spec.version}); the metrics were "
                "computed on another test set")
    # meta.yaml names the task: say which nearby tasks.yaml registers it, if one does
    near = include_hint(task, (ctx.original, ctx.original.parent),
                        known=catalog.tasks_files())
    return (f", which have no task {task!r}" + (near or
            f"; if {task!r} is your own task, add --include TASKS_YAML, the tasks file "
            "that registers it (`probebench tasks add` writes one)"))


def _class_problems(catalog: TaskCatalog, task: str, weights: ProbeWeights) -> list[str]:
    """A probe reports on a task only if its outputs fit it: two classes for a binary
    task, the task's own classes (in order) for a multi-class one."""
    spec = catalog.spec(task)
    fmt = get_format(spec.format)
    if not fmt.multiclass(spec):
        if weights.is_binary:
            return []
        return [f"reported_metrics.{task}: the task is binary; the probe has "
                f"{weights.n_classes} classes {list(weights.classes)}"]
    try:
        data = catalog.load(task)
    except ProbebenchError as exc:
        return [f"reported_metrics.{task}: {exc}"]
    classes = list(fmt.classes(data) or ())
    if [str(c) for c in weights.classes] != classes:
        return [f"reported_metrics.{task}: the task's classes are {classes}; the probe's "
                f"outputs are {list(weights.classes)}"]
    return []


CHECKS = (
    _Check("limits", "file count and sizes, no symlinks, special files or archives", (),
           _limits),
    _Check("required_files", "meta.yaml, README.md, notebooks and one probe form",
           ("limits",), _required),
    _Check("meta_schema", "meta.yaml is safe YAML matching the spec v0.0.1 schema",
           ("limits",), _schema, _files("meta.yaml")),
    _Check("notebooks", "train.ipynb and eval.ipynb are notebooks", ("limits",),
           _notebooks, _files("train.ipynb", "eval.ipynb")),
    _Check("bundle_hash", "manifest and bundle hash (and MANIFEST.sha256 if present)",
           ("limits",), _hash),
    _Check("safe_load", "the probe loads without running code", ("limits",),
           _safe_load, _probe_form),
    _Check("probe_type", "probe_type can be re-evaluated and matches the file",
           ("meta_schema", "safe_load"), _probe_type),
    _Check("weights", "finite weights, scale > 0, two or more classes, consistent shapes",
           ("safe_load",), _weights),
    _Check("model_site", "layer in range, position known, input width = hidden size",
           ("meta_schema", "safe_load"), _model),
    _Check("license", "license is a known SPDX id, custom or closed", ("meta_schema",),
           _license),
    _Check("reported_metrics", "reported metrics use test sets registered in tasks.yaml",
           ("meta_schema",), _metrics),
)


def validate(artifact: Path, *, catalog: TaskCatalog | None = None,
             expected_sha256: str | None = None) -> ValidationReport:
    """Run every check on an artifact folder; see ``CHECKS`` for the list. Reported
    metrics are checked against ``catalog``'s test-set hashes (default: the packaged
    tasks)."""
    root = Path(artifact)
    report = ValidationReport(artifact=root)
    ctx = _Context(root=root, original=root, catalog=catalog,
                   expected_sha256=expected_sha256, report=report)
    try:
        _run_checks(ctx, report)
    finally:
        for snap in ctx.snapshots:
            shutil.rmtree(snap, ignore_errors=True)
    return report


def _run_checks(ctx: _Context, report: ValidationReport) -> None:
    status: dict[str, str] = {}
    for check in CHECKS:
        blocked = [n for n in check.needs if status.get(n) != PASS]
        absent = None if blocked else check.missing(ctx)
        if blocked:
            result = CheckResult(check.name, SKIP, f"needs {', '.join(blocked)}",
                                 check.description)
        elif absent is not None:
            result = CheckResult(check.name, SKIP, absent, check.description)
        else:
            try:
                result = CheckResult(check.name, PASS, check.run(ctx), check.description)
            except CheckFailedError as exc:
                result = CheckResult(check.name, FAIL, str(exc), check.description)
        status[check.name] = result.status
        report.checks.append(result)
