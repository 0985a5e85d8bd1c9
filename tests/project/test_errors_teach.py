"""Errors that teach (issue 17, part 6): each mistake a researcher makes is answered
with what to write instead, fast. Real CLI, real files, real sklearn objects."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pytest
import yaml

from probebench.cli import main

#: the registry's entries (live and deprecated), each checked by `registry check`
N_ENTRIES = len(list((Path(__file__).resolve().parents[2] / "registry" / "probes")
                     .rglob("*.yaml")))

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "registry" / "artifacts"
LINEAR = "blimp-det-noun-smollm2-135m-l15-v1"


def _copy_artifact(dest: Path, name: str = LINEAR) -> Path:
    shutil.copytree(ARTIFACTS / name, dest)
    return dest


def _set_meta(folder: Path, **fields: Any) -> None:
    path = folder / "meta.yaml"
    meta = yaml.safe_load(path.read_text())
    meta.update(fields)
    path.write_text(yaml.safe_dump(meta, sort_keys=False))


def _cli(*args: str, env: dict[str, str] | None = None,
         cwd: Path | None = None) -> tuple[int, str, float]:
    """``probebench ARGS`` in a fresh interpreter: (exit code, stdout + stderr, seconds)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "probebench", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def test_model_typo(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                    listener: tuple[int, list[object]]) -> None:
    """Item 1: a mistyped model fails at once, with a suggestion and no hub retries."""
    folder = _copy_artifact(tmp_path / "typo")
    _set_meta(folder, model="smollm2-135n")
    # offline (conftest sets HF_HUB_OFFLINE=1), in process: well under two seconds
    start = time.perf_counter()
    code = main(["submit", str(folder), "--tasks", "blimp_determiner_noun_agreement_1",
                 "--out", str(tmp_path / "s.json"), "--no-guard"])
    elapsed = time.perf_counter() - start
    out, err = capfd.readouterr()
    assert code == 1
    assert "cannot find the dimensions of model 'smollm2-135n'" in err
    assert "Did you mean 'smollm2-135m'" in err, err
    assert "Retry" not in out + err
    assert elapsed < 2.0, elapsed
    assert not (tmp_path / "s.json").exists()

    # a hub-like id that does not exist, a model in the local hub cache to suggest
    hub = tmp_path / "hub"
    (hub / "models--my-lab--tense-reader-lm").mkdir(parents=True)
    _set_meta(folder, model="HuggingFaceTB/SmolLM2-135M-Instrct")
    code, text, _ = _cli("validate", str(folder), env={"HF_HUB_CACHE": str(hub)})
    assert code == 1
    assert "FAIL  model_site" in text and "not in the local Hugging Face cache" in text
    assert "Did you mean 'smollm2-135m' (the embedded HuggingFaceTB/SmolLM2-135M-Instruct)" \
        in text, text
    assert "Retry" not in text
    _set_meta(folder, model="my-lab/tense-reader-llm")
    code, text, _ = _cli("validate", str(folder), env={"HF_HUB_CACHE": str(hub)})
    assert code == 1 and "Did you mean 'my-lab/tense-reader-lm'" in text, text

    # online, with a hub that drops every connection: one question, no retries, no
    # doubled lines (the hub client retried for ~25 s before, printing every line twice)
    port, accepted = listener
    online = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": f"http://127.0.0.1:{port}",
              "HF_HUB_CACHE": str(hub)}
    _set_meta(folder, model="HuggingFaceTB/SmolLM2-135M-Instrct")
    code, text, seconds = _cli("validate", str(folder), env=online)
    assert code == 1
    assert "Retry" not in text and "hub could not be reached" in text, text
    assert "Did you mean 'smollm2-135m'" in text
    assert seconds < 10, seconds
    assert len(accepted) <= 2  # one request (its HTTP client redials a dropped one once)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) == len(set(lines)), text
    # an alias typo never reaches the hub at all
    _set_meta(folder, model="smollm2-135n")
    before = len(accepted)
    code, text, _ = _cli("validate", str(folder), env=online)
    assert code == 1 and "Did you mean 'smollm2-135m'" in text
    assert "so the hub was not asked" in text and len(accepted) == before


