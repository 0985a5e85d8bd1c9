"""The fast inner loop's pieces that need no model: the MLP protocol's fits in worker
processes give the sequential numbers, derived results are cached and signed like
activations, the leaderboard's ROC curve needs no scikit-learn, and the sealed listing
is parsed once per version of the tasks file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from probebench.evaluation import protocol
from probebench.leaderboard.charts import roc_points
from probebench.models.cache import ActivationCache, cached_json

REPO = Path(__file__).resolve().parents[1]


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


def test_a_derived_result_is_cached_signed_and_keyed_by_every_input(tmp_path: Path) -> None:
    store = ActivationCache(tmp_path / "cache")
    calls: list[int] = []

    def compute() -> dict[str, object]:
        calls.append(1)
        return {"value": 0.123456789, "list": [1.5, None], "nan": float("nan")}

    first, hit = cached_json(store, {"kind": "t", "seed": 0}, compute, what="test")
    again, hit_again = cached_json(store, {"kind": "t", "seed": 0}, compute, what="test")
    assert (hit, hit_again, len(calls)) == (False, True, 1)
    assert again["value"] == first["value"] and again["list"] == [1.5, None]
    assert np.isnan(again["nan"])
    cached_json(store, {"kind": "t", "seed": 1}, compute, what="test")  # another input
    assert len(calls) == 2
    # a tampered entry is refused and rebuilt, never used
    (entry,) = [p for p in (tmp_path / "cache").rglob("*.safetensors")
                if p.name.startswith(store.result_key({"kind": "t", "seed": 0})[:8])]
    data = bytearray(entry.read_bytes())
    data[-2] ^= 0x01
    entry.write_bytes(bytes(data))
    rebuilt, hit = cached_json(store, {"kind": "t", "seed": 0}, compute, what="test")
    assert not hit and len(calls) == 3 and rebuilt["value"] == first["value"]


def test_no_store_always_computes() -> None:
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return 1

    for _ in range(2):
        cached_json(None, {"kind": "t"}, compute, what="test")
    assert len(calls) == 2


def test_roc_points_are_scikit_learns() -> None:
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(0)
    for n in (4, 37, 400, 2500):
        for decimals in (1, 2, 6):
            y = rng.integers(0, 2, n)
            y[:2] = (0, 1)
            s = np.round(rng.random(n), decimals)
            fpr, tpr, _ = roc_curve(y, s)
            ours = roc_points(y.tolist(), s.tolist())
            np.testing.assert_array_equal(ours[0], fpr)
            np.testing.assert_array_equal(ours[1], tpr)


def test_a_leaderboard_build_imports_no_scikit_learn(tmp_path: Path) -> None:
    code = ("import sys; from probebench.cli import main; "
            f"rc = main(['leaderboard', 'build', '--registry', 'registry', '--out', "
            f"{str(tmp_path / 'site')!r}]); "
            "assert 'sklearn' not in sys.modules, 'sklearn imported'; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_sealed_listing_is_reread_when_the_file_changes(tmp_path: Path) -> None:
    import yaml

    from probebench.tasks.sealed import read_listing

    tasks, holdouts = tmp_path / "tasks.yaml", tmp_path / "holdouts.yaml"
    data = yaml.safe_load((REPO / "probebench" / "catalog" / "holdouts.yaml").read_text("utf-8"))
    holdouts.write_text(yaml.safe_dump(data), encoding="utf-8")
    listed = read_listing(tasks).sealed_holdouts
    assert listed and listed == read_listing(tasks).sealed_holdouts
    listing = read_listing(tasks)
    listing.sealed_holdouts.clear()  # a caller's edit stays its own
    assert read_listing(tasks).sealed_holdouts == listed
    del data["sealed_holdouts"]
    holdouts.unlink()  # a new file, as an atomic rewrite makes it
    holdouts.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert read_listing(tasks).sealed_holdouts == {}
