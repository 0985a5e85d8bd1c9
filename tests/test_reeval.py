"""Quarterly re-evaluation on the tasks' holdouts: planted drops are listed and
deprecated, an unchanged probe stays put."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.reeval import parse_shard, reeval
from probebench.registry.store import ResultHistory, result_path
from probebench.tasks.catalog import TaskCatalog
from tests.artifacts import train_task_probe
from tests.catalogs import copy_catalog
from tests.registry_fixture import synthetic_record, synthetic_result

IDS = ["org/steady-smollm2-135m-l6-v1", "org/slipping-smollm2-135m-l6-v1",
       "org/falling-smollm2-135m-l6-v1"]


@pytest.fixture(scope="module")
def repo(smollm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reeval")
    copy_catalog(root)
    # one task without a holdout, for the "registered test set" fallback
    tasks = yaml.safe_load((root / "tasks.yaml").read_text())
    for task in tasks["tasks"]:
        if task["id"] == "blimp_passive_1":
            task.pop("holdouts")
    (root / "tasks.yaml").write_text(yaml.safe_dump(tasks, sort_keys=False))
    folder = train_task_probe(root / "registry/artifacts/verb", smollm, "verb_grammar")
    from probebench.artifact import manifest, scan
    sha = manifest(scan(folder)).sha256
    for entry_id, task in [*((i, "verb_grammar") for i in IDS),
                           ("org/plain-smollm2-135m-l6-v1", "blimp_passive_1")]:
        org, rest = entry_id.split("/")
        data = {"id": entry_id, "name": rest, "short_name": rest[:30], "author": "A", "org": org,
                "category": "grammar", "probe_type": "linear", "model": "smollm2-135m",
                "layer": 6, "position": "last_token",
                "artifact_url": "registry/artifacts/verb", "artifact_sha256": sha,
                "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
                "release": "2026-11-01", "param_count": 577, "size_mb": 0.01,
                "tagline": "t", "description": "d", "status": "live",
                "tasks": [task]}
        path = entry_path(root / "registry", entry_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def _store(root: Path, entry_id: str, auroc: float) -> None:
    import numpy as np

    from probebench.evaluation.results import IntervalOut

    result = synthetic_result("verb_grammar", 0.3, np.random.default_rng(0))
    result = result.model_copy(update={"auroc": IntervalOut(
        value=auroc, ci_low=auroc - 0.05, ci_high=auroc + 0.05, resamples=100, dropped=0)})
    path = result_path(root / "registry", entry_id, "verb_grammar")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ResultHistory(entry=entry_id, task="verb_grammar",
                                  history=[synthetic_record(result)]).to_json())


def test_drops_are_listed_and_large_drops_deprecate(repo: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    catalog = TaskCatalog.for_repo(repo)
    done = reeval(repo / "registry", repo, repo / "out0", catalog=catalog, bootstrap=100)
    assert done.failures == {}
    first = [c for c in done if c.task == "verb_grammar"]
    assert {c.action for c in first} == {"none"} and all(c.old_auroc is None for c in first)
    assert {c.version for c in first} == {3}  # the hand-written holdout, not the test set
    new = first[0].new_auroc
    # stored AUROCs as if measured before: 2, 7 and 15 points above what the holdout gives
    for entry_id, above in zip(IDS, (0.02, 0.07, 0.15), strict=True):
        _store(repo, entry_id, new + above)
    assert main(["reeval", "--registry", str(repo / "registry"), "--repo", str(repo),
                 "--out", str(repo / "out"), "--bootstrap", "100", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "none      org/steady" in printed and "list      org/slipping" in printed
    assert "deprecate org/falling" in printed
    diff = (repo / "out" / "DIFF.md").read_text()
    assert "org/slipping-smollm2-135m-l6-v1" in diff and "org/falling" in diff
    assert "org/steady" not in diff
    record = json.loads((repo / "out/org/falling-smollm2-135m-l6-v1/verb_grammar.json")
                        .read_text())
    assert record["drop_points"] == pytest.approx(15.0, abs=1e-6)
    assert record["action"] == "deprecate" and record["holdout_version"] == 3
    falling = read_entry(entry_path(repo / "registry", IDS[2]))
    assert falling.status == "deprecated" and falling.notice is not None
    assert "fell 15.0 points" in falling.notice
    assert read_entry(entry_path(repo / "registry", IDS[1])).status == "live"


def test_one_broken_entry_does_not_stop_the_shard(repo: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    path = entry_path(repo / "registry", IDS[0])
    data = yaml.safe_load(path.read_text())
    data["artifact_sha256"] = "ab" * 32  # the artifact no longer matches its entry
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["reeval", "--registry", str(repo / "registry"), "--repo", str(repo),
                 "--out", str(repo / "out"), "--bootstrap", "50", "--quiet"]) == 1
    printed = capsys.readouterr().out
    assert f"SKIPPED   {IDS[0]}: the artifact no longer validates" in printed
    assert "org/slipping" in printed  # the others were re-evaluated
    diff = (repo / "out" / "DIFF.md").read_text()
    assert "## Entries not re-evaluated" in diff and IDS[0] in diff


def test_a_task_without_holdout_gets_the_interval_submit_gives(repo: Path,
                                                                smollm: Any) -> None:
    """One code path for AUROC CIs: reeval on the registered test set reproduces the
    interval ``submit``'s headline computes for the same scores, seed and resamples."""
    from probebench.artifact import load_probe
    from probebench.evaluation.headline import Flat, headline
    from probebench.models import Site, extract

    catalog = TaskCatalog.for_repo(repo)
    (change,) = [c for c in reeval(repo / "registry", repo, repo / "out-plain",
                                   catalog=catalog, bootstrap=100, seed=3)
                 if c.task == "blimp_passive_1"]
    data = catalog.load("blimp_passive_1")
    assert change.version == 1 and change.test_sha256 == data.spec.test_sha256
    weights = load_probe(repo / "registry/artifacts/verb")
    acts = extract(smollm, Flat.of(data.test).prompts, [Site(6, "last_token")],
                   progress=False)[Site(6, "last_token")]
    head = headline("blimp_passive_1", data.format, data.test,
                    weights.predict_proba(acts)[:, 1], seed=3, n_resamples=100)
    assert (change.new_auroc, change.ci_low, change.ci_high) == (
        head.auroc.value, head.auroc.ci_low, head.auroc.ci_high)


