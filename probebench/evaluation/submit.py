"""``probebench submit``: re-evaluate probe artifacts on registered tasks.

Orchestration only: validate the artifact, refuse what cannot be evaluated before any
model work, evaluate each task and assemble the ``Submission``. Where the rest lives:

* ``session``: ``SubmitOptions`` and the ``Session`` that shares loaded models, tasks,
  activations, surprisals, baselines and guards between submissions;
* ``task``: one binary task -> ``TaskResult`` (``multiclass_task`` for a multi-class one);
* ``evalaware``, ``task_baselines``, ``selectivity``, ``deployment`` (transfer, cost,
  latency): the measurements beside a task's headline;
* ``definitions`` and ``marks``: what every metric means and how it is graded.
* ``generalisation``, ``causal_stage``: after the tasks, the probe on the other tasks of
  their family and (``--causal``) its direction's causal test: blocks apart from the tasks.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from probebench.artifact.checks import validate
from probebench.artifact.meta import SPEC_VERSION
from probebench.errors import SiteError
from probebench.evaluation.accounting import (
    HashesGiven,
    expected_hashes,
    latency_prompts,
    stage_counts,
    stage_timings,
)
from probebench.evaluation.causal_stage import causal_blocks, causal_method
from probebench.evaluation.definitions import metric_definitions
from probebench.evaluation.deployment import check_transfer_targets
from probebench.evaluation.evalaware import stratified_least
from probebench.evaluation.generalisation import evaluate_siblings
from probebench.evaluation.metrics import auroc_score
from probebench.evaluation.results import (
    LimitOut,
    ProbeInfo,
    RunInfo,
    Submission,
    Timing,
)
from probebench.evaluation.session import (
    QUICK,
    Session,
    SubmitError,
    SubmitOptions,
    limit_note,
)
from probebench.evaluation.task import evaluate_task
from probebench.provenance import hardware, probebench_commit, utc_now
from probebench.sites import Site, check_sites
from probebench.tasks.catalog import TaskCatalog
from probebench.version import __version__


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("probebench", "torch", "transformers", "scikit-learn", "numpy"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


def submit(artifact: Path, tasks: Sequence[str], options: SubmitOptions | None = None, *,
           catalog: TaskCatalog | None = None, session: Session | None = None,
           expected_sha256: str | None = None) -> Submission:
    """Validate an artifact (requiring the bundle hash ``expected_sha256`` when given),
    then re-evaluate it on ``tasks`` of ``catalog`` (default: the packaged tasks); see
    ``probebench.evaluation.definitions`` for every metric.

    Nothing runs when the artifact fails a check or a task cannot be read at its site
    (``SubmitError``). ``session`` shares loaded models, tasks and activations between
    several submissions (its catalog and options are used then, not ``catalog`` and
    ``options``).

    Returns:
        a ``Submission``: ``to_json()`` is ``submission.json``, ``to_dict()`` the same
        as a dict; each task's ``predictions`` holds the probe's per-prompt
        probabilities (``probebench.load_probe(...).score_texts`` reproduces them).
    """
    if session is None:
        session = Session(catalog or TaskCatalog.default(), options or SubmitOptions())
    opts = session.options
    start = time.perf_counter()
    artifact = Path(artifact)
    report = validate(artifact, catalog=session.catalog, expected_sha256=expected_sha256)
    if not report.valid:
        failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
        raise SubmitError(f"{artifact}: invalid artifact, nothing was run ({failed})")
    assert report.meta is not None and report.weights is not None
    assert report.bundle_sha256 is not None
    meta, weights = report.meta, report.weights
    if not tasks:
        raise SubmitError("no tasks given (see `probebench tasks list`)")
    if opts.limit is not None and opts.limit < 1:
        raise SubmitError(f"limit must be at least 1 item per task; found {opts.limit}")
    skipped = opts.skipped()  # an unknown stage, or skipping activations: refused here
    site = Site(meta.layer, meta.position)
    check_transfer_targets(session)  # a bad target is refused before model work
    causal_method(session)  # so is --causal without the test's method
    for task_id in tasks:  # refuse unknown, drifted or unreadable tasks before model work
        session.catalog.spec(task_id, near=(artifact, artifact.parent))  # a forgotten --include
        data = session.task(task_id)
        controls = session.control(task_id) if data.spec.control is not None else []
        try:
            check_sites([site], session.model(meta.model).identity.num_layers,
                        [p for item in data.test for p in item.prompts] + controls)
        except SiteError as exc:
            raise SubmitError(f"the probe cannot be evaluated on task {task_id}: {exc}") \
                from None
    results, latency, reused, withheld = [], {}, {}, {}
    rates: dict[str, dict[str, float]] = {}
    remeasured: dict[str, str] = {}
    before = stage_counts(session)
    for task_id in tasks:
        result, measured = evaluate_task(session, task_id, meta, weights, site,
                                         report.bundle_sha256)
        result = session.with_control_recall(result, meta.model, weights, site)
        results.append(result)
        if measured is None:  # the latency stage was skipped (stages_skipped says so)
            continue
        if measured.ms is None:  # timed on a loaded machine: never stored
            withheld[task_id] = measured.note or "withheld"
        else:
            latency[task_id] = round(measured.ms, 3)
        if measured.reused:
            reused[task_id] = measured.measured_at
        rates[task_id] = {"measured": round(measured.matmul_gflops, 1),
                          "now": round(measured.matmul_gflops_now, 1)}
        if measured.remeasured:
            remeasured[task_id] = measured.remeasured
    # the siblings of the tasks' families: a separate record, never a result of the tasks
    generalisation = evaluate_siblings(session, tasks, meta, weights, site)
    causal = causal_blocks(session, tasks, meta, weights, site, report.bundle_sha256)
    ident = session.model(meta.model).identity
    keys = {(meta.model, t, site): t for t in tasks}
    digests = {keys[k]: d for k, d in session.baselines_sha256.items() if k in keys}
    published = {keys[k]: w for k, w in session.baselines_published.items() if k in keys}
    return Submission(
        spec_version=SPEC_VERSION, probebench_version=__version__,
        probe=ProbeInfo(id=artifact.resolve().name, bundle_sha256=report.bundle_sha256,
                        probe_type=meta.probe_type, model=meta.model, layer=meta.layer,
                        position=meta.position, license=meta.license),
        model=ident.to_dict(), device=session.model(meta.model).device, seed=opts.seed,
        bootstrap_resamples=opts.bootstrap, versions=_versions(),
        definitions=metric_definitions(), tasks=results,
        timing=Timing(latency_ms=latency, latency_prompts=latency_prompts(opts),
                      latency_reused=reused, latency_withheld=withheld,
                      latency_matmul_gflops=rates, latency_remeasured=remeasured,
                      baselines_published=published,
                      wall_seconds=round(time.perf_counter() - start, 3),
                      stages=stage_timings(session, before)),
        run=run_info(session.model(meta.model).device), baselines_sha256=digests,
        limit=None if opts.limit is None else LimitOut(items=opts.limit,
                                                       note=limit_note(opts.limit)),
        generalisation=generalisation, causal=causal, stages_skipped=skipped,
        profile=QUICK if opts.quick else None)


def run_info(device: str) -> RunInfo:
    """This run's provenance (see ``probebench.provenance``)."""
    return RunInfo(evaluated_at=utc_now(), probebench_commit=probebench_commit(),
                   hardware=hardware(device), python=platform.python_version())


