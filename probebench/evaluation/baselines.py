"""Baselines computed on the same split as the probe and shown beside it.

* ``majority``: a constant score (the train split's positive rate); AUROC 0.5.
* ``length``: a logistic regression on the prompt's length in characters alone,
  trained on the train split.
* ``random_features``: the probe's own architecture (logistic regression, or an MLP
  with the same hidden sizes and activation) with a standard scaler, trained on the
  train split over a fixed random Gaussian projection (seeded) of the input
  embeddings (layer 0, the probe's position). It shows what the architecture gets
  from lexical identity alone.
* ``surprisal``: minimal-pair tasks (verbs, BLiMP, SyntaxGym) only: minus the model's
  total surprisal of the prompt (bits, no BOS), needing no training; causal models only
  (an encoder such as MiniLM has no surprisal, so no such baseline).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.headline import labelled
from probebench.prompts import Prompt

#: every baseline's name in results, in the order reports show them
BASELINES = ("majority", "length", "random_features", "surprisal")


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


def random_feature_scores(probe: ProbeWeights, train_x: np.ndarray, train_y: np.ndarray,
                          test_x: np.ndarray, seed: int) -> np.ndarray:
    """The probe's architecture on a fixed random projection of layer-0 features."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(seed)
    d = train_x.shape[1]
    projection = rng.normal(size=(d, d)) / np.sqrt(d)
    scaler = StandardScaler().fit(train_x @ projection)
    a = scaler.transform(train_x @ projection)
    b = scaler.transform(test_x @ projection)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings on a deliberately weak input
        if probe.hidden_sizes:
            act = probe.activation if probe.activation != "identity" else "identity"
            model = MLPClassifier(tuple(probe.hidden_sizes), activation=act, max_iter=200,
                                  random_state=seed).fit(a, train_y)
        else:
            model = LogisticRegression(max_iter=500, random_state=seed).fit(a, train_y)
    return np.asarray(model.predict_proba(b)[:, 1])
