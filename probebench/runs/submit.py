"""Re-evaluate artifacts as ``probebench submit`` does: the public ``probebench.submit``.

``probebench.evaluation.submit`` re-evaluates an artifact with whatever guard lookup and
published baselines its options carry, and reads no registry. This module owns the run's
policy, the one the command line applies too (``cli/submit.py`` only parses options and
calls ``submit_many``):

* **the registry** is the one given (a folder, a built leaderboard or the URL of its
  ``registry.json``), else ``$PROBEBENCH_REGISTRY``, else the checkout's ``registry/``
  (of ``repo``, default the checkout enclosing the current folder), else the published
  leaderboard (``registry.mirror.open_registry``); the published one is asked for only
  when the guard is wanted from the registry, never for the baselines alone;
* **the eval-awareness guard** of the probe's model is the one the registry's
  ``guards.yaml`` names (``guard="registry"``), a given guard folder, or none
  (``guard=None``); when none is used the corrected AUROC is imputed and its note says
  why: the registry names none, the registry could not be reached, or no guard was asked
  for;
* **published baselines**: a task's baselines the registry stores for exactly this run's
  inputs are read instead of computed (``compute_baselines=True`` computes them);
* **outputs**: given ``Outputs`` (or a folder), ``submission.json``, REPORT.md and the
  optional samples file are written atomically, the samples file first (a path that cannot
  be written stops the rest).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from probebench.errors import InputError
from probebench.evaluation.definitions import EVALAWARE_IMPUTE
from probebench.evaluation.guards import Guard, GuardLookup, NoGuards, fixed_guard
from probebench.evaluation.published import BaselineLookup, no_published_baselines
from probebench.evaluation.results import Submission
from probebench.evaluation.session import SubmitOptions
from probebench.tasks.catalog import TaskCatalog

if TYPE_CHECKING:  # the mirror's HTTP client loads only when a registry is read
    from probebench.registry.mirror import RegistrySource

#: ``guard=`` value: each model's guard as the registry's ``guards.yaml`` names it
FROM_REGISTRY: Literal["registry"] = "registry"
#: the lookup of ``guard=None`` (``--no-guard``): the imputed correction says so
NO_GUARD_ASKED = NoGuards("no guard asked for (--no-guard)")
#: at most this much of why the registry was unreachable goes into the imputed note
_REASON_CHARS = 300
#: the files ``Outputs.in_folder`` names
SUBMISSION_FILE, REPORT_FILE = "submission.json", "REPORT.md"


@dataclass(frozen=True)
class Outputs:
    """Where one submission's files go: ``submission.json``, REPORT.md and, when
    ``samples`` is set, one JSON line per labelled test prompt."""

    submission: Path
    report: Path
    samples: Path | None = None

    @classmethod
    def in_folder(cls, folder: str | Path, samples: str | None = None) -> Outputs:
        """``folder/submission.json``, ``folder/REPORT.md`` and ``folder/<samples>``."""
        folder = Path(folder)
        return cls(folder / SUBMISSION_FILE, folder / REPORT_FILE,
                   None if samples is None else folder / samples)

    def files(self) -> list[Path]:
        """The paths written, in the order named (the samples file when set)."""
        return [self.submission, self.report, *([self.samples] if self.samples else [])]


@dataclass(frozen=True)
class RunPolicy:
    """What a submission run reads from the registry, as ``resolve_policy`` decided it:
    the lookups set into ``SubmitOptions`` and where they came from (None: no registry)."""

    guards: GuardLookup
    published_baselines: BaselineLookup
    source: RegistrySource | None


def resolve_policy(*, registry: str | Path | None = None, registry_sha256: str | None = None,
                   guard: Path | Literal["registry"] | None = FROM_REGISTRY,
                   compute_baselines: bool = False, repo: Path | None = None,
                   catalog: TaskCatalog | None = None, quiet: bool = False) -> RunPolicy:
    """The guard lookup and published baselines of a run (the module docstring's order).

    Raises:
        InputError: ``registry`` was given and cannot be read (a registry found by
            default that cannot be read only makes the guard imputed, with the reason).
    """
    from probebench.registry.mirror import open_registry

    wants_guards = guard == FROM_REGISTRY
    source, unreachable = None, None
    if wants_guards or not compute_baselines:
        try:
            # only for baselines: never the published registry unasked
            source = open_registry(registry, sha256=registry_sha256, start=repo,
                                   published=wants_guards)
            if wants_guards:
                source.ensure_guards()
        except InputError as exc:
            from probebench.registry.signing import SignatureError

            # a registry that answers with a bad signature is an attack or a broken
            # publish, never "unreachable": refused even when found by default
            if registry is not None or isinstance(exc, SignatureError):
                raise
            unreachable = str(exc)
    guards: GuardLookup
    if guard is None:
        guards = NO_GUARD_ASKED
    elif guard != FROM_REGISTRY:
        folder = Path(guard)
        guards = fixed_guard(Guard(folder, folder.name))
    elif source is None:
        # the reason can quote a mirror's or a path's text: control and bidi characters
        # escaped (the one sanitiser) before it reaches submission.json and REPORT.md
        from probebench.safetext import visible

        quoted = visible(unreachable or "")[:_REASON_CHARS]
        guards = NoGuards(f"registry unreachable ({quoted})")
        print(f"probebench: no registry to take the eval-awareness guard from ({quoted}); "
              f"the corrected AUROC is imputed as {EVALAWARE_IMPUTE} x AUROC and flagged "
              "(give --registry, or --guard)", file=sys.stderr)
    else:
        from probebench.registry.guards import RegistryGuards

        guards = RegistryGuards(source.registry, source.repo, catalog=catalog,
                                declared=None if source.index is None else
                                dict(source.index.guards))
    published: BaselineLookup = no_published_baselines
    if source is not None and not compute_baselines:
        from probebench.registry.baselines import RegistryBaselines

        published = RegistryBaselines(source.registry, source.repo,
                                      ensure=source.ensure_baselines,
                                      origin=source.origin())
    if source is not None and not quiet:
        print(f"probebench: guards and published baselines from the {source.describe()}",
              file=sys.stderr)
    return RunPolicy(guards, published, source)


def submit(artifact: str | Path, tasks: Sequence[str], options: SubmitOptions | None = None,
           *, catalog: TaskCatalog | None = None, registry: str | Path | None = None,
           registry_sha256: str | None = None,
           guard: Path | Literal["registry"] | None = FROM_REGISTRY,
           compute_baselines: bool = False, outputs: Outputs | str | Path | None = None,
           repo: Path | None = None, expected_sha256: str | None = None) -> Submission:
    """Re-evaluate one artifact on ``tasks`` exactly as ``probebench submit`` does.

    Args:
        artifact: the artifact folder.
        tasks: task ids of ``catalog`` (default: the packaged tasks).
        options: seed, bootstrap, device, ``limit``, ...; its ``guards`` and
            ``published_baselines`` are replaced by the registry policy below (call
            ``probebench.evaluation.submit.submit`` to pass lookups of your own).
        registry: where the guard and the published baselines come from (a folder holding
            ``probes/``, a built leaderboard or the URL of its ``registry.json``); default:
            ``$PROBEBENCH_REGISTRY``, the checkout's ``registry/`` (of ``repo``), the
            published leaderboard.
        registry_sha256: pin a leaderboard's or URL's ``registry.json``.
        guard: ``"registry"`` (the registry's guard of the model), a guard artifact folder,
            or None (no guard: the corrected AUROC is imputed and says so).
        compute_baselines: compute each task's baselines even when the registry publishes
            them for exactly this run's inputs.
        outputs: where to write ``submission.json``, REPORT.md and the samples file (an
            ``Outputs``, or a folder for ``Outputs.in_folder``); None writes nothing.
        repo: the checkout whose ``registry/`` is the default (default: the one enclosing
            the current folder).
        expected_sha256: the bundle hash the artifact must have (a registry entry's
            ``artifact_sha256``), checked before any model work.

    Returns:
        the ``Submission`` (``to_json()`` is what ``submission.json`` holds).
    """
    return _run([(Path(artifact), expected_sha256)], tasks, options, catalog=catalog,
                registry=registry, registry_sha256=registry_sha256, guard=guard,
                compute_baselines=compute_baselines,
                outputs=None if outputs is None else [outputs], repo=repo)[0]


def submit_many(artifacts: Sequence[str | Path], tasks: Sequence[str],
                options: SubmitOptions | None = None, *, catalog: TaskCatalog | None = None,
                registry: str | Path | None = None, registry_sha256: str | None = None,
                guard: Path | Literal["registry"] | None = FROM_REGISTRY,
                compute_baselines: bool = False,
                outputs: Sequence[Outputs | str | Path] | None = None,
                repo: Path | None = None) -> list[Submission]:
    """Several artifacts in one session (models, tasks and shared work are loaded once),
    under the policy of ``submit``; ``outputs``, when given, has one entry per artifact.
    Every output path is checked before any model work."""
    return _run([(Path(a), None) for a in artifacts], tasks, options, catalog=catalog,
                registry=registry, registry_sha256=registry_sha256, guard=guard,
                compute_baselines=compute_baselines, outputs=outputs, repo=repo)


def _run(artifacts: Sequence[tuple[Path, str | None]], tasks: Sequence[str],
         options: SubmitOptions | None, *, catalog: TaskCatalog | None,
         registry: str | Path | None, registry_sha256: str | None,
         guard: Path | Literal["registry"] | None, compute_baselines: bool,
         outputs: Sequence[Outputs | str | Path] | None, repo: Path | None
         ) -> list[Submission]:
    from probebench.evaluation.session import Session
    from probebench.evaluation.submit import submit as evaluate

    folders = [a for a, _ in artifacts]
    targets = None if outputs is None else [
        o if isinstance(o, Outputs) else Outputs.in_folder(o) for o in outputs]
    if targets is not None:
        if len(targets) != len(folders):
            raise InputError(f"{len(folders)} artifacts and {len(targets)} outputs: give "
                             "one output per artifact")
        check_outputs(targets)
    catalog = catalog or TaskCatalog.default()
    opts = options or SubmitOptions()
    policy = resolve_policy(registry=registry, registry_sha256=registry_sha256, guard=guard,
                            compute_baselines=compute_baselines, repo=repo, catalog=catalog,
                            quiet=not opts.progress)
    opts = dataclasses.replace(opts, guards=policy.guards,
                               published_baselines=policy.published_baselines)
    if opts.causal and opts.causal_method is None:  # evaluation cannot import causal
        from probebench.causal.effect import SUBMISSION_METHOD

        opts = dataclasses.replace(opts, causal_method=SUBMISSION_METHOD)
    session = Session(catalog, opts)
    results = [with_registry(evaluate(folder, tasks, session=session,
                                      expected_sha256=expected), policy.source)
               for folder, expected in artifacts]
    if targets is not None:
        for result, target in zip(results, targets, strict=True):
            write_outputs(result, target, catalog)
    return results


def with_registry(result: Submission, source: RegistrySource | None) -> Submission:
    """``result`` naming the registry it read (``timing.registry``), when one was."""
    if source is None or result.timing is None:
        return result
    from probebench.evaluation.results import RegistryRef

    ref = RegistryRef.model_validate(source.reference())
    return result.model_copy(update={"timing": result.timing.model_copy(
        update={"registry": ref})})


def check_outputs(targets: Sequence[Outputs]) -> None:
    """Refuse, before any model work, a samples path that cannot be a file."""
    from probebench.evaluation.samples import samples_path_problem

    for target in targets:
        if target.samples is not None:
            problem = samples_path_problem(target.samples)
            if problem is not None:
                raise InputError(f"samples file: {problem}")


def write_outputs(result: Submission, outputs: Outputs, catalog: TaskCatalog) -> None:
    """Write ``result``'s files: the samples first (a path that cannot be written stops
    the rest), then ``submission.json`` and REPORT.md, each atomically. REPORT.md's most
    confident errors and the samples quote the prompts' texts from ``catalog``."""
    from probebench.evaluation.report import render_report
    from probebench.evaluation.samples import sample_records, write_samples
    from probebench.hashing import atomic_write_bytes

    records = sample_records(result, catalog)
    text = render_report(result, samples=records).encode("utf-8")
    if outputs.samples is not None:
        write_samples(outputs.samples, records)
    atomic_write_bytes(outputs.submission, result.to_json().encode("utf-8"))
    atomic_write_bytes(outputs.report, text)


__all__ = ["FROM_REGISTRY", "NO_GUARD_ASKED", "Outputs", "RunPolicy", "check_outputs",
           "resolve_policy", "submit", "submit_many", "write_outputs"]
