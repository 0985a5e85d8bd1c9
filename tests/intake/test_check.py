from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.intake.check import check_registry
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.store import latest_results, read_history, store_submission
from probebench.sources.resolve import resolve_artifact
from probebench.tasks.catalog import TaskCatalog
from tests.artifacts import entry_numbers, make_artifact
from tests.catalogs import copy_catalog

ENTRY_ID = "testorg/verb-tense-smollm2-135m-l15-v1"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with tasks.yaml, one artifact and one entry pointing at it."""
    copy_catalog(tmp_path)
    folder, *_ = make_artifact(tmp_path / "registry" / "artifacts" / "verb-tense")
    from probebench.artifact import manifest, scan
    sha = manifest(scan(folder)).sha256
    _write_entry(tmp_path, {"artifact_sha256": sha, **entry_numbers(folder)})
    return tmp_path


def _entry(**changes: Any) -> dict[str, Any]:
    entry = {
        "id": ENTRY_ID, "name": "Verb tense probe", "short_name": "verb-tense",
        "author": "Test Author", "org": "testorg", "category": "grammar",
        "probe_type": "linear", "model": "smollm2-135m", "layer": 15,
        "position": "last_token", "paper": None, "paper_title": None,
        "artifact_url": "registry/artifacts/verb-tense", "artifact_sha256": "0" * 64,
        "reproducer_notebook": "registry/artifacts/verb-tense/train.ipynb",
        "colab_url": None, "license": "Apache-2.0", "release": "2026-11-01",
        "param_count": 577, "size_mb": 0.01, "tagline": "Reads tense at layer 15",
        "description": "A test entry.", "status": "live", "tasks": ["verb_grammar"],
        "transfer_targets": []}
    entry.update(changes)
    return entry


def _write_entry(root: Path, changes: dict[str, Any], path: Path | None = None) -> Path:
    data = _entry(**changes)
    path = path or entry_path(root / "registry", data["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_good_entry_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (result,) = check_registry(repo / "registry", repo, catalog=TaskCatalog.for_repo(repo))
    assert result.ok, result.problems
    assert result.notes == ["artifact found via repository path"]
    assert main(["registry", "--registry", str(repo / "registry"), "--repo", str(repo),
                 "check"]) == 0
    assert "1 of 1 entries pass" in capsys.readouterr().out


@pytest.mark.parametrize(("changes", "message"), [
    ({"id": "NoSlash"}, "field 'id'"),
    ({"status": "published"}, "field 'status'"),
    ({"short_name": "x" * 41}, "field 'short_name'"),
    ({"colour": "red"}, "field 'colour'"),
    ({"layer": -1}, "field 'layer'"),
    ({"artifact_sha256": "xyz"}, "field 'artifact_sha256'"),
])
def test_schema_rules(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(_entry(**changes)))
    with pytest.raises(InputError, match=message):
        read_entry(path)


def _problems(repo: Path) -> list[str]:
    return [p for r in check_registry(repo / "registry", repo,
                                      catalog=TaskCatalog.for_repo(repo)) for p in r.problems]


def test_hash_mismatch_is_caught(repo: Path) -> None:
    (repo / "registry/artifacts/verb-tense/README.md").write_text("changed after hashing\n")
    assert any("bundle_hash" in p and "differs from the expected" in p for p in _problems(repo))


def test_file_name_must_match_id(repo: Path) -> None:
    path = entry_path(repo / "registry", ENTRY_ID)
    path.rename(path.with_name("elsewhere.yaml"))
    assert any("belongs in probes/testorg/verb-tense-smollm2-135m-l15-v1.yaml" in p
               for p in _problems(repo))


def test_ids_are_unique(repo: Path) -> None:
    src = entry_path(repo / "registry", ENTRY_ID)
    shutil.copy(src, src.with_name("copy.yaml"))
    assert any("is also used by" in p for p in _problems(repo))


def test_unknown_task_license_and_meta_mismatch(repo: Path) -> None:
    sha = read_entry(entry_path(repo / "registry", ENTRY_ID)).artifact_sha256
    _write_entry(repo, {"artifact_sha256": sha, "tasks": ["no_such_task"], "layer": 14,
                        "license": "Apache 2"})
    problems = " | ".join(_problems(repo))
    assert f"tasks not registered in the tasks used, {repo / 'tasks.yaml'}" in problems
    assert ": no_such_task (your own task: `registry check --include TASKS_YAML`" in problems
    assert "layer is 14 but the artifact's meta.yaml says 15" in problems
    assert "not a known SPDX id" in problems


def test_artifact_urls(repo: Path) -> None:
    folder = repo / "registry/artifacts/verb-tense"
    assert resolve_artifact(f"file://{folder}", repo) == (folder, "file")
    with pytest.raises(InputError, match="pin a revision"):
        resolve_artifact("hf://someone/probes/verb", repo)
    with pytest.raises(InputError, match="not in the local Hugging Face cache"):
        resolve_artifact("hf://someone/probes@0123abc/verb", repo)
    with pytest.raises(InputError, match="only repository paths"):
        resolve_artifact("https://example.org/x", repo)
    with pytest.raises(InputError, match="is not a folder"):
        resolve_artifact("registry/artifacts/missing", repo)


def test_changed_entries_only(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    (repo / "registry/owners.yaml").write_text("orgs:\n  testorg: [t]\n")
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", "registry")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "base")
    args = ["registry", "--registry", str(repo / "registry"), "--repo", str(repo), "check",
            "--changed", "--base", "HEAD", "--author", "t"]
    assert main(args) == 0
    assert "no entry changed since HEAD" in capsys.readouterr().out
    path = entry_path(repo / "registry", ENTRY_ID)
    path.write_text(path.read_text().replace("A test entry.", "Edited."))
    # a changed entry goes back to review: a live one may not be edited in place
    assert main(args) == 1
    assert "status is 'live'; a probe pull request sets status: pending_review" in \
        capsys.readouterr().out
    path.write_text(path.read_text().replace("status: live", "status: pending_review"))
    assert main(args) == 0
    assert "1 of 1 entries pass" in capsys.readouterr().out
    # an artifact folder no changed entry points at is someone else's
    other = repo / "registry/artifacts/someone-else/meta.yaml"
    other.parent.mkdir(parents=True)
    other.write_text("spec_version: 0.0.1\n")
    assert main(args) == 1
    assert ("registry/artifacts/someone-else: changed, but no changed entry's artifact_url "
            "points at it") in capsys.readouterr().out


@pytest.mark.parametrize("url", ["file:///etc", "../outside", "registry/artifacts/../../x",
                                 "/abs/path", "registry/probes", "hf://org/probes@main/verb",
                                 "hf://org/probes@v1.0"])
def test_registry_artifacts_live_in_the_registry_or_on_the_hub(repo: Path, url: str) -> None:
    _write_entry(repo, {"artifact_url": url})
    (result,) = check_registry(repo / "registry", repo, catalog=TaskCatalog.for_repo(repo))
    assert any("a registry entry's artifact is a folder registry/artifacts/<folder> or "
               "hf://" in p for p in result.problems), result.problems


def test_a_pinned_hub_artifact_passes_the_registry_rule() -> None:
    from probebench.sources.resolve import registry_artifact_problem

    assert registry_artifact_problem("hf://org/probes@" + "0123abcd" * 5 + "/verb") is None
    assert registry_artifact_problem("registry/artifacts/verb-tense") is None


def test_changed_entries_from_the_repo_root_with_relative_paths(
        repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """As the pull-request workflow runs it: from the root, default --registry."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo,
                       check=True, capture_output=True)

    git("init", "-q")
    git("add", "registry")
    git("commit", "-qm", "base")
    broken = _entry(id="testorg/broken-smollm2-135m-l15-v1", artifact_sha256="1" * 64)
    path = entry_path(repo / "registry", broken["id"])
    path.write_text(yaml.safe_dump(broken, sort_keys=False))
    git("add", "registry")
    git("commit", "-qm", "adds a broken entry")
    monkeypatch.chdir(repo)
    assert main(["registry", "check", "--changed", "--base", "HEAD~1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  testorg/broken-smollm2-135m-l15-v1" in out and "0 of 1 entries pass" in out


def test_entries_written_with_model_id_are_still_read(tmp_path: Path) -> None:
    data = _entry()
    data["model_id"] = data.pop("model")
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(data))
    assert read_entry(path).model == "smollm2-135m"
    data["model"] = "smollm2-135m"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="give 'model' only"):
        read_entry(path)


