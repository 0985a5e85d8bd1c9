"""Baselines of a task on a model: what a probe must beat, the same for every entry.

They depend on the task and the model only (never on an entry's site or architecture),
so each is computed once per (task, model) and stored with the task
(``registry/baselines/``) as well as beside each result.

* ``majority``: a constant score (the train split's positive rate); AUROC 0.5.
* ``length``: a logistic regression on the prompt's length in characters alone,
  trained on the train split.
* ``random_features``: a logistic regression (``train``'s linear protocol: C chosen on
  validation) on a fixed random Gaussian projection (seeded) of the prompt's **mean
  input embedding** (layer 0, ``token_avg``), trained on the train split. It shows what
  a probe gets from which words occur, without any contextual computation. Averaging
  over the prompt keeps it informative at every position: the input embedding at
  ``last_token`` alone is constant whenever all prompts end in the same token (".").
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
    "random_features": "logistic regression on a random projection of the prompt's mean "
                       "input embedding",
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


def random_feature_scores(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray,
                          seed: int) -> np.ndarray:
    """A linear probe (``train``'s protocol, validation on a hashed 20% of the train
    prompts) on a fixed random projection of mean input embeddings."""
    from probebench.evaluation.protocol import VAL_FRACTION, fit_protocol

    rng = np.random.default_rng(seed)
    d = train_x.shape[1]
    projection = rng.normal(size=(d, d)) / np.sqrt(d)
    a = np.asarray(train_x, dtype=np.float64) @ projection
    b = np.asarray(test_x, dtype=np.float64) @ projection
    held = rng.random(len(a)) < VAL_FRACTION
    if len(set(train_y[held].tolist())) < 2 or len(set(train_y[~held].tolist())) < 2:
        held = np.zeros(len(a), dtype=bool)
        held[: max(1, len(a) // 5)] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on a deliberately weak input
        probe, scaler, _ = fit_protocol("linear", a[~held], train_y[~held], a[held],
                                        train_y[held], seed=seed, hidden=1)
    return np.asarray(probe.predict_proba(scaler.transform(b))[:, 1])
