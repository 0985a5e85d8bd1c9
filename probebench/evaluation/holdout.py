"""A probe scored on its task's sealed holdout, and what that says about over-fitting.

The sealed generation's items are decrypted in memory by the caller (who holds the key),
read through the session without the disk cache (their activations never reach the
disk), and scored like a test set: AUROC with the same item bootstrap
(``headline_interval``).

**Retention** is how much of the probe's test AUROC above chance survives on items it can
never have seen: ``(holdout AUROC - 0.5) / (test AUROC - 0.5)``, clamped to [0, 1] (None
when the test AUROC is not above 0.5). A probe fitted to the public test set, or to data
that leaked it, keeps its test AUROC and loses it here.

**Goodhart resistance** (ProbeScore's axis from spec 0.2.0) multiplies retention by the
**selectivity share**, the share of the re-trained probe's accuracy above chance that a
control task (Hewitt and Liang) cannot match: ``(accuracy - control accuracy) /
(accuracy - 0.5)``, clamped to [0, 1]. Both ask whether the number measures the property
rather than something that merely predicts it on the items at hand: unseen items, and
labels that only memorised words could fit. A task whose control is degenerate (no
selectivity) is scored on retention alone, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.headline import Flat, headline_interval
from probebench.evaluation.power import items_drop
from probebench.evaluation.results import HoldoutOut, SelectivityOut
from probebench.evaluation.session import Session
from probebench.sites import Site
from probebench.tasks.anatomy import Item


def clamp01(x: float) -> float:
    return min(1.0, max(0.0, x))


def retention(holdout_auroc: float, test_auroc: float) -> float | None:
    """Share of the test AUROC above chance that survives on the holdout.

    >>> round(retention(0.8, 0.9), 6), retention(0.95, 0.9), retention(0.6, 0.5)
    (0.75, 1.0, None)
    """
    if test_auroc <= 0.5:
        return None
    return clamp01((holdout_auroc - 0.5) / (test_auroc - 0.5))


def selectivity_share(sel: SelectivityOut | None) -> float | None:
    """Share of the re-trained probe's accuracy above chance that the control task
    cannot match; None without a measured selectivity (a degenerate control, a task
    without one).

    >>> from probebench.evaluation.results import IntervalOut as I
    >>> iv = lambda v: I(value=v, ci_low=v, ci_high=v, resamples=1, dropped=0)
    >>> s = SelectivityOut(accuracy=iv(0.9), control_accuracy=iv(0.7),
    ...                    selectivity=iv(0.2), control_positive_rate=0.5, note="")
    >>> round(selectivity_share(s), 6)
    0.5
    """
    if sel is None or sel.selectivity.value is None or sel.accuracy.value is None:
        return None
    above = sel.accuracy.value - 0.5
    if above <= 0:
        return 0.0
    return clamp01(sel.selectivity.value / above)


def goodhart_value(retained: float | None,
                   share: float | None) -> tuple[float | None, str]:
    """(the Goodhart-resistance value, how it was made): retention x selectivity share;
    retention alone when the selectivity is not measured; None without a retention."""
    if retained is None:
        return None, "no retention: the probe's test AUROC is not above 0.5"
    if share is None:
        return retained, "retention on the sealed holdout (selectivity not measured)"
    return retained * share, "retention on the sealed holdout x selectivity share"


def score_holdout(session: Session, model: str, weights: ProbeWeights, site: Site,
                  task_id: str, items: Sequence[Item], *, generation: int,
                  commitment: str, test_auroc: float) -> HoldoutOut:
    """The probe on a sealed generation's items (decrypted by the caller), its
    activations kept in memory only."""
    flat = Flat.of(items)
    acts = session.activations_at(model, f"{task_id}/sealed-g{generation}", flat.prompts,
                                  [site], disk_cache=False)[site]
    probs = weights.predict_proba(acts)[:, 1]
    auroc = headline_interval(task_id, items, probs, seed=session.options.seed,
                              n_resamples=session.options.bootstrap)
    idx, _ = flat.labelled()
    assert auroc.value is not None
    drop = items_drop(items)
    return HoldoutOut(generation=generation, commitment=commitment, n_items=len(items),
                      n_labelled_prompts=len(idx), auroc=auroc, test_auroc=test_auroc,
                      retention=retention(auroc.value, test_auroc),
                      minimum_detectable_drop=drop)


__all__ = ["HoldoutOut", "clamp01", "goodhart_value", "retention", "score_holdout",
           "selectivity_share"]
