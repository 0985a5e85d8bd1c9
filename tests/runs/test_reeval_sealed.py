"""Sealed holdouts end to end, with a throwaway key (tests never read the maintainers'
key): fresh items sealed through the CLI into a copy of the catalog; an audit with the
key catches a probe fitted to the test set and the public data, and leaves the unchanged
reference probe alone; without the key it audits the public generation 0; the plaintext
is in no tracked file and in no wheel; the scores stored on a sealed generation are kept
apart and feed the Goodhart-resistance axis."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from probebench.artifact import manifest, scan
from probebench.cli import main
from probebench.evaluation.headline import Flat, headline_interval
from probebench.evaluation.results import IntervalOut
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.store import ResultHistory, result_path
from probebench.runs.reeval import reeval
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.fresh_items import public_items
from probebench.tasks.sealed import (
    KEY_ENV,
    HoldoutKeyMissingError,
    current_generation,
    hidden_texts,
    items_from_text,
    leaks,
    unseal,
)
from tests.catalogs import copy_catalog
from tests.registry_fixture import synthetic_record, synthetic_result

REPO = Path(__file__).resolve().parents[2]
TASK = "blimp_irregular_plural_subject_verb_agreement_1"
REFERENCE = "blimp-irregular-sv-smollm2-135m-l15-v2"
#: a throwaway key of the tests' own, fixed so that the fresh items (and the numbers
#: below) are the same on every run
KEY = hashlib.sha256(b"probebench tests: a throwaway holdout key").hexdigest()
pytestmark = pytest.mark.usefixtures("share_module_cache")


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


def _entry(root: Path, entry_id: str, artifact: Path, auroc: float) -> None:
    """A live entry of ``artifact`` whose stored AUROC on TASK is ``auroc``."""
    data = {"id": entry_id, "name": entry_id.split("/")[1], "short_name": entry_id[4:30],
            "author": "A", "org": "org", "category": "grammar", "probe_type": "linear",
            "model": "smollm2-135m", "layer": 15, "position": "last_token",
            "artifact_url": artifact.relative_to(root).as_posix(),
            "artifact_sha256": manifest(scan(artifact)).sha256,
            "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
            "release": "2026-11-01", "param_count": 577, "size_mb": 0.01, "tagline": "t",
            "description": "d", "status": "live", "tasks": [TASK]}
    path = entry_path(root / "registry", entry_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = synthetic_result("blimp_passive_1", 0.3, np.random.default_rng(0)).model_copy(
        update={"id": TASK, "auroc": IntervalOut(value=auroc, ci_low=auroc - 0.02,
                                                  ci_high=auroc + 0.02, resamples=200,
                                                  dropped=0)})
    out = result_path(root / "registry", entry_id, TASK)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(ResultHistory(entry=entry_id, task=TASK,
                                 history=[synthetic_record(result)]).to_json())


@pytest.fixture(scope="module")
def sealed_repo(smollm: Any, tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[Path, Path, dict[str, float]]:
    """(root, key file, test AUROC by entry): a catalog copy whose TASK has a sealed
    generation 1 of fresh items (sealed with the CLI), the reference probe and a probe
    fitted to the test set plus public train data, both stored at their test AUROC."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from probebench.artifact import load_weights
    from probebench.artifact.weights import sklearn_to_weights
    from probebench.models import Site, extract
    from tests.artifacts import META, write_docs

    root = tmp_path_factory.mktemp("sealed-audit")
    catalog = copy_catalog(root)
    assert current_generation(catalog, TASK) is None  # the maintainers' one is left out
    key_file = root.parent / "holdout.key"
    key_file.write_text(KEY + "\n")
    key_file.chmod(0o600)
    assert main(["holdout", "seal", TASK, "--fresh", "--key", str(key_file),
                 "--tasks-file", str(root / "tasks.yaml")]) == 0
    assert current_generation(TaskCatalog.from_file(root / "tasks.yaml"), TASK) is not None

    site = Site(15, "last_token")
    data = catalog.load(TASK)

    def acts(items: Any) -> np.ndarray:
        return extract(smollm, Flat.of(items).prompts, [site], progress=False)[site]

    reference = root / "registry/artifacts" / REFERENCE
    shutil.copytree(REPO / "registry/artifacts" / REFERENCE, reference)
    # the cheat: the test set itself plus public train data, fitted hard
    train = data.splits["train"][:200]
    x = np.vstack([acts(data.test), acts(train)])
    y = np.array([p.label for p in Flat.of([*data.test, *train]).prompts])
    scaler = StandardScaler().fit(x)
    probe = LogisticRegression(C=10.0, max_iter=5000).fit(scaler.transform(x), y)
    cheat = root / "registry/artifacts/cheat"
    write_docs(cheat, {**META, "layer": 15, "position": "last_token",
                       "training_data": f"{TASK} test + train"})
    sklearn_to_weights(probe, scaler).save_native(cheat)

    test_acts = acts(data.test)
    stored = {}
    for entry_id, folder in (("org/unchanged-smollm2-135m-l15-v1", reference),
                             ("org/cheat-smollm2-135m-l15-v1", cheat)):
        weights = load_weights(folder)
        iv = headline_interval(TASK, data.test, weights.predict_proba(test_acts)[:, 1],
                               n_resamples=200)
        assert iv.value is not None
        stored[entry_id] = iv.value
        _entry(root, entry_id, folder, iv.value)
    return root, key_file, stored


