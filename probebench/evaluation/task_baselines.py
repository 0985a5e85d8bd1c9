"""A binary task's baselines in a session: what ``baselines`` defines, computed from the
session's activations and the model's own scores (through the on-disk cache), once per
(model, task, site) and identical for every entry there.

Each baseline with an AUROC keeps its score of every labelled test prompt, in the order
of the result's predictions (``BaselineOut.scores``), for the gap to the probe
(``baselines.baseline_gap``). The multi-class baselines are ``multiclass_task``'s.

The model's own scores (the surprisal baseline, the own answer under a task's
``readout``) go through the on-disk cache of model scores (``Session.lm_scores``), keyed
by the texts and the rule's version (``lm_scores.MEAN_LOG_PROB_VERSION``,
``lm_scores.ANSWER_VERSION``).

A run that skips stages (``SubmitOptions.skip``) still reads the registry's published
baselines for exactly its inputs (they cost nothing); otherwise ``baselines`` skipped
computes none, and ``surprisal`` or ``random-init`` skipped leaves those baselines
without numbers, their notes saying why. A partial set is cached under its own key and
never named by ``baselines_sha256``, which names the complete set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probebench.errors import InputError
from probebench.evaluation import baselines as bl
from probebench.evaluation.headline import Flat, labelled, sub_seed
from probebench.evaluation.lm_scores import (
    ANSWER_VERSION,
    MEAN_LOG_PROB_VERSION,
    answer_log_odds,
    mean_log_probs,
)
from probebench.evaluation.metrics import MetricError
from probebench.evaluation.published import no_published_baselines
from probebench.evaluation.results import BaselineOut, IntervalOut
from probebench.evaluation.session import BASELINES, SCORING_BATCH, SURPRISAL, Session
from probebench.hashing import sha256_json
from probebench.models.loading import LoadedModel, random_init_resolved
from probebench.models.surprisal import SCORING_VERSION
from probebench.prompts import Prompt
from probebench.sites import Site

#: the baselines' code version, part of their disk-cache key: raise it whenever what
#: ``compute_baselines`` returns for the same inputs changes
BASELINES_VERSION = 1


def compute_baselines(session: Session, model: str, task_id: str, site: Site
                      ) -> dict[str, BaselineOut]:
    """The task's baselines on ``model`` at ``site``: computed once per (task, model,
    site) and identical for every entry there, whatever its architecture (see
    ``baselines``)."""
    key = (model, task_id, site)
    if key in session.baselines_published \
            and session.options.published_baselines is no_published_baselines:
        # read from the registry earlier in this session; now they must be computed
        session.baseline_memo.pop(key, None)
        session.baselines_published.pop(key)
    if key in session.baseline_memo:
        return session.baseline_memo[key]
    with session.stage(BASELINES):
        out = _cached(session, model, task_id, site)
    session.baseline_memo[key] = out
    return out


#: the stages computing a binary task's baselines runs (``SubmitOptions.skip`` names)
_BASELINE_STAGES = ("baselines", "surprisal", "random-init")


def baselines_complete(session: Session, model: str, task_id: str, site: Site) -> bool:
    """Whether the task's baselines are all there: read from the registry's published
    record, or computed with none of their stages (``baselines``, ``surprisal``,
    ``random-init``) skipped."""
    opts = session.options
    return ((model, task_id, site) in session.baselines_published
            or all(opts.runs(stage) for stage in _BASELINE_STAGES))


def baselines_inputs(session: Session, model: str, task_id: str, site: Site
                     ) -> dict[str, object]:
    """Every input the task's baselines depend on: the model (and its random-init copy),
    the items of the splits they read, the site, the seed and bootstrap, and the code's
    versions. Its SHA-256 (``Submission.baselines_sha256``) names them in the registry;
    the device is left out (float32 results compare across devices, METHODOLOGY.md)."""
    data = session.task(task_id)
    opts = session.options
    resolved = session.model(model)
    inputs: dict[str, object] = {
        "kind": "task-baselines", "version": BASELINES_VERSION, "task": task_id,
        "model": resolved.identity.to_dict(),
        "random_init": random_init_resolved(
            resolved, sub_seed(opts.seed, "random-init")).identity.to_dict(),
        "items_sha256": sha256_json({
            name: [item.record() for item in data.splits.get(name, [])]
            for name in ("test", "train")}),
        "format": data.format.name, "scoring": SCORING_VERSION,
        "site": str(site), "seed": opts.seed, "bootstrap": opts.bootstrap}
    # only where they apply, so the inputs (and the registry's published baselines) of
    # every other task stay as they were
    if data.format.single_prompt_surprisal:
        inputs["statement_surprisal"] = MEAN_LOG_PROB_VERSION
    if data.spec.readout is not None:
        inputs["readout"] = {**data.spec.readout.model_dump(mode="json"),
                             "version": ANSWER_VERSION}
    return inputs


def _cached(session: Session, model: str, task_id: str, site: Site
            ) -> dict[str, BaselineOut]:
    resolved = session.model(model)
    opts = session.options
    if resolved.identity.dtype != "float32":
        # in reduced precision the batch budget moves the activations beyond the contract
        return _compute(session, model, task_id, site) if opts.runs("baselines") else {}
    inputs = baselines_inputs(session, model, task_id, site)
    digest = sha256_json(inputs)
    published = opts.published_baselines(task_id, resolved.identity.name, str(site), digest)
    if published is not None:
        # the registry's record for exactly these inputs: neither model is run
        session.baselines_sha256[(model, task_id, site)] = digest
        session.baselines_published[(model, task_id, site)] = published.where
        session.say(f"{BASELINES} of {task_id} at {site}: the registry's ({published.where})")
        return dict(published.baselines)
    if not opts.runs("baselines"):
        session.say(f"{BASELINES} of {task_id} at {site}: none published for this run's "
                    f"inputs, and {opts.not_run('baselines')}")
        return {}
    skipped = sorted(s for s in _BASELINE_STAGES if not opts.runs(s))
    if not skipped:  # the digest names the complete set only
        session.baselines_sha256[(model, task_id, site)] = digest
    # the disk cache's key adds the device (a hit loads neither model), and the stages
    # left out, so that a partial set never passes for the complete one
    stored = session.cached_result(
        {**inputs, "device": resolved.device, **({"skipped": skipped} if skipped else {})},
        lambda: {name: b.model_dump(mode="json") for name, b in
                 _compute(session, model, task_id, site).items()},
        what=f"{BASELINES} of {task_id} at {site}")
    return {name: BaselineOut.model_validate(b) for name, b in stored.items()}


def _compute(session: Session, model: str, task_id: str, site: Site
             ) -> dict[str, BaselineOut]:
    data = session.task(task_id)
    fmt = data.format
    flat = Flat.of(data.test)
    idx, y = flat.labelled()
    opts = session.options
    out: dict[str, BaselineOut] = {}

    def interval(values: Sequence[float | None], name: str) -> IntervalOut:
        return session.mean_ci(values, task_id, "baseline", name, "accuracy")

    def score(name: str, s: np.ndarray, threshold: float | None = 0.5,
              note: str | None = None) -> BaselineOut:
        try:
            auroc = session.ci("auroc", y, s[idx], flat.item_of[idx], task_id, "baseline",
                               name)
        except MetricError:
            auroc = None
        acc = interval(fmt.item_scores(data.test, s, flat.item_of, threshold), name)
        # the score of every labelled prompt, in the order of the result's predictions:
        # the gap to a probe is resampled on the same items (``baselines.gap_interval``)
        return BaselineOut(auroc=auroc, accuracy=acc, note=note or bl.NOTES[name],
                           scores=[float(v) for v in s[idx]])

    train_items = data.splits.get("train", [])
    train = Flat.of(train_items)
    out["majority"] = score("majority", bl.majority_scores(train.prompts, flat.prompts))
    if train.prompts:
        seed = sub_seed(opts.seed, task_id, "length")
        out["length"] = score("length", bl.length_scores(train.prompts, flat.prompts, seed))
        # an even spread of the train items, at most RANDOM_FEATURES_PROMPTS prompts:
        # the random model's forward pass is the cost, and a baseline needs no more
        step = -(-len(train.prompts) // bl.RANDOM_FEATURES_PROMPTS)
        sample = Flat.of(train_items[::step])
        t_idx, t_y = labelled(sample.prompts)
        if len(set(t_y.tolist())) == 2 and not opts.runs("random-init"):
            out["random_features"] = _not_run(session, "random-init")
        elif len(set(t_y.tolist())) == 2:
            train_x = session.random_activations(model, f"{task_id}/train-sample",
                                                 sample.prompts, site)[t_idx]
            test_x = session.random_activations(model, f"{task_id}/test", flat.prompts, site)
            session.release(model, random_init=True)  # its prompts are read
            rf = bl.random_feature_scores(train_x, t_y, test_x,
                                          sub_seed(opts.seed, task_id, "random"))
            out["random_features"] = score("random_features", rf)
    # the model's own score needs a causal LM: an encoder (e.g. MiniLM) has none
    ident = session.model(model).identity
    causal = ident.architecture == "causal"
    own_scores = opts.runs("surprisal")  # the model's own scoring passes
    if causal and not own_scores and (fmt.minimal_pairs or fmt.single_prompt_surprisal):
        out["surprisal"] = _not_run(session, "surprisal")
    elif fmt.minimal_pairs and causal:
        own = own_item_scores(session, model, task_id)
        if own is not None:  # the format's own protocol (SyntaxGym: region predictions)
            out["surprisal"] = BaselineOut(auroc=None, accuracy=interval(own, "surprisal"),
                                           note=fmt.model_baseline_note)
        else:
            s = session.surprisal_scores(model, task_id, flat.prompts)
            out["surprisal"] = score("surprisal", s, threshold=None)
    elif fmt.single_prompt_surprisal and causal:
        # higher log-probability -> label 1, as it comes: never flipped on the test set
        s = statement_log_probs(session, model, task_id, flat.prompts)
        out["surprisal"] = score("surprisal", s, threshold=None,
                                 note=bl.STATEMENT_SURPRISAL_NOTE)
    if data.spec.readout is not None:
        if causal and not own_scores:
            out["own_answer"] = _not_run(session, "surprisal")
        elif causal:
            s = own_answer_scores(session, model, task_id, flat.prompts)
            out["own_answer"] = score("own_answer", s, threshold=0.0)
        else:
            out["own_answer"] = BaselineOut(
                auroc=None, accuracy=None,
                note=bl.own_answer_not_applicable(ident.name, ident.architecture))
    return out


def _not_run(session: Session, stage: str) -> BaselineOut:
    """A baseline whose stage was skipped: no numbers, and the note says so."""
    return BaselineOut(auroc=None, accuracy=None, note=session.options.not_run(stage))


def statement_log_probs(session: Session, model: str, task_id: str,
                        prompts: Sequence[Prompt]) -> np.ndarray:
    """The mean ``log2 P`` per token of each prompt under ``model``
    (``lm_scores.mean_log_probs``: the surprisal baseline of single statements), through
    the on-disk cache of model scores."""
    texts = [p.text for p in prompts]
    scoring = {"kind": "mean_log_probs", "version": MEAN_LOG_PROB_VERSION,
               "rule": SCORING_VERSION, "start_token": None,
               "texts_sha256": sha256_json(texts)}
    scores = session.lm_scores(model, scoring, len(prompts), lambda lm: mean_log_probs(
        lm, prompts, max_batch_size=SCORING_BATCH, progress=session.options.progress,
        desc=f"{SURPRISAL} {task_id}"), texts=texts)
    assert scores is not None
    return scores


def own_answer_scores(session: Session, model: str, task_id: str,
                      prompts: Sequence[Prompt]) -> np.ndarray:
    """The model's own answer on each prompt under the task's ``readout``
    (``lm_scores.answer_log_odds``: log P(positive) - log P(negative), natural
    logarithms), through the on-disk cache of model scores."""
    readout = session.task(task_id).spec.readout
    if readout is None:
        raise InputError(f"task {task_id}: no readout in tasks.yaml; the own-answer baseline "
                         "needs one (kind: answer, suffix, positive, negative)")
    texts = [p.text for p in prompts]
    scoring = {"kind": "answer_log_odds", "version": ANSWER_VERSION,
               "rule": SCORING_VERSION, "start_token": None,
               "readout": readout.model_dump(mode="json"),
               "texts_sha256": sha256_json(texts)}
    scores = session.lm_scores(model, scoring, len(prompts), lambda lm: answer_log_odds(
        lm, prompts, readout, max_batch_size=SCORING_BATCH,
        progress=session.options.progress, desc=f"own answer {task_id}"),
        texts=[t + readout.suffix for t in texts])
    assert scores is not None
    return scores


def own_item_scores(session: Session, model: str, task_id: str) -> list[float | None] | None:
    """The format's own protocol on ``model`` (``TaskFormat.model_item_scores``),
    through the on-disk cache; None when the format has none (then the surprisal
    baseline applies). A missing item score is stored as NaN."""
    data = session.task(task_id)
    fmt, items = data.format, data.test
    scoring = {"kind": "model_item_scores", "format": fmt.name,
               "version": fmt.model_scores_version, "rule": SCORING_VERSION,
               "items_sha256": sha256_json([item.record() for item in items])}

    def compute(lm: LoadedModel) -> np.ndarray | None:
        own = fmt.model_item_scores(lm, items, progress=session.options.progress)
        return None if own is None else np.array(
            [np.nan if v is None else v for v in own], dtype=np.float64)

    scores = session.lm_scores(model, scoring, len(items), compute,
                               texts=[p.text for item in items for p in item.prompts])
    if scores is None:
        return None
    return [None if np.isnan(v) else float(v) for v in scores.tolist()]


__all__ = ["baselines_complete", "baselines_inputs", "compute_baselines", "own_answer_scores",
           "own_item_scores", "statement_log_probs"]
