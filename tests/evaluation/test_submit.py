"""End-to-end submissions of real probes on the embedded model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from probebench.cli import main
from probebench.evaluation.guards import Guard, fixed_guard
from probebench.evaluation.results import TransferOut
from probebench.evaluation.session import SubmitError, SubmitOptions
from probebench.evaluation.submit import submit
from tests.artifacts import make_artifact, train_task_probe


@pytest.fixture(scope="session")
def verb_probe(smollm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_task_probe(tmp_path_factory.mktemp("probes") / "verb-l6", smollm,
                            "verb_grammar")


# a full verb-grammar submit (selectivity, baselines, shift) costs 40-120 s on 2 cores;
# the default run covers submit through test_reproducibility, test_guard and the README job
@pytest.mark.slow
def test_submit_verb_and_blimp_end_to_end(verb_probe: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out, report = tmp_path / "submission.json", tmp_path / "REPORT.md"
    # --no-guard: the repository's registry names a guard for SmolLM2
    # (tests/registry/test_guards.py)
    assert main(["submit", str(verb_probe), "--tasks", "verb_grammar,blimp_passive_1",
                 "--bootstrap", "200", "--latency-prompts", "2", "--out", str(out),
                 "--report", str(report),
                 "--no-guard", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "verb_grammar" in printed and "AUROC" in printed
    sub = json.loads(out.read_text())
    assert [t["id"] for t in sub["tasks"]] == ["verb_grammar", "blimp_passive_1"]
    verbs, blimp = sub["tasks"]
    for task in (verbs, blimp):
        auroc = task["auroc"]
        assert 0 <= auroc["ci_low"] <= auroc["value"] <= auroc["ci_high"] <= 1
        assert 0 <= task["ece"] <= 1 and 0 <= task["fpr_at_99tpr"] <= 1
        assert set(task["baselines"]) == {"majority", "length", "random_features",
                                          "surprisal"}
        assert task["baselines"]["majority"]["auroc"]["value"] == 0.5
        assert task["evalaware_auroc"]["imputed"] is True
        assert task["evalaware_auroc"]["value"] == pytest.approx(0.85 * auroc["value"])
        assert task["transfer"] == {}  # none declared: ProbeScore imputes the axis
        assert task["distshift_auroc"]["imputed"] is False
        assert task["distshift_auroc"]["value"] is not None
        assert {"auroc", "ece", "fpr_at_99tpr"} <= set(task["marks"])
    for task in (verbs, blimp):
        # the analytical cost: six SmolLM2 blocks over the prompts' tokens, and the probe
        cost = task["cost"]
        assert cost["blocks"] == 6 and 2 < cost["tokens_per_prompt"] < 40
        per_token = cost["flops_per_prompt"] / cost["tokens_per_prompt"] / 6
        assert 6.5e6 < per_token < 8e6  # about 7.1 MFLOPs per token and block at 576 wide
        sel = task["selectivity"]
        assert 0.0 <= sel["control_accuracy"]["value"] <= 1.0
        assert sel["selectivity"]["value"] == pytest.approx(
            sel["accuracy"]["value"] - sel["control_accuracy"]["value"], abs=2e-6)
        assert 0.3 < sel["control_positive_rate"] < 0.7
    assert verbs["accuracy_name"] == "mc_accuracy" and "mc_accuracy" in verbs["marks"]
    assert blimp["accuracy_name"] == "pair_accuracy"
    assert set(verbs["slices"]) >= {"language", "regularity", "tense", "person", "category",
                                    "reason_code"}
    assert set(verbs["slices"]["reason_code"]) >= {"over_regularisation", "wrong_person"}
    # the model's own surprisal is a strong baseline on BLiMP (published GPT-2: ~0.8)
    assert blimp["baselines"]["surprisal"]["accuracy"]["value"] > 0.7
    # a latency, or, measured on a loaded machine (a test run often is), why it has none
    timing = sub["timing"]
    assert timing["latency_ms"].get("verb_grammar", 1.0) > 0
    assert ("verb_grammar" in timing["latency_ms"]) != ("verb_grammar" in timing[
        "latency_withheld"])
    text = report.read_text()
    assert "Test-set sha256" in text and verbs["test_sha256"] in text
    assert "| reason_code |" in text


@pytest.mark.slow
def test_same_inputs_and_seed_give_identical_bytes(verb_probe: Path) -> None:
    options = SubmitOptions(bootstrap=100, progress=False, latency_prompts=3)
    first = submit(verb_probe, ["verb_grammar"], options)
    second = submit(verb_probe, ["verb_grammar"], options)
    assert first.deterministic_json() == second.deterministic_json()
    assert first.timing is not None and "timing" not in json.loads(first.deterministic_json())
    assert "timing" in json.loads(first.to_json())
    other = submit(verb_probe, ["verb_grammar"],
                   SubmitOptions(bootstrap=100, seed=1, progress=False, latency_prompts=3))
    assert other.tasks[0].auroc.value == first.tasks[0].auroc.value
    assert other.tasks[0].auroc.ci_low != first.tasks[0].auroc.ci_low


@pytest.mark.slow
def test_baselines_belong_to_the_task_not_to_the_entry(verb_probe: Path, smollm: Any,
                                                       tmp_path: Path) -> None:
    """Another probe on the same task and model gets the same baselines: all of them at
    the same site, all but the site-bound random features at another site."""
    same_site = train_task_probe(tmp_path / "verb-l6-small", smollm, "verb_grammar",
                                 n_train=100)
    other_site = train_task_probe(tmp_path / "verb-l10", smollm, "verb_grammar", layer=10,
                                  position="token_avg", n_train=200)
    options = SubmitOptions(bootstrap=100, progress=False, latency_prompts=1)
    a = submit(verb_probe, ["verb_grammar"], options).tasks[0]
    b = submit(same_site, ["verb_grammar"], options).tasks[0]
    c = submit(other_site, ["verb_grammar"], options).tasks[0]
    assert a.auroc != b.auroc and a.baselines == b.baselines
    assert {k: v for k, v in a.baselines.items() if k != "random_features"} == \
        {k: v for k, v in c.baselines.items() if k != "random_features"}
    assert a.baselines["random_features"] != c.baselines["random_features"]
    rf = a.baselines["random_features"].auroc
    assert rf is not None and rf.ci_low is not None and rf.ci_high is not None
    assert rf.ci_high > rf.ci_low  # a constant score has a degenerate interval
    assert a.cost is not None and c.cost is not None and a.cost.blocks == 6
    assert c.cost.blocks == 10 and c.cost.flops_per_prompt > a.cost.flops_per_prompt


def test_invalid_artifact_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    folder, *_ = make_artifact(tmp_path / "bad", meta={"layer": 999})
    with pytest.raises(SubmitError, match="invalid artifact, nothing was run"):
        submit(folder, ["verb_grammar"], SubmitOptions(progress=False))
    assert main(["submit", str(folder), "--tasks", "verb_grammar", "--quiet",
                 "--out", str(tmp_path / "s.json")]) == 1
    assert "model_site" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()


def test_probe_site_that_a_task_cannot_provide_is_refused(tmp_path: Path) -> None:
    folder, *_ = make_artifact(tmp_path / "a", meta={"position": "end_answer"})
    with pytest.raises(SubmitError, match=r"cannot be evaluated on task blimp_passive_1.*"
                                          r"'answer' span"):
        submit(folder, ["blimp_passive_1"], SubmitOptions(progress=False))


def test_unknown_task_is_refused(tmp_path: Path) -> None:
    folder, *_ = make_artifact(tmp_path / "a")
    with pytest.raises(Exception, match="unknown task 'verb_gramar'"):
        submit(folder, ["verb_gramar"], SubmitOptions(progress=False))


@pytest.mark.slow
def test_guard_and_declared_transfer_targets(verb_probe: Path, smollm: Any,
                                             tmp_path: Path) -> None:
    # a second path to the same weights at the probe's own site: the fitted map is the
    # identity, so the probe transfers whole; MiniLM (384 wide, not 576) goes through a map
    twin = tmp_path / "smollm-twin"
    twin.mkdir()
    for f in smollm.resolved.path.iterdir():
        (twin / f.name).symlink_to(f)
    options = SubmitOptions(bootstrap=100, progress=False, latency_prompts=3,
                            transfer_targets=[f"{twin}@6:last_token", "minilm-l6@4:token_avg"],
                            guards=fixed_guard(Guard(verb_probe, verb_probe.name)))
    result = submit(verb_probe, ["verb_grammar"], options).tasks[0]
    same = result.transfer[f"{twin}@6:last_token"]
    assert isinstance(same, TransferOut) and same.transfer is not None
    assert same.transfer == pytest.approx(1.0, abs=0.02) and same.map_r2 is not None
    assert same.map_r2 > 0.99 and same.source_auroc == result.auroc.value
    other = result.transfer["minilm-l6@4:token_avg"]
    assert isinstance(other, TransferOut) and other.auroc is not None
    assert other.map_r2 is not None and other.control_r2 is not None
    assert other.map_r2 > other.control_r2 and "(384 features)" in other.note
    guard = result.evalaware_auroc
    assert guard.imputed is False and guard.value is not None
    assert "rated least evaluation-like by the guard verb-l6" in guard.note
    n_items = int(guard.note.split(" of ")[0])
    # the least quarter of each class (stratified), at least one item per class
    assert 100 // 4 - 3 <= n_items < 100 // 2
    assert "(the least quarter of each class)" in guard.note
