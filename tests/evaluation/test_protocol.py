"""The fitting protocol's choice rule: lowest validation log-loss, one rule for ``train``
and for the control task of ``submit``'s selectivity."""

from __future__ import annotations

import numpy as np
import pytest

from probebench.evaluation import protocol, selectivity
from probebench.evaluation.protocol import (
    C_GRID,
    LOG_LOSS_TIE,
    GridPoint,
    choose,
    fit_protocol,
    log_loss,
    search_grid,
)
from probebench.sites import Site
from probebench.train import TrainConfig, grid_search


def separable(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two classes four standard deviations apart along the first axis."""
    y = np.arange(n) % 2
    x = rng.normal(size=(n, 4))
    x[:, 0] += 4.0 * (2 * y - 1)
    return x, y


def test_a_tie_on_validation_accuracy_is_broken_by_log_loss() -> None:
    rng = np.random.default_rng(0)
    x, y = separable(200, rng)
    x_val, y_val = separable(80, rng)
    x_test, y_test = separable(200, rng)
    points, best = search_grid("linear", x, y, x_val, y_val, seed=0, hiddens=(8,))
    # an easy task: every C classifies every validation prompt right
    assert [p.value for p in points] == list(C_GRID)
    assert {p.val_accuracy for p in points} == {1.0}
    # accuracy's tie rule took the strongest penalty; log-loss takes the sharpest fit
    assert max(points, key=lambda p: p.val_accuracy).value == min(C_GRID)
    assert best.value == min(points, key=lambda p: p.val_log_loss).value == max(C_GRID)
    assert best.val_log_loss < 0.2 * points[0].val_log_loss
    # where it matters: the strongest penalty squeezes the test probabilities
    chosen_probe, chosen_scaler, chosen = fit_protocol("linear", x, y, x_val, y_val,
                                                       seed=0, hidden=8)
    assert chosen == max(C_GRID)
    strong, strong_scaler = protocol.fit("linear", min(C_GRID), np.concatenate([x, x_val]),
                                         np.concatenate([y, y_val]), seed=0, hidden=8)
    p_chosen = chosen_probe.predict_proba(chosen_scaler.transform(x_test))[:, 1]
    p_strong = strong.predict_proba(strong_scaler.transform(x_test))[:, 1]
    assert np.all((p_strong > 0.5) == (p_chosen > 0.5)) and np.all((p_chosen > 0.5) == y_test)
    assert p_strong.min() > 0.05 and p_strong.max() < 0.95  # squeezed towards 0.5
    assert p_chosen.min() < 1e-3 and p_chosen.max() > 1 - 1e-3


def test_train_and_selectivity_share_the_rule() -> None:
    rng = np.random.default_rng(1)
    x, y = separable(120, rng)
    x_val, y_val = separable(40, rng)
    config = TrainConfig(task="eval_awareness", site=Site(1, "last_token"))
    points, chosen = grid_search(config, x, y, x_val, y_val)
    assert chosen == choose(points).value
    # the selectivity module fits with the protocol's own function, not a copy
    assert selectivity.fit_protocols is protocol.fit_protocols  # type: ignore[attr-defined]
    assert fit_protocol("linear", x, y, x_val, y_val, seed=0, hidden=8)[2] == chosen


def test_choose_takes_the_lowest_log_loss_and_ties_go_to_the_first() -> None:
    points = [GridPoint(0.001, 0.9, val_log_loss=0.40),
              GridPoint(0.01, 0.95, val_log_loss=0.30),
              GridPoint(0.1, 0.85, val_log_loss=0.25),  # lower accuracy, lower log-loss
              GridPoint(1.0, 0.80, val_log_loss=0.25 + LOG_LOSS_TIE / 2)]
    assert choose(points).value == 0.1
    tied = [GridPoint(0.001, 0.5, val_log_loss=0.69), GridPoint(0.01, 0.5, val_log_loss=0.69)]
    assert choose(tied).value == 0.001


def test_log_loss_reads_the_probability_of_each_label() -> None:
    class Fixed:
        classes_ = np.array([0, 1])

        def predict_proba(self, x: np.ndarray) -> np.ndarray:
            return np.array([[0.2, 0.8], [0.6, 0.4]])

    assert log_loss(Fixed(), np.zeros((2, 1)), np.array([1, 0])) == pytest.approx(
        -(np.log(0.8) + np.log(0.6)) / 2)
    # a label the probe never saw has probability 0, clipped
    assert log_loss(Fixed(), np.zeros((2, 1)), np.array([1, 2])) == pytest.approx(
        -(np.log(0.8) + np.log(1e-15)) / 2)
