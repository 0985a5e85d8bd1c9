"""One task -> ``TaskResult`` for one probe: the binary path, step by step.

The headline (AUROC and the format's accuracy with their item-bootstrap CIs, ECE, Brier,
FPR at 99% TPR, as their definitions compute them) comes from ``headline``; then the
slices, the distribution shift (the same prompts after ``CONTEXT_FILE``), the
eval-awareness correction (``evalaware``),
transfer, cost and latency (``deployment``), the task's baselines (``task_baselines``)
and the probe's gap to the best of them (``baselines.baseline_gap``: AUROC minus the best
baseline's, paired item bootstrap, and whether its CI lies above 0), control-task
selectivity (``selectivity``) and the marks (``marks``). A multi-class task goes to
``multiclass_task``.

A stage the run leaves out (``SubmitOptions.skip``, the quick profile) leaves its fields
empty: the shift's ``FlaggedOut`` holds no value and says why, the selectivity is None,
the latency absent, and with baselines missing (``task_baselines.baselines_complete``)
the gap and ``beats_baselines`` are None: a gap to some of the baselines is no gap to
the best of them.
"""

from __future__ import annotations

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.accounting import task_latency
from probebench.evaluation.baselines import baseline_gap
from probebench.evaluation.deployment import (
    Latency,
    distribution_shift,
    measure_cost,
    measure_transfer,
)
from probebench.evaluation.evalaware import evalaware_corrected, guard_site
from probebench.evaluation.headline import Flat, headline, slice_accuracies
from probebench.evaluation.marks import mark_definitions
from probebench.evaluation.multiclass_task import evaluate_multiclass
from probebench.evaluation.results import (
    IntervalOut,
    MarkOut,
    PromptScores,
    TaskResult,
)
from probebench.evaluation.selectivity import task_selectivity
from probebench.evaluation.session import Session, SubmitError
from probebench.evaluation.task_baselines import baselines_complete, compute_baselines
from probebench.sites import Site


def _mark(metric: str, iv: IntervalOut) -> MarkOut | None:
    if iv.value is None:
        return None
    low = iv.ci_low if iv.ci_low is not None else iv.value
    high = iv.ci_high if iv.ci_high is not None else iv.value
    mark, straddles = mark_definitions()[metric].mark(iv.value, low, high)
    return MarkOut(mark=mark, straddles=straddles)


def evaluate_task(session: Session, task_id: str, meta: ProbeMeta, weights: ProbeWeights,
                  site: Site, bundle: str) -> tuple[TaskResult, Latency | None]:
    """The result of the probe with bundle hash ``bundle`` on ``task_id``, and its
    latency."""
    data = session.task(task_id)
    classes = data.format.classes(data)
    if classes is not None:
        return evaluate_multiclass(session, task_id, meta, weights, site, classes)
    if not weights.is_binary:
        raise SubmitError(f"task {task_id} is binary; the probe has {weights.n_classes} "
                          f"classes {list(weights.classes)}")
    spec = data.spec
    items = data.test
    flat = Flat.of(items)
    session.say(f"{task_id}: {len(items)} items, {len(flat.prompts)} prompts at {site}")
    # the guard's site comes from the same forward pass (it reads the same prompts)
    extra = guard_site(session, meta, bundle)
    acts = session.activations_at(meta.model, f"{task_id}/test", flat.prompts,
                                  [site] if extra is None else [site, extra])[site]
    probs = weights.predict_proba(acts)[:, 1]
    idx, y = flat.labelled()
    if len(set(y.tolist())) < 2:
        raise SubmitError(f"task {task_id}: the test set needs both labels to score AUROC")
    item_of = flat.item_of[idx]
    fmt = data.format
    head = headline(task_id, fmt, items, probs, seed=session.options.seed,
                    n_resamples=session.options.bootstrap)
    auroc, accuracy = head.auroc, head.accuracy
    slices = slice_accuracies(task_id, items, head.item_scores, spec.slices,
                              seed=session.options.seed, n_resamples=session.options.bootstrap)

    # distribution shift: the same prompts after a long neutral context
    opts = session.options
    distshift = distribution_shift(
        session, meta.model, task_id, flat, site,
        lambda shifted: weights.predict_proba(shifted)[:, 1][idx], y, item_of,
        "measured after the fixed context")

    evalaware = evalaware_corrected(session, meta, bundle, task_id, flat, probs, idx, y,
                                    auroc)
    transfer = measure_transfer(session, meta.model, weights, task_id, flat, site, acts)
    baselines = compute_baselines(session, meta.model, task_id, site)
    control = (task_selectivity(session, meta, weights, task_id, site)
               if opts.runs("selectivity") else None)

    marks: dict[str, MarkOut] = {}
    # the accuracy gets a mark when marks.yaml defines ranges for this format's accuracy
    for metric, iv_out in (("auroc", auroc), (fmt.accuracy_name, accuracy)):
        if metric not in mark_definitions():
            continue
        mark = _mark(metric, iv_out)
        if mark is not None:
            marks[metric] = mark
    ece, fpr = head.ece, head.fpr_at_99tpr
    assert fpr is not None  # a binary headline always has it
    for metric, point in (("ece", ece), ("fpr_at_99tpr", fpr)):
        m, straddles = mark_definitions()[metric].mark(point, point, point)
        marks[metric] = MarkOut(mark=m, straddles=straddles)
    latency = task_latency(session, meta, weights, flat.prompts, site)
    predictions = PromptScores(
        prompt_ids=[flat.prompts[i].id or str(i) for i in idx.tolist()],
        items=[int(i) for i in flat.item_of[idx]], labels=[int(v) for v in y],
        probs=[float(p) for p in probs[idx]])
    # from the stored (rounded) numbers, so a leaderboard build that resamples the
    # stored predictions and baseline scores draws the same gap
    gap, beats = (baseline_gap(baselines, predictions, task_id=task_id,
                               seed=session.options.seed,
                               n_resamples=session.options.bootstrap)
                  if baselines_complete(session, meta.model, task_id, site) else (None, None))
    result = TaskResult(
        id=spec.id, version=spec.version, format=spec.format, test_sha256=spec.test_sha256,
        n_items=len(items), n_prompts=len(flat.prompts), n_labelled_prompts=int(idx.size),
        accuracy_name=fmt.accuracy_name, auroc=auroc, accuracy=accuracy, ece=ece,
        brier=head.brier, fpr_at_99tpr=fpr, distshift_auroc=distshift,
        evalaware_auroc=evalaware, transfer=transfer, slices=slices, baselines=baselines,
        baseline_gap=gap, beats_baselines=beats,
        marks=marks, cost=measure_cost(session, meta, weights, flat, site),
        selectivity=control, predictions=predictions)
    return result, latency


__all__ = ["evaluate_task"]
