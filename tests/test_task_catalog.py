"""The task catalog: every pinned hash verified, drift refused, errors that teach."""

from __future__ import annotations

from pathlib import Path

import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog, TaskDriftError
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.spec import read_tasks_file
from tests.catalogs import PACKAGED_TASKS, copy_catalog


@pytest.fixture
def checkout(tmp_path: Path) -> TaskCatalog:
    """A copy of the packaged tasks.yaml and data/, to edit freely."""
    return copy_catalog(tmp_path)


def test_verify_passes_on_the_packaged_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    results = TaskCatalog.default().verify()
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]
    assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "verify"]) == 0
    assert "match their registered hashes" in capsys.readouterr().out


def _test_files() -> list[str]:
    specs = read_tasks_file(PACKAGED_TASKS).tasks
    files = {rel for t in specs for rel in t.files.values()}
    files |= {rel for t in specs for h in t.holdouts for rel in h.files.values()}
    return sorted(files)


@pytest.mark.parametrize("rel", _test_files())
def test_one_byte_edit_to_any_test_file_is_drift(checkout: TaskCatalog, rel: str) -> None:
    path = checkout.root / rel
    data = bytearray(path.read_bytes())
    # flip one byte inside the last sentence-ish text: a letter becomes another letter
    index = max(i for i, b in enumerate(data) if chr(b).isalpha())
    data[index] = ord("x") if data[index] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    results = {r.task: r for r in checkout.verify()}
    drifted = [t for t, r in results.items() if not r.ok]
    assert drifted, f"editing {rel} went unnoticed"
    assert all(rel in results[t].message for t in drifted)
    spec = checkout.spec(drifted[0])
    fresh = TaskCatalog.from_file(checkout.path)  # nothing remembered from verify()
    with pytest.raises(TaskDriftError, match="refused"):
        if any(rel in h.files.values() for h in spec.holdouts):
            fresh.reeval_set(spec.id)  # a holdout file: refused when re-evaluating
        else:
            fresh.load(spec.id)


def test_formatting_only_edit_is_caught_by_file_hash(checkout: TaskCatalog) -> None:
    path = checkout.root / "data/syntaxgym/number_src.json"
    path.write_bytes(path.read_bytes() + b"\n")  # same JSON, different bytes
    with pytest.raises(TaskDriftError, match="files changed"):
        checkout.load("syntaxgym_number_src")
    # the canonical test set itself is unchanged: without the file check it loads
    data = checkout.load("syntaxgym_number_src", verify=False)
    assert canonical_test_sha256(data.test) == checkout.spec("syntaxgym_number_src").test_sha256


def test_verify_cli_exits_1_on_drift(checkout: TaskCatalog,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    (checkout.root / "data/blimp/transitive.jsonl").write_text("")
    assert main(["tasks", "--tasks-file", str(checkout.path), "verify"]) == 1
    out = capsys.readouterr().out
    assert "DRIFT  blimp_transitive" in out


def test_tasks_yaml_schema_errors(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    text = PACKAGED_TASKS.read_text()
    path.write_text(text.replace("format: blimp", "format: Blimp!", 1))
    with pytest.raises(InputError, match=r"field 'tasks\.\d+\.format'"):
        read_tasks_file(path)
    first = text.index("- id: ")
    second = text.index("- id: ", first + 1)
    path.write_text(text + text[first:second])
    with pytest.raises(InputError, match="registered twice"):
        read_tasks_file(path)


def test_an_unregistered_format_is_refused_when_loading(tmp_path: Path) -> None:
    catalog = copy_catalog(tmp_path)
    catalog.path.write_text(catalog.path.read_text().replace("format: blimp", "format: blimpish",
                                                             1))
    catalog = TaskCatalog.from_file(catalog.path)
    task = next(t.id for t in catalog.specs.values() if t.format == "blimpish")
    with pytest.raises(InputError, match="format 'blimpish' is not registered; known formats: "
                                         "blimp, senteval, syntaxgym, verbs"):
        catalog.load(task)


def test_unknown_task_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="did you mean blimp_passive_1"):
        TaskCatalog.default().load("blimp_pasive_1")
    assert main(["tasks", "show", "blimp_passive_1"]) == 0
    out = capsys.readouterr().out
    assert "test      498 items" in out and "(verified)" in out


def test_tasks_hash_prints_current_hashes(checkout: TaskCatalog,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    spec = TaskCatalog.default().spec("blimp_passive_1")
    assert main(["tasks", "--tasks-file", str(checkout.path), "hash",
                 "blimp_passive_1"]) == 0
    assert f"test_sha256: {spec.test_sha256}" in capsys.readouterr().out


def test_repo_with_its_own_tasks_yaml_is_used_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The catalog comes from --repo (or the enclosing checkout), never from the cwd."""
    repo = tmp_path / "repo"
    copy_catalog(repo)
    text = (repo / "tasks.yaml").read_text()
    (repo / "tasks.yaml").write_text(text.replace("title: 'BLiMP: passive_1'",
                                                  "title: 'My own passive'", 1))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["tasks", "list"]) == 0
    captured = capsys.readouterr()
    assert "My own passive" not in captured.out
    assert "tasks: the packaged tasks (33)" in captured.err
    assert main(["tasks", "list", "--repo", str(repo)]) == 0
    captured = capsys.readouterr()
    assert "My own passive" in captured.out
    assert f"tasks: {repo / 'tasks.yaml'}" in captured.err
    (repo / ".git").mkdir()  # inside a checkout, its root is the default --repo
    monkeypatch.chdir(repo / "data")
    assert main(["tasks", "list"]) == 0
    assert "My own passive" in capsys.readouterr().out
