"""Multi-class probes and the SentEval format in full: K-class ProbeWeights, macro
AUROC, item grouping, disjoint splits, and a real multi-class task trained and submitted
on the embedded model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from probebench.artifact.forms import FORMS
from probebench.artifact.weights import load_native, sklearn_to_weights
from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation import results
from probebench.evaluation.headline import Flat, headline
from probebench.evaluation.metrics import (
    auroc_score,
    brier_score_loss,
    expected_calibration_error,
    item_bootstrap,
    weighted_auroc,
)
from probebench.evaluation.multiclass import class_indices
from probebench.evaluation.report import render_report
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families.senteval.format import read_senteval
from tests import report_tables as md

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "senteval"


def _three_class_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.array(["long", "medium", "short"])[np.arange(150) % 3]
    x = rng.normal(size=(150, 6)) + (np.arange(150) % 3)[:, None] * 0.8
    return x, y


@pytest.mark.parametrize("estimator", [
    LogisticRegression(solver="newton-cholesky"),
    MLPClassifier(hidden_layer_sizes=(7,), max_iter=500, random_state=0)])
def test_k_class_weights_equal_scikit_learn_in_every_form(tmp_path: Path,
                                                           estimator: object) -> None:
    x, y = _three_class_data()
    scaler = StandardScaler().fit(x)
    probe = estimator.fit(scaler.transform(x), y)  # type: ignore[attr-defined]
    weights = sklearn_to_weights(probe, scaler)
    assert weights.problems() == []
    assert weights.n_classes == 3 and not weights.is_binary and weights.n_outputs == 3
    expected = probe.predict_proba(scaler.transform(x))
    np.testing.assert_allclose(weights.predict_proba(x), expected, rtol=0, atol=1e-12)
    assert weights.predict(x[:20]) == list(probe.predict(scaler.transform(x[:20])))
    # the native form and the allow-list unpickler read the same probe
    weights.save_native(tmp_path)
    joblib.dump(probe, tmp_path / "probe.joblib")
    joblib.dump(scaler, tmp_path / "scaler.joblib")
    for name in ("native", "joblib"):
        other = FORMS[name].load(tmp_path)
        assert other.classes == ("long", "medium", "short")
        np.testing.assert_allclose(other.predict_proba(x), expected, rtol=0, atol=1e-12)
    assert load_native(tmp_path).n_outputs == 3


def test_a_probe_whose_outputs_do_not_match_its_classes_is_a_problem() -> None:
    x, y = _three_class_data()
    weights = sklearn_to_weights(LogisticRegression().fit(x, y), None)
    broken = type(weights)(mean=weights.mean, scale=weights.scale, weights=weights.weights,
                           biases=weights.biases, activation="identity",
                           classes=("a", "b"), probe_type="linear")
    assert any("3 outputs; a binary probe has 1" in p for p in broken.problems())


def test_macro_auroc_is_scikit_learns_one_vs_rest_macro() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, size=200)
    logits = rng.normal(size=(200, 4)) + np.eye(4)[y] * 1.2
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = roc_auc_score(y, proba, multi_class="ovr", average="macro")
    assert auroc_score(y, proba) == pytest.approx(expected, abs=1e-12)
    onehot = np.eye(4)[y]
    assert brier_score_loss(y, proba) == pytest.approx(
        np.mean(np.sum((proba - onehot) ** 2, axis=1)), abs=1e-12)
    # the binary item bootstrap, given the macro AUROC's weighted form: seeded, the point
    # estimate inside the interval
    items = np.arange(200) // 2  # pairs of prompts move together
    a, b = (item_bootstrap(auroc_score(y, proba), lambda w: weighted_auroc(y, proba, w),
                           items, n_resamples=200, seed=5) for _ in range(2))
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low < a.value < a.high and a.resamples + a.dropped == 200


def test_macro_auroc_needs_every_class() -> None:
    y = np.array([0, 0, 1, 1])
    proba = np.full((4, 3), 1 / 3)
    with pytest.raises(Exception, match=r"classes \[2\] have no prompt"):
        auroc_score(y, proba)


def test_a_multiclass_headline_is_the_binary_path_given_class_probabilities() -> None:
    """One ``headline`` for both kinds: the metric functions read class probabilities
    (macro AUROC, top-label ECE, Brier over classes) and FPR at 99% TPR, which has no
    multi-class meaning, is None."""
    data = TaskCatalog.default().including([EXAMPLE]).load("example_sentence_length")
    classes = data.format.classes(data)
    assert classes is not None
    flat = Flat.of(data.test)
    proba = np.random.default_rng(1).dirichlet(np.ones(3), size=len(flat.prompts))
    head = headline("example_sentence_length", data.format, data.test, proba,
                    classes=classes, n_resamples=100)
    y = class_indices(data.format, flat.prompts, classes, "test")
    assert head.auroc.value == pytest.approx(
        roc_auc_score(y, proba, multi_class="ovr", average="macro"), abs=1e-6)
    assert head.auroc.resamples + head.auroc.dropped == 100
    right = (np.argmax(proba, axis=1) == y).astype(int)
    assert head.ece == expected_calibration_error(right, proba.max(axis=1))
    assert head.fpr_at_99tpr is None and head.printable()["fpr_at_99tpr"] is None
    scores = [s for s in head.item_scores if s is not None]
    assert head.accuracy.value == pytest.approx(float(np.mean(scores)), abs=1e-6)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), "utf-8")
    return path


def test_item_column_groups_prompts_into_items(tmp_path: Path) -> None:
    path = _write(tmp_path / "pairs.tsv", [
        "tr\tpast\tp1\tShe walked home .", "tr\tpresent\tp1\tShe walks home .",
        "tr\tpast\tp2\tWe sang loudly .", "tr\tpresent\tp2\tWe sing loudly .",
        "te\tpast\tp3\tThey ran away .", "te\tpresent\tp3\tThey run away ."])
    splits = read_senteval(path, "past", item_column=3)
    assert [len(i.prompts) for i in splits["train"]] == [2, 2]
    test = splits["test"]
    assert len(test) == 1 and [p.label for p in test[0].prompts] == [1, 0]
    assert test[0].id == "test-p3" and test[0].slices["class"] == "mixed"


def test_an_item_in_two_splits_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "pairs.tsv", [
        "tr\tpast\tp1\tShe walked home .", "te\tpresent\tp1\tShe walks home ."])
    with pytest.raises(InputError, match=r"pairs.tsv:2: item 'p1' is also in the train "
                                         r"split \(.*pairs.tsv:1\)"):
        read_senteval(path, "past", item_column=3)


def test_splits_may_not_share_a_sentence(tmp_path: Path) -> None:
    path = _write(tmp_path / "leak.tsv", [
        "tr\t0\tThe cat sat .", "va\t1\tA dog barked loudly .", "te\t0\tThe cat sat ."])
    with pytest.raises(InputError, match=r"leak.tsv:3: this sentence is also in the train "
                                         r"split \(.*leak.tsv:1\)"):
        read_senteval(path, None)


def test_the_example_fixture_is_read_unchanged_as_published_senteval() -> None:
    """Three tab-separated fields per line, as Conneau et al.'s files: no option needed."""
    first = (EXAMPLE / "sentence_length.txt").read_text("utf-8").splitlines()[0]
    assert len(first.split("\t")) == 3
    catalog = TaskCatalog.default().including([EXAMPLE])
    data = catalog.load("example_sentence_length")  # every hash verified
    assert data.format.classes(data) == ("0", "1", "2")
    assert {len(v) for v in data.splits.values()} == {108, 36}