def test_shards() -> None:
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x"):
        with pytest.raises(InputError, match="--shard"):
            parse_shard(bad)


REFERENCE = "blimp-det-noun-smollm2-135m-l15-v1"
TASK = "blimp_determiner_noun_agreement_1"


@pytest.fixture(scope="module")
def reference_repo(smollm: Any, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[Path, float]:
    """A registry with the BLiMP reference probe twice: stored as measured on the test
    set, and planted 12 points above what its holdout gives; (root, test-set AUROC)."""
    import shutil

    import numpy as np

    from probebench.artifact import load_probe, manifest, scan
    from probebench.evaluation.headline import Flat, task_auroc
    from probebench.evaluation.results import IntervalOut
    from probebench.models import Site, extract

    root = tmp_path_factory.mktemp("reeval-reference")
    catalog = copy_catalog(root)
    folder = root / "registry/artifacts" / REFERENCE
    shutil.copytree(Path(__file__).parents[1] / "registry/artifacts" / REFERENCE, folder)
    sha = manifest(scan(folder)).sha256
    weights = load_probe(folder)
    site = Site(15, "last_token")

    def auroc_on(items: Any) -> float:
        acts = extract(smollm, Flat.of(items).prompts, [site], progress=False)[site]
        iv = task_auroc(TASK, items, weights.predict_proba(acts)[:, 1], n_resamples=100)
        assert iv.value is not None
        return iv.value

    test_auroc = auroc_on(catalog.load(TASK).test)
    holdout_auroc = auroc_on(catalog.reeval_set(TASK).data.test)
    for name, stored in (("unchanged", test_auroc), ("planted", holdout_auroc + 0.12)):
        entry_id = f"org/{name}-smollm2-135m-l15-v1"
        data = {"id": entry_id, "name": entry_id.split("/")[1], "short_name": name,
                "author": "A", "org": "org", "category": "grammar", "probe_type": "linear",
                "model": "smollm2-135m", "layer": 15, "position": "last_token",
                "artifact_url": f"registry/artifacts/{REFERENCE}", "artifact_sha256": sha,
                "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
                "release": "2026-11-01", "param_count": 577, "size_mb": 0.01,
                "tagline": "t", "description": "d", "status": "live", "tasks": [TASK]}
        path = entry_path(root / "registry", entry_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        result = synthetic_result(TASK, 0.3, np.random.default_rng(0)).model_copy(update={
            "auroc": IntervalOut(value=stored, ci_low=stored - 0.02, ci_high=stored + 0.02,
                                 resamples=100, dropped=0)})
        out = result_path(root / "registry", entry_id, TASK)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(ResultHistory(entry=entry_id, task=TASK,
                                     history=[synthetic_record(result)]).to_json())
    return root, test_auroc


def test_a_probe_12_points_worse_on_the_holdout_is_listed_and_deprecated(
        reference_repo: tuple[Path, float]) -> None:
    root, _ = reference_repo
    done = reeval(root / "registry", root, root / "out", catalog=TaskCatalog.for_repo(root),
                  bootstrap=200)
    (planted,) = [c for c in done if c.entry.startswith("org/planted")]
    assert planted.version == 2 and planted.drop_points == pytest.approx(12.0, abs=1e-3)
    assert planted.beyond_ci and planted.action == "deprecate"
    assert "org/planted" in (root / "out" / "DIFF.md").read_text()
    entry = read_entry(entry_path(root / "registry", planted.entry))
    assert entry.status == "deprecated" and "fell 12.0 points" in (entry.notice or "")


def test_an_unchanged_probe_stays_within_5_points_on_its_holdout(
        reference_repo: tuple[Path, float]) -> None:
    """The holdout is drawn from the test set's distribution and never trained on, so
    the reference probe scores there what it scores on the test set."""
    root, test_auroc = reference_repo
    done = reeval(root / "registry", root, root / "out2",
                  catalog=TaskCatalog.for_repo(root), bootstrap=200)
    (steady,) = [c for c in done if c.entry.startswith("org/unchanged")]
    assert steady.old_auroc == pytest.approx(test_auroc, abs=1e-6)
    assert abs(steady.drop_points) < 5.0 and steady.action == "none"
    assert read_entry(entry_path(root / "registry", steady.entry)).status == "live"