def test_results_are_read_through_their_schema(tmp_path: Path) -> None:
    """A results file whose fields drifted fails at the boundary, naming file and field."""
    import numpy as np

    from probebench.registry.store import ResultHistory
    from tests.registry_fixture import synthetic_record, synthetic_result

    record = synthetic_record(synthetic_result("blimp_passive_1", 0.3,
                                               np.random.default_rng(0)))
    doc = json.loads(ResultHistory(entry=ENTRY_ID, task="blimp_passive_1",
                                   history=[record]).to_json())
    doc["history"][0]["result"]["area_under_roc"] = doc["history"][0]["result"].pop("auroc")
    path = tmp_path / "blimp_passive_1.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"blimp_passive_1\.json: field "
                                         r"'history\.0\.result\.auroc': Field required"):
        read_history(path)


def test_results_history_is_kept(tmp_path: Path) -> None:
    import numpy as np

    from probebench.evaluation.results import ProbeInfo, RunInfo, Submission, Timing
    from tests.registry_fixture import synthetic_result

    def submission(strength: float, run: RunInfo | None = None) -> Submission:
        task = synthetic_result("blimp_passive_1", strength, np.random.default_rng(0))
        return Submission(spec_version="0.0.1", probebench_version="x",
                          probe=ProbeInfo(id="p", bundle_sha256="0" * 64, probe_type="linear",
                                          model="smollm2-135m", layer=1, position="last_token",
                                          license="MIT"),
                          model={}, device="cpu", seed=0, bootstrap_resamples=100,
                          versions={}, definitions={}, tasks=[task],
                          timing=Timing(latency_ms={"blimp_passive_1": 3.0 + strength},
                                        latency_prompts=3, wall_seconds=1.0), run=run)

    root = tmp_path / "registry"
    first = store_submission(root, ENTRY_ID, submission(0.3))
    assert len(first) == 1
    # the same deterministic results again: nothing is written
    same = store_submission(root, ENTRY_ID, submission(0.3))
    assert same == [] and len(read_history(first[0])) == 1
    store_submission(root, ENTRY_ID, submission(0.5))
    history = read_history(first[0])
    assert len(history) == 2
    assert latest_results(root, ENTRY_ID)["blimp_passive_1"] == history[-1]
    doc = json.loads(first[0].read_text())
    assert doc["entry"] == ENTRY_ID and doc["task"] == "blimp_passive_1"
    # a record stored without provenance gains the run block of the first exact re-run,
    # and only that: a later identical run changes nothing
    run = RunInfo(evaluated_at="2026-11-23T05:00:00Z", probebench_commit="c" * 40,
                  hardware="Test CPU (2 cores)", python="3.11.7")
    assert store_submission(root, ENTRY_ID, submission(0.5, run)) == first
    backfilled = read_history(first[0])
    assert len(backfilled) == 2 and backfilled[-1].run == run
    assert backfilled[-1].deterministic() == history[-1].deterministic()
    later = run.model_copy(update={"evaluated_at": "2026-11-24T05:00:00Z"})
    assert store_submission(root, ENTRY_ID, submission(0.5, later)) == []
    assert read_history(first[0])[-1].run == run


