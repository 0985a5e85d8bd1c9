"""Baselines of a task on a model at a site: what a probe must beat, the same for every
entry there.

They depend on the task, the model and (for ``random_features``) the site, never on an
entry's architecture or weights, so each is computed once per (task, model, site) and
stored with the task (``registry/baselines/``) as well as beside each result.

* ``majority``: a constant score (the train split's positive rate); AUROC 0.5.
* ``length``: a logistic regression on the prompt's length in characters alone,
  trained on the train split.
* ``random_features``: a logistic regression (standard-scaled, C = 1) on a fixed random
  Gaussian projection of the activations at the probe's site of a **randomly
  initialised model of the same architecture** (seeded), trained on the train split
  (an even spread of its items, at most 1,000 prompts).
  It shows what the site gives without any learned weights: token identity passed
  through random layers, mixed by random attention. (The input embedding at the probe's
  position, used before, is constant at ``last_token`` whenever all prompts end in the
  same token; a mean of input embeddings is constant on SyntaxGym suites whose
  conditions reorder the same words. A random-init model is neither.)
* ``surprisal``: causal models only. Minimal-pair tasks: the model's own answer under
  the protocol the data's authors publish. BLiMP and verb grammar: minus the total
  surprisal of each prompt, every token scored after the model's BOS token (EOS when
  it has none), as the BLiMP paper and lm-evaluation-harness do. SyntaxGym: the suite's
  own region-based predictions (``TaskFormat.model_item_scores``), no BOS. Single
  labelled statements (formats with ``TaskFormat.single_prompt_surprisal``): the mean
  ``log2 P`` per token of each statement (``lm_scores.mean_log_probs``), oriented
  higher log-probability -> label 1, its AUROC reported as it comes (never flipped on
  the test set); the mean, not the total, as statements of varied length are compared
  with each other and a total would rank them by length first. No accuracy: a
  log-probability has no threshold. An encoder such as MiniLM has no surprisal, so no
  such baseline.
* ``own_answer``: tasks that declare a ``readout`` (``TaskSpec.readout``, kind
  ``answer``), on causal models: the model's own answer, Marks and Tegmark's (2024)
  prompting baseline. Each test prompt's text, then the readout's suffix (truth tasks:
  " This statement is"), then ``log P(positive) - log P(negative)`` as the next tokens
  (" True" against " False"; an answer of several tokens sums its tokens'
  log-probabilities), read after the model's document start
  (``lm_scores.answer_log_odds``). Higher -> label 1; its accuracy is the share of
  statements where the model prefers the right answer (log-odds >= 0). An encoder (no
  LM head) reports it as not applicable, with the reason; a task without a readout has
  no such baseline.

Each baseline keeps its score of every labelled test prompt (``BaselineOut.scores``, in
the order of the result's predictions), so that **the gap** (``gap_interval``,
``GAP_DEFINITION``) can be resampled on the probe's items, at evaluation time and again
when the leaderboard is built: the probe's AUROC minus the best baseline's (the highest
AUROC point estimate among the baselines with an AUROC), with a paired item-bootstrap
CI. A probe *beats its baselines* when that CI's lower bound lies above 0. On a
multi-class task the gap is the probe's one-vs-rest macro AUROC minus the best
baseline's (majority or length), resampled the same way from the class probabilities
(``BaselineOut.class_scores``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from probebench.evaluation.headline import interval_out, labelled, sub_seed
from probebench.evaluation.metrics import Interval, item_bootstrap, weighted_auroc
from probebench.evaluation.results import BaselineGapOut, BaselineOut, PromptScores
from probebench.prompts import Prompt

#: every baseline's name in results, in the order reports show them
BASELINES = ("majority", "length", "random_features", "surprisal", "own_answer")
#: the note stored with each baseline (SyntaxGym's own protocol has its own note, and
#: single statements ``STATEMENT_SURPRISAL_NOTE``)
NOTES = {
    "majority": "constant train positive rate",
    "length": "logistic regression on length in characters",
    "random_features": "logistic regression on a random projection of the site's "
                       "activations in a randomly initialised copy of the model",
    "surprisal": "minus the model's total surprisal (bits), every token scored after BOS",
    "own_answer": "the model's own answer: log P(positive) - log P(negative) as the next "
                  "tokens after the text and the task's readout suffix, read after BOS; "
                  "higher -> label 1, accuracy at log-odds >= 0",
}
#: the surprisal baseline's note on single statements (``single_prompt_surprisal``)
STATEMENT_SURPRISAL_NOTE = ("the model's mean log-probability per token (minus the mean "
                            "surprisal, bits), every token scored after BOS; higher -> "
                            "label 1, no threshold (no accuracy)")


def own_answer_not_applicable(model: str, architecture: str) -> str:
    """The note of the own-answer baseline on a model that has no answer of its own.

    >>> own_answer_not_applicable("bert", "encoder")
    'not applicable: bert is an encoder model with no LM head, so it gives no answer of its own'
    """
    return (f"not applicable: {model} is an {architecture} model with no LM head, so it "
            "gives no answer of its own")


def majority_scores(train: Sequence[Prompt], test: Sequence[Prompt]) -> np.ndarray:
    _, y = labelled(train)
    rate = float(y.mean()) if y.size else 0.5
    return np.full(len(test), rate)


def length_scores(train: Sequence[Prompt], test: Sequence[Prompt], seed: int) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    idx, y = labelled(train)
    if len(set(y.tolist())) < 2:
        return np.full(len(test), 0.5)
    x_train = np.array([[len(train[i].text)] for i in idx], dtype=np.float64)
    mean, std = x_train.mean(), x_train.std() or 1.0
    model = LogisticRegression(random_state=seed).fit((x_train - mean) / std, y)
    x_test = np.array([[len(p.text)] for p in test], dtype=np.float64)
    return np.asarray(model.predict_proba((x_test - mean) / std)[:, 1])


#: train prompts the random-feature baseline fits on at most (an even spread of items)
RANDOM_FEATURES_PROMPTS = 1000
#: the random-feature baseline's inverse regularisation: sklearn's default, fixed (a
#: grid chosen on the tiny validation splits of SyntaxGym suites picks the strongest
#: penalty on ties, which flattens the scores)
RANDOM_FEATURES_C = 1.0


def random_feature_scores(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray,
                          seed: int) -> np.ndarray:
    """A logistic regression (standard-scaled, C = 1) on a fixed random projection of
    ``train_x`` (a random-init model's activations)."""
    from probebench.evaluation.protocol import fit, fit_threads, predict

    rng = np.random.default_rng(seed)
    d = train_x.shape[1]
    projection = rng.normal(size=(d, d)) / np.sqrt(d)
    with fit_threads():  # the projection too: its numbers on any thread count
        a = np.asarray(train_x, dtype=np.float64) @ projection
        b = np.asarray(test_x, dtype=np.float64) @ projection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on a deliberately weak input
        probe, scaler = fit("linear", RANDOM_FEATURES_C, a, train_y, seed=seed, hidden=1)
    return predict(probe, scaler, b, proba=True)[:, 1]


#: what the gap means (submission.json's field descriptions, the leaderboard's column)
GAP_DEFINITION = ("the probe's AUROC minus the best baseline's: the baseline with the "
                  "highest AUROC on the same task, model and site (majority, length, "
                  "random_features, or surprisal and own_answer where they have an AUROC; "
                  "on a multi-class "
                  "task the macro AUROC), with a paired item-bootstrap 95% interval (each "
                  "resample draws the same items for the probe and the baseline). A probe "
                  "beats its baselines when the interval's lower bound lies above 0")


def best_baseline(baselines: Mapping[str, BaselineOut]) -> str | None:
    """The baseline with the highest AUROC point estimate (ties: the first in
    ``BASELINES`` order, then by name); None when none has an AUROC.

    >>> from probebench.evaluation.results import IntervalOut
    >>> def b(v): return BaselineOut(auroc=IntervalOut(value=v, ci_low=v, ci_high=v,
    ...     resamples=1, dropped=0), accuracy=None, note="")
    >>> best_baseline({"majority": b(0.5), "length": b(0.61), "random_features": b(0.61)})
    'length'
    """
    def order(name: str) -> tuple[int, str]:
        return (BASELINES.index(name) if name in BASELINES else len(BASELINES), name)

    found = [(name, b.auroc.value) for name, b in baselines.items()
             if b.auroc is not None and b.auroc.value is not None]
    if not found:
        return None
    top = max(v for _, v in found)
    return min((name for name, v in found if v == top), key=order)


def gap_interval(labels: np.ndarray, probe: np.ndarray, baseline: np.ndarray,
                 item_of: np.ndarray, *, seed: int, n_resamples: int) -> Interval:
    """AUROC of ``probe`` minus AUROC of ``baseline`` over the same labelled prompts,
    with a paired item-bootstrap 95% CI: one ``item_bootstrap`` of the difference, so
    each resample draws the items once (seeded with ``seed``) and both AUROCs are
    recomputed on it (``weighted_auroc``, its point value too). Binary: ``labels`` in
    {0, 1}, scores (n,). Multi-class: ``labels`` are class indices and the scores class
    probabilities (n, K); the AUROC is the macro AUROC."""
    y = np.asarray(labels, dtype=np.int64)
    a = np.asarray(probe, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)

    def difference(weights: np.ndarray) -> np.ndarray:
        return np.asarray(weighted_auroc(y, a, weights) - weighted_auroc(y, b, weights))

    value = float(difference(np.ones((1, y.size)))[0])
    return item_bootstrap(value, difference, item_of, n_resamples=n_resamples, seed=seed)


def gap_seed(seed: int, task_id: str) -> int:
    """The gap bootstrap's seed: the run's seed and the task id alone, so evaluation
    and the leaderboard's build draw the same items for the same stored scores."""
    return sub_seed(seed, task_id, "baseline_gap")


def baseline_gap(baselines: Mapping[str, BaselineOut], predictions: PromptScores, *,
                 task_id: str, seed: int, n_resamples: int
                 ) -> tuple[BaselineGapOut | None, bool | None]:
    """The gap of the probe whose per-prompt output is ``predictions`` to the best of
    ``baselines`` (``GAP_DEFINITION``), and whether it beats them; (None, None) when no
    baseline has an AUROC, or the best one kept no per-prompt scores (a record stored
    before they were kept) or scores of another length."""
    name = best_baseline(baselines)
    if name is None:
        return None, None
    base = baselines[name]
    assert base.auroc is not None and base.auroc.value is not None
    multiclass = predictions.class_probs is not None
    scores = base.class_scores if multiclass else base.scores
    probe = predictions.class_probs if multiclass else predictions.probs
    if scores is None or probe is None or len(scores) != len(probe):
        return None, None
    iv = gap_interval(np.asarray(predictions.labels), np.asarray(probe),
                      np.asarray(scores), np.asarray(predictions.items),
                      seed=gap_seed(seed, task_id), n_resamples=n_resamples)
    out = interval_out(iv)
    gap = BaselineGapOut(value=out.value, ci_low=out.ci_low, ci_high=out.ci_high,
                         resamples=out.resamples, dropped=out.dropped, baseline=name,
                         baseline_auroc=base.auroc.value)
    return gap, beats(gap.ci_low)


def beats(ci_low: float | None) -> bool | None:
    """Whether a gap with this lower bound beats the baselines (None: unknown)."""
    return None if ci_low is None else ci_low > 0
