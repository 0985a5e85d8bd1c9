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
from probebench.registry.store import ResultHistory, result_path
from probebench.runs.reeval import reeval
from probebench.tasks.catalog import TaskCatalog
from tests.artifacts import train_task_probe
from tests.catalogs import copy_catalog
from tests.registry_fixture import synthetic_record, synthetic_result

IDS = ["org/steady-smollm2-135m-l6-v1", "org/slipping-smollm2-135m-l6-v1",
       "org/falling-smollm2-135m-l6-v1"]


# the tests re-evaluate the same entries on the same holdouts: one activation cache
pytestmark = pytest.mark.usefixtures("share_module_cache")


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
    from probebench.artifact import load_weights
    from probebench.evaluation.headline import Flat, headline
    from probebench.models import Site, extract

    catalog = TaskCatalog.for_repo(repo)
    (change,) = [c for c in reeval(repo / "registry", repo, repo / "out-plain",
                                   catalog=catalog, bootstrap=100, seed=3)
                 if c.task == "blimp_passive_1"]
    data = catalog.load("blimp_passive_1")
    assert change.version == 1 and change.test_sha256 == data.spec.test_sha256
    weights = load_weights(repo / "registry/artifacts/verb")
    acts = extract(smollm, Flat.of(data.test).prompts, [Site(6, "last_token")],
                   progress=False)[Site(6, "last_token")]
    head = headline("blimp_passive_1", data.format, data.test,
                    weights.predict_proba(acts)[:, 1], seed=3, n_resamples=100)
    assert (change.new_auroc, change.ci_low, change.ci_high) == (
        head.auroc.value, head.auroc.ci_low, head.auroc.ci_high)


