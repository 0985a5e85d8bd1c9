"""The repository's own registry: the reference probes, their results, guard, sweep,
notebooks and site. Everything here reads the committed files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.evaluation.reproducibility import VALUE_TOLERANCE
from probebench.intake.check import check_registry
from probebench.registry.entry import Entry, read_entry
from probebench.registry.guards import guard_for, guard_ids
from probebench.registry.store import latest_results
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "registry"
#: numbers derived from float32 activations, recomputed in another process, agree with
#: the stored (rounded) ones within the reproducibility contract (METHODOLOGY.md)
AGREE = VALUE_TOLERANCE
#: reviewed in the default run (cheap notebooks); every entry is reviewed under -m slow
QUICK_REVIEW = ["probebench/eval-awareness-guard-smollm2-135m-l15-v1",
                "probebench/syntaxgym-number-prep-smollm2-135m-l15-v1"]


def entries() -> list[Entry]:
    return [read_entry(p) for p in sorted((REGISTRY / "probes").rglob("*.yaml"))]


def test_reference_set_is_complete() -> None:
    live = [e for e in entries() if e.status == "live"]
    verb_linear = {e.layer for e in live if e.tasks == ["verb_grammar"]
                   and e.probe_type == "linear" and e.model == "smollm2-135m"}
    assert len(verb_linear) >= 3
    assert any(e.tasks == ["verb_grammar"] and e.probe_type == "mlp" for e in live)
    blimp = {e.tasks[0] for e in live if e.tasks[0].startswith("blimp_")
             and e.model == "smollm2-135m"}
    syntaxgym = {e.tasks[0] for e in live if e.tasks[0].startswith("syntaxgym_")}
    assert len(blimp) >= 3 and len(syntaxgym) >= 3
    assert any(e.model == "minilm-l6" for e in live)


def test_every_entry_passes_registry_check() -> None:
    results = check_registry(REGISTRY, REPO, catalog=TaskCatalog.for_repo(REPO))
    assert len(results) == len(entries())
    assert all(r.ok for r in results), [(r.entry_id, r.problems) for r in results if not r.ok]


def test_every_entry_has_stored_results_that_reproduce_its_reported_metrics() -> None:
    for e in entries():
        stored = latest_results(REGISTRY, e.id)
        assert sorted(stored) == sorted(e.tasks), e.id
        meta = yaml.safe_load((REPO / e.artifact_url / "meta.yaml").read_text())
        for task, record in stored.items():
            result, reported = record.result, meta["reported_metrics"][task]
            assert record.probe.bundle_sha256 == e.artifact_sha256
            assert result.test_sha256 == reported["test_sha256"]
            # submit on the real model reproduces what train reported, to rounding
            assert result.auroc.value == pytest.approx(reported["auroc"], abs=AGREE), e.id
            assert result.ece == pytest.approx(reported["ece"], abs=AGREE), e.id
        assert e.evalaware_auroc is not None or e.evalaware_imputation_acknowledged


def test_the_guard_is_registered_and_corrects_every_other_smollm_probe() -> None:
    ids = guard_ids(REGISTRY)
    guard = guard_for("smollm2-135m", REGISTRY, REPO)
    assert guard is not None and guard.name == ids["smollm2-135m"]
    for e in entries():
        if e.model != "smollm2-135m":
            continue
        for record in latest_results(REGISTRY, e.id).values():
            corrected = record.result.evalaware_auroc
            if e.id == guard.name:
                assert corrected.imputed
            else:
                assert not corrected.imputed and guard.name in corrected.note, e.id
                assert e.evalaware_auroc == pytest.approx(corrected.value, abs=1e-4)


def test_the_layer_sweep_agrees_with_the_reference_probes() -> None:
    from probebench.train.sweep import read_sweep

    sweep = read_sweep(REGISTRY / "sweeps" / "smollm2-135m" / "verb_grammar-token_avg.json")
    assert [r.layer for r in sweep.rows] == list(range(31))
    rows = {r.layer: r for r in sweep.rows}
    for e in entries():
        if e.tasks == ["verb_grammar"] and e.probe_type == "linear" \
                and e.position == "token_avg":
            stored = latest_results(REGISTRY, e.id)["verb_grammar"].result
            assert rows[e.layer].auroc == pytest.approx(stored.auroc.value, abs=AGREE)
    docs = (REPO / "docs" / "layer-sweep.md").read_text()
    assert sweep.markdown() in docs  # the docs table is the committed sweep, verbatim


def test_site_lists_every_entry_and_draws_the_sweep(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from probebench.leaderboard.build import page_name

    out = tmp_path / "site"
    assert main(["leaderboard", "build", "--registry", str(REGISTRY), "--out", str(out),
                 "--resamples", "50", "--top", "3"]) == 0
    printed = capsys.readouterr().out
    assert f"open {out.resolve() / 'index.html'}" in printed
    assert printed.count("probebench/") >= 3 and "ProbeScore" in printed
    index = (out / "index.html").read_text()
    for e in entries():
        assert (out / page_name(e.id)).is_file()
        assert f'href="{page_name(e.id)}"' in index
    verb = (out / "tasks" / "verb_grammar.html").read_text()
    assert "Layer sweep" in verb and "<polyline" in verb and "best layer" in verb


def _review(entry_id: str, cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from probebench.intake.review import review_entry

    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(cache))
    review = review_entry(entry_id, REGISTRY, REPO, catalog=TaskCatalog.for_repo(REPO),
                          timeout=900)
    return review.to_json()


@pytest.mark.parametrize("entry_id", QUICK_REVIEW)
def test_review_passes_on_reference_entries(entry_id: str, module_cache: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    got = _review(entry_id, module_cache, monkeypatch)
    assert got["passed"], json.dumps(got, indent=1)
    assert [i["name"] for i in got["items"]] == ["artifact", "notebook", "test_sets",
                                                 "license", "personal_data", "evalaware"]


@pytest.mark.slow
@pytest.mark.parametrize("entry_id", [e.id for e in entries()])
def test_review_passes_on_every_reference_entry(entry_id: str, module_cache: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    got = _review(entry_id, module_cache, monkeypatch)
    assert got["passed"], json.dumps(got, indent=1)


def test_repository_notebooks_reproduce_a_reference_probe(module_cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from tests.notebooks import printed_metrics, run_notebook

    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))
    folder = REPO / "notebooks"
    printed = {}
    for name in ("train.ipynb", "eval.ipynb"):
        printed[name] = printed_metrics(run_notebook(folder / name, timeout=900, cwd=folder))
    (task, train_metrics), = printed["train.ipynb"].items()
    entry = next(e for e in entries() if e.tasks == [task] and e.model == "smollm2-135m"
                 and f"artifacts/{e.id.split('/')[1]}" in (folder / "train.ipynb").read_text())
    stored = latest_results(REGISTRY, entry.id)[task].result
    assert stored.auroc.ci_low is not None and stored.auroc.ci_high is not None
    for metrics in (train_metrics, printed["eval.ipynb"][task]):
        assert stored.auroc.ci_low <= metrics["auroc"] <= stored.auroc.ci_high
        assert metrics["auroc"] == pytest.approx(stored.auroc.value, abs=AGREE)
        assert metrics["ece"] == pytest.approx(stored.ece, abs=AGREE)
