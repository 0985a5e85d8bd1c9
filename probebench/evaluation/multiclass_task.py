"""One multi-class task -> ``TaskResult``, as ``task`` is for a binary task: the same
``headline`` and item bootstrap, given class probabilities.

Accuracy and macro AUROC, per-class slices, the shifted macro AUROC and the majority and
length baselines (``multiclass``). The eval-awareness correction, transfer and
control-task selectivity are defined for binary probes only and are left out, saying so.

The gap to the baselines is the binary one's with the macro AUROC in place of the AUROC
(``baselines.baseline_gap``): the probe's macro AUROC minus the best baseline's (majority
or length, the higher macro AUROC), with a paired item bootstrap that recomputes both
macro AUROCs from the class probabilities on the same resampled items (each baseline
keeps its class probabilities per prompt, ``BaselineOut.class_scores``). A task without
a train split has no baselines, so no gap: ``beats_baselines`` is None there.

Skipped stages (``SubmitOptions.skip``) leave their fields empty as in ``task``: the
shift's note says it did not run, ``baselines`` skipped leaves none (so no gap), and a
skipped latency is absent.
"""

from __future__ import annotations

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation import multiclass as mc
from probebench.evaluation.accounting import task_latency
from probebench.evaluation.baselines import baseline_gap
from probebench.evaluation.deployment import Latency, distribution_shift, measure_cost
from probebench.evaluation.headline import Flat, headline, slice_accuracies, sub_seed
from probebench.evaluation.metrics import MetricError
from probebench.evaluation.results import (
    BaselineOut,
    FlaggedOut,
    IntervalOut,
    PromptScores,
    TaskResult,
)
from probebench.evaluation.session import Session, SubmitError
from probebench.sites import Site


def evaluate_multiclass(session: Session, task_id: str, meta: ProbeMeta,
                        weights: ProbeWeights, site: Site, classes: tuple[str, ...]
                        ) -> tuple[TaskResult, Latency | None]:
    """The result of a probe with one output per class, in ``classes``' order, on the
    multi-class task ``task_id``, and its latency."""
    data = session.task(task_id)
    spec, items = data.spec, data.test
    if [str(c) for c in weights.classes] != list(classes):
        raise SubmitError(f"task {task_id} has the classes {list(classes)}; the probe's "
                          f"outputs are {list(weights.classes)} (they must be the same, in "
                          "the same sorted order)")
    flat = Flat.of(items)
    session.say(f"{task_id}: {len(items)} items, {len(flat.prompts)} prompts, "
                f"{len(classes)} classes at {site}")
    acts = session.activations(meta.model, f"{task_id}/test", flat.prompts, site)
    proba = weights.predict_proba(acts)
    fmt = data.format
    y = mc.class_indices(fmt, flat.prompts, classes, f"task {task_id} test")
    opts = session.options
    head = headline(task_id, fmt, items, proba, classes=classes, seed=opts.seed,
                    n_resamples=opts.bootstrap)
    slices = slice_accuracies(task_id, items, head.item_scores, spec.slices, seed=opts.seed,
                              n_resamples=opts.bootstrap)
    distshift = distribution_shift(session, meta.model, task_id, flat, site,
                                   weights.predict_proba, y, flat.item_of,
                                   "macro AUROC after the fixed context")
    binary_only = "defined for binary probes only"
    # a skipped baselines stage leaves none, so no gap (the note is stages_skipped's)
    baselines = (_multiclass_baselines(session, task_id, classes)
                 if opts.runs("baselines") else {})
    predictions = PromptScores(
        prompt_ids=[p.id or str(i) for i, p in enumerate(flat.prompts)],
        items=[int(i) for i in flat.item_of], labels=[int(v) for v in y],
        probs=[float(proba[i, k]) for i, k in enumerate(y.tolist())],
        class_probs=[[float(v) for v in row] for row in proba])
    gap, beats = baseline_gap(baselines, predictions, task_id=task_id, seed=opts.seed,
                              n_resamples=opts.bootstrap)
    result = TaskResult(
        id=spec.id, version=spec.version, format=spec.format, test_sha256=spec.test_sha256,
        n_items=len(items), n_prompts=len(flat.prompts), n_labelled_prompts=len(flat.prompts),
        accuracy_name=fmt.accuracy_name, auroc=head.auroc, accuracy=head.accuracy,
        ece=head.ece, brier=head.brier, fpr_at_99tpr=None, distshift_auroc=distshift,
        evalaware_auroc=FlaggedOut(value=None, imputed=False,
                                   note=f"the eval-awareness correction is {binary_only}"),
        transfer={}, slices=slices, baselines=baselines, baseline_gap=gap,
        beats_baselines=beats, marks={},
        cost=measure_cost(session, meta, weights, flat, site), selectivity=None,
        classes=list(classes), predictions=predictions)

    return result, task_latency(session, meta, weights, flat.prompts, site)


def _multiclass_baselines(session: Session, task_id: str, classes: tuple[str, ...]
                          ) -> dict[str, BaselineOut]:
    """The majority class and a multinomial regression on length (train split)."""
    data = session.task(task_id)
    fmt, opts = data.format, session.options
    flat = Flat.of(data.test)
    y = mc.class_indices(fmt, flat.prompts, classes, f"task {task_id} test")
    train = Flat.of(data.splits.get("train", [])).prompts
    if not train:
        return {}
    y_train = mc.class_indices(fmt, train, classes, f"task {task_id} train")
    out = {}
    for name, proba in (
            ("majority", mc.majority_class_proba(y_train, len(flat.prompts), len(classes))),
            ("length", mc.length_class_proba(train, y_train, flat.prompts, len(classes),
                                             sub_seed(opts.seed, task_id, "length")))):
        try:
            auroc: IntervalOut | None = session.ci("auroc", y, proba, flat.item_of, task_id,
                                                   "baseline", name)
        except MetricError:
            auroc = None
        accuracy = session.mean_ci(mc.item_correctness(data.test, proba, y), task_id,
                                   "baseline", name, "accuracy")
        note = {"majority": "the most frequent train class",
                "length": "multinomial logistic regression on length in characters"}[name]
        out[name] = BaselineOut(auroc=auroc, accuracy=accuracy, note=note,
                                class_scores=[[float(v) for v in row] for row in proba])
    return out


__all__ = ["evaluate_multiclass"]