def submit_many(artifacts: Sequence[Path], tasks: Sequence[str],
                options: SubmitOptions | None = None, *,
                catalog: TaskCatalog | None = None,
                expected_sha256: HashesGiven | None = None
                ) -> list[Submission]:
    """Several artifacts in one session: models, tasks and shared work are reused.

    ``expected_sha256`` requires each artifact's bundle hash, as ``submit``'s does: a
    sequence parallel to ``artifacts`` (None where none is required) or a mapping from an
    artifact's path (as given, or resolved) to its hash (artifacts it does not name are
    not checked). Every artifact is validated against its hash before any model work."""
    hashes = expected_hashes(artifacts, expected_sha256)
    session = Session(catalog or TaskCatalog.default(), options or SubmitOptions())
    for artifact, expected in zip(artifacts, hashes, strict=True):
        if expected is not None:  # a wrong hash is refused before the first model load
            report = validate(Path(artifact), catalog=session.catalog,
                              expected_sha256=expected)
            if not report.valid:
                failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
                raise SubmitError(f"{artifact}: invalid artifact, nothing was run ({failed})")
    return [submit(a, tasks, session=session, expected_sha256=h)
            for a, h in zip(artifacts, hashes, strict=True)]


# re-exported from their homes (session, headline, ...) for code written against this module
__all__ = ["Session", "SubmitError", "SubmitOptions", "auroc_score", "expected_hashes",
           "latency_prompts", "limit_note", "run_info", "stratified_least", "submit",
           "submit_many"]