def test_leaderboard_missing_registry(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Item 2: a registry folder that is not there is an error, not an empty site."""
    site = tmp_path / "site"
    code = main(["leaderboard", "build", "--registry", str(tmp_path / "nowhere"),
                 "--out", str(site)])
    out, err = capsys.readouterr()
    assert code != 0
    assert "not a registry (no probes/ folder)" in err
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in err
    assert "built 0 entries" not in out and not site.exists()
    (tmp_path / "empty").mkdir()
    code = main(["leaderboard", "build", "--registry", str(tmp_path / "empty"),
                 "--out", str(site)])
    out, err = capsys.readouterr()
    assert code != 0 and "empty: not a registry (no probes/ folder)" in err
    assert "does not exist" not in err and "built 0 entries" not in out


def _fitted(n_features: int = 576) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, n_features)) * rng.uniform(0.5, 5, n_features) + 2.0
    y = (x[:, 0] + x[:, 1] > 4.0).astype(int)
    return x, y


def test_pipeline_or_linearsvc_probe(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Item 3: an honest Pipeline or LinearSVC is answered with what is supported and
    how to convert, not with "may try to run code"; export converts the Pipeline."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    x, y = _fitted()
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(x, y)
    folder = _copy_artifact(tmp_path / "pipe")
    for name in ("probe.safetensors", "probe.json"):
        (folder / name).unlink()
    joblib.dump(pipe, folder / "probe.joblib")
    assert main(["validate", str(folder), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    message = checks["safe_load"]["message"]
    assert checks["safe_load"]["status"] == "fail"
    assert "refused global 'sklearn.pipeline.Pipeline'" in message
    assert "may try to run code" not in message
    assert "LogisticRegression or MLPClassifier in probe.joblib with its StandardScaler in " \
        "scaler.joblib" in message
    assert "probe.skops + scaler.skops" in message and "probe.safetensors + probe.json" in message
    assert "`probebench export --probe probe.joblib --meta meta.yaml --out DIR` splits a " \
        "Pipeline" in message
    assert "joblib.dump(probe, 'probe.joblib'); joblib.dump(scaler, 'scaler.joblib')" in message
    # ... and export does what the message says, on the author's own pickle
    out = tmp_path / "converted"
    assert main(["export", "--probe", str(folder / "probe.joblib"), "--meta",
                 str(folder / "meta.yaml"), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0
    capsys.readouterr()
    from probebench.artifact.forms import load_weights

    diff = np.abs(load_weights(out).predict_proba(x) - pipe.predict_proba(x)).max()
    assert diff <= 1e-9

    # a LinearSVC: no probabilities; the answer says to refit, in Python
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc = LinearSVC().fit(StandardScaler().fit_transform(x), y)
    joblib.dump(svc, folder / "probe.joblib")
    assert main(["validate", str(folder), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    message = checks["safe_load"]["message"]
    assert "refused global 'sklearn.svm._classes.LinearSVC'" in message
    assert "a scikit-learn LinearSVC gives no calibrated probabilities" in message
    assert "refit a LogisticRegression on the same standardised activations" in message
    assert "may try to run code" not in message
    assert main(["export", "--probe", str(folder / "probe.joblib"), "--scaler",
                 str(folder / "scaler.joblib"), "--meta", str(folder / "meta.yaml"),
                 "--out", str(tmp_path / "svc")]) == 2
    assert "LinearSVC gives no calibrated probabilities" in capsys.readouterr().err
    assert not (tmp_path / "svc").exists()
    # a real payload still gets the warning
    (folder / "probe.joblib").write_bytes(b"\x80\x04cposix\nsystem\n.")
    assert main(["validate", str(folder), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert "may try to run code" in checks["safe_load"]["message"]


def test_missing_readme(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 4: without README.md every other check still runs; the report fails."""
    folder = _copy_artifact(tmp_path / "no-readme")
    (folder / "README.md").unlink()
    assert main(["validate", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    status = {c["name"]: c["status"] for c in report["checks"]}
    messages = {c["name"]: c["message"] for c in report["checks"]}
    assert report["valid"] is False
    assert status["required_files"] == "fail" and "README.md" in messages["required_files"]
    assert status["meta_schema"] == "pass" and status["safe_load"] == "pass"
    ran = [name for name, s in status.items() if name != "required_files"]
    assert all(status[name] == "pass" for name in ran), status
    assert "skip" not in status.values()
    # a check whose own file is missing still skips, naming it
    (folder / "meta.yaml").unlink()
    assert main(["validate", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["meta_schema"]["status"] == "skip"
    assert by_name["meta_schema"]["message"] == "needs meta.yaml (missing)"
    assert by_name["safe_load"]["status"] == "pass"


def _notebook(*cells: str) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [],
         "execution_count": None, "source": [src]} for i, src in enumerate(cells)]})


def test_export_carries_notebook_data(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Item 5: export carries the files the notebooks read, or names the missing ones."""
    src = _copy_artifact(tmp_path / "src")
    for name in ("probe.safetensors", "probe.json"):
        (src / name).unlink()
    (src / "data").mkdir()
    (src / "data" / "train.jsonl").write_text('{"text": "The cat sleeps.", "label": 1}\n')
    np.save(src / "labels.npy", np.array([1, 0, 1]))
    (src / "scratch.txt").write_text("not named by any notebook\n")
    (src / "train.ipynb").write_text(_notebook(
        "import numpy as np\nrows = open('data/train.jsonl').read().splitlines()\n"
        "labels = np.load('./labels.npy')\nprint('ROWS', len(rows), labels.sum())"))
    (src / "eval.ipynb").write_text(_notebook(
        "import joblib\nprobe = joblib.load('probe.joblib')\n"
        "scaler = joblib.load('scaler.joblib')\nprint('PROBE', type(probe).__name__)",
        "!pip list\nARTIFACT = '.'"))
    out = tmp_path / "out"
    assert main(["export", "--probe", str(src / "probe.joblib"), "--scaler",
                 str(src / "scaler.joblib"), "--meta", str(src / "meta.yaml"),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "data/train.jsonl" in printed and "labels.npy" in printed
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"data/train.jsonl", "labels.npy", "probe.joblib", "scaler.joblib",
            "probe.safetensors", "probe.json"} <= files
    assert "scratch.txt" not in files
    assert main(["validate", str(out)]) == 0  # the joblib and native forms agree
    capsys.readouterr()
    # the notebooks' code runs from the exported folder
    for name, expected in (("train.ipynb", "ROWS 1 2"), ("eval.ipynb", "PROBE LogisticRegression")):
        cell = json.loads((out / name).read_text())["cells"][0]["source"][0]
        proc = subprocess.run([sys.executable, "-c", cell], cwd=out, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0 and expected in proc.stdout, proc.stderr

    # a data file a notebook reads that is not there: refused, named, nothing written
    (src / "labels.npy").unlink()
    again = tmp_path / "again"
    assert main(["export", "--probe", str(src / "probe.joblib"), "--scaler",
                 str(src / "scaler.joblib"), "--meta", str(src / "meta.yaml"),
                 "--out", str(again)]) == 2
    err = capsys.readouterr().err
    assert "labels.npy (named in train.ipynb)" in err and "--allow-missing" in err
    assert not again.exists()
    assert main(["export", "--probe", str(src / "probe.joblib"), "--scaler",
                 str(src / "scaler.joblib"), "--meta", str(src / "meta.yaml"),
                 "--out", str(again), "--allow-missing"]) == 0
    assert (again / "data" / "train.jsonl").is_file() and not (again / "labels.npy").exists()


def test_transformerlens_hook_names(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    smollm: Any) -> None:
    """Item 6: TransformerLens hook names get the equivalent site, off-by-one checked
    against the model itself."""
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"text": "The cats sleep."}\n')
    out = tmp_path / "acts.safetensors"

    def extract_error(site: str) -> str:
        assert main(["extract", "--site", site, "--input", str(prompts), "--out",
                     str(out)]) == 2
        return capsys.readouterr().err

    err = extract_error("blocks.15.hook_resid_post")
    assert "blocks.15.hook_resid_post is TransformerLens's name for the output of block 15" \
        in err
    assert "write 16:<position>" in err
    err = extract_error("blocks.15.hook_resid_pre:last_token")
    assert "the input of block 15, which is the output of block 14" in err
    assert "write 15:last_token" in err
    err = extract_error("blocks.0.hook_resid_pre")
    assert "which is the embeddings output" in err and "write 0:<position>" in err
    err = extract_error("blocks.15.hook_resid_mid:token_avg")
    assert "Hugging Face's hidden states, which probebench reads, have no equivalent" in err
    assert "15:token_avg (the block's input) and 16:token_avg (its output)" in err
    assert not out.exists()

    folder = _copy_artifact(tmp_path / "tl")
    _set_meta(folder, layer="blocks.14.hook_resid_post")
    assert main(["validate", str(folder), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["meta_schema"]["status"] == "fail"
    assert "field 'layer': blocks.14.hook_resid_post is TransformerLens's name for the " \
        "output of block 14" in checks["meta_schema"]["message"]
    assert "write layer: 15" in checks["meta_schema"]["message"]

    # the arithmetic, on SmolLM2: layer b + 1 is block b's output (resid_post), layer b
    # its input (resid_pre)
    import torch

    from probebench.models import Site, extract
    from probebench.prompts import Prompt

    seen: dict[str, torch.Tensor] = {}
    block = smollm.layers[15]
    pre = block.register_forward_pre_hook(
        lambda _m, args, kwargs: seen.__setitem__(
            "pre", args[0] if args else kwargs["hidden_states"]), with_kwargs=True)
    post = block.register_forward_hook(
        lambda _m, _a, output: seen.__setitem__(
            "post", output[0] if isinstance(output, tuple) else output))
    try:
        acts = extract(smollm, [Prompt(text="The cats sleep.")],
                       [Site(15, "last_token"), Site(16, "last_token")], cache=False,
                       progress=False)
    finally:
        pre.remove()
        post.remove()
    np.testing.assert_allclose(acts[Site(16, "last_token")][0],
                               seen["post"][0, -1].float().numpy(), atol=1e-5)
    np.testing.assert_allclose(acts[Site(15, "last_token")][0],
                               seen["pre"][0, -1].float().numpy(), atol=1e-5)


def test_registry_param_count_and_size(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Item 7: param_count and size_mb are checked against the artifact; every
    reference entry's values hold."""
    registry = tmp_path / "registry"
    shutil.copytree(REPO / "registry" / "probes", registry / "probes")
    shutil.copytree(ARTIFACTS, registry / "artifacts")
    args = ["registry", "--repo", str(tmp_path), "--registry", str(registry), "check"]
    assert main(args) == 0
    assert f"{N_ENTRIES} of {N_ENTRIES} entries pass" in capsys.readouterr().out

    path = registry / "probes" / "probebench" / f"{LINEAR}.yaml"
    honest = path.read_text()
    assert "param_count: 577\n" in honest and "size_mb: 0.0417\n" in honest
    path.write_text(honest.replace("param_count: 577\n", "param_count: 1153\n")
                    .replace("size_mb: 0.0417\n", "size_mb: 0.01\n"))
    assert main(args) == 1
    printed = capsys.readouterr().out
    assert f"{N_ENTRIES - 1} of {N_ENTRIES} entries pass" in printed
    assert "param_count is 1153 but the artifact's probe has 577 trained parameters" in printed
    assert "size_mb is 0.01 but the artifact's 8 files hold 0.0417 MB (41739 bytes" in printed
    # rounding is not an error: two decimals, or a 1% slip
    for size in ("0.04", "0.0421"):
        path.write_text(honest.replace("size_mb: 0.0417\n", f"size_mb: {size}\n"))
        assert main(args) == 0, capsys.readouterr().out
        capsys.readouterr()


# --- a forgotten --include ------------------------------------------------------------

OWN_TASK = "my_tense"


def _own_task_beside(folder: Path) -> Path:
    """``folder``/tasks.yaml registering OWN_TASK, made as a researcher makes it
    (``probebench tasks add``); returns the tasks file."""
    from tests.tasks.test_scaffold import _pairs_file

    folder.mkdir(parents=True, exist_ok=True)
    data = _pairs_file(folder / "tense.tsv")
    assert main(["tasks", "add", str(data), "--to", str(folder), "--id", OWN_TASK,
                 "--format", "senteval", "--option", "positive_class=past",
                 "--option", "item_column=3", "--license", "CC-BY-4.0",
                 "--source", "written for this test"]) == 0
    return folder / "tasks.yaml"


def _reports_own_task(probe: Path, tasks_file: Path) -> None:
    """The artifact's meta.yaml reports metrics on OWN_TASK (as `train --include` writes)."""
    from probebench.tasks.spec import read_tasks_file

    (spec,) = read_tasks_file(tasks_file).tasks
    meta = yaml.safe_load((probe / "meta.yaml").read_text())
    (reported,) = meta["reported_metrics"].values()
    _set_meta(probe, reported_metrics={OWN_TASK: {**reported, "test_sha256": spec.test_sha256}})


def test_a_forgotten_include_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """validate, submit, load_probe and train without --include, when a tasks.yaml beside
    the artifact (or in the current folder) registers the task: the error says which
    file and the option that adds it."""
    from probebench.errors import InputError
    from probebench.probe import load_probe

    work = tmp_path / "work"
    tasks_file = _own_task_beside(work)
    probe = _copy_artifact(work / "my-probe")
    elsewhere = tmp_path / "elsewhere"  # no checkout, no tasks.yaml: the packaged tasks
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    # submit: the task given on the command line
    assert main(["submit", str(probe), "--tasks", OWN_TASK, "--no-guard", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"unknown task '{OWN_TASK}'" in err
    assert f"{tasks_file} registers '{OWN_TASK}': add --include {tasks_file}" in err
    # validate: the task meta.yaml reports metrics on (a file inside the artifact too)
    _reports_own_task(probe, tasks_file)
    assert main(["validate", str(probe)]) != 0
    printed = "".join(capsys.readouterr())
    assert f"reported_metrics.{OWN_TASK}: test_sha256" in printed
    assert f"add --include {tasks_file}" in printed
    with pytest.raises(InputError, match=rf"add --include {tasks_file}"):
        load_probe(probe)
    # and with it, both pass the tasks
    assert main(["validate", str(probe), "--include", str(tasks_file)]) == 0, \
        "".join(capsys.readouterr())
    capsys.readouterr()
    # train, from the folder holding the tasks file: the path is given as typed there
    monkeypatch.chdir(work)
    assert main(["train", "--task", OWN_TASK, "--site", "3:last_token",
                 "--out", str(tmp_path / "trained")]) == 2
    err = capsys.readouterr().err
    assert f"tasks.yaml registers '{OWN_TASK}': add --include tasks.yaml" in err
    assert not (tmp_path / "trained").exists()


def test_no_tasks_file_is_named_without_one_that_registers_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No file named in the hint when no nearby tasks.yaml registers the id (none at all,
    one that registers other tasks, one that does not parse): the general --include hint."""
    work = tmp_path / "work"
    tasks_file = _own_task_beside(tmp_path / "made")
    probe = _copy_artifact(work / "my-probe")
    plain = _copy_artifact(work / "plain")
    _reports_own_task(probe, tasks_file)  # meta.yaml names the task; nothing registers it
    monkeypatch.chdir(tmp_path)  # tasks_file is one level further down: not looked at
    capsys.readouterr()
    for content in (None, "version: 1\ntasks: []\n", "tasks: [unclosed\n"):
        if content is not None:
            (work / "tasks.yaml").write_text(content)
        assert main(["submit", str(plain), "--tasks", OWN_TASK, "--no-guard"]) == 2
        err = capsys.readouterr().err
        assert f"unknown task '{OWN_TASK}'" in err and "--include" not in err, (content, err)
        assert main(["submit", str(probe), "--tasks", OWN_TASK, "--no-guard"]) != 0
        err = capsys.readouterr().err
        # the general hint, never a file that does not register the task
        assert "is not registered in the tasks used" in err, err
        assert "add --include TASKS_YAML" in err and "registers '" not in err, (content, err)
        assert main(["validate", str(probe)]) != 0
        printed = "".join(capsys.readouterr())
        assert "is not registered in the tasks used" in printed
        assert "add --include TASKS_YAML" in printed and "registers '" not in printed, \
            (content, printed)
