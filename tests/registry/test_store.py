"""Results measured by uncommitted code (a ``+dirty`` probebench commit) are refused by
the store unless the caller allows them explicitly, and the leaderboard marks them; a
latency measured on a loaded machine is never stored and never replaces a stored one."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.results import ProbeInfo, RunInfo, Submission, Timing
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


# --- a latency measured on a loaded machine is never stored ---------------------------

LOADED = ("withheld: measured 521.9 ms while this process waited for a CPU 45% of the "
          "time (schedstat; at most 10% is stored): the machine was loaded")


def _timed(strength: float, *, latency: float | None, hardware: str = "Test CPU (2 cores)",
           evaluated_at: str = "2026-11-23T05:00:00Z") -> Submission:
    """A clean submission of ``strength`` whose latency was ``latency`` ms, or withheld
    as measured on a loaded machine (None)."""
    sub = _submission("c" * 40)
    run = sub.run.model_copy(update={"hardware": hardware, "evaluated_at": evaluated_at}) \
        if sub.run else None
    timing = Timing(latency_ms={} if latency is None else {TASK: latency}, latency_prompts=20,
                    latency_withheld={TASK: LOADED} if latency is None else {},
                    wall_seconds=1.0)
    return sub.model_copy(update={
        "tasks": [synthetic_result(TASK, strength, np.random.default_rng(0))],
        "timing": timing, "run": run})


def test_a_withheld_latency_makes_no_record_and_replaces_no_stored_one(tmp_path: Path
                                                                       ) -> None:
    path = result_path(tmp_path, ENTRY, TASK)
    assert store_submission(tmp_path, ENTRY, _timed(0.3, latency=51.2)) == [path]
    stored = path.read_bytes()
    # the same numbers timed on a loaded machine: nothing is stored, the latency stays
    assert store_submission(tmp_path, ENTRY, _timed(0.3, latency=None)) == []
    assert path.read_bytes() == stored
    (record,) = read_history(path)
    assert (record.latency_ms, record.latency_note) == (51.2, None)
    # new numbers timed on a loaded machine: a new record, which keeps the stored
    # latency of the same hardware and says where it came from and why
    later = "2026-11-26T09:52:50Z"
    assert store_submission(tmp_path, ENTRY, _timed(0.6, latency=None,
                                                    evaluated_at=later)) == [path]
    first, second = read_history(path)
    assert first.latency_ms == second.latency_ms == 51.2
    assert second.latency_note is not None and second.latency_note.startswith(LOADED)
    assert "carried from the record evaluated at 2026-11-23T05:00:00Z" in second.latency_note
    assert second.deterministic() != first.deterministic()
    assert "latency_note" not in second.deterministic()


def test_a_withheld_latency_on_other_hardware_is_stored_as_none_with_its_note(
        tmp_path: Path) -> None:
    path = result_path(tmp_path, ENTRY, TASK)
    store_submission(tmp_path, ENTRY, _timed(0.3, latency=51.2))
    store_submission(tmp_path, ENTRY, _timed(0.6, latency=None,
                                             hardware="Other CPU (2 cores, AVX512 kernels)"))
    _, moved = read_history(path)
    assert (moved.latency_ms, moved.latency_note) == (None, LOADED)
    # an idle run's own latency is stored as measured, without a note
    store_submission(tmp_path, ENTRY, _timed(0.9, latency=48.0))
    assert (read_history(path)[-1].latency_ms, read_history(path)[-1].latency_note) == (
        48.0, None)
    # and a submission that timed nothing (no timing block) carries nothing either
    untimed = _timed(0.1, latency=48.0).model_copy(update={"timing": None})
    store_submission(tmp_path, ENTRY, untimed)
    assert (read_history(path)[-1].latency_ms, read_history(path)[-1].latency_note) == (
        None, None)


def test_a_record_without_provenance_waits_for_an_unloaded_run(tmp_path: Path) -> None:
    """A record stored before provenance was kept takes the run block and the latency of
    the first run that reproduces it, never a withheld latency."""
    path = result_path(tmp_path, ENTRY, TASK)
    old = _timed(0.3, latency=63.7).model_copy(update={"run": None})
    store_submission(tmp_path, ENTRY, old)
    before = path.read_bytes()
    assert store_submission(tmp_path, ENTRY, _timed(0.3, latency=None)) == []
    assert path.read_bytes() == before
    assert store_submission(tmp_path, ENTRY, _timed(0.3, latency=50.0)) == [path]
    (record,) = read_history(path)
    assert record.run is not None and record.latency_ms == 50.0
