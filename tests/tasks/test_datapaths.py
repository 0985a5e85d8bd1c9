"""One rule for a task's data paths (``probebench.tasks.datapaths``): the packaged
catalog, ``--include`` files, ``tasks add`` and task proposals all refuse a path that
leaves the tasks file's folder, by text or through a link."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.hashing import sha256_file
from probebench.tasks.datapaths import data_path_problem

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "senteval"


@pytest.mark.parametrize(("rel", "why"), [
    ("../outside.txt", "climbs out"),
    ("data/../../x.txt", "climbs out"),
    ("/etc/passwd", "is absolute"),
    ("C:/data.txt", "is absolute"),
    ("data\\x.txt", "backslash"),
    ("data/./x.txt", "not a plain path"),
    ("data//x.txt", "not a plain path"),
    ("data/", "not a plain path"),
    ("data/x\n.txt", "control character"),
    ("", "is empty"),
    ("a" * 300, "over 255"),
])
def test_the_text_rule(rel: str, why: str) -> None:
    problem = data_path_problem(rel)
    assert problem is not None and why in problem


@pytest.mark.parametrize("rel", ["data.txt", "data/blimp/x.jsonl", "a-b_c.d/e.tsv"])
def test_plain_paths_pass(rel: str) -> None:
    assert data_path_problem(rel) is None


def _included(tmp_path: Path, rel: str) -> Path:
    """The SentEval example with its data file named ``rel`` (hashes recomputed, so
    only the path can be refused)."""
    folder = tmp_path / "mine"
    shutil.copytree(EXAMPLE, folder)
    doc = yaml.safe_load((folder / "tasks.yaml").read_text())
    task = doc["tasks"][0]
    old = task["files"]["data"]
    target = (folder / rel) if not rel.startswith("/") else Path(rel)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(folder / old, target)
    task["files"] = {"data": rel}
    task["files_sha256"] = {rel: sha256_file(target, memo=False)}
    (folder / "tasks.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder / "tasks.yaml"


@pytest.mark.parametrize(("rel", "why"), [
    ("../outside.txt", "climbs out with '..'"),
    ("/etc/passwd", "is absolute"),
])
def test_include_refuses_paths_outside_its_folder(tmp_path: Path, rel: str, why: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    tasks_file = _included(tmp_path, rel)
    code = main(["tasks", "verify", "--include", str(tasks_file)])
    err = capsys.readouterr().err
    assert code != 0
    assert why in err and "Traceback" not in err


def test_a_link_inside_the_folder_is_refused(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(EXAMPLE / "sentence_length.txt", outside / "sentence_length.txt")
    tasks_file = _included(tmp_path, "linked/sentence_length.txt")
    linked = tasks_file.parent / "linked"
    shutil.rmtree(linked)
    linked.symlink_to(outside, target_is_directory=True)
    code = main(["tasks", "verify", "--include", str(tasks_file)])
    out = "".join(capsys.readouterr())
    assert code != 0
    assert "a symbolic link in a task's data path" in out and "Traceback" not in out
    # the same file, really inside: accepted
    linked.unlink()
    linked.mkdir()
    shutil.copy(outside / "sentence_length.txt", linked / "sentence_length.txt")
    assert main(["tasks", "verify", "--include", str(tasks_file)]) == 0


def test_the_packaged_catalog_obeys_the_rule() -> None:
    from probebench.tasks.catalog import TaskCatalog
    from probebench.tasks.datapaths import data_file

    catalog = TaskCatalog.default()
    for spec in catalog.specs.values():
        rels = set(spec.files.values()) | set(spec.files_sha256)
        for holdout in spec.holdouts:
            rels |= set(holdout.files.values()) | set(holdout.files_sha256)
        for rel in rels:
            assert data_file(catalog.root_of(spec.id), rel).is_file(), (spec.id, rel)


def test_a_long_task_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.txt"
    shutil.copy(EXAMPLE / "sentence_length.txt", data)
    code = main(["tasks", "add", str(data), "--to", str(tmp_path / "tasks.yaml"),
                 "--id", "t" * 300, "--format", "senteval", "--license", "CC-BY-4.0",
                 "--source", "a test", "--title", "Too long"])
    err = capsys.readouterr().err
    assert code != 0 and "at most 64 characters" in err and "Traceback" not in err
    assert not (tmp_path / "tasks.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.txt"]