def test_the_example_fixture_is_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    import runpy

    module = runpy.run_path(str(REPO / "tools" / "build_senteval_fixture.py"))
    assert module["build"]() == (EXAMPLE / "sentence_length.txt").read_text("utf-8")


@pytest.fixture(scope="module")
def multiclass_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A multi-class linear probe trained and submitted through the CLI on the embedded
    SmolLM2, on the example task included from its own tasks file."""
    import os

    root = tmp_path_factory.mktemp("multiclass")
    before = os.environ.get("PROBEBENCH_ACTIVATION_CACHE")
    os.environ["PROBEBENCH_ACTIVATION_CACHE"] = str(root / "cache")
    try:
        tasks = root / "tasks"
        shutil.copytree(EXAMPLE, tasks)
        artifact, out = root / "probe", root / "submission.json"
        assert main(["train", "--task", "example_sentence_length", "--include", str(tasks),
                     "--site", "15:token_avg", "--probe-type", "linear", "--out",
                     str(artifact), "--quiet"]) == 0
        assert main(["submit", str(artifact), "--tasks", "example_sentence_length",
                     "--include", str(tasks), "--no-guard", "--bootstrap", "200",
                     "--latency-prompts", "2",
                     "--out", str(out), "--report", str(root / "REPORT.md"),
                     "--quiet"]) == 0
    finally:
        if before is None:
            os.environ.pop("PROBEBENCH_ACTIVATION_CACHE", None)
        else:
            os.environ["PROBEBENCH_ACTIVATION_CACHE"] = before
    return {"artifact": artifact, "submission": json.loads(out.read_text("utf-8")),
            "report": (root / "REPORT.md").read_text("utf-8"), "tasks": tasks}


def test_multiclass_probe_is_trained_and_submitted_against_its_baselines(
        multiclass_run: dict[str, object]) -> None:
    sub = multiclass_run["submission"]
    assert isinstance(sub, dict)
    (task,) = sub["tasks"]
    assert task["classes"] == ["0", "1", "2"]
    accuracy = task["accuracy"]["value"]
    majority = task["baselines"]["majority"]["accuracy"]["value"]
    # balanced classes: the majority baseline is one class in three
    assert majority == pytest.approx(1 / 3)
    assert accuracy > 0.6 and task["accuracy"]["ci_low"] > majority
    assert task["auroc"]["value"] > 0.85
    assert task["fpr_at_99tpr"] is None and task["selectivity"] is None
    assert set(task["baselines"]) == {"majority", "length"}
    # the gap to the best baseline: macro AUROCs, resampled on the same items
    gap = task["baseline_gap"]
    best = max(task["baselines"], key=lambda n: task["baselines"][n]["auroc"]["value"])
    assert gap["baseline"] == best and gap["resamples"] == 200
    assert gap["value"] == pytest.approx(task["auroc"]["value"] - gap["baseline_auroc"],
                                         abs=1e-5)
    assert task["beats_baselines"] == (gap["ci_low"] > 0)
    assert all(len(b["class_scores"]) == 36 for b in task["baselines"].values())
    assert set(task["slices"]["class"]) == {"0", "1", "2"}
    pred = task["predictions"]
    assert len(pred["class_probs"]) == task["n_prompts"] == 36
    assert all(abs(sum(row) - 1) < 1e-5 for row in pred["class_probs"])
    # probs is P(the prompt's class)
    assert all(row[k] == p for row, k, p in zip(pred["class_probs"], pred["labels"],
                                               pred["probs"], strict=True))
    report = multiclass_run["report"]
    assert isinstance(report, str) and "3 classes: macro AUROC" in report
    assert "defined for binary probes only" in report


def test_the_multiclass_artifact_validates_only_with_its_tasks(
        multiclass_run: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    artifact, tasks = multiclass_run["artifact"], multiclass_run["tasks"]
    assert main(["validate", str(artifact), "--include", str(tasks)]) == 0
    capsys.readouterr()
    # without the task's file, its test-set hash is not a registered one
    assert main(["validate", str(artifact)]) == 1
    assert "example_sentence_length" in capsys.readouterr().out


def test_the_registry_does_not_store_multiclass_results(
        multiclass_run: dict[str, object], tmp_path: Path) -> None:
    from probebench.evaluation.results import Submission
    from probebench.registry.store import store_submission

    sub = Submission.model_validate(multiclass_run["submission"])
    with pytest.raises(InputError, match="multi-class results are reported by"):
        store_submission(tmp_path, "someone/probe", sub)
    assert not any(tmp_path.iterdir())


def test_a_probe_reports_only_on_tasks_its_outputs_fit() -> None:
    from probebench.artifact.checks import _class_problems

    catalog = TaskCatalog.default().including([EXAMPLE])
    x, y = _three_class_data()
    three = sklearn_to_weights(LogisticRegression().fit(x, y), None)
    right = sklearn_to_weights(LogisticRegression().fit(
        x, np.array(["0", "1", "2"])[np.arange(150) % 3]), None)
    binary = sklearn_to_weights(LogisticRegression().fit(x, np.arange(150) % 2), None)
    assert _class_problems(catalog, "example_sentence_length", right) == []
    assert _class_problems(catalog, "example_sentence_length", three) == [
        "reported_metrics.example_sentence_length: the task's classes are ['0', '1', '2']; "
        "the probe's outputs are ['long', 'medium', 'short']"]
    assert "the probe's outputs are [0, 1]" in _class_problems(
        catalog, "example_sentence_length", binary)[0]
    assert _class_problems(catalog, "verb_grammar", binary) == []
    assert "the task is binary" in _class_problems(catalog, "verb_grammar", right)[0]


def test_multiclass_report_lists_the_random_feature_baseline_when_present(
        multiclass_run: dict[str, object]) -> None:
    sub = results.Submission.model_validate(multiclass_run["submission"])
    baselines_of = md.table(md.section(render_report(sub), "Baselines (same test split)"))[0]
    assert "random_features AUROC" not in baselines_of
    (result,) = sub.tasks
    random = results.BaselineOut(
        auroc=results.IntervalOut(value=0.61, ci_low=0.55, ci_high=0.7, resamples=200, dropped=0),
        accuracy=results.IntervalOut(value=0.4, ci_low=0.3, ci_high=0.5, resamples=200, dropped=0),
        note="a random-feature probe")
    with_random = sub.model_copy(update={"tasks": [result.model_copy(update={
        "baselines": {**result.baselines, "random_features": random}})]})
    header, rows = md.table(md.section(render_report(with_random),
                                   "Baselines (same test split)"))
    assert rows[0][header.index("random_features AUROC")] == "0.610 [0.550, 0.700]"
