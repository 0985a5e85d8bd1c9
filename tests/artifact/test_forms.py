"""Good artifacts load through every form and equal scikit-learn's predict_proba."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from probebench.artifact import load_weights, validate
from probebench.artifact.export import export_native
from tests.artifacts import make_artifact

CASES = [
    ("linear", (), "adam"),
    ("mlp", (16,), "adam"),
    ("mlp", (16, 8), "adam"),
    ("mlp", (16,), "lbfgs"),
    ("mlp", (12, 6), "lbfgs"),
]


@pytest.mark.parametrize("form", ["joblib", "native", "skops"])
@pytest.mark.parametrize(("kind", "hidden", "solver"), CASES)
def test_probe_forward_equals_predict_proba(tmp_path: Path, form: str, kind: str,
                                            hidden: tuple[int, ...], solver: str) -> None:
    folder, probe, scaler, x = make_artifact(tmp_path / "a", probe_type=kind, form=form,
                                             hidden=hidden, solver=solver)
    weights = load_weights(folder)
    expected = probe.predict_proba(scaler.transform(x))
    got = weights.predict_proba(x)
    assert got.shape == expected.shape == (len(x), 2)
    assert np.abs(got - expected).max() <= 1e-9
    assert weights.hidden_sizes == list(hidden)
    assert weights.classes == (0, 1)
    # the torch forward (used on GPUs) agrees too
    p = weights.forward_torch(torch.from_numpy(x)).numpy()
    assert np.abs(p - expected[:, 1]).max() <= 1e-9
    report = validate(folder)
    assert report.valid, [(c.name, c.message) for c in report.failed()]


@pytest.mark.parametrize("compress", [0, 3, "gzip", "bz2", "xz", "lzma"])
def test_compressed_joblib_loads(tmp_path: Path, compress: object) -> None:
    folder, probe, scaler, x = make_artifact(tmp_path / "a", probe_type="mlp", compress=compress)
    got = load_weights(folder).predict_proba(x)
    assert np.abs(got - probe.predict_proba(scaler.transform(x))).max() <= 1e-9


def test_scaler_without_mean_or_std(tmp_path: Path) -> None:
    from sklearn.preprocessing import StandardScaler

    folder, probe, _, x = make_artifact(tmp_path / "a")
    for kwargs in ({"with_mean": False}, {"with_std": False}):
        scaler = StandardScaler(**kwargs).fit(x)
        import joblib
        joblib.dump(scaler, folder / "scaler.joblib")
        got = load_weights(folder).predict_proba(x)
        assert np.abs(got - probe.predict_proba(scaler.transform(x))).max() <= 1e-9


def test_string_classes_keep_sklearn_order(tmp_path: Path) -> None:
    import joblib
    from sklearn.linear_model import LogisticRegression

    folder, _, scaler, x = make_artifact(tmp_path / "a")
    labels = np.where(x[:, 0] > 3, "yes", "no")
    probe = LogisticRegression(max_iter=200).fit(scaler.transform(x), labels)
    joblib.dump(probe, folder / "probe.joblib")
    weights = load_weights(folder)
    assert weights.classes == ("no", "yes")
    assert np.abs(weights.predict_proba(x) - probe.predict_proba(scaler.transform(x))).max() \
        <= 1e-9


def test_export_writes_a_valid_native_artifact(tmp_path: Path) -> None:
    src, probe, scaler, x = make_artifact(tmp_path / "src", probe_type="mlp", hidden=(10, 5))
    out = tmp_path / "out"
    _, files = export_native(src / "probe.joblib", src / "scaler.joblib",
                                   src / "meta.yaml", out)
    assert files == sorted(["README.md", "eval.ipynb", "meta.yaml", "probe.json",
                            "probe.safetensors", "train.ipynb"])
    assert not any(p.suffix == ".joblib" for p in out.iterdir())
    report = validate(out)
    assert report.valid, [(c.name, c.message) for c in report.failed()]
    assert np.abs(load_weights(out).predict_proba(x)
                  - probe.predict_proba(scaler.transform(x))).max() <= 1e-9


def test_bundle_hash_ignores_timestamps_and_order(tmp_path: Path) -> None:
    import os

    from probebench.artifact import manifest, scan

    folder, *_ = make_artifact(tmp_path / "a")
    first = manifest(scan(folder))
    for path in folder.iterdir():
        os.utime(path, (1_000_000, 1_000_000))
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in sorted(folder.iterdir(), reverse=True):  # another creation order
        (copy / path.name).write_bytes(path.read_bytes())
    assert manifest(scan(copy)).sha256 == manifest(scan(folder)).sha256 == first.sha256
    assert first.text.splitlines()[0].endswith("  README.md")
    (copy / "README.md").write_text("changed")
    assert manifest(scan(copy)).sha256 != first.sha256


def test_joblib_and_native_forms_side_by_side_must_agree(tmp_path: Path) -> None:
    from probebench.artifact.weights import sklearn_to_weights

    folder, probe, scaler, x = make_artifact(tmp_path / "a", probe_type="mlp")
    sklearn_to_weights(probe, scaler).save_native(folder)  # both forms now
    report = validate(folder)
    assert report.valid, [(c.name, c.message) for c in report.failed()]
    safe = next(c for c in report.checks if c.name == "safe_load")
    assert "native and joblib forms loaded without running code, which agree" in safe.message
    assert np.abs(load_weights(folder).predict_proba(x)
                  - probe.predict_proba(scaler.transform(x))).max() <= 1e-9
