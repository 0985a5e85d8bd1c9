"""`probebench review`: every checklist item passes on a good entry and fails for the
right reason on a fixture made to break it. Reproducer notebooks run in the sandbox
(bubblewrap) and are judged against probebench's own re-evaluation."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.evaluation.results import Submission
from probebench.intake.review import Review, review_entry
from probebench.registry.entry import entry_path, read_entry
from probebench.tasks.catalog import TaskCatalog
from tests.artifacts import NOTEBOOK, make_artifact
from tests.catalogs import copy_catalog

ENTRY_ID = "testorg/passive-smollm2-135m-l15-v1"
TASK = "blimp_passive_1"


def _notebook(code: str) -> str:
    nb = json.loads(json.dumps(NOTEBOOK))
    nb["cells"][0]["source"] = [code]
    nb["metadata"] = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}}
    return json.dumps(nb)


def metrics_code(metrics: dict[str, Any]) -> str:
    """Notebook code that prints ``metrics`` on a PROBEBENCH_METRICS line."""
    return f"import json\nprint('PROBEBENCH_METRICS', json.dumps({metrics!r}))"


def good_code(sub: Submission) -> str:
    """A notebook that prints what probebench's re-evaluation measured."""
    t = sub.tasks[0]
    return metrics_code({t.id: {"auroc": t.auroc.value, "ece": t.ece}})


def _setup(root: Path, *, notebook: str = "print('hi')", entry: dict[str, Any] | None = None,
           reported_hash: str | None = None) -> None:
    catalog = copy_catalog(root)
    test_sha = reported_hash or catalog.spec(TASK).test_sha256
    reported = {TASK: {"test_sha256": test_sha, "auroc": 0.44, "ece": 0.5}}
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
        "status": "pending_review", "tasks": [TASK],
        "evalaware_imputation_acknowledged": True, **(entry or {})}
    path = entry_path(root / "registry", ENTRY_ID)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Submission:
    """probebench's re-evaluation of the test artifact (its weights never change)."""
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.runs.evaluate import evaluate_entry

    root = tmp_path_factory.mktemp("evaluated")
    _setup(root)
    session = Session(TaskCatalog.for_repo(root), SubmitOptions(progress=False))
    return evaluate_entry(ENTRY_ID, root / "registry", root, session, store=False).submission


def _of_this_bundle(root: Path, sub: Submission) -> Submission:
    """The re-evaluation, for this fixture's bundle: the weights are the same, only the
    notebook (part of the bundle hash) differs between fixtures."""
    sha = read_entry(entry_path(root / "registry", ENTRY_ID)).artifact_sha256
    return sub.model_copy(update={"probe": sub.probe.model_copy(update={"bundle_sha256": sha})})


def _review(root: Path, evaluation: Submission | None = None) -> Review:
    return review_entry(ENTRY_ID, root / "registry", root,
                        catalog=TaskCatalog.for_repo(root), timeout=120,
                        evaluation=None if evaluation is None else
                        _of_this_bundle(root, evaluation))


def _failed(root: Path, evaluation: Submission) -> dict[str, str]:
    review = _review(root, evaluation)
    return {i.name: i.detail for i in review.items if not i.passed}


def test_a_good_entry_passes_every_item(tmp_path: Path, evaluation: Submission) -> None:
    """The whole path: the notebook runs in the sandbox and review re-evaluates itself."""
    _setup(tmp_path, notebook=good_code(evaluation))
    md = tmp_path / "comment.md"
    assert main(["review", ENTRY_ID, "--registry", str(tmp_path / "registry"), "--repo",
                 str(tmp_path), "--markdown", str(md)]) == 0
    text = md.read_text()
    assert text.count("- [x]") == 6, text
    assert "2 metric(s) agree with probebench's re-evaluation within 0.02" in text


def test_untrusted_text_cannot_forge_the_comment(tmp_path: Path) -> None:
    """Metric names come from the notebook: a newline and Markdown in one must not make
    a fake check mark, link or mention in the PR comment."""
    forged = "x\n- [x] **All fine** [click](https://example.org) @maintainers\n"
    _setup(tmp_path, notebook=metrics_code({TASK: {"auroc": 0.5, forged: 0.1}}))
    text = _review(tmp_path).markdown()
    notebook_line = next(line for line in text.splitlines() if "reproducer notebook" in line)
    assert "not a metric of the contract" in notebook_line
    assert not any(line.startswith("- [x] **All fine") for line in text.splitlines())
    assert "[click](" not in text and " @maintainers" not in text
    assert "\\@maintainers" in notebook_line


