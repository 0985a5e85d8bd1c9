"""Ids and paths are bounded wherever they are accepted: a long or hostile one is a
named error, never an ``OSError`` traceback or a file outside the registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import probebench
from probebench.cli import main
from probebench.errors import InputError
from probebench.registry.entry import MAX_ENTRY_ID, entry_path
from probebench.tasks import scaffold
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("ref", "message"), [
    ("a/" + "b" * 5000, "neither a registry id"),
    ("a/" + "b" * 300, f"at most {MAX_ENTRY_ID} characters"),
    ("x" * 300, "not a usable folder path"),
])
def test_load_probe_refuses_long_references(ref: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        probebench.load_probe(ref, registry=REPO / "registry")


@pytest.mark.parametrize("entry_id", ["a/../../etc/passwd", "org/.hidden", "noslash",
                                      "a/b/c", "/abs/x"])
def test_entry_ids_cannot_name_files_elsewhere(entry_id: str) -> None:
    with pytest.raises(InputError, match="not an entry id"):
        entry_path(REPO / "registry", entry_id)


@pytest.mark.parametrize("command", [["registry", "evaluate"], ["review"],
                                     ["registry", "reproduce"]])
def test_commands_name_a_long_id(command: list[str],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "a/" + "b" * 400]) == 2
    err = capsys.readouterr().err
    assert f"an entry id has at most {MAX_ENTRY_ID} characters" in err
    assert "Traceback" not in err


def test_tasks_add_writes_nothing_before_the_task_is_verified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The task is checked from memory: a process killed at any point before the one
    atomic write leaves the folder as it was (no check file, no half-written YAML)."""
    data = tmp_path / "data.txt"
    shutil.copy(REPO / "examples/senteval/sentence_length.txt", data)
    seen: list[list[str]] = []
    real_load = TaskCatalog.load

    def watching_load(self: TaskCatalog, task_id: str, *, verify: bool = True) -> object:
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        return real_load(self, task_id, verify=verify)

    monkeypatch.setattr(TaskCatalog, "load", watching_load)
    spec = scaffold.new_spec(task_id="mine", fmt="senteval", files={"data": data},
                             folder=tmp_path, title="Mine", license="CC-BY-4.0",
                             source="a test")
    scaffold.add_task(tmp_path / "tasks.yaml", spec)
    assert seen and all(names == ["data.txt"] for names in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.txt", "tasks.yaml"]
