"""``probebench tasks verify`` checks sealed holdouts as ``holdout verify`` does: a sealed
file with one byte flipped fails both, by name; the untouched one passes both. Each test
seals its own generation with a throwaway key in a one-task copy of the packaged catalog
in tmp_path (as tests/tasks/test_sealed.py does)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.tasks.catalog import TaskCatalog, packaged_tasks_file
from probebench.tasks.sealed import FORM_ONLY, KEY_ENV, Generation, seal, verify_holdouts
from tests.tasks.test_sealed import fixture_items, new_key

TASK = "blimp_passive_1"


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.fixture
def sealed(tmp_path: Path) -> tuple[TaskCatalog, Generation]:
    """A copy of the packaged catalog trimmed to TASK, with generation 1 sealed."""
    root = tmp_path / "catalog"
    packaged = packaged_tasks_file()
    data = yaml.safe_load(packaged.read_text("utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == TASK]
    for rel in data["tasks"][0]["files_sha256"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(packaged.parent / rel, root / rel)
    (root / "tasks.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    catalog = TaskCatalog.from_file(root / "tasks.yaml")
    _, key = new_key(tmp_path)
    return catalog, seal(catalog, TASK, fixture_items("tv"), key)


def verify(catalog: TaskCatalog, capsys: pytest.CaptureFixture[str],
           command: str = "tasks") -> tuple[int, str]:
    capsys.readouterr()
    code = main([command, "verify", "--tasks-file", str(catalog.path)])
    return code, capsys.readouterr().out


def flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_an_untouched_sealed_holdout_passes(sealed: tuple[TaskCatalog, Generation],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    catalog, _ = sealed
    code, out = verify(catalog, capsys)
    assert code == 0, out
    line = next(s for s in out.splitlines() if TASK in s)
    assert line.split()[0] == "ok"
    assert f"1 sealed holdout generation(s) verified ({FORM_ONLY})" in line
    assert "1 of 1 tasks match" in out
    # the library's call: the catalog is given the checks (tasks/ sits below sealed.py)
    [check] = catalog.verify(verify_holdouts(catalog))
    assert check.ok and f"1 sealed holdout generation(s) verified ({FORM_ONLY})" in \
        check.message
    [unchecked] = catalog.verify()
    assert unchecked.ok and "sealed" not in unchecked.message


def test_a_tampered_sealed_file_fails_tasks_verify_as_holdout_verify(
        sealed: tuple[TaskCatalog, Generation], capsys: pytest.CaptureFixture[str]) -> None:
    catalog, gen = sealed
    flip_one_byte(catalog.root / gen.sealed_file)
    code, out = verify(catalog, capsys)
    assert code == 1, out
    line = next(s for s in out.splitlines() if TASK in s)
    assert line.split()[0] == "DRIFT"
    assert "sealed holdout generation 1: " in line and gen.sealed_file in line
    assert "sealed holdout generation(s) verified" not in line
    assert "0 of 1 tasks match" in out
    [check] = catalog.verify(verify_holdouts(catalog))
    assert not check.ok and gen.sealed_file in check.message
    # the same problem `holdout verify` names
    held_code, held_out = verify(catalog, capsys, "holdout")
    assert held_code == 1
    held = next(s for s in held_out.splitlines() if TASK in s)
    assert held.split("(current) ", 1)[1] in line


def test_a_file_no_generation_names_fails_tasks_verify(
        sealed: tuple[TaskCatalog, Generation], capsys: pytest.CaptureFixture[str]) -> None:
    catalog, gen = sealed
    stray = (catalog.root / gen.sealed_file).with_name("gen-9.sealed")
    stray.write_bytes(b"{}")
    code, out = verify(catalog, capsys)
    assert code == 1
    line = next(s for s in out.splitlines() if TASK in s)
    assert line.split()[0] == "DRIFT" and "gen-9.sealed: no generation in holdouts.yaml" in line
