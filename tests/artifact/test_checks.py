"""A corpus of hostile and broken artifacts: each is refused with the right reason,
and none runs code (the canary a payload would create never appears)."""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pytest

from probebench.artifact import validate
from probebench.artifact.checks import FAIL
from tests.artifacts import META, make_artifact

CANARY_DIR = "CANARY"
REPO = Path(__file__).resolve().parents[2]


class Payload:
    """An object whose unpickling calls ``func(*args)``: what an attacker would ship."""

    def __init__(self, func: Callable[..., Any], *args: Any) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[Any, ...]:
        return self.func, self.args


def _canary(folder: Path) -> Path:
    return folder.parent / CANARY_DIR / folder.name


def _touch_cmd(folder: Path) -> str:
    return f"mkdir -p {_canary(folder).parent} && touch {_canary(folder)}"


def _payloads(folder: Path) -> dict[str, Any]:
    import importlib
    import subprocess

    canary = str(_canary(folder))
    return {
        "os_system": Payload(os.system, _touch_cmd(folder)),
        "subprocess": Payload(subprocess.Popen, ["sh", "-c", _touch_cmd(folder)]),
        "eval": Payload(eval, f"open({canary!r}, 'w')"),
        "exec": Payload(exec, f"open({canary!r}, 'w')"),
        "importlib": Payload(importlib.import_module, "antigravity"),
    }


def _write_yaml(folder: Path, text: str) -> None:
    (folder / "meta.yaml").write_text(text)


def _meta_with(**changes: Any) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        import yaml
        _write_yaml(folder, yaml.safe_dump({**META, **changes}, sort_keys=False))
    return mutate


def _pickle_to(name: str, payload: str, **dump_kw: Any) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        obj = _payloads(folder)[payload]
        joblib.dump(obj, folder / name, **dump_kw)
    return mutate


def _after_array(folder: Path) -> None:
    joblib.dump({"coef_": np.zeros((1, 576)), "then": _payloads(folder)["os_system"]},
                folder / "probe.joblib")


def _after_array_plain_pickle(folder: Path) -> None:
    data = pickle.dumps([np.arange(5.0), _payloads(folder)["os_system"]], protocol=2)
    (folder / "probe.joblib").write_bytes(data)


def _pickle_as_safetensors(folder: Path) -> None:
    for name in ("probe.joblib", "scaler.joblib"):
        (folder / name).unlink()
    (folder / "probe.safetensors").write_bytes(pickle.dumps(_payloads(folder)["os_system"]))
    (folder / "probe.json").write_text(json.dumps({"format": "probebench-native", "version": 1,
                                                   "layers": [[576, 1]], "classes": [0, 1]}))


def _native(folder: Path) -> None:
    from probebench.artifact import load_weights

    weights = load_weights(folder)
    for name in ("probe.joblib", "scaler.joblib"):
        (folder / name).unlink()
    weights.save_native(folder)


def _truncated_native(folder: Path) -> None:
    _native(folder)
    _truncate("probe.safetensors")(folder)


def _forms_disagree(folder: Path) -> None:
    from probebench.artifact import load_weights

    weights = load_weights(folder)
    bent = type(weights)(mean=weights.mean, scale=weights.scale,
                         weights=(weights.weights[0] * 1.5,), biases=weights.biases,
                         activation=weights.activation, classes=weights.classes,
                         probe_type=weights.probe_type)
    bent.save_native(folder)  # beside the joblib files, but not the same probe


def _bad_offsets(folder: Path) -> None:
    _native(folder)
    path = folder / "probe.safetensors"
    data = path.read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    header["layers.0.weight"]["data_offsets"] = [0, 10**9]
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data[8 + size:])


def _huge_header(folder: Path) -> None:
    _native(folder)
    path = folder / "probe.safetensors"
    data = path.read_bytes()
    path.write_bytes(struct.pack("<Q", 2**40) + data[8:])


def _truncate(name: str) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: len(data) // 3])
    return mutate


