"""Inputs that used to end in a traceback (a red-team run found 22) now fail one named
check: malformed or deeply nested YAML and JSON, values YAML cannot represent, a model
folder with a broken config, probe state of the wrong shape and folders nested past
PATH_MAX. Each is validated in-process (the report names the check and the reason) and
through the CLI in a fresh process (exit 1, no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import joblib
import numpy as np
import pytest

from probebench.artifact.checks import validate
from tests.artifacts import make_artifact


def _meta(folder: Path, old: str, new: str) -> None:
    text = (folder / "meta.yaml").read_text()
    assert old in text, text
    (folder / "meta.yaml").write_text(text.replace(old, new))


def _append_meta(extra: str) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        (folder / "meta.yaml").write_text((folder / "meta.yaml").read_text() + extra)
    return mutate


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _broken_model(folder: Path) -> None:
    model = folder.parent / "broken-model"
    model.mkdir()
    (model / "config.json").write_text("{broken")
    _meta(folder, "model: smollm2-135m", f"model: {model}")


def _probe_attr(name: str, value: object) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        probe = joblib.load(folder / "probe.joblib")
        setattr(probe, name, value)
        joblib.dump(probe, folder / "probe.joblib")
    return mutate


def _empty_mlp(folder: Path) -> None:
    from sklearn.neural_network import MLPClassifier

    probe = MLPClassifier()
    probe.coefs_, probe.intercepts_ = [], []
    probe.classes_, probe.out_activation_ = np.array([0, 1]), "logistic"
    joblib.dump(probe, folder / "probe.joblib")


def _deep_folders(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(40):  # 40 x 200 characters: far past PATH_MAX (4096)
            os.mkdir("d" * 200, dir_fd=fd)
            inner = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        leaf = os.open("x.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"x")
        os.close(leaf)
    finally:
        os.close(fd)


def _native_form(folder: Path) -> None:
    """Replace the joblib files by the native form (safetensors + probe.json)."""
    from probebench.artifact.forms import load_weights

    load_weights(folder).save_native(folder)
    for name in ("probe.joblib", "scaler.joblib"):
        (folder / name).unlink()


def _bf16(folder: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    _native_form(folder)
    tensors = load_file(folder / "probe.safetensors")
    save_file({k: v.to(torch.bfloat16) for k, v in tensors.items()},
              folder / "probe.safetensors")


def _native_layers(value: object) -> Callable[[Path], None]:
    def mutate(folder: Path) -> None:
        import json

        _native_form(folder)
        spec = json.loads((folder / "probe.json").read_text())
        spec["layers"] = value
        (folder / "probe.json").write_text(json.dumps(spec))
    return mutate


def _nested_probe_json(folder: Path) -> None:
    _native_form(folder)
    _write(folder / "probe.json", "[" * 100_000 + "]" * 100_000)


def _sparse_manifest(folder: Path) -> None:
    with (folder / "MANIFEST.sha256").open("wb") as handle:
        handle.truncate(4 << 30)  # 4 GiB of holes: nothing on disk, everything if read


def _skops_bomb(folder: Path) -> None:
    import zipfile

    for name in ("probe.joblib", "scaler.joblib"):
        (folder / name).unlink()
    for name in ("probe.skops", "scaler.skops"):
        with zipfile.ZipFile(folder / name, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr("schema.json", "{}")
            z.writestr("big.npy", b"\0" * (300 << 20))


CASES: list[tuple[str, Callable[[Path], None], str, str]] = [
    ("yaml-nul-byte", _append_meta("\x00\n"), "meta_schema", "unacceptable character #x0000"),
    ("yaml-deep-flow", _append_meta("x: " + "[" * 5000 + "]" * 5000 + "\n"), "meta_schema",
     "YAML nests deeper than 64 levels"),
    ("yaml-deep-block", _append_meta("x:\n" + "".join(" " * i + "- \n" for i in range(1, 200))),
     "meta_schema", "YAML nests deeper than 64 levels"),
    ("yaml-5000-digit-integer", lambda f: _meta(f, "layer: 15", "layer: " + "9" * 5000),
     "meta_schema", "a value YAML cannot represent"),
    ("yaml-february-30", lambda f: _meta(f, "created_at: '2026-11-01'",
                                         "created_at: 2026-02-30"),
     "meta_schema", "day is out of range for month"),
    ("yaml-hour-25", lambda f: _meta(f, "created_at: '2026-11-01'",
                                     "created_at: 2026-11-01 25:00:00"),
     "meta_schema", "hour must be in 0..23"),
    ("model-with-broken-config", _broken_model, "model_site", "config.json: not valid JSON"),
    ("notebook-nested-json", lambda f: _write(f / "train.ipynb", "[" * 100_000 + "]" * 100_000),
     "notebooks", "JSON nests too deeply"),
    ("intercept-with-two-values", _probe_attr("intercept_", np.zeros(2)), "safe_load",
     "intercept_ has 2 values"),
    ("mlp-without-layers", _empty_mlp, "safe_load", "coefs_ and intercepts_ hold 0 and 0"),
    ("mlp-layers-that-do-not-chain", _probe_attr("coefs_", [np.zeros((576, 8)),
                                                            np.zeros((9, 1))]),
     "safe_load", "the layers do not chain"),
    ("folders-past-path-max", _deep_folders, "limits", "folders nest deeper than 8 levels"),
    ("bf16-safetensors", _bf16, "safe_load", "has dtype 'BF16'; the native form holds"),
    ("probe-json-layers-576", _native_layers([576]), "safe_load",
     "'layers' must be a non-empty list"),
    ("probe-json-nested", _nested_probe_json, "safe_load", "JSON nests too deeply"),
    ("sparse-4gib-manifest", _sparse_manifest, "bundle_hash",
     "4294967296 bytes; a manifest of at most 100 files"),
    ("skops-zip-bomb", _skops_bomb, "safe_load", "decompresses to 300 MiB; at most 256 MiB"),
]


@pytest.mark.parametrize(("name", "mutate", "check", "reason"), CASES,
                         ids=[c[0] for c in CASES])
def test_hostile_input_fails_one_named_check(tmp_path: Path, name: str,
                                             mutate: Callable[[Path], None], check: str,
                                             reason: str) -> None:
    probe_type = "mlp" if "chain" in name else "linear"
    folder, *_ = make_artifact(tmp_path / name, probe_type=probe_type)
    mutate(folder)
    report = validate(folder)
    failed = {c.name: c.message for c in report.failed()}
    assert not report.valid and check in failed, failed
    assert reason in failed[check], failed[check]
    proc = subprocess.run([sys.executable, "-m", "probebench", "validate", str(folder)],
                          capture_output=True, text=True, timeout=120, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in output, output[-2000:]
    assert len(output) < 4000


def test_an_artifact_cannot_supply_its_own_tasks(tmp_path: Path) -> None:
    """Validated from inside, an artifact's own tasks.yaml (registering the hash its
    reported metrics cite) is not read: the packaged tasks are."""
    import yaml

    from tests.catalogs import copy_catalog

    folder, *_ = make_artifact(tmp_path / "own-tasks", meta={"reported_metrics": {
        "verb_grammar": {"test_sha256": "e" * 64, "auroc": 0.99}}})
    catalog = copy_catalog(folder)
    doc = yaml.safe_load((folder / "tasks.yaml").read_text())
    for task in doc["tasks"]:
        if task["id"] == "verb_grammar":
            task["test_sha256"] = "e" * 64
    (folder / "tasks.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    assert catalog.path == folder / "tasks.yaml"
    proc = subprocess.run([sys.executable, "-m", "probebench", "validate", "."], cwd=folder,
                          capture_output=True, text=True, timeout=120, check=False)
    assert "tasks: the packaged tasks" in proc.stderr
    assert "FAIL  reported_metrics" in proc.stdout


#: a small helper process that runs the CLI and reports its own peak memory: VmHWM
#: (ru_maxrss would carry the forking test process's peak across exec)
_PEAK = ("import sys\n"
         "from probebench.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
         "print('PEAK_KB', hwm.split()[1])\n"
         "sys.exit(code)\n")
RESOURCE_CASES = ["sparse-4gib-manifest", "skops-zip-bomb", "folders-past-path-max",
                  "notebook-nested-json", "yaml-deep-flow"]


@pytest.mark.slow
@pytest.mark.parametrize("name", RESOURCE_CASES)
def test_resource_cases_stay_under_512_mb(tmp_path: Path, name: str) -> None:
    from tests.artifact.test_unpickle import CASES as PICKLES

    (mutate,) = [m for n, m, _, _ in CASES if n == name]
    folder, *_ = make_artifact(tmp_path / name)
    mutate(folder)
    _peak_under(folder, 512)
    for pickle_name, make, _ in PICKLES:
        if pickle_name in ("memoize-bomb", "ndarray-called-with-a-huge-shape",
                           "array-bytes-shorter-than-its-shape"):
            other, *_ = make_artifact(tmp_path / pickle_name)
            (other / "probe.joblib").write_bytes(make())
            _peak_under(other, 512)


def _peak_under(folder: Path, megabytes: int) -> None:
    proc = subprocess.run([sys.executable, "-c", _PEAK, "validate", str(folder), "--quiet"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stdout[-1000:] + proc.stderr[-1000:]
    peak_kb = int(proc.stdout.rsplit("PEAK_KB", 1)[1].split()[0])
    assert peak_kb < megabytes * 1024, f"{folder.name}: {peak_kb / 1024:.0f} MB"


def test_what_is_hashed_is_what_is_loaded_during_a_swap(tmp_path: Path) -> None:
    """Another process swaps probe.joblib between two probes while validate runs: every
    report's bundle hash belongs to the weights it loaded."""
    import shutil
    import threading

    from probebench.artifact import manifest, scan

    a, *_ = make_artifact(tmp_path / "a")
    b, *_ = make_artifact(tmp_path / "b", meta=None)
    probe_b = joblib.load(b / "probe.joblib")
    probe_b.coef_ = probe_b.coef_ * -1.0
    joblib.dump(probe_b, b / "probe.joblib")
    hashes = {manifest(scan(a)).sha256: "a", manifest(scan(b)).sha256: "b"}
    signs = {"a": float(np.sign(validate(a).weights.weights[0][0, 0])),  # type: ignore[union-attr]
             "b": float(np.sign(validate(b).weights.weights[0][0, 0]))}  # type: ignore[union-attr]
    assert len(hashes) == 2 and signs["a"] == -signs["b"]
    work = tmp_path / "work"
    shutil.copytree(a, work)
    copies = {k: (tmp_path / f"{k}.joblib") for k in "ab"}
    shutil.copy(a / "probe.joblib", copies["a"])
    shutil.copy(b / "probe.joblib", copies["b"])
    stop = threading.Event()

    def swap() -> None:
        turn = 0
        while not stop.is_set():
            staged = tmp_path / f".swap{turn % 2}"  # staged beside, renamed in
            shutil.copy(copies["ab"[turn % 2]], staged)
            staged.replace(work / "probe.joblib")
            turn += 1

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        reports = [validate(work) for _ in range(40)]
    finally:
        stop.set()
        thread.join()
    checked = 0
    for report in reports:
        if report.bundle_sha256 in hashes and report.weights is not None:
            which = hashes[report.bundle_sha256]
            assert float(np.sign(report.weights.weights[0][0, 0])) == signs[which]
            checked += 1
    assert checked >= 5, checked