def test_the_audit_with_the_key_deprecates_the_probe_fitted_to_the_test_set(
        sealed_repo: tuple[Path, Path, dict[str, float]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root, key_file, stored = sealed_repo
    monkeypatch.setenv(KEY_ENV, key_file.read_text())  # as the workflow passes the secret
    assert main(["reeval", "--out", str(root / "keyed"), "--bootstrap", "200", "--quiet",
                 "--repo", str(root), "--tasks-file", str(root / "tasks.yaml")]) == 0
    import json

    diff = {d["entry"]: d for d in json.loads((root / "keyed/diff.json").read_text())}
    cheat = json.loads((root / "keyed/org/cheat-smollm2-135m-l15-v1" / f"{TASK}.json"
                        ).read_text())
    assert cheat["sealed_generation"] == 1 and cheat["old_auroc"] == stored[
        "org/cheat-smollm2-135m-l15-v1"]
    # fitted to the test items: near-perfect there, at least 12 points lower on items
    # nobody could see, beyond the holdout's CI
    assert cheat["old_auroc"] > 0.95 and cheat["drop_points"] >= 12.0
    assert cheat["old_auroc"] > cheat["new_ci"][1]
    assert diff["org/cheat-smollm2-135m-l15-v1"]["action"] == "deprecate"
    entry = read_entry(entry_path(root / "registry", "org/cheat-smollm2-135m-l15-v1"))
    assert entry.status == "deprecated" and "sealed generation 1" in (entry.notice or "")
    assert "sealed generation 1" in (root / "keyed/DIFF.md").read_text()
    # the reference probe, trained on the train split only, stays within 5 points
    steady = diff["org/unchanged-smollm2-135m-l15-v1"]
    assert abs(steady["drop_points"]) < 5.0 and steady["action"] == "none"
    assert read_entry(entry_path(root / "registry", "org/unchanged-smollm2-135m-l15-v1")
                      ).status == "live"


def test_without_the_key_the_audit_says_so_and_reads_the_public_generation(
        sealed_repo: tuple[Path, Path, dict[str, float]],
        capsys: pytest.CaptureFixture[str]) -> None:
    root, _, _ = sealed_repo
    catalog = TaskCatalog.from_file(root / "tasks.yaml")
    registry = root / "registry-copy"
    shutil.copytree(root / "registry", registry)
    from probebench.evaluation.session import Session, SubmitOptions

    session = Session(catalog, SubmitOptions(bootstrap=200, progress=True))
    done = reeval(registry, root, root / "keyless", catalog=catalog, bootstrap=200,
                  session=session)
    assert {c.sealed_generation for c in done} == {None}
    assert {c.version for c in done} == {catalog.spec(TASK).holdouts[-1].version}
    err = capsys.readouterr().err
    assert f"{TASK}: no holdout key, so its sealed generation 1 is skipped" in err


def test_no_command_opens_a_sealed_generation_without_the_key(
        sealed_repo: tuple[Path, Path, dict[str, float]],
        capsys: pytest.CaptureFixture[str]) -> None:
    root, _, _ = sealed_repo
    tasks = str(root / "tasks.yaml")
    assert main(["holdout", "unseal", "--all", "--out", str(root.parent / "nokey"),
                 "--tasks-file", tasks]) == 2
    assert "needs the holdout key" in capsys.readouterr().err
    assert not (root.parent / "nokey").exists()
    with pytest.raises(HoldoutKeyMissingError):
        from probebench.tasks.sealed import read_key

        read_key(None)


def _tracked(repo: Path) -> list[tuple[str, bytes]]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=repo, check=True,
                           capture_output=True, text=True).stdout.split("\0")
    return [(n, (repo / n).read_bytes()) for n in names if n and (repo / n).is_file()]


def test_nothing_leaks_into_a_tracked_file_or_the_wheel(
        sealed_repo: tuple[Path, Path, dict[str, float]], tmp_path: Path) -> None:
    """``holdout unseal --all`` writes the plaintext; none of its texts is in any file git
    tracks or in the built wheel. (The same check with the maintainers' key over the
    packaged generations is tools/holdout_leak_check.py.)"""
    root, key_file, _ = sealed_repo
    out = tmp_path / "plain"
    assert main(["holdout", "unseal", "--all", "--key", str(key_file), "--out", str(out),
                 "--tasks-file", str(root / "tasks.yaml")]) == 0
    (written,) = sorted(out.rglob("*.jsonl"))
    items = items_from_text(written.read_text("utf-8"), str(written))
    catalog = TaskCatalog.from_file(root / "tasks.yaml")
    assert [i.record() for i in items] == [
        i.record() for i in unseal(catalog, TASK, bytes.fromhex(KEY)).items]
    hidden = hidden_texts(items, public_items(TaskCatalog.default()))
    assert len(hidden) >= 240
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("probebench-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        members = [(n, archive.read(n)) for n in archive.namelist()]
    assert any(n.endswith("catalog/tasks.yaml") for n, _ in members)
    assert any(n.endswith("catalog/holdouts.yaml") for n, _ in members)  # the listing ships
    assert leaks(hidden, _tracked(REPO) + members) == []
    # the check can fail: a planted copy of one sentence is found
    planted = sorted(hidden)[0]
    assert leaks(hidden, [("planted.txt", f"x {planted} y".encode())]) == [
        ("planted.txt", planted)]


def test_a_keyed_evaluation_scores_the_sealed_generation_and_stores_it_apart(
        sealed_repo: tuple[Path, Path, dict[str, float]], tmp_path: Path) -> None:
    """``score_sealed`` (what ``registry evaluate --key`` runs after submit) on the
    cheat: the holdout part is stored apart from the compared part and the Goodhart
    axis reads it; a keyless store of the same result adds nothing."""
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.leaderboard.probescore import axis_values
    from probebench.registry.store import latest_results, read_history, store_submission
    from probebench.runs.evaluate import entry_probe, score_sealed
    from tests.evaluation.test_holdout import _submission

    root, key_file, stored = sealed_repo
    catalog = TaskCatalog.from_file(root / "tasks.yaml")
    entry_id = "org/cheat-smollm2-135m-l15-v1"
    entry = read_entry(entry_path(root / "registry", entry_id))
    loaded = entry_probe(root / "registry", root, entry_id, catalog)
    assert not isinstance(loaded, str)
    result = synthetic_result("blimp_passive_1", 0.3, np.random.default_rng(0)).model_copy(
        update={"id": TASK, "auroc": IntervalOut(value=stored[entry_id], ci_low=0.95,
                                                  ci_high=1.0, resamples=200, dropped=0)})
    submission = _submission(result)
    session = Session(catalog, SubmitOptions(bootstrap=200, progress=False))
    assert score_sealed(entry, submission, *loaded, session, None) == ({}, [TASK])
    scored, unscored = score_sealed(entry, submission, *loaded, session,
                                    bytes.fromhex(key_file.read_text().strip()))
    held = scored[TASK]
    assert unscored == [] and held.generation == 1 and held.n_items == 120
    assert held.commitment == current_generation(catalog, TASK).commitment  # type: ignore[union-attr]
    assert held.auroc.value is not None and held.auroc.value < stored[entry_id] - 0.10
    assert held.retention is not None and 0.0 < held.retention < 0.8
    assert held.minimum_detectable_drop is not None and held.minimum_detectable_drop < 10
    registry = tmp_path / "registry"
    assert store_submission(registry, entry_id, submission, sealed_unscored=[TASK]) == []
    assert store_submission(registry, entry_id, submission, holdouts=scored)
    (record,) = read_history(result_path(registry, entry_id, TASK))
    assert record.holdout == held
    value = axis_values(latest_results(registry, entry_id), "MIT")["holdout_goodhart"]
    assert not value.imputed and value.value == pytest.approx(held.retention, abs=1e-6)
