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
* ``surprisal``: minimal-pair tasks on causal models only: the model's own answer under
  the protocol the data's authors publish. BLiMP and verb grammar: minus the total
  surprisal of each prompt, every token scored after the model's BOS token (EOS when
  it has none), as the BLiMP paper and lm-evaluation-harness do. SyntaxGym: the suite's
  own region-based predictions (``TaskFormat.model_item_scores``), no BOS. An encoder
  such as MiniLM has no surprisal, so no such baseline.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from probebench.evaluation.headline import labelled
from probebench.prompts import Prompt

#: every baseline's name in results, in the order reports show them
BASELINES = ("majority", "length", "random_features", "surprisal")
#: the note stored with each baseline (SyntaxGym's own protocol has its own note)
NOTES = {
    "majority": "constant train positive rate",
    "length": "logistic regression on length in characters",
    "random_features": "logistic regression on a random projection of the site's "
                       "activations in a randomly initialised copy of the model",
    "surprisal": "minus the model's total surprisal (bits), every token scored after BOS",
}


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
    from probebench.evaluation.protocol import fit

    rng = np.random.default_rng(seed)
    d = train_x.shape[1]
    projection = rng.normal(size=(d, d)) / np.sqrt(d)
    a = np.asarray(train_x, dtype=np.float64) @ projection
    b = np.asarray(test_x, dtype=np.float64) @ projection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on a deliberately weak input
        probe, scaler = fit("linear", RANDOM_FEATURES_C, a, train_y, seed=seed, hidden=1)
    return np.asarray(probe.predict_proba(scaler.transform(b))[:, 1])