def _live_entry(root: Path, entry_id: str, artifact: str, layer: int, position: str,
                task: str) -> None:
    from probebench.artifact import manifest, scan

    org, rest = entry_id.split("/")
    data = {"id": entry_id, "name": rest, "short_name": rest[:30], "author": "A", "org": org,
            "category": "grammar", "probe_type": "linear", "model": "smollm2-135m",
            "layer": layer, "position": position, "artifact_url": artifact,
            "artifact_sha256": manifest(scan(root / artifact)).sha256,
            "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
            "release": "2026-11-01", "param_count": 577, "size_mb": 0.01, "tagline": "t",
            "description": "d", "status": "live", "tasks": [task]}
    path = entry_path(root / "registry", entry_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def planned_repo(smollm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five live entries at two sites on four tasks: four (model, task) units, one of
    them serving two probes at two sites; one entry stored far above its holdout."""
    root = tmp_path_factory.mktemp("planned")
    copy_catalog(root)
    train_task_probe(root / "registry/artifacts/l6", smollm, "verb_grammar", n_train=200)
    train_task_probe(root / "registry/artifacts/l3", smollm, "verb_grammar", layer=3,
                     position="token_avg", n_train=200)
    for entry_id, artifact, layer, position, task in [
            ("org/a-smollm2-135m-l6-v1", "l6", 6, "last_token", "verb_grammar"),
            ("org/b-smollm2-135m-l3-v1", "l3", 3, "token_avg", "verb_grammar"),
            ("org/c-smollm2-135m-l6-v1", "l6", 6, "last_token", "blimp_passive_1"),
            ("org/d-smollm2-135m-l3-v1", "l3", 3, "token_avg", "syntaxgym_number_prep"),
            ("org/e-smollm2-135m-l6-v1", "l6", 6, "last_token",
             "blimp_determiner_noun_agreement_1")]:
        _live_entry(root, entry_id, f"registry/artifacts/{artifact}", layer, position, task)
    _store(root, "org/a-smollm2-135m-l6-v1", 0.999)  # far above what the holdout gives
    return root


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_plan_run_merge_on_three_groups_equals_the_unsharded_run(
        planned_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The workflow's flow (plan -> one `run` per matrix job -> merge), run locally:
    the same DIFF, diffs and deprecation patch as one unsharded run, and one forward
    pass per (model, task) whatever the number of probes and sites."""
    import shutil

    from probebench.runs.reeval import make_plan, read_plan

    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    for copy in (whole, sharded):
        shutil.copytree(planned_repo, copy)
    common = ["--bootstrap", "50", "--no-cache", "--quiet"]
    assert main(["reeval", "--repo", str(whole), "--out", str(whole / "out"), *common]) == 0
    printed = capsys.readouterr().out
    assert "(4 forward pass(es) of a model)" in printed  # one per unit, not per site

    plan_file = sharded / "plan.json"
    outputs = tmp_path / "github_output"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITHUB_OUTPUT", str(outputs))
        assert main(["reeval", "plan", "--repo", str(sharded), "--groups", "3",
                     "--bootstrap", "50", "--out", str(plan_file), "--github-output"]) == 0
    plan = read_plan(plan_file)
    assert [len(g.units) for g in plan.groups] == [1, 1, 2]
    lines = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert lines["groups"] == "3"
    assert json.loads(lines["matrix"]) == {"include": [
        {"group": g.id, "models": "smollm2-135m", "runs_on": "ubuntu-24.04"}
        for g in plan.groups]}
    verb = [u for g in plan.groups for u in g.units if u.task == "verb_grammar"]
    assert verb[0].sites == ["3:token_avg", "6:last_token"] and len(verb[0].entries) == 2
    for group in plan.groups:
        assert main(["reeval", "run", "--repo", str(sharded), "--plan", str(plan_file),
                     "--group", group.id, "--out", str(sharded / f"out-{group.id}"),
                     "--no-cache", "--quiet"]) == 0
    results = [str(sharded / f"out-{g.id}") for g in plan.groups]
    assert main(["reeval", "merge", "--repo", str(sharded), "--plan", str(plan_file),
                 *reversed(results), "--out", str(sharded / "out")]) == 0
    merged = _tree(sharded / "out")
    assert merged == _tree(whole / "out")
    assert b"org/a-smollm2-135m-l6-v1" in merged["DIFF.md"]
    assert _tree(sharded / "registry/probes") == _tree(whole / "registry/probes")
    assert read_entry(entry_path(sharded / "registry", "org/a-smollm2-135m-l6-v1")
                      ).status == "deprecated"
    # an unsharded plan is one group per model
    assert len(make_plan(planned_repo / "registry", TaskCatalog.for_repo(planned_repo)
                         ).groups) == 1


def test_merge_needs_every_group_of_its_plan_exactly_once(planned_repo: Path,
                                                          tmp_path: Path) -> None:
    from probebench.runs.reeval import GroupResult, make_plan, merge

    catalog = TaskCatalog.for_repo(planned_repo)
    plan = make_plan(planned_repo / "registry", catalog, groups=2)
    other = make_plan(planned_repo / "registry", catalog, groups=2, seed=1)

    def empty(group: str, sha: str = plan.sha256) -> GroupResult:
        return GroupResult(plan_sha256=sha, group=group, changes=[], failures={}, passes=0)

    registry = planned_repo / "registry"
    with pytest.raises(InputError, match="no result for group"):
        merge(plan, [empty("g1")], registry, tmp_path)
    with pytest.raises(InputError, match="given twice"):
        merge(plan, [empty("g1"), empty("g1"), empty("g2")], registry, tmp_path)
    with pytest.raises(InputError, match="another plan"):
        merge(plan, [empty("g1"), empty("g2", other.sha256)], registry, tmp_path)
    with pytest.raises(InputError, match="the plan has no group 'g9'"):
        plan.group("g9")
    assert not (tmp_path / "DIFF.md").exists()  # nothing written on a refused merge


REFERENCE = "blimp-det-noun-smollm2-135m-l15-v1"
TASK = "blimp_determiner_noun_agreement_1"


@pytest.fixture(scope="module")
def reference_repo(smollm: Any, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[Path, float]:
    """A registry with the BLiMP reference probe twice: stored as measured on the test
    set, and planted 12 points above what its holdout gives; (root, test-set AUROC)."""
    import shutil

    import numpy as np

    from probebench.artifact import load_weights, manifest, scan
    from probebench.evaluation.headline import Flat, headline_interval
    from probebench.evaluation.results import IntervalOut
    from probebench.models import Site, extract

    root = tmp_path_factory.mktemp("reeval-reference")
    catalog = copy_catalog(root)
    folder = root / "registry/artifacts" / REFERENCE
    shutil.copytree(Path(__file__).parents[2] / "registry/artifacts" / REFERENCE, folder)
    sha = manifest(scan(folder)).sha256
    weights = load_weights(folder)
    site = Site(15, "last_token")

    def auroc_on(items: Any) -> float:
        acts = extract(smollm, Flat.of(items).prompts, [site], progress=False)[site]
        iv = headline_interval(TASK, items, weights.predict_proba(acts)[:, 1],
                               n_resamples=100)
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
