"""`probebench review`: every checklist item passes on a good entry and fails for the
right reason on a fixture made to break it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.registry.entry import entry_path
from probebench.registry.review import Review, review_entry
from probebench.tasks.catalog import TaskCatalog
from tests.artifacts import NOTEBOOK, make_artifact
from tests.catalogs import copy_catalog

ENTRY_ID = "testorg/passive-smollm2-135m-l15-v1"


def _notebook(code: str) -> str:
    nb = json.loads(json.dumps(NOTEBOOK))
    nb["cells"][0]["source"] = [code]
    nb["metadata"] = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}}
    return json.dumps(nb)


GOOD_CODE = ('print("PROBEBENCH_METRICS " + \'{"blimp_passive_1": {"auroc": 0.905, '
             '"ece": 0.05}}\')')


def _setup(root: Path, *, notebook: str = GOOD_CODE, entry: dict[str, Any] | None = None,
           reported_hash: str | None = None) -> None:
    catalog = copy_catalog(root)
    test_sha = reported_hash or catalog.spec("blimp_passive_1").test_sha256
    reported = {"blimp_passive_1": {"test_sha256": test_sha, "auroc": 0.90,
                                    "auroc_ci_low": 0.88, "auroc_ci_high": 0.92, "ece": 0.06}}
    folder, *_ = make_artifact(root / "registry/artifacts/passive",
                               meta={"reported_metrics": reported})
    (folder / "train.ipynb").write_text(_notebook(notebook))
    from probebench.artifact import manifest, scan
    data = {
        "id": ENTRY_ID, "name": "Passive probe", "short_name": "passive", "author": "A",
        "org": "testorg", "category": "grammar", "probe_type": "linear",
        "model": "smollm2-135m", "layer": 15, "position": "last_token",
        "artifact_url": "registry/artifacts/passive",
        "artifact_sha256": manifest(scan(folder)).sha256,
        "reproducer_notebook": "registry/artifacts/passive/train.ipynb",
        "license": "Apache-2.0", "release": "2026-11-01", "param_count": 577,
        "size_mb": 0.01, "tagline": "passive voice", "description": "A test entry.",
        "status": "pending_review", "tasks": ["blimp_passive_1"],
        "evalaware_imputation_acknowledged": True, **(entry or {})}
    path = entry_path(root / "registry", ENTRY_ID)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _review(root: Path) -> Review:
    return review_entry(ENTRY_ID, root / "registry", root,
                        catalog=TaskCatalog.for_repo(root), timeout=120)


def _failed(root: Path) -> dict[str, str]:
    review = _review(root)
    return {i.name: i.detail for i in review.items if not i.passed}


def test_a_good_entry_passes_every_item(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _setup(tmp_path)
    review = _review(tmp_path)
    assert [i.name for i in review.items] == ["artifact", "notebook", "test_sets", "license",
                                              "personal_data", "evalaware"]
    assert review.passed, [(i.name, i.detail) for i in review.items if not i.passed]
    md = tmp_path / "comment.md"
    assert main(["review", ENTRY_ID, "--registry", str(tmp_path / "registry"), "--repo",
                 str(tmp_path), "--markdown", str(md)]) == 0
    assert md.read_text().count("- [x]") == 6


def _pii_task(root: Path) -> None:
    """Register a SentEval-format task whose test set holds an e-mail and a phone."""
    from probebench.hashing import sha256_file
    from probebench.tasks.formats import get_format
    from probebench.tasks.hygiene import canonical_test_sha256
    from probebench.tasks.spec import TaskSpec

    data = root / "data" / "pii.tsv"
    data.write_text("tr\tA\tThe dog ran .\nte\tA\tWrite to ana@example.org now .\n"
                    "te\tB\tShe sang .\nte\tB\tCall +34 612 345 678 today .\n")
    raw = {"id": "pii_fixture", "title": "PII fixture", "format": "senteval", "version": 1,
           "files": {"data": "data/pii.tsv"},
           "files_sha256": {"data/pii.tsv": sha256_file(data, memo=False)},
           "labels": {1: "A", 0: "B"}, "license": "MIT", "source": "test fixture",
           "options": {"positive_class": "A"}, "test_sha256": "0" * 64}
    spec = TaskSpec.model_validate(raw)
    raw["test_sha256"] = canonical_test_sha256(get_format("senteval").load(spec, root).test)
    doc = yaml.safe_load((root / "tasks.yaml").read_text())
    doc["tasks"].append(raw)
    (root / "tasks.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


CASES: list[tuple[str, Callable[[Path], None], str, str]] = [
    ("wrong-hash", lambda r: _setup(r, entry={"artifact_sha256": "f" * 64}), "artifact",
     "differs from the expected"),
    ("failing-notebook", lambda r: _setup(r, notebook="raise RuntimeError('boom')"),
     "notebook", "RuntimeError"),
    ("notebook-disagrees", lambda r: _setup(r, notebook=GOOD_CODE.replace("0.905", "0.75")),
     "notebook", "blimp_passive_1.auroc: printed 0.7500, reported 0.9000"),
    ("notebook-prints-nothing", lambda r: _setup(r, notebook="x = 1"), "notebook",
     "prints no PROBEBENCH_METRICS line"),
    ("unregistered-hash", lambda r: _setup(r, reported_hash="e" * 64), "test_sets",
     "is not registered in tasks.yaml"),
    ("unknown-license", lambda r: _setup(r, entry={"license": "CC-BY-4.0"}), "license",
     "CC-BY-4.0 is not OSI-approved"),
    ("evalaware-missing", lambda r: _setup(r, entry={"evalaware_imputation_acknowledged":
                                                     False}), "evalaware",
     "neither evalaware_auroc nor"),
]


@pytest.mark.parametrize(("name", "make", "item", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_item_fails_for_the_right_reason(tmp_path: Path, name: str,
                                              make: Callable[[Path], None], item: str,
                                              reason: str) -> None:
    make(tmp_path)
    failed = _failed(tmp_path)
    assert item in failed, failed
    assert reason in failed[item], failed[item]


def test_personal_data_in_a_test_set_is_reported_by_line(tmp_path: Path) -> None:
    _setup(tmp_path, entry={"tasks": ["pii_fixture"]})
    _pii_task(tmp_path)
    failed = _failed(tmp_path)
    detail = failed["personal_data"]
    assert "data/pii.tsv:2: e-mail address" in detail
    assert "data/pii.tsv:4: phone number" in detail
