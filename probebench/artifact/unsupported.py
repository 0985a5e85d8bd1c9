"""What to say when a probe file holds a scikit-learn object probebench does not read.

A ``Pipeline`` or a ``LinearSVC`` in ``probe.joblib`` is most likely an honest probe in
the wrong shape, not an attack: the answer says what the spec supports and how to get
there, instead of only that the file was refused.
"""

from __future__ import annotations

#: the probe files the spec reads, in one sentence
SUPPORTED = ("probebench reads a LogisticRegression or MLPClassifier in probe.joblib with "
             "its StandardScaler in scaler.joblib, the same pair as probe.skops + "
             "scaler.skops, or the native probe.safetensors + probe.json")

#: classifiers with a linear decision function but no probabilities
_NO_PROBABILITIES = frozenset({"LinearSVC", "SVC", "NuSVC", "RidgeClassifier",
                               "RidgeClassifierCV", "Perceptron", "SGDClassifier",
                               "PassiveAggressiveClassifier"})

_SPLIT_IN_PYTHON = ("in Python: `scaler, probe = pipe[0], pipe[-1]; "
                    "joblib.dump(probe, 'probe.joblib'); joblib.dump(scaler, 'scaler.joblib')`")

_REFIT = ("refit a LogisticRegression on the same standardised activations, e.g. "
          "`scaler = StandardScaler().fit(X); probe = LogisticRegression(max_iter=1000)"
          ".fit(scaler.transform(X), y)`, then `joblib.dump(probe, 'probe.joblib'); "
          "joblib.dump(scaler, 'scaler.joblib')` (or `probebench train`, which does all of "
          "this on a registered task)")


def explain_estimator(class_name: str) -> str:
    """Why a scikit-learn ``class_name`` is not a probe file, and what to do instead."""
    if class_name == "Pipeline":
        return (f"a scikit-learn Pipeline is not a probe file: {SUPPORTED}. Convert it on "
                "your own machine: `probebench export --probe probe.joblib --meta meta.yaml "
                "--out DIR` splits a Pipeline of a StandardScaler and a LogisticRegression "
                "or MLPClassifier into the native form (export loads your pickle with "
                "joblib: run it only on files you made); or split it "
                f"{_SPLIT_IN_PYTHON}")
    if class_name in _NO_PROBABILITIES:
        return (f"a scikit-learn {class_name} gives no calibrated probabilities, which every "
                f"metric probebench computes needs: {SUPPORTED}. To convert, {_REFIT}")
    return (f"scikit-learn's {class_name} is not a probe estimator probebench reads: "
            f"{SUPPORTED}. To convert, {_REFIT}")
