"""Quarterly re-evaluation on the verb-grammar holdout, with degraded fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.reeval import parse_shard, reeval
from probebench.registry.store import result_path
from tests.artifacts import train_task_probe

REPO = Path(__file__).resolve().parents[1]
IDS = ["org/steady-smollm2-135m-l6-v1", "org/slipping-smollm2-135m-l6-v1",
       "org/falling-smollm2-135m-l6-v1"]


@pytest.fixture(scope="module")
def repo(smollm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reeval")
    shutil.copy(REPO / "tasks.yaml", root / "tasks.yaml")
    shutil.copytree(REPO / "data", root / "data")
    folder = train_task_probe(root / "registry/artifacts/verb", smollm, "verb_grammar")
    from probebench.artifact import manifest, scan
    sha = manifest(scan(folder)).sha256
    for entry_id in IDS:
        org, rest = entry_id.split("/")
        data = {"id": entry_id, "name": rest, "short_name": rest[:30], "author": "A", "org": org,
                "category": "grammar", "probe_type": "linear", "model": "smollm2-135m",
                "layer": 6, "position": "last_token",
                "artifact_url": "registry/artifacts/verb", "artifact_sha256": sha,
                "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
                "release": "2026-11-01", "param_count": 577, "size_mb": 0.01,
                "tagline": "t", "description": "d", "status": "live",
                "tasks": ["verb_grammar"]}
        path = entry_path(root / "registry", entry_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def _store(root: Path, entry_id: str, auroc: float) -> None:
    path = result_path(root / "registry", entry_id, "verb_grammar")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"entry": entry_id, "task": "verb_grammar",
                                "history": [{"result": {"auroc": {"value": auroc}}}]}))


def test_drops_are_listed_and_large_drops_deprecate(repo: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    first = reeval(repo / "registry", repo, repo / "out0", bootstrap=100)
    assert {c.action for c in first} == {"none"} and all(c.old_auroc is None for c in first)
    assert {c.version for c in first} == {2}  # the newest holdout, not the registered v1
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
    assert record["action"] == "deprecate" and record["holdout_version"] == 2
    falling = read_entry(entry_path(repo / "registry", IDS[2]))
    assert falling.status == "deprecated" and falling.notice is not None
    assert "fell 15.0 points" in falling.notice
    assert read_entry(entry_path(repo / "registry", IDS[1])).status == "live"


def test_shards() -> None:
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x"):
        with pytest.raises(InputError, match="--shard"):
            parse_shard(bad)
