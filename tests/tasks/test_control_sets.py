"""Control sets declared per task: read by the task's format, pinned by their own hash
(checked on loading and by ``tasks verify``), printed by ``tasks hash``, written by
``tasks add``, licensed beside the task; and, end to end on the embedded model, the
recall at 1% false positives that ``submit`` writes into submission.json and REPORT.md."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.licenses import license_kind
from probebench.tasks.catalog import (
    ControlDriftError,
    TaskCatalog,
    control_sha256,
    effective_license,
    read_control,
    spec_hashes,
)
from probebench.tasks.spec import ControlSpec
from tests.conftest import REPO, SHARED_DATA, needs_shared_data

CATALOG = REPO / "probebench" / "catalog"
ALPACA = CATALOG / "data" / "controls" / "alpaca_ordinary.tsv"
EVALAWARE = CATALOG / "data" / "evalaware" / "prompts.tsv"


def _write_csv(path: Path, rows: list[tuple[str, int]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["statement", "label"])
        writer.writerows(rows)


def _flag_rows(n: int) -> list[tuple[str, int]]:
    out = []
    for k in range(n):
        out.append((f"Question {k}: which of the following is a prime? A) {k} B) {k + 1}", 1))
        out.append((f"Could you suggest a quiet walk near the river for Sunday number {k}?", 0))
    return out


def _control_rows(n: int) -> list[tuple[str, int]]:
    return [(f"Tell me something cheerful about the colour of plant {k}.", 0) for k in range(n)]


def _add(folder: Path, *, control: bool = True, task_id: str = "my_flag",
         control_license: str | None = "CC-BY-NC-4.0") -> int:
    args = ["tasks", "add", str(folder / "data.csv"), "--to", str(folder), "--id", task_id,
            "--format", "statements", "--option", "text_column=statement",
            "--test-fraction", "0.5", "--license", "MIT", "--source", "written for tests"]
    if control:
        args += ["--control", str(folder / "control.csv"), "--control-description",
                 "ordinary requests written for the tests"]
        if control_license:
            args += ["--control-license", control_license]
    return main(args)


@pytest.fixture
def folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A tasks file with one statements task declaring a control set (``tasks add``)."""
    out = tmp_path / "mine"
    out.mkdir()
    _write_csv(out / "data.csv", _flag_rows(30))
    _write_csv(out / "control.csv", _control_rows(25))
    assert _add(out) == 0
    capsys.readouterr()
    return out


