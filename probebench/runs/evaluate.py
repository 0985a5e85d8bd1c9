"""Evaluate a registry entry: resolve its artifact, submit it on its tasks, store the
results. The one home of "entry -> submit -> store", used by ``probebench registry
evaluate``, the pull-request workflow and ``tools/build_reference.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from probebench.errors import InputError
from probebench.evaluation.results import Submission
from probebench.evaluation.session import Session, limit_note
from probebench.evaluation.submit import submit
from probebench.provenance import probebench_commit
from probebench.registry.baselines import store_baselines
from probebench.registry.entry import Entry, entry_path, read_entry
from probebench.registry.store import precision_problems, refuse_dirty, store_submission
from probebench.sources.resolve import resolve_artifact


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


def evaluate_entry(entry_id: str, registry: Path, repo: Path, session: Session, *,
                   store: bool = True, allow_dirty: bool = False) -> EntryEvaluation:
    """Submit ``entry_id``'s artifact on the entry's tasks (with its declared transfer
    targets) and append the results to ``registry/results`` unless ``store`` is False.
    The artifact must hash to the entry's ``artifact_sha256`` (checked before any model
    work). A session limited to the first items of each task (``SubmitOptions.limit``)
    is refused before anything runs: registry results cover whole test sets. So is
    storing from a working tree with uncommitted changes (a ``+dirty`` commit) unless
    ``allow_dirty``: results name the commit that measured them."""
    limit = session.options.limit
    if limit is not None:
        raise InputError(f"{entry_id}: a registry evaluation covers whole test sets; this "
                         f"session is {limit_note(limit)} (leave out --limit)")
    if store:
        refuse_dirty(entry_id, probebench_commit(), allow_dirty=allow_dirty)
    entry = read_entry(entry_path(registry, entry_id))
    folder, _ = resolve_artifact(entry.artifact_url, repo)
    targets = session.options.transfer_targets
    session.options.transfer_targets = entry.transfer_targets
    try:
        result = submit(folder, entry.tasks, session=session,
                        expected_sha256=entry.artifact_sha256)
    finally:
        session.options.transfer_targets = targets
    precision = precision_problems(registry, entry_id, result)
    changed = (store_submission(registry, entry_id, result, allow_dirty=allow_dirty)
               if store else [])
    if store:
        changed += store_baselines(registry, result)
    return EntryEvaluation(entry, result, changed, precision)


__all__ = ["EntryEvaluation", "evaluate_entry"]
