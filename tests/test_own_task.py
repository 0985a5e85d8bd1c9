"""Your own task: ``probebench tasks add`` scaffolds it with computed hashes, and
``--include`` evaluates it privately beside the registered tasks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.spec import read_tasks_file

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "examples" / "senteval" / "sentence_length.txt"


def _pairs_file(path: Path) -> Path:
    rows = []
    verbs = [("walked", "walks"), ("sang", "sings"), ("ran", "runs"), ("wrote", "writes"),
             ("read", "reads"), ("cooked", "cooks"), ("painted", "paints"),
             ("danced", "dances"), ("jumped", "jumps"), ("laughed", "laughs")]
    for n, (past, present) in enumerate(verbs):
        part = "te" if n >= 8 else "tr"
        rows.append(f"{part}\tpast\tpair{n}\tThe child {past} there .")
        rows.append(f"{part}\tpresent\tpair{n}\tThe child {present} there .")
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


def _add(args: list[str]) -> int:
    return main(["tasks", "add", *args, "--license", "CC-BY-4.0",
                 "--source", "written for this test"])


def test_tasks_add_writes_a_task_whose_hashes_verify(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    data = _pairs_file(folder / "tense.tsv")
    assert _add([str(data), "--to", str(folder), "--id", "my_tense", "--format", "senteval",
                 "--option", "positive_class=past", "--option", "item_column=3",
                 "--label", "1=past tense", "--label", "0=present tense"]) == 0
    out = capsys.readouterr().out
    assert "added task my_tense (senteval, binary; items: train 8, val 0, test 2)" in out
    assert "--include" in out
    parsed = read_tasks_file(folder / "tasks.yaml")
    (spec,) = parsed.tasks
    assert spec.options == {"positive_class": "past", "item_column": 3}
    assert spec.labels == {1: "past tense", 0: "present tense"}
    # the hashes are the real ones: recomputed independently here
    catalog = TaskCatalog.from_file(folder / "tasks.yaml")
    data_set = catalog.load("my_tense")
    assert canonical_test_sha256(data_set.test) == spec.test_sha256
    assert [len(i.prompts) for i in data_set.test] == [2, 2]  # pairs are items
    # every hash is a quoted string in the YAML, never a number
    raw = yaml.safe_load((folder / "tasks.yaml").read_text("utf-8"))
    assert isinstance(raw["tasks"][0]["test_sha256"], str)
    # a second task is appended; comments and the first task are kept
    shutil.copy(FIXTURE, folder / "length.txt")
    before = (folder / "tasks.yaml").read_text("utf-8")
    assert _add([str(folder / "length.txt"), "--to", str(folder / "tasks.yaml"), "--id",
                 "my_length", "--format", "senteval"]) == 0
    after = (folder / "tasks.yaml").read_text("utf-8")
    assert after.startswith(before)
    assert [t.id for t in read_tasks_file(folder / "tasks.yaml").tasks] == ["my_tense",
                                                                           "my_length"]
    assert TaskCatalog.from_file(folder / "tasks.yaml").spec("my_length").labels == {
        0: "0", 1: "1", 2: "2"}


def test_tasks_add_refuses_what_it_cannot_register(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    data = _pairs_file(folder / "tense.tsv")
    outside = _pairs_file(tmp_path / "outside.tsv")
    cases = [
        ([str(outside), "--to", str(folder), "--id", "a", "--format", "senteval"],
         "is outside"),
        ([str(data), "--to", str(folder), "--id", "blimp_passive_1", "--format", "senteval",
          "--option", "positive_class=past"], "is one of probebench's registered tasks"),
        ([str(data), "--to", str(folder), "--id", "b", "--format", "senteval",
          "--option", "positive_class=future"], "positive class 'future' never occurs"),
        ([str(data), "--to", str(folder), "--id", "c", "--format", "senteval",
          "--option", "colour=red"], "unknown option(s) colour"),
        ([str(data), "--to", str(folder), "--id", "Bad Id", "--format", "senteval"],
         "field 'id'"),
    ]
    for args, message in cases:
        assert _add(args) != 0
        assert message in capsys.readouterr().err
        assert not (folder / "tasks.yaml").exists()  # nothing half-written
    (folder / "link.tsv").symlink_to(data)
    assert _add([str(folder / "link.tsv"), "--to", str(folder), "--id", "d", "--format",
                 "senteval"]) != 0
    assert "symbolic link" in capsys.readouterr().err
    assert _add([str(data), "--to", str(folder), "--id", "mine", "--format", "senteval",
                 "--option", "positive_class=past"]) == 0
    capsys.readouterr()
    assert _add([str(data), "--to", str(folder), "--id", "mine", "--format", "senteval",
                 "--option", "positive_class=past"]) != 0
    assert "already registered there" in capsys.readouterr().err


def test_include_adds_tasks_beside_the_registered_ones(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(REPO / "examples" / "senteval", folder)
    assert main(["tasks", "list", "--include", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "example_sentence_length" in out and "verb_grammar" in out
    assert main(["tasks", "verify", "--include", str(folder / "tasks.yaml")]) == 0
    assert "34 of 34 tasks match" in capsys.readouterr().out
    # an included task never replaces a registered one
    clash = tmp_path / "clash"
    clash.mkdir()
    shutil.copy(folder / "sentence_length.txt", clash)
    text = (folder / "tasks.yaml").read_text("utf-8").replace("example_sentence_length",
                                                              "verb_grammar")
    (clash / "tasks.yaml").write_text(text, "utf-8")
    with pytest.raises(InputError, match="task 'verb_grammar' is already registered in"):
        TaskCatalog.default().including([clash])
    # the registry and the leaderboard read only registered tasks
    assert main(["registry", "check", "--include", str(folder)]) != 0
    assert "for private evaluation" in capsys.readouterr().err


def test_a_hash_yaml_read_as_a_number_is_explained(tmp_path: Path) -> None:
    """A hand-written all-digit hash placeholder is a YAML number, not a string."""
    shutil.copy(FIXTURE, tmp_path / "length.txt")
    (tmp_path / "tasks.yaml").write_text(
        "version: 1\ntasks:\n- id: mine\n  title: t\n  format: senteval\n  version: 1\n"
        "  files: {data: length.txt}\n  files_sha256: {length.txt: 0}\n"
        "  labels: {0: a}\n  license: MIT\n  source: me\n  test_sha256: 0\n", "utf-8")
    with pytest.raises(InputError, match=r"probebench tasks add"):
        read_tasks_file(tmp_path / "tasks.yaml")


def test_verify_reports_splits_that_share_a_prompt_text() -> None:
    from probebench.prompts import Prompt
    from probebench.tasks.anatomy import Item
    from probebench.tasks.catalog import split_overlap
    from probebench.tasks.formats import TaskData

    spec = TaskCatalog.default().spec("blimp_passive_1")
    item = Item(id="a", prompts=(Prompt("The cat sat.", label=1),))
    other = Item(id="b", prompts=(Prompt("The dog ran.", label=0),))
    clean = TaskData(spec, {"train": [item], "test": [other]})
    assert split_overlap(clean) == []
    leaky = TaskData(spec, {"train": [item, other], "test": [other]})
    assert split_overlap(leaky) == ["the test and train splits share 1 prompt text(s) "
                                    "(e.g. 'The dog ran.')"]