def _independent_hash(rows: list[tuple[str, int]]) -> str:
    """The control hash from the CSV rows by hand: ids control-<line>, records sorted by
    id, canonical JSON, joined by newlines."""
    records: list[dict[str, Any]] = []
    for line, (text, label) in enumerate(rows, start=2):
        pid = f"control-{line}"
        records.append({"id": pid, "slices": {}, "data": {}, "prompts": [
            {"text": text, "spans": {}, "id": pid, "label": label, "slices": {}}]})
    records.sort(key=lambda r: str(r["id"]))
    text = "\n".join(json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                     for r in records)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_tasks_add_pins_the_control_set_by_its_canonical_records(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = TaskCatalog.from_file(folder / "tasks.yaml")
    spec = catalog.spec("my_flag")
    assert spec.control is not None
    assert spec.control.file == "control.csv"
    assert spec.control.sha256 == _independent_hash(_control_rows(25))
    prompts = catalog.load_control("my_flag")
    assert [p.id for p in prompts[:2]] == ["control-2", "control-3"]
    assert {p.label for p in prompts} == {0} and len(prompts) == 25
    assert control_sha256(prompts) == control_sha256(prompts[::-1]) == spec.control.sha256
    # the control record is apart from the test set: the same task without it has the
    # same test_sha256
    bare = spec.model_copy(update={"control": None})
    assert spec_hashes(bare, folder)[1] == spec.test_sha256
    assert main(["tasks", "verify", "--tasks-file", str(folder / "tasks.yaml")]) == 0
    out = capsys.readouterr().out
    assert "control set of 25 prompts verified" in out
    assert main(["tasks", "hash", "--tasks-file", str(folder / "tasks.yaml")]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"  control:\n    sha256: {spec.control.sha256}\n", out)


def test_a_changed_control_set_is_refused_by_name(folder: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rows = _control_rows(25)
    rows[4] = ("Tell me something gloomy about the colour of plant 4.", 0)
    _write_csv(folder / "control.csv", rows)
    catalog = TaskCatalog.from_file(folder / "tasks.yaml")
    with pytest.raises(ControlDriftError, match=r"control set control\.csv hashes to "
                       rf"{_independent_hash(rows)}, registered control\.sha256"):
        catalog.load("my_flag")
    assert main(["tasks", "verify", "--tasks-file", str(folder / "tasks.yaml")]) == 1
    out = capsys.readouterr().out
    assert "DRIFT" in out and "its control set control.csv hashes to" in out
    # tasks hash prints the hash the file has now, to register
    assert main(["tasks", "hash", "--tasks-file", str(folder / "tasks.yaml")]) == 0
    assert f"sha256: {_independent_hash(rows)}" in capsys.readouterr().out


def test_a_control_prompt_of_the_flagged_class_is_refused_with_its_line(
        folder: Path) -> None:
    rows = _control_rows(25)
    rows[2] = ("Question: pick the right answer. A) yes B) no", 1)
    _write_csv(folder / "control.csv", rows)
    spec = TaskCatalog.from_file(folder / "tasks.yaml").spec("my_flag")
    with pytest.raises(InputError, match=r"control\.csv:4: a control prompt is labelled 1; "
                       r"every prompt of a control set has label 0"):
        read_control(spec, folder)


def test_a_control_set_that_shares_a_prompt_with_the_task_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    _write_csv(folder / "data.csv", _flag_rows(30))
    # a train or test statement of label 0 among the controls
    _write_csv(folder / "control.csv", [*_control_rows(5), _flag_rows(30)[7]])
    assert _add(folder) != 0
    assert re.search(r"task my_flag refused: 1 prompt\(s\) of its control set control\.csv "
                     r"also occur in the task's (test|train) split \(e\.g\. control-7",
                     capsys.readouterr().err)
    assert not (folder / "tasks.yaml").exists()


def test_the_effective_license_joins_the_control_sets(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = TaskCatalog.from_file(folder / "tasks.yaml")
    spec = catalog.spec("my_flag")
    assert effective_license(spec) == "MIT AND CC-BY-NC-4.0"
    assert license_kind(effective_license(spec)) == "restricted"
    assert license_kind(spec.license) == "osi"
    bare = spec.model_copy(update={"control": None})
    assert effective_license(bare) == "MIT"
    assert main(["tasks", "show", "my_flag", "--tasks-file", str(folder / "tasks.yaml")]) == 0
    out = capsys.readouterr().out
    assert "license MIT AND CC-BY-NC-4.0" in out
    assert "control control.csv: 25 prompts" in out


def test_a_format_without_a_control_reader_refuses_the_block() -> None:
    catalog = TaskCatalog.default()
    spec = catalog.spec("blimp_determiner_noun_agreement_1")
    control = ControlSpec(file="data/controls/alpaca_ordinary.tsv", sha256="0" * 64,
                          description="Alpaca instructions")
    with pytest.raises(InputError, match="format blimp reads no control set"):
        read_control(spec.model_copy(update={"control": control}), CATALOG)


def test_the_guard_task_reads_its_control_set_as_ordinary_prompts(tmp_path: Path) -> None:
    catalog = TaskCatalog.default()
    spec = catalog.spec("eval_awareness")
    assert spec.control is not None and spec.control.license == "CC-BY-NC-4.0"
    prompts = catalog.load_control("eval_awareness")
    assert len(prompts) == 400 and {p.label for p in prompts} == {0}
    assert effective_license(spec) == f"{spec.license} AND CC-BY-NC-4.0"
    # a control line of the positive class (eval-like) is refused, naming the prompt
    flagged = tmp_path / "control.tsv"
    flagged.write_text("te\tordinary\tName three colours.\nte\teval\tQuestion 1: 2+2?\n",
                       "utf-8")
    control = spec.control.model_copy(update={"file": "control.tsv"})
    with pytest.raises(InputError, match="has the positive class 'eval'"):
        read_control(spec.model_copy(update={"control": control}), tmp_path)


@needs_shared_data
def test_the_alpaca_control_file_is_rebuilt_from_the_shared_copy() -> None:
    """The README's recipe, run on the shared copy of harmless_test.json."""
    data = json.loads((SHARED_DATA / "refusal" / "harmless_test.json").read_text("utf-8"))
    taken = {line.rstrip("\n").split("\t")[-1]
             for line in EVALAWARE.read_text("utf-8").splitlines() if line.strip()}

    def keep(text: str) -> bool:
        return (bool(text) and text == text.strip() and not re.search(r"[\t\n\r]", text)
                and "@" not in text and not re.search(r"\d{7,}", text)
                and "http" not in text and text not in taken)

    pool = [row["instruction"] for row in data if keep(row["instruction"])]
    assert len(pool) == 6143
    chosen = np.sort(np.random.default_rng(2025).choice(len(pool), size=400, replace=False))
    expected = "".join(f"te\tordinary\t{pool[i]}\n" for i in chosen)
    assert ALPACA.read_bytes() == expected.encode("utf-8")
    assert not {pool[i] for i in chosen} & taken


# --- end to end on the embedded model -----------------------------------------------------

def _eval_task(folder: Path) -> None:
    """A statements task from the eval-awareness prompts (label 1: evaluation-like; its
    te lines are the test set, tr the train set) with 100 Alpaca instructions as its
    control set."""
    split: dict[str, list[tuple[str, int]]] = {"te": [], "tr": []}
    for line in EVALAWARE.read_text("utf-8").splitlines():
        partition, label, text = line.split("\t")
        if partition in split:
            split[partition].append((text, int(label == "eval")))
    _write_csv(folder / "data.csv", split["te"])
    _write_csv(folder / "train.csv", split["tr"])
    alpaca = [line.split("\t")[-1] for line in ALPACA.read_text("utf-8").splitlines()]
    _write_csv(folder / "control.csv", [(text, 0) for text in alpaca[:100]])
    assert main(["tasks", "add", "--file", f"data={folder / 'data.csv'}", "--file",
                 f"train={folder / 'train.csv'}", "--to", str(folder), "--id", "flag_eval",
                 "--format", "statements", "--option", "text_column=statement",
                 "--label", "1=evaluation-like", "--label", "0=ordinary",
                 "--license", "Apache-2.0", "--source", "probebench evalaware prompts",
                 "--control", str(folder / "control.csv"), "--control-description",
                 "100 Alpaca instructions", "--control-license", "CC-BY-NC-4.0"]) == 0


def _trained_probe(folder: Path, lm: Any, tasks: Path) -> Path:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from probebench.artifact.weights import sklearn_to_weights
    from probebench.models import Site, extract
    from tests.artifacts import META, write_docs

    data = TaskCatalog.default().including([tasks]).load("flag_eval")
    prompts = [p for item in data.splits["train"] for p in item.prompts]
    site = Site(15, "last_token")
    x = extract(lm, prompts, [site], progress=False)[site]
    y = np.array([p.label for p in prompts])
    scaler = StandardScaler().fit(x)
    probe = LogisticRegression(max_iter=1000, C=0.1).fit(scaler.transform(x), y)
    write_docs(folder, {**META, "layer": 15, "position": "last_token",
                        "training_data": f"flag_eval train ({len(prompts)} prompts)"})
    sklearn_to_weights(probe, scaler).save_native(folder)
    return folder


@pytest.mark.slow
def test_submit_writes_the_recall_and_python_agrees_with_the_cli(
        tmp_path: Path, smollm: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import probebench
    from probebench.artifact.checks import validate
    from probebench.evaluation.report import render_report
    from probebench.evaluation.results import Submission
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.sites import Site

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    _eval_task(tasks)
    artifact = _trained_probe(tmp_path / "probe", smollm, tasks)
    out, report = tmp_path / "submission.json", tmp_path / "REPORT.md"
    assert main(["submit", str(artifact), "--tasks", "flag_eval", "--include", str(tasks),
                 "--limit", "24", "--no-guard", "--compute-baselines", "--bootstrap", "200",
                 "--latency-prompts", "1", "--out", str(out), "--report", str(report),
                 "--quiet"]) == 0
    capsys.readouterr()
    sub = json.loads(out.read_text("utf-8"))
    (task,) = sub["tasks"]
    recall = task["recall_at_1pct_fpr"]
    catalog = TaskCatalog.default().including([tasks])
    spec = catalog.spec("flag_eval")
    assert spec.control is not None
    assert recall["control"] == {"task_id": "flag_eval", "file": "control.csv",
                                 "sha256": spec.control.sha256,
                                 "description": "100 Alpaca instructions"}
    assert recall["n_control"] == 24  # --limit bounds the control set too
    assert recall["resamples"] == 200

    # the same numbers from the same activations, by numpy alone
    options = SubmitOptions(limit=24, bootstrap=200, latency_prompts=1, progress=False)
    session = Session(catalog, options)
    weights = validate(artifact, catalog=catalog).weights
    assert weights is not None
    site = Site(15, "last_token")
    test = [p for item in session.task("flag_eval").test for p in item.prompts]
    probs = weights.predict_proba(session.activations("smollm2-135m", "flag_eval/test",
                                                      test, site))[:, 1]
    controls = session.control("flag_eval")
    assert [p.text for p in controls] == [
        line.split("\t")[-1] for line in ALPACA.read_text("utf-8").splitlines()[:24]]
    control = np.sort(weights.predict_proba(session.activations(
        "smollm2-135m", "flag_eval/control", controls, site))[:, 1])
    threshold = control[-(-99 * control.size // 100) - 1]
    positives = probs[np.array([p.label for p in test]) == 1]
    assert recall["n_positives"] == positives.size == task["predictions"]["labels"].count(1)
    assert recall["threshold"] == pytest.approx(threshold, abs=2e-6)
    assert recall["value"] == pytest.approx(np.mean(positives > threshold), abs=1e-6)
    assert recall["control_fpr"] == pytest.approx(np.mean(control > threshold), abs=1e-6)
    assert recall["ci_low"] <= recall["value"] <= recall["ci_high"]
    # a probe that separates the eval-awareness classes flags some of them above the
    # largest of 24 ordinary requests
    assert task["auroc"]["value"] > 0.8 and recall["value"] > 0

    text = report.read_text("utf-8")
    assert "## Recall at 1% false positives" in text
    row = (f"| flag_eval | {recall['value']:.3f} [{recall['ci_low']:.3f}, "
           f"{recall['ci_high']:.3f}] | {recall['threshold']:.6f} | "
           f"{recall['control_fpr']:.3f} | {recall['n_positives']} | 24 prompts of "
           f"`control.csv`, sha256 `{spec.control.sha256[:16]}…`: 100 Alpaca instructions |")
    assert row in text

    # probebench.submit gives the same submission as the command line
    python = probebench.submit(artifact, ["flag_eval"], options, catalog=catalog, guard=None,
                               compute_baselines=True)
    assert python.deterministic_json() == Submission.model_validate(sub).deterministic_json()

    # a task without a control set: null in submission.json; REPORT.md says why there is
    # no recall and draws no table
    bare = python.model_copy(update={"tasks": [python.tasks[0].model_copy(
        update={"recall_at_1pct_fpr": None})]})
    assert bare.to_dict()["tasks"][0]["recall_at_1pct_fpr"] is None
    bare_report = render_report(bare)
    assert "Not measured: none of these tasks declares a control set." in bare_report
    assert "| task | recall [95% CI] |" not in bare_report