def test_open_content_and_declared_licenses_pass(tmp_path: Path,
                                                 evaluation: Submission) -> None:
    for license in ("CC-BY-4.0", "CC-BY-NC-4.0", "custom"):
        _setup(tmp_path / license, notebook=good_code(evaluation),
               entry={"license": license})
        review = _review(tmp_path / license, evaluation)
        item = next(i for i in review.items if i.name == "license")
        assert item.passed, item.detail
    assert "restricts use" in item.detail or license == "custom"


def _pii_task(root: Path) -> None:
    """Register a SentEval-format task whose test set holds an e-mail and a phone."""
    from probebench.hashing import sha256_file
    from probebench.tasks.families import get_format
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


def _disagree(sub: Submission) -> str:
    t = sub.tasks[0]
    assert t.auroc.value is not None
    return metrics_code({TASK: {"auroc": round(t.auroc.value + 0.3, 4), "ece": t.ece}})


CASES: list[tuple[str, Callable[[Path, Submission], None], str, str]] = [
    ("wrong-hash", lambda r, s: _setup(r, entry={"artifact_sha256": "f" * 64}), "artifact",
     "differs from the expected"),
    ("failing-notebook", lambda r, s: _setup(r, notebook="raise RuntimeError('boom')"),
     "notebook", "RuntimeError: boom"),
    ("notebook-disagrees", lambda r, s: _setup(r, notebook=_disagree(s)), "notebook",
     "blimp_passive_1.auroc: printed 0.7378, probebench re-evaluated 0.4378 (tolerance 0.02)"),
    ("notebook-prints-nothing", lambda r, s: _setup(r, notebook="x = 1"), "notebook",
     "prints no PROBEBENCH_METRICS line"),
    ("made-up-task", lambda r, s: _setup(r, notebook=metrics_code(
        {"made_up_task": {"auroc": 0.99}})), "notebook",
     "names task 'made_up_task', which the entry does not declare"),
    ("declared-task-missing", lambda r, s: _setup(r, notebook=metrics_code(
        {TASK: {"ece": s.tasks[0].ece}})), "notebook",
     "blimp_passive_1.auroc: not printed"),
    ("unknown-metric", lambda r, s: _setup(r, notebook=metrics_code(
        {TASK: {"auroc": s.tasks[0].auroc.value, "f1": 0.9}})), "notebook",
     "blimp_passive_1.f1: not a metric of the contract"),
    ("malformed-line", lambda r, s: _setup(r, notebook="print('PROBEBENCH_METRICS {oops')"),
     "notebook", "PROBEBENCH_METRICS line 1: not JSON"),
    ("not-a-number", lambda r, s: _setup(r, notebook=metrics_code({TASK: {"auroc": "high"}})),
     "notebook", "blimp_passive_1.auroc: expected a number, got 'high'"),
    ("unregistered-hash", lambda r, s: _setup(r, notebook=good_code(s), reported_hash="e" * 64),
     "test_sets", "is not registered in the tasks used"),
    ("unknown-license", lambda r, s: _setup(r, entry={"license": "custom-ish"}), "license",
     "custom-ish: is not a license probebench knows"),
    ("evalaware-missing", lambda r, s: _setup(r, entry={"evalaware_imputation_acknowledged":
                                                        False}), "evalaware",
     "neither evalaware_auroc nor"),
]


@pytest.mark.parametrize(("name", "make", "item", "reason"), CASES, ids=[c[0] for c in CASES])
def test_each_item_fails_for_the_right_reason(tmp_path: Path, name: str,
                                              make: Callable[[Path, Submission], None],
                                              item: str, reason: str,
                                              evaluation: Submission) -> None:
    make(tmp_path, evaluation)
    failed = _failed(tmp_path, evaluation)
    assert item in failed, failed
    assert reason in failed[item], failed[item]


def test_personal_data_in_a_test_set_is_reported_by_line(tmp_path: Path,
                                                         evaluation: Submission) -> None:
    _setup(tmp_path, entry={"tasks": ["pii_fixture"]})
    _pii_task(tmp_path)
    failed = _failed(tmp_path, evaluation)
    detail = failed["personal_data"]
    assert "data/pii.tsv:2: e-mail address" in detail
    assert "data/pii.tsv:4: phone number" in detail
