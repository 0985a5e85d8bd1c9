"""Generalisation to sibling tasks: a probe evaluated on its tasks, read on the other
tasks of their family.

In the study of truth probes, a probe trained on one dataset is tested on the others
(Marks & Tegmark 2024, "The Geometry of Truth": a probe trained on ``cities`` fails on
``neg_cities``, the negated statements). A task's family is ``TaskSpec.family_key``: its
``family:`` in tasks.yaml, else its format. The families that tasks.yaml declares
(``declared_families``: some task names them in ``family:``, e.g. ``truth``, ``honesty``,
``refusal``) are datasets of one property, and every other registered task of such a
family is a **sibling** of each of its tasks (``sibling_tasks``). A family that is only a
format (``blimp``, ``syntaxgym``, ``verbs``) groups separate phenomena for display and
has no siblings: a BLiMP paradigm is no second dataset of another paradigm's property.

On each sibling (``evaluate_siblings``) the probe, unchanged and at its own site, reads
the sibling's test prompts: through the session's activation memo and disk cache under
the key the sibling's own evaluation uses (``<task>/test``), so a sibling that is also
evaluated, by this probe or another at the same site, runs the model once. Its AUROC and
95% item-bootstrap interval come from ``headline.headline_interval``, seeded as the
sibling's own headline AUROC is: the number ``submit`` reports for a probe submitted on
the sibling. ``SubmitOptions.limit`` bounds these passes as it bounds every split
(``Session.task``). A sibling that cannot be read (its files drifted, the site is
missing from its prompts, one label only, a multi-class task) is recorded with a note
and no AUROC; it never stops the submission.

The result is ``Submission.generalisation`` (``GeneralisationOut``), kept apart from the
tasks' results: its passes and time are the ``GENERALISATION`` stage of
``timing.stages``, the registry stores it in a file of its own beside the entry's
results (``registry.store.store_generalisation``), and the leaderboard shows it as each
family's matrix. No ProbeScore axis and no ranking group reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from probebench.errors import ProbebenchError, SiteError
from probebench.evaluation.headline import Flat, headline_interval
from probebench.evaluation.results import GeneralisationOut, SiblingOut
from probebench.sites import Site, check_sites
from probebench.tasks.catalog import TaskCatalog

if TYPE_CHECKING:
    from probebench.artifact.meta import ProbeMeta
    from probebench.artifact.weights import ProbeWeights
    from probebench.evaluation.session import Session

#: the stage the sibling passes and AUROCs count in (``timing.stages``)
GENERALISATION = "generalisation"
#: ``GeneralisationOut.family`` of a submission whose tasks come from several families
SEVERAL_FAMILIES = "cross-family"


def declared_families(catalog: TaskCatalog) -> set[str]:
    """The families some task of ``catalog`` declares with ``family:``."""
    return {spec.family for spec in catalog.specs.values() if spec.family is not None}


def family_tasks(catalog: TaskCatalog, family: str) -> list[str]:
    """Every task of ``catalog`` in ``family`` (``family_key``), in the tasks file's
    order."""
    return [t for t, spec in catalog.specs.items() if spec.family_key == family]


def sibling_tasks(catalog: TaskCatalog, tasks: Sequence[str]) -> dict[str, list[str]]:
    """family -> its sibling tasks: for each declared family of ``tasks``, every other
    task of ``catalog`` in it (tasks file order); families without one are left out."""
    declared = declared_families(catalog)
    out: dict[str, list[str]] = {}
    for family in dict.fromkeys(catalog.spec(t).family_key for t in tasks):
        if family not in declared:
            continue
        others = [t for t in family_tasks(catalog, family) if t not in tasks]
        if others:
            out[family] = others
    return out


def _not_measured(spec_version: int, sha256: str, n: int, why: str) -> SiblingOut:
    return SiblingOut(version=spec_version, test_sha256=sha256, auroc=None, ci=(None, None),
                      n=n, note=why)


def evaluate_sibling(session: Session, task_id: str, meta: ProbeMeta,
                     weights: ProbeWeights, site: Site) -> SiblingOut:
    """The probe on one sibling's test set: AUROC with its item-bootstrap CI, or why it
    was not measured."""
    spec = session.catalog.spec(task_id)
    try:
        data = session.task(task_id)
    except ProbebenchError as exc:  # a drifted or unreadable sibling: said, not fatal
        return _not_measured(spec.version, spec.test_sha256, 0, f"not read: {exc}")
    items = data.test
    if data.format.classes(data) is not None or not weights.is_binary:
        return _not_measured(spec.version, spec.test_sha256, len(items),
                             "a multi-class task or probe: the matrix compares binary "
                             "probes on binary tasks")
    flat = Flat.of(items)
    try:
        check_sites([site], session.model(meta.model).identity.num_layers, flat.prompts)
    except SiteError as exc:
        return _not_measured(spec.version, spec.test_sha256, len(items),
                             f"not readable at the probe's site: {exc}")
    _, y = flat.labelled()
    if len(set(y.tolist())) < 2:
        return _not_measured(spec.version, spec.test_sha256, len(items),
                             "the test set (as evaluated) has one label only: no AUROC")
    acts = session.activations_at(meta.model, f"{task_id}/test", flat.prompts, [site],
                                  stage=GENERALISATION)[site]
    probs = weights.predict_proba(acts)[:, 1]
    iv = headline_interval(task_id, items, probs, seed=session.options.seed,
                           n_resamples=session.options.bootstrap)
    return SiblingOut(version=spec.version, test_sha256=spec.test_sha256, auroc=iv.value,
                      ci=(iv.ci_low, iv.ci_high), n=len(items))


def evaluate_siblings(session: Session, tasks: Sequence[str], meta: ProbeMeta,
                      weights: ProbeWeights, site: Site) -> GeneralisationOut | None:
    """The generalisation block of a probe evaluated on ``tasks``: every sibling of
    their declared families (``sibling_tasks``), timed as the ``GENERALISATION`` stage.
    None when ``options.generalisation`` is off, in the quick profile
    (``options.quick``) or when no task has a sibling."""
    if not session.options.generalisation or session.options.quick:
        return None
    by_family = sibling_tasks(session.catalog, tasks)
    if not by_family:
        return None
    siblings: dict[str, SiblingOut] = {}
    with session.stage(GENERALISATION):
        for family, others in by_family.items():
            session.say(f"generalisation: {len(others)} sibling task(s) of family {family}")
            for task_id in others:
                siblings[task_id] = evaluate_sibling(session, task_id, meta, weights, site)
    families = list(by_family)
    return GeneralisationOut(
        family=families[0] if len(families) == 1 else SEVERAL_FAMILIES,
        trained_on=[t for t in tasks if session.catalog.spec(t).family_key in by_family],
        siblings=siblings)


__all__ = ["GENERALISATION", "SEVERAL_FAMILIES", "declared_families", "evaluate_sibling",
           "evaluate_siblings", "family_tasks", "sibling_tasks"]