def _nan_weights(folder: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    probe = joblib.load(folder / "probe.joblib")
    assert isinstance(probe, LogisticRegression)
    probe.coef_[0, 3] = np.nan
    joblib.dump(probe, folder / "probe.joblib")


def _inf_scaler(folder: Path) -> None:
    scaler = joblib.load(folder / "scaler.joblib")
    scaler.mean_[7] = np.inf
    joblib.dump(scaler, folder / "scaler.joblib")


def _zero_scale(folder: Path) -> None:
    scaler = joblib.load(folder / "scaler.joblib")
    scaler.scale_[2] = 0.0
    joblib.dump(scaler, folder / "scaler.joblib")


def _wrong_width(folder: Path) -> None:
    make_artifact(folder, n_features=100)


def _three_classes(folder: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    scaler = joblib.load(folder / "scaler.joblib")
    x = np.random.default_rng(0).normal(size=(90, 576))
    y = np.arange(90) % 3
    joblib.dump(LogisticRegression(max_iter=50).fit(scaler.transform(x), y),
                folder / "probe.joblib")
    # a three-class probe is a valid artifact, but not one that reports on a binary task
    from probebench.tasks.catalog import TaskCatalog

    sha = TaskCatalog.default().spec("verb_grammar").test_sha256
    _meta_with(reported_metrics={"verb_grammar": {"test_sha256": sha, "auroc": 0.9}})(folder)


def _object_array(folder: Path) -> None:
    joblib.dump(np.array([{"a": 1}, None], dtype=object), folder / "probe.joblib")


def _not_a_pickle(folder: Path) -> None:
    (folder / "probe.joblib").write_text("this is not a pickle\n")


def _zip_bomb(folder: Path) -> None:
    import zlib
    (folder / "probe.joblib").write_bytes(zlib.compress(b"\x80\x04" + b"\0" * (300 << 20), 9))


def _symlink_to(target: str) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        (folder / "README.md").unlink()
        (folder / "README.md").symlink_to(target)
    return mutate


def _big_file(folder: Path) -> None:
    with (folder / "weights.bin").open("wb") as handle:
        handle.truncate(200 << 20)  # sparse: 200 MB without writing them


def _many_files(folder: Path) -> None:
    extra = folder / "extra"
    extra.mkdir()
    for i in range(10_000):
        (extra / f"f{i}.txt").write_bytes(b"")


def _nested_zip(folder: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("inner/probe.joblib", b"data")
    (folder / "extras.dat").write_bytes(buffer.getvalue())


def _skops_untrusted(folder: Path) -> None:
    import skops.io as sio

    probe = joblib.load(folder / "probe.joblib")
    probe.callback = os.system  # a function reference skops would resolve on load
    for name in ("probe.joblib", "scaler.joblib"):
        obj = probe if name == "probe.joblib" else joblib.load(folder / name)
        sio.dump(obj, folder / name.replace(".joblib", ".skops"))
        (folder / name).unlink()


def _remove(name: str) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        (folder / name).unlink()
    return mutate


def _tamper_after_hashing(folder: Path) -> None:
    from probebench.cli import main

    assert main(["hash", str(folder), "--write"]) == 0
    (folder / "eval.ipynb").write_text(json.dumps({"nbformat": 4, "cells": [], "x": 1}))


def _mlp_declared_for_linear(folder: Path) -> None:
    _meta_with(probe_type="mlp")(folder)


def _unregistered_metric(folder: Path) -> None:
    _meta_with(reported_metrics={"verb_grammar": {"test_sha256": "ab" * 32, "auroc": 0.9}})(
        folder)


CORPUS: list[tuple[str, Callable[[Path], None], str, str]] = [
    ("pickle-os-system", _pickle_to("probe.joblib", "os_system"), "safe_load",
     "refused global 'posix.system'"),
    ("pickle-subprocess", _pickle_to("probe.joblib", "subprocess"), "safe_load",
     "refused global 'subprocess.Popen'"),
    ("pickle-eval", _pickle_to("scaler.joblib", "eval"), "safe_load",
     "refused global 'builtins.eval'"),
    ("pickle-exec", _pickle_to("probe.joblib", "exec"), "safe_load",
     "refused global 'builtins.exec'"),
    ("pickle-importlib", _pickle_to("probe.joblib", "importlib"), "safe_load",
     "refused global 'importlib.import_module'"),
    ("joblib-zlib-os-system", _pickle_to("probe.joblib", "os_system", compress=3),
     "safe_load", "refused global 'posix.system'"),
    ("joblib-gzip-subprocess", _pickle_to("probe.joblib", "subprocess", compress="gzip"),
     "safe_load", "refused global 'subprocess.Popen'"),
    ("joblib-xz-eval", _pickle_to("probe.joblib", "eval", compress="xz"), "safe_load",
     "refused global 'builtins.eval'"),
    ("payload-after-joblib-array", _after_array, "safe_load", "refused global 'posix.system'"),
    ("payload-after-pickled-array", _after_array_plain_pickle, "safe_load",
     "refused global 'posix.system'"),
    ("pickle-named-safetensors", _pickle_as_safetensors, "safe_load", "probe.safetensors"),
    ("truncated-joblib", _truncate("probe.joblib"), "safe_load", "probe.joblib"),
    ("forms-disagree", _forms_disagree, "safe_load", "the joblib and native forms disagree"),
    ("truncated-safetensors", _truncated_native, "safe_load", "probe.safetensors"),
    ("safetensors-bad-offsets", _bad_offsets, "safe_load", "malformed safetensors"),
    ("safetensors-huge-header", _huge_header, "safe_load", "header claims"),
    ("object-array", _object_array, "safe_load", "array of Python objects"),
    ("not-a-pickle", _not_a_pickle, "safe_load", "not a pickle"),
    ("decompression-bomb", _zip_bomb, "safe_load", "decompresses to more than"),
    ("skops-untrusted-type", _skops_untrusted, "safe_load",
     "Untrusted types found in the file: ['posix.system']"),
    ("nan-weights", _nan_weights, "weights", "non-finite"),
    ("inf-scaler", _inf_scaler, "weights", "scaler mean has 1 non-finite"),
    ("zero-scale", _zero_scale, "weights", "values <= 0"),
    ("wrong-width", _wrong_width, "model_site", "reads 100 features but smollm2-135m's hidden "
     "size is 576"),
    ("three-classes", _three_classes, "reported_metrics",
     "the task is binary; the probe has 3 classes"),
    ("layer-999", _meta_with(layer=999), "model_site", "layer 999 is out of range"),
    ("unknown-position", _meta_with(position="middle_token"), "meta_schema",
     "field 'position'"),
    ("unknown-field", _meta_with(colour="blue"), "meta_schema", "field 'colour'"),
    ("yaml-alias-bomb", lambda f: _write_yaml(
        f, "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"), "meta_schema", "anchor '&a'"),
    ("yaml-python-tag", lambda f: _write_yaml(
        f, "spec_version: !!python/object/apply:os.system ['touch CANARY']\n"), "meta_schema",
     "python/object/apply:os.system"),
    ("yaml-duplicate-keys", lambda f: _write_yaml(
        f, (f.joinpath("meta.yaml").read_text() + "layer: 3\n")), "meta_schema",
     "duplicate key 'layer'"),
    ("symlink-etc-passwd", _symlink_to("/etc/passwd"), "limits", "symlink (to /etc/passwd)"),
    ("symlink-parent", _symlink_to(".."), "limits", "symlink (to ..)"),
    ("file-200mb", _big_file, "limits", "limited to 64 MiB"),
    ("files-10000", _many_files, "limits", "more than 100 files"),
    ("nested-zip", _nested_zip, "limits", "zip archive"),
    ("missing-eval-notebook", _remove("eval.ipynb"), "required_files", "eval.ipynb"),
    ("missing-scaler", _remove("scaler.joblib"), "required_files", "scaler.joblib missing"),
    ("missing-meta", _remove("meta.yaml"), "required_files", "meta.yaml"),
    ("tampered-after-hashing", _tamper_after_hashing, "bundle_hash",
     "eval.ipynb: changed since it was hashed"),
    ("probe-type-tree", _meta_with(probe_type="tree"), "probe_type",
     "not supported for re-evaluation"),
    ("probe-type-mismatch", _mlp_declared_for_linear, "probe_type", "holds a 'linear' probe"),
    ("unknown-license", _meta_with(license="Apache 2"), "license", "not a known SPDX id"),
    ("unregistered-test-hash", _unregistered_metric, "reported_metrics",
     "is not registered in the tasks used, the packaged tasks"),
]


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 25
    assert len({name for name, *_ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("name", "mutate", "check", "reason"), CORPUS,
                         ids=[c[0] for c in CORPUS])
def test_bad_artifact_is_refused_for_the_right_reason(
        tmp_path: Path, name: str, mutate: Callable[[Path], None], check: str,
        reason: str) -> None:
    folder = tmp_path / name
    make_artifact(folder)
    mutate(folder)
    report = validate(folder)
    assert not report.valid
    failed = {c.name: c.message for c in report.checks if c.status == FAIL}
    assert check in failed, f"expected {check} to fail; failures: {failed}"
    assert reason in failed[check], failed[check]
    assert not (tmp_path / CANARY_DIR).exists(), "a payload ran"


def test_the_payloads_are_live(tmp_path: Path) -> None:
    """Guard: the corpus's pickles really would run code under plain pickle."""
    folder = tmp_path / "live"
    folder.mkdir()
    data = pickle.dumps(_payloads(folder)["os_system"])
    pickle.loads(data)
    assert _canary(folder).exists()


def test_an_unregistered_hash_names_the_catalog_and_suggests_include(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No tasks file nearby: the message still says which tasks it looked in, and
    --include for a task it does not know; a known task with another hash is a version
    mismatch, not a forgotten --include."""
    from probebench.tasks.catalog import TaskCatalog

    monkeypatch.chdir(tmp_path)  # no tasks.yaml here or beside the artifact
    packaged = TaskCatalog.default()
    for task, expected, absent in (
            ("my_own_task", ["which have no task 'my_own_task'",
                             "if 'my_own_task' is your own task, add --include TASKS_YAML"],
             "registered there"),
            ("verb_grammar", ["task 'verb_grammar' is registered there with test_sha256 "
                              f"{packaged.spec('verb_grammar').test_sha256[:12]}"],
             "--include")):
        folder = tmp_path / task
        make_artifact(folder)
        _meta_with(reported_metrics={task: {"test_sha256": "cd" * 32, "auroc": 0.9}})(folder)
        (check,) = [c for c in validate(folder).checks if c.name == "reported_metrics"]
        assert check.status == FAIL
        assert f"is not registered in the tasks used, {packaged.describe()}" in check.message
        for text in expected:
            assert text in check.message, check.message
        assert absent not in check.message, check.message