def test_owners_decide_who_changes_an_org(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo,
                       check=True, capture_output=True)

    (repo / "registry/owners.yaml").write_text("orgs:\n  testorg: [ada]\n")
    git("init", "-q")
    git("add", "registry")
    git("commit", "-qm", "base")
    path = entry_path(repo / "registry", ENTRY_ID)
    path.write_text(path.read_text().replace("status: live", "status: pending_review"))
    args = ["registry", "--registry", str(repo / "registry"), "--repo", str(repo), "check",
            "--changed", "--base", "HEAD"]
    assert main([*args, "--author", "Ada"]) == 0  # logins compare case-insensitively
    capsys.readouterr()
    assert main([*args, "--author", "mallory"]) == 1
    assert "org 'testorg' belongs to ada (registry/owners.yaml); mallory may not" in \
        capsys.readouterr().out
    # the owners file is read from the base branch: an edit in the pull request is not
    (repo / "registry/owners.yaml").write_text("orgs:\n  testorg: [mallory]\n")
    assert main([*args, "--author", "mallory"]) == 1
    assert "org 'testorg' belongs to ada" in capsys.readouterr().out
    git("rm", "-qf", "registry/owners.yaml")  # an org with entries and no owners: closed
    git("commit", "-qm", "no owners file")
    assert main([*args, "--author", "ada"]) == 1
    assert "has entries on the base branch" in capsys.readouterr().out


def test_one_artifact_backs_one_entry(repo: Path) -> None:
    """Re-registering someone's artifact under a new id is refused."""
    sha = read_entry(entry_path(repo / "registry", ENTRY_ID)).artifact_sha256
    copy = _write_entry(repo, {"id": "thief/verb-tense-smollm2-135m-l15-v1", "org": "thief",
                               "artifact_sha256": sha})
    results = check_registry(repo / "registry", repo, catalog=TaskCatalog.for_repo(repo))
    (thief,) = [r for r in results if r.path == copy]
    assert any(f"artifact {sha[:12]} is already registered by" in p for p in thief.problems)


def test_registry_check_include_adds_your_own_tasks_locally(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An entry on a task of your own fails without --include (naming the catalog and the
    option), passes with it, and --include is refused for a pull request's check."""
    spec = TaskCatalog.for_repo(repo).spec("verb_grammar").model_dump(
        mode="json", exclude_defaults=True)
    mine = tmp_path / "mine" / "tasks.yaml"
    mine.parent.mkdir()
    mine.write_text(yaml.safe_dump({"version": 1, "tasks": [
        {**spec, "id": "my_verbs", "test_sha256": "cd" * 32}]}, sort_keys=False))
    sha = read_entry(entry_path(repo / "registry", ENTRY_ID)).artifact_sha256
    _write_entry(repo, {"artifact_sha256": sha, "tasks": ["verb_grammar", "my_verbs"],
                        **entry_numbers(repo / "registry" / "artifacts" / "verb-tense")})
    base = ["registry", "--registry", str(repo / "registry"), "--repo", str(repo), "check"]
    capsys.readouterr()
    assert main(base) == 1
    out = capsys.readouterr().out
    assert f"tasks not registered in the tasks used, {repo / 'tasks.yaml'}" in out
    assert "my_verbs (your own task: `registry check --include TASKS_YAML`" in out
    assert main([*base, "--include", str(mine)]) == 0, capsys.readouterr()
    captured = capsys.readouterr()
    assert "1 of 1 entries pass (with the --include tasks" in captured.out
    assert f"included from {mine}" in captured.err  # the workspace line names the file
    assert main([*base, "--changed", "--include", str(mine)]) == 2
    assert "checked against the registered tasks only" in capsys.readouterr().err
