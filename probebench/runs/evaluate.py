"""Evaluate a registry entry: resolve its artifact, submit it on its tasks, score it on
each task's current sealed holdout when the key is given, store the results. The one
home of "entry -> submit -> store", used by ``probebench registry evaluate``, ``registry
publish``, the pull-request workflow and ``tools/build_reference.py``.

The sealed holdout: with the holdout key, each task's current sealed generation is
decrypted in memory and the probe scored on it (``probebench.evaluation.holdout``), and
the record stores that part apart from the compared part. Without the key, a task that
has a sealed generation is re-evaluated as usual but **nothing is stored for it**: a
keyless run never replaces or outranks a keyed one. Tasks without a sealed generation
are stored as before.

The probe on the sibling tasks of its tasks' family (``Submission.generalisation``) is
stored beside the results, in a file of its own (``registry.store.store_generalisation``),
by the same run: ``registry publish`` and ``tools/build_reference.py`` write it too. So is
the causal test of the probe's direction (``Submission.causal``, present when the session
asks for it: ``SubmitOptions.causal``, ``registry evaluate --causal``), in
``registry.store.store_causal``'s file of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probebench.artifact.checks import validate
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, ProbebenchError
from probebench.evaluation.holdout import score_holdout
from probebench.evaluation.published import no_published_baselines
from probebench.evaluation.results import HoldoutOut, Submission, stages_note
from probebench.evaluation.session import Session, limit_note
from probebench.evaluation.submit import submit
from probebench.provenance import probebench_commit
from probebench.registry.baselines import store_baselines
from probebench.registry.entry import Entry, entry_path, read_entry
from probebench.registry.guards import RegistryGuards
from probebench.registry.store import (
    precision_problems,
    refuse_dirty,
    store_causal,
    store_generalisation,
    store_submission,
)
from probebench.sites import Site
from probebench.sources.resolve import resolve_artifact
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.sealed import current_generation, open_generation


@dataclass
class EntryEvaluation:
    """What evaluating one entry produced."""

    entry: Entry
    submission: Submission
    #: results and baselines files that gained a record (empty when already stored)
    changed: list[Path]
    #: where a reduced-precision run disagrees with the stored float32 results beyond
    #: the precision policy's tolerance (empty for float32 runs)
    precision: list[str] = field(default_factory=list)
    #: task -> the probe on the task's current sealed holdout (a run with the key)
    holdouts: dict[str, HoldoutOut] = field(default_factory=dict)
    #: tasks with a sealed holdout that this run could not score (no key): re-evaluated,
    #: nothing stored
    sealed_unscored: list[str] = field(default_factory=list)


def entry_probe(registry: Path, repo: Path, entry_id: str,
                catalog: TaskCatalog) -> tuple[ProbeWeights, Site] | str:
    """The entry's validated probe and site, or why it cannot be evaluated (its
    artifact no longer resolves, hashes to the entry's ``artifact_sha256`` or
    validates)."""
    try:
        entry = read_entry(entry_path(registry, entry_id))
        folder, _ = resolve_artifact(entry.artifact_url, repo)
    except ProbebenchError as exc:
        return str(exc)
    report = validate(folder, catalog=catalog, expected_sha256=entry.artifact_sha256)
    if not report.valid or report.weights is None or report.meta is None:
        return "the artifact no longer validates: " + "; ".join(
            f"{c.name}: {c.message}" for c in report.failed())
    return report.weights, Site(report.meta.layer, report.meta.position)


def score_sealed(entry: Entry, submission: Submission, weights: ProbeWeights, site: Site,
                 session: Session, key: bytes | None
                 ) -> tuple[dict[str, HoldoutOut], list[str]]:
    """(task -> the probe on its current sealed holdout, the tasks with one that could
    not be scored for want of the key). The plaintext stays in memory."""
    scored: dict[str, HoldoutOut] = {}
    unscored: list[str] = []
    for task in submission.tasks:
        gen = current_generation(session.catalog, task.id)
        if gen is None:
            continue
        if key is None:
            unscored.append(task.id)
            continue
        opened = open_generation(session.catalog.root_of(task.id), task.id, gen, key)
        assert task.auroc.value is not None
        scored[task.id] = score_holdout(session, entry.model, weights, site, task.id,
                                        opened.items, generation=gen.generation,
                                        commitment=gen.commitment,
                                        test_auroc=task.auroc.value)
    return scored, unscored


def evaluate_entry(entry_id: str, registry: Path, repo: Path, session: Session, *,
                   store: bool = True, allow_dirty: bool = False,
                   holdout_key: bytes | None = None) -> EntryEvaluation:
    """Submit ``entry_id``'s artifact on the entry's tasks (with its declared transfer
    targets), score it on each task's current sealed holdout when ``holdout_key`` is
    given, and append the results to ``registry/results`` unless ``store`` is False
    (tasks with a sealed holdout and no key are not stored).
    The artifact must hash to the entry's ``artifact_sha256`` (checked before any model
    work). A session limited to the first items of each task (``SubmitOptions.limit``)
    is refused before anything runs: registry results cover whole test sets. So is one
    that skips stages (``SubmitOptions.skip``, ``quick``): they cover every stage. So is
    storing from a working tree with uncommitted changes (a ``+dirty`` commit) unless
    ``allow_dirty``: results name the commit that measured them.

    The run's policy is the registry's, whatever ``session.options`` say: each model's
    guard is the one ``registry/guards.yaml`` names, the latency is measured in this run
    and the task baselines are computed in it (``Session.options_for``: the session's own
    options are left as they were).
    With ``SubmitOptions.causal`` the causal test of the probe's direction runs too (the
    package's method, ``probebench.causal``, unless the options name one) and its block
    is stored beside the results (``registry.store.store_causal``)."""
    limit = session.options.limit
    if limit is not None:
        raise InputError(f"{entry_id}: a registry evaluation covers whole test sets; this "
                         f"session is {limit_note(limit)} (leave out --limit)")
    skipped = session.options.skipped()
    if skipped:
        raise InputError(f"{entry_id}: a registry evaluation runs every stage; this "
                         f"session is {stages_note(skipped)} (leave out --quick, --stages "
                         "and --skip)")
    entry = read_entry(entry_path(registry, entry_id))  # a malformed id: refused first
    if store:
        refuse_dirty(entry_id, probebench_commit(), allow_dirty=allow_dirty)
    folder, _ = resolve_artifact(entry.artifact_url, repo)
    changes: dict[str, Any] = {
        "transfer_targets": entry.transfer_targets,
        # what the registry keeps is measured and computed in this run: its latency, and
        # the task baselines it publishes (never read back from its own records)
        "reuse_latency": False,
        "published_baselines": no_published_baselines,
        # an entry of this registry is corrected by this registry's guard, whoever calls
        "guards": RegistryGuards(registry, repo, catalog=session.catalog),
    }
    if session.options.causal and session.options.causal_method is None:
        # ``SubmitOptions(causal=True)`` asks for the test; the registry's is the package's
        from probebench.causal.effect import SUBMISSION_METHOD

        changes["causal_method"] = SUBMISSION_METHOD
    with session.options_for(**changes):
        result = submit(folder, entry.tasks, session=session,
                        expected_sha256=entry.artifact_sha256)
    holdouts: dict[str, HoldoutOut] = {}
    unscored = [t.id for t in result.tasks
                if current_generation(session.catalog, t.id) is not None]
    if holdout_key is not None and unscored:
        loaded = entry_probe(registry, repo, entry_id, session.catalog)
        if isinstance(loaded, str):
            raise InputError(f"{entry_id}: {loaded}")
        holdouts, unscored = score_sealed(entry, result, *loaded, session, holdout_key)
    if unscored:
        session.say(f"{entry_id}: no holdout key, so the sealed holdout of "
                    f"{', '.join(unscored)} is skipped and nothing is stored for "
                    f"{'it' if len(unscored) == 1 else 'them'} (give --key FILE or "
                    "$PROBEBENCH_HOLDOUT_KEY)")
    precision = precision_problems(registry, entry_id, result)
    changed = (store_submission(registry, entry_id, result, allow_dirty=allow_dirty,
                                holdouts=holdouts, sealed_unscored=unscored)
               if store else [])
    if store:
        changed += store_baselines(registry, result)
        # the sibling tasks' record: beside the results, never one of them
        changed += store_generalisation(registry, entry_id, result, allow_dirty=allow_dirty)
        # the causal test of its direction (``submit --causal``): beside them too
        changed += store_causal(registry, entry_id, result, allow_dirty=allow_dirty)
    return EntryEvaluation(entry, result, changed, precision, holdouts, unscored)


__all__ = ["EntryEvaluation", "entry_probe", "evaluate_entry", "score_sealed"]
