"""The causal record of an entry (``Submission.causal``, ``submit --causal``) is kept
beside its results in ``_causal.json``, under the generalisation record's rules: real
files written and read through the store, the submissions built from a synthetic stored
result (no model runs)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from probebench.cli import registry as registry_cli
from probebench.errors import InputError
from probebench.evaluation.results import (
    CausalAblationOut,
    CausalOut,
    LimitOut,
    Submission,
)
from probebench.registry.store import (
    CAUSAL_FILE,
    causal_path,
    latest_causal,
    latest_causal_record,
    latest_results,
    read_causal,
    result_path,
    store_causal,
    store_submission,
)
from tests.registry_fixture import synthetic_record, synthetic_result

ENTRY = "org/causal-smollm2-135m-l1-v1"
TASK = "blimp_passive_1"
ALPHAS = [-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0]


def causal_block(slope: float = 0.25) -> CausalOut:
    """A measured test whose curve is the line ``slope * alpha`` (so its effect is
    ``slope``) over four controls."""
    controls = [-0.05, 0.02, 0.04, 0.1]
    return CausalOut(
        applicable=True, readout={"kind": "answer"}, alphas=ALPHAS, seed=0, effect=slope,
        ci=(slope - 0.1, slope + 0.1), wrong_sign_effect=-slope,
        curve=[slope * a for a in ALPHAS], controls=controls,
        control_percentile=100.0 * sum(c < slope for c in controls) / len(controls),
        direction_std=1.5,
        ablation=CausalAblationOut(accuracy_before=0.8, accuracy_after=0.6,
                                   accuracy_change=-0.2, auroc_before=0.9, auroc_after=0.7,
                                   auroc_change=-0.2, mean_readout_change=-0.3),
        items={"n_units": 40, "n_items": 20})


def submission(block: dict[str, CausalOut] | None) -> Submission:
    result = synthetic_result(TASK, 0.4, np.random.default_rng(0), n_items=10)
    record = synthetic_record(result)
    return Submission(
        spec_version="0.3.0", probebench_version="0.1.0", probe=record.probe,
        model=record.model, device=record.device, seed=record.seed,
        bootstrap_resamples=record.bootstrap_resamples, versions=record.versions,
        definitions={}, tasks=[record.result], run=record.run, causal=block)


def test_the_record_round_trips_beside_the_results(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    whole = submission({TASK: causal_block()})
    stored = store_submission(registry, ENTRY, whole) + store_causal(registry, ENTRY, whole)
    path = causal_path(registry, ENTRY)
    assert stored == [result_path(registry, ENTRY, TASK), path]
    assert path.name == CAUSAL_FILE and path.parent == stored[0].parent
    # the results store never reads it as a task
    assert list(latest_results(registry, ENTRY)) == [TASK]
    assert latest_causal(registry, ENTRY) == {TASK: causal_block()}
    record = latest_causal_record(registry, ENTRY)
    assert record is not None
    # provenance: the bundle, the task's test set, the model, the seed and the run
    assert record.probe.bundle_sha256 == whole.probe.bundle_sha256
    assert record.test_sha256 == {TASK: whole.tasks[0].test_sha256}
    assert (record.model, record.seed, record.run) == (whole.model, whole.seed, whole.run)
    assert json.loads(path.read_text())["entry"] == ENTRY


def test_a_new_record_only_beyond_the_contract(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    path = causal_path(registry, ENTRY)
    assert store_causal(registry, ENTRY, submission({TASK: causal_block(0.25)})) == [path]
    # the same numbers, and numbers within the contract (1e-6 < 1e-5): nothing appended
    assert store_causal(registry, ENTRY, submission({TASK: causal_block(0.25)})) == []
    assert store_causal(registry, ENTRY, submission({TASK: causal_block(0.250001)})) == []
    # an effect that moved: a new record, the old one kept
    assert store_causal(registry, ENTRY, submission({TASK: causal_block(0.3)})) == [path]
    assert [r.causal[TASK].effect for r in read_causal(path)] == [0.25, 0.3]
    assert latest_causal(registry, ENTRY)[TASK].effect == 0.3


def test_reduced_precision_gives_way_to_float32(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    half = submission({TASK: causal_block(0.2)})
    half = half.model_copy(update={"model": {**half.model, "dtype": "bfloat16"}})
    assert store_causal(registry, ENTRY, half) == [causal_path(registry, ENTRY)]
    assert store_causal(registry, ENTRY, submission({TASK: causal_block(0.3)}))
    # the float32 record is read, and a later bfloat16 one is not stored beside it
    assert latest_causal(registry, ENTRY)[TASK].effect == 0.3
    assert store_causal(registry, ENTRY, half.model_copy(
        update={"causal": {TASK: causal_block(0.1)}})) == []
    assert len(read_causal(causal_path(registry, ENTRY))) == 2


def test_limited_and_dirty_submissions_are_refused_a_quick_one_is_not(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    whole = submission({TASK: causal_block()})
    limited = whole.model_copy(update={"limit": LimitOut(items=5, note="limited to 5 "
                                                         "items per task: not for the "
                                                         "registry")})
    with pytest.raises(InputError, match="limited to 5 items per task"):
        store_causal(registry, ENTRY, limited)
    # the block does not depend on the other stages: a quick submission stores it
    skipped = whole.model_copy(update={"stages_skipped": {"latency": "--skip latency"},
                                       "profile": "quick"})
    assert store_causal(tmp_path / "quick", ENTRY, skipped)
    assert latest_causal(tmp_path / "quick", ENTRY)[TASK] == whole.causal[TASK]  # type: ignore[index]
    assert whole.run is not None
    dirty = whole.model_copy(update={"run": whole.run.model_copy(
        update={"probebench_commit": "ab" * 20 + "+dirty"})})
    with pytest.raises(InputError, match="uncommitted changes"):
        store_causal(registry, ENTRY, dirty)
    assert not causal_path(registry, ENTRY).exists()
    assert store_causal(registry, ENTRY, dirty, allow_dirty=True)
    # no block: nothing stored, and none read
    assert store_causal(tmp_path / "other", ENTRY, submission(None)) == []
    assert latest_causal(tmp_path / "other", ENTRY) == {}
    assert latest_causal_record(tmp_path / "other", ENTRY) is None


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    path = causal_path(tmp_path, ENTRY)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(InputError, match=r"_causal\.json: not valid JSON"):
        latest_causal(tmp_path, ENTRY)
    path.write_text(json.dumps({"entry": ENTRY, "history": [{"causal": {}}]}))
    with pytest.raises(InputError, match=r"_causal\.json: .*not a causal-test file"):
        latest_causal(tmp_path, ENTRY)


def test_registry_evaluate_takes_causal() -> None:
    """``registry evaluate --causal`` reaches ``cmd_evaluate`` as ``args.causal``."""
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    registry_cli.register(sub)
    on = parser.parse_args(["registry", "evaluate", ENTRY, "--causal"])
    off = parser.parse_args(["registry", "evaluate", ENTRY])
    assert (on.causal, off.causal) == (True, False)
    assert on.func is registry_cli.cmd_evaluate
