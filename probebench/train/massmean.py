"""The mass-mean (difference-in-means) probe: ``probebench train --method mass-mean``.

Truth and refusal directions are often published as the difference of the two classes'
mean activations rather than as a fitted classifier (the "mass-mean probe" of Marks &
Tegmark, 2024, *The Geometry of Truth*; the refusal direction of Arditi et al., 2024).
Here, on the ``StandardScaler``-standardised activations ``z``:

1. the direction is ``w = mean(z | class 1) - mean(z | class 0)``;
2. the logit is ``a * (w . z) + b``, with a scalar scale ``a > 0`` and bias ``b`` from
   a one-dimensional logistic regression on the projections ``w . z`` (themselves
   standardised first, so its L2 penalty does not depend on the projections' units).
   The scale never turns the direction: the stored weights are exactly ``a * w``.

Which data fits what (the SentEval protocol of ``probebench.train.trainer``, applied
to the calibration's one hyperparameter): for each ``C`` of ``CALIBRATION_C_GRID`` (the
calibration's inverse L2 penalty), scaler, direction and calibration are fitted on train
alone and scored by their log-loss on the validation split; the lowest wins (ties to the
stronger penalty, ``probebench.evaluation.protocol.choose``). Then scaler, direction and
calibration are refitted on train + validation with that ``C``: the data the logistic
refit uses.

Why choose ``C`` on held-out prompts rather than fit the calibration unpenalised on the
training prompts: the direction is fitted on the same prompts, and each prompt's own
activation pulls its class mean towards it, so in-sample projections lie further apart
than a new prompt's and an in-sample scale is overconfident; where the classes separate
completely along ``w`` (an easy truth task at a good layer) an unpenalised fit even runs
off to an infinite scale. The validation log-loss scores the calibration on projections
the direction never saw, so an overconfident scale loses there. The grid reaches further
than the logistic probe's ``C_GRID`` (0.001 to 10): one weight on a standardised feature,
fitted on hundreds of prompts, is still shrunk at C = 10, and on the registered tasks the
validation log-loss kept falling beyond it (eval_awareness, layer 10: 0.039 at C = 10,
0.023 at 10000; test ECE 0.031 and 0.009); the largest C still keeps the scale finite
when the classes separate. Why refit on train + validation: the direction has no
hyperparameter of its own and gains from every labelled prompt, and the two methods then
see the same data.

Everything is deterministic: class means, and Newton steps (``newton-cholesky``) on a
convex one-dimensional problem, in float64 on ``FIT_THREADS`` threads. Since the
projections' class means differ by ``|w|^2 > 0``, the fitted scale is positive.

This is the plain mass-mean probe. Marks & Tegmark's IID variant (the direction
multiplied by the inverse covariance of the class-centred activations, ``Sigma^-1 w``)
is not implemented: on the protocol's few hundred prompts of a 576-wide model the
covariance is nearly singular and would need a regulariser of its own.

The result is an ordinary fitted ``LogisticRegression`` (``coef_ = a * w``,
``intercept_ = b``) and a ``StandardScaler``, so the artifact holds exactly the files of
a logistic linear probe and every reader (validate, submit, the leaderboard) reads it
unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from probebench.artifact.meta import METHODS, Method
from probebench.errors import InputError
from probebench.evaluation.protocol import (
    GridPoint,
    choose,
    fit_threads,
    log_loss,
    make_estimator,
)

#: how ``train`` fits a linear probe unless told otherwise (``METHODS``: a logistic
#: regression, or the difference of the class means calibrated by a one-dimensional
#: logistic regression; meta.yaml's ``method`` names them alike)
DEFAULT_METHOD = "logistic"
#: the inverse L2 penalties of the one-dimensional calibration, strongest first
CALIBRATION_C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)


def mass_mean_direction(z: np.ndarray, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``mean(z[y == classes[1]]) - mean(z[y == classes[0]])``, float64, shape
    (n_features,)."""
    z = np.asarray(z, dtype=np.float64)
    return np.asarray(z[y == classes[1]].mean(axis=0) - z[y == classes[0]].mean(axis=0))


def fit_mass_mean(value: float, x: np.ndarray, y: np.ndarray) -> tuple[Any, Any]:
    """(probe, scaler): a ``StandardScaler`` on ``x``, the class-mean difference of the
    scaled ``x``, and its scale and bias from a logistic regression (inverse L2 penalty
    ``value``) on the standardised projections; the probe is a fitted scikit-learn
    ``LogisticRegression`` with ``coef_`` the direction times the positive scale."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.preprocessing import StandardScaler

    x64 = np.asarray(x, dtype=np.float64)
    classes = np.unique(y)
    if len(classes) != 2:
        raise InputError(f"a mass-mean probe tells two classes apart; the training labels "
                         f"hold {len(classes)}: {classes.tolist()}")
    with warnings.catch_warnings(), fit_threads():
        warnings.simplefilter("ignore", ConvergenceWarning)  # as the protocol's fits
        scaler = StandardScaler().fit(x64)
        z = scaler.transform(x64)
        w = mass_mean_direction(z, y, classes)
        if not np.any(w):
            raise InputError("the two classes' mean activations are identical: a mass-mean "
                             "probe has no direction")
        s = (z @ w)[:, None]
        projected = StandardScaler().fit(s)
        calibration = make_estimator("linear", value, seed=0, hidden=1)
        calibration.fit(projected.transform(s), y)
        scale = float(calibration.coef_[0, 0] / projected.scale_[0])
        bias = float(calibration.intercept_[0]) - scale * float(projected.mean_[0])
    probe = make_estimator("linear", value, seed=0, hidden=1)
    probe.classes_ = calibration.classes_
    probe.coef_ = (scale * w)[None, :]
    probe.intercept_ = np.array([bias])
    probe.n_features_in_ = z.shape[1]
    probe.n_iter_ = calibration.n_iter_
    return probe, scaler


def search_mass_mean(x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray,
                     y_val: np.ndarray) -> tuple[list[GridPoint], float]:
    """Each calibration ``C`` of ``CALIBRATION_C_GRID`` fitted on train (scaler, direction and
    calibration) and scored on validation; (points, the value ``choose`` picks)."""
    points = []
    xv = np.asarray(x_val, dtype=np.float64)
    for value in CALIBRATION_C_GRID:
        probe, scaler = fit_mass_mean(value, x_train, y_train)
        with fit_threads():
            zv = scaler.transform(xv)
            accuracy = float(np.mean(probe.predict(zv) == y_val))
            points.append(GridPoint(value, accuracy, None, log_loss(probe, zv, y_val)))
    return points, choose(points).value


__all__ = ["CALIBRATION_C_GRID", "DEFAULT_METHOD", "METHODS", "Method", "fit_mass_mean",
           "mass_mean_direction", "search_mass_mean"]
