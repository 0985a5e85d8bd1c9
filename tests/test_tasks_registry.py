from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.tasks.registry import TaskDriftError, load_task, verify_all
from probebench.tasks.spec import read_tasks_file

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of tasks.yaml and data/, to edit freely."""
    shutil.copy(REPO / "tasks.yaml", tmp_path / "tasks.yaml")
    shutil.copytree(REPO / "data", tmp_path / "data")
    return tmp_path


def test_verify_passes_on_a_clean_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    results = verify_all(REPO / "tasks.yaml")
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]
    assert main(["tasks", "--tasks-file", str(REPO / "tasks.yaml"), "verify"]) == 0
    assert "match their registered hashes" in capsys.readouterr().out


def _test_files() -> list[str]:
    parsed, _ = read_tasks_file(REPO / "tasks.yaml")
    files = {rel for t in parsed.tasks for rel in t.files.values()}
    files |= {rel for t in parsed.tasks for h in t.holdouts for rel in h.files.values()}
    return sorted(files)


@pytest.mark.parametrize("rel", _test_files())
def test_one_byte_edit_to_any_test_file_is_drift(checkout: Path, rel: str) -> None:
    path = checkout / rel
    data = bytearray(path.read_bytes())
    # flip one byte inside the last sentence-ish text: a letter becomes another letter
    index = max(i for i, b in enumerate(data) if chr(b).isalpha())
    data[index] = ord("x") if data[index] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    results = {r.task: r for r in verify_all(checkout / "tasks.yaml")}
    drifted = [t for t, r in results.items() if not r.ok]
    assert drifted, f"editing {rel} went unnoticed"
    assert all(rel in results[t].message for t in drifted)
    parsed, root = read_tasks_file(checkout / "tasks.yaml")
    spec = next(t for t in parsed.tasks if t.id == drifted[0])
    with pytest.raises(TaskDriftError, match="refused"):
        if any(rel in h.files.values() for h in spec.holdouts):
            from probebench.tasks.holdout import load_for_reeval
            load_for_reeval(spec, root)  # a holdout file: refused when re-evaluating
        else:
            load_task(drifted[0], tasks_file=checkout / "tasks.yaml")


def test_formatting_only_edit_is_caught_by_file_hash(checkout: Path) -> None:
    path = checkout / "data/syntaxgym/number_src.json"
    path.write_bytes(path.read_bytes() + b"\n")  # same JSON, different bytes
    with pytest.raises(TaskDriftError, match="files changed"):
        load_task("syntaxgym_number_src", tasks_file=checkout / "tasks.yaml")
    # the canonical test set itself is unchanged: without the file check it loads
    data = load_task("syntaxgym_number_src", tasks_file=checkout / "tasks.yaml",
                     verify=False)
    from probebench.tasks.hygiene import canonical_test_sha256
    parsed, _ = read_tasks_file(checkout / "tasks.yaml")
    spec = next(t for t in parsed.tasks if t.id == "syntaxgym_number_src")
    assert canonical_test_sha256(data.test) == spec.test_sha256


def test_verify_cli_exits_1_on_drift(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (checkout / "data/blimp/transitive.jsonl").write_text("")
    assert main(["tasks", "--tasks-file", str(checkout / "tasks.yaml"), "verify"]) == 1
    out = capsys.readouterr().out
    assert "DRIFT  blimp_transitive" in out


def test_tasks_yaml_schema_errors(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    text = (REPO / "tasks.yaml").read_text()
    path.write_text(text.replace("format: blimp", "format: blimpish", 1))
    with pytest.raises(InputError, match=r"field 'tasks\.\d+\.format'"):
        read_tasks_file(path)
    first = text.index("- id: ")
    second = text.index("- id: ", first + 1)
    path.write_text(text + text[first:second])
    with pytest.raises(InputError, match="registered twice"):
        read_tasks_file(path)


def test_unknown_task_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="did you mean blimp_passive_1"):
        load_task("blimp_pasive_1", tasks_file=REPO / "tasks.yaml")
    assert main(["tasks", "--tasks-file", str(REPO / "tasks.yaml"), "show",
                 "blimp_passive_1"]) == 0
    out = capsys.readouterr().out
    assert "test      498 items" in out and "(verified)" in out


def test_tasks_hash_prints_current_hashes(checkout: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    parsed, _ = read_tasks_file(REPO / "tasks.yaml")
    spec = next(t for t in parsed.tasks if t.id == "blimp_passive_1")
    assert main(["tasks", "--tasks-file", str(checkout / "tasks.yaml"), "hash",
                 "blimp_passive_1"]) == 0
    assert f"test_sha256: {spec.test_sha256}" in capsys.readouterr().out
