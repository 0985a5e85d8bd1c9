"""The MLP protocol's fits in worker processes give the sequential numbers; linear fits
stay in this process."""

from __future__ import annotations

import numpy as np
import pytest

from probebench.evaluation import protocol


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(160, 12))
    y = (x[:, 0] + 0.5 * rng.normal(size=160) > 0).astype(np.int64)
    return x[:120], y[:120], x[120:], y[120:]


def test_mlp_fits_in_workers_equal_the_sequential_fits(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    x_train, y_train, x_val, y_val = _data()
    flipped = (1 - y_train, 1 - y_val)
    assert protocol.fit_workers("mlp", 10) > 1 or protocol.fit_workers("mlp", 10) == 1
    monkeypatch.setattr(protocol, "fit_workers", lambda probe_type, jobs: 2)
    pooled = protocol.fit_protocols("mlp", x_train, x_val, [(y_train, y_val), flipped],
                                    seed=3, hidden=8)
    monkeypatch.setattr(protocol, "fit_workers", lambda probe_type, jobs: 1)
    alone = [protocol.fit_protocol("mlp", x_train, a, x_val, b, seed=3, hidden=8)
             for a, b in [(y_train, y_val), flipped]]
    for (p1, s1, c1), (p2, s2, c2) in zip(pooled, alone, strict=True):
        assert c1 == c2
        np.testing.assert_array_equal(p1.predict_proba(s1.transform(x_val)),
                                      p2.predict_proba(s2.transform(x_val)))
        for w1, w2 in zip(p1.coefs_, p2.coefs_, strict=True):
            np.testing.assert_array_equal(w1, w2)


def test_linear_fits_stay_in_this_process() -> None:
    assert protocol.fit_workers("linear", 10) == 1
    assert protocol.fit_workers("mlp", 1) == 1
