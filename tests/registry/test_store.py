"""Results measured by uncommitted code (a ``+dirty`` probebench commit) are refused by
the store unless the caller allows them explicitly, and the leaderboard marks them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.results import ProbeInfo, RunInfo, Submission
from probebench.evaluation.session import Session, SubmitOptions
from probebench.leaderboard.build import _provenance
from probebench.leaderboard.entry_page import history
from probebench.registry.store import (
    is_dirty,
    latest_results,
    read_history,
    result_path,
    store_submission,
)
from probebench.runs import evaluate as evaluate_module
from probebench.runs.evaluate import evaluate_entry
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_result

ENTRY = "testorg/passive-smollm2-135m-l1-v1"
TASK = "blimp_passive_1"
REPO = Path(__file__).resolve().parents[2]
LIVE = "probebench/verb-grammar-mlp-smollm2-135m-l20-v1"


def _submission(commit: str | None) -> Submission:
    run = RunInfo(evaluated_at="2026-11-23T05:00:00Z", probebench_commit=commit,
                  hardware="Test CPU (2 cores)", python="3.11.7")
    return Submission(spec_version="0.0.1", probebench_version="x",
                      probe=ProbeInfo(id="p", bundle_sha256="0" * 64, probe_type="linear",
                                      model="smollm2-135m", layer=1, position="last_token",
                                      license="MIT"),
                      model={"name": "smollm2-135m", "dtype": "float32"}, device="cpu",
                      seed=0, bootstrap_resamples=100, versions={}, definitions={},
                      tasks=[synthetic_result(TASK, 0.3, np.random.default_rng(0))], run=run)


def test_is_dirty() -> None:
    assert is_dirty("a" * 40 + "+dirty")
    assert not is_dirty("a" * 40) and not is_dirty(None)


def test_the_store_refuses_results_of_uncommitted_code(tmp_path: Path) -> None:
    dirty = _submission("f" * 40 + "+dirty")
    with pytest.raises(InputError, match=r"uncommitted changes \(commit f{40}\+dirty\).*"
                                         r"commit the changes first.*--allow-dirty"):
        store_submission(tmp_path, ENTRY, dirty)
    assert not (tmp_path / "results").exists()
    # a clean commit, or none (an installed wheel), is stored as before
    assert store_submission(tmp_path / "clean", ENTRY, _submission("c" * 40))
    assert store_submission(tmp_path / "wheel", ENTRY, _submission(None))
    assert not latest_results(tmp_path / "clean", ENTRY)[TASK].from_dirty_tree


def test_allowed_explicitly_it_is_stored_and_marked(tmp_path: Path) -> None:
    dirty = _submission("f" * 40 + "+dirty")
    assert store_submission(tmp_path, ENTRY, dirty, allow_dirty=True) == [
        result_path(tmp_path, ENTRY, TASK)]
    (record,) = read_history(result_path(tmp_path, ENTRY, TASK))
    assert record.from_dirty_tree
    rows = dict(_provenance(record))
    assert "uncommitted changes" in rows["probebench"]
    (shown,) = history(tmp_path, ENTRY, TASK)
    assert "uncommitted changes" in shown["probebench"]
    clean = store_submission(tmp_path / "clean", ENTRY, _submission("c" * 40))
    (record,) = read_history(clean[0])
    assert "uncommitted" not in dict(_provenance(record))["probebench"]
    assert "uncommitted" not in history(tmp_path / "clean", ENTRY, TASK)[0]["probebench"]


def test_registry_evaluate_refuses_before_any_work(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setattr(evaluate_module, "probebench_commit", lambda: "e" * 40 + "+dirty")
    session = Session(TaskCatalog.default(), SubmitOptions(progress=False))
    with pytest.raises(InputError, match="commit the changes first"):
        evaluate_entry(LIVE, REPO / "registry", REPO, session)
    assert session.resolved == {} and session.loaded == {}
    # the command says so, and exits non-zero, with nothing stored
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "registry", repo / "registry")
    before = sorted(p.stat().st_mtime_ns for p in (repo / "registry").rglob("*.json"))
    assert main(["registry", "evaluate", LIVE, "--repo", str(repo), "--quiet"]) != 0
    assert sorted(p.stat().st_mtime_ns for p in (repo / "registry").rglob("*.json")) == before


def test_the_commands_take_the_override(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["registry", "evaluate", "--help"], ["registry", "publish", "--help"]):
        with pytest.raises(SystemExit):
            main(command)
        assert "--allow-dirty" in capsys.readouterr().out
