"""Your own task: ``probebench tasks add`` scaffolds it with computed hashes, and
``--include`` evaluates it privately beside the registered tasks."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.spec import read_tasks_file

REPO = Path(__file__).resolve().parents[2]
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
    # the pointer to the proposal's how-to names a file that has that section
    (pointer,) = [line for line in out.splitlines() if line.startswith("propose it")]
    where, section = pointer.split(": ", 1)[1].split(", ", 1)
    assert f"## {section.strip(chr(34))}\n" in (REPO / where).read_text("utf-8")
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
    assert "45 of 45 tasks match" in capsys.readouterr().out
    # an included task never replaces a registered one
    clash = tmp_path / "clash"
    clash.mkdir()
    shutil.copy(folder / "sentence_length.txt", clash)
    text = (folder / "tasks.yaml").read_text("utf-8").replace("example_sentence_length",
                                                              "verb_grammar")
    (clash / "tasks.yaml").write_text(text, "utf-8")
    with pytest.raises(InputError, match="task 'verb_grammar' is already registered in"):
        TaskCatalog.default().including([clash])
    # a pull request's check reads only registered tasks: --include is refused there
    code = main(["registry", "check", "--changed", "--include", str(folder)])
    assert code == 2
    assert "--include" in capsys.readouterr().err


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
    from probebench.tasks.families import TaskData

    spec = TaskCatalog.default().spec("blimp_passive_1")
    item = Item(id="a", prompts=(Prompt("The cat sat.", label=1),))
    other = Item(id="b", prompts=(Prompt("The dog ran.", label=0),))
    clean = TaskData(spec, {"train": [item], "test": [other]})
    assert split_overlap(clean) == []
    leaky = TaskData(spec, {"train": [item, other], "test": [other]})
    assert split_overlap(leaky) == ["the test and train splits share 1 prompt text(s) "
                                    "(e.g. 'The dog ran.')"]


def test_tasks_add_checks_the_license_and_says_what_was_meant(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(FIXTURE, folder / "length.txt")
    args = ["tasks", "add", str(folder / "length.txt"), "--to", str(folder), "--id",
            "my_length", "--format", "senteval", "--source", "test"]
    assert main([*args, "--license", "CC-BY4"]) == 2
    err = capsys.readouterr().err
    assert "license 'CC-BY4' is not a known SPDX id" in err
    assert "did you mean 'CC-BY-4.0'" in err
    assert not (folder / "tasks.yaml").exists()
    assert main([*args, "--license", "cc-by-4.0"]) == 2
    assert "is spelled 'CC-BY-4.0' in SPDX" in capsys.readouterr().err
    # an SPDX expression is a license too
    assert main([*args, "--license", "CC-BY-4.0 OR MIT"]) == 0
    assert read_tasks_file(folder / "tasks.yaml").tasks[0].license == "CC-BY-4.0 OR MIT"


# --- tasks remove ---------------------------------------------------------------------

SHA = "7425c9e6d96ec93eaec09b6e0fc044a9a725dc49e767f8a8367973fe39ea2af6"  # FIXTURE's
TEST_SHA = "9b986781942cbe3d7dcb23268006d0a9b9d44dd19fa17d81be0cc54496c20dbe"
HEAD = f"""# my tasks: comments stay
version: 1
format_defaults:
  senteval:
    labels: {{0: '0', 1: '1', 2: '2'}}
    license: CC-BY-4.0
    source: written for the tests
tasks:
# first: a
- id: t_a
  title: a
  format: senteval
  version: 1
  files: {{data: a.txt}}
  files_sha256: {{a.txt: '{SHA}'}}
  test_sha256: '{TEST_SHA}'
# second: b, written with the dash alone on its line
"""
B_BLOCK = f"""-
  id: t_b
  title: b
  format: senteval
  version: 1
  description: |
    b's own text
    # not a comment: a line of the description
  files:
    data: b.txt
  # a comment inside b goes with it
  files_sha256:
    b.txt: '{SHA}'
  test_sha256: '{TEST_SHA}'   # b's hash
"""
TAIL = f"""
# third: c, sharing a.txt, with a holdout
- id: t_c
  title: c
  format: senteval
  version: 1
  files: {{data: a.txt}}
  files_sha256: {{a.txt: '{SHA}'}}
  test_sha256: '{TEST_SHA}'
  holdouts:
  - version: 2
    files: {{data: h.txt}}
    files_sha256: {{h.txt: '{SHA}'}}
    test_sha256: '{TEST_SHA}'
# the end
"""


def _three_tasks(folder: Path) -> Path:
    folder.mkdir()
    for name in ("a.txt", "b.txt", "h.txt"):
        shutil.copy(FIXTURE, folder / name)
    path = folder / "tasks.yaml"
    path.write_text(HEAD + B_BLOCK + TAIL, "utf-8")
    return path


def test_tasks_remove_takes_out_one_block_and_keeps_the_rest(tmp_path: Path) -> None:
    from probebench.tasks.scaffold import remove_task

    path = _three_tasks(tmp_path / "mine")
    before = read_tasks_file(path)
    removed = remove_task(path, "t_b")
    assert path.read_text("utf-8") == HEAD + TAIL  # every other byte as it was
    assert removed.spec == before.tasks[1] and removed.tasks_file == path
    assert removed.unreferenced == ("b.txt",)
    after = read_tasks_file(path)
    assert after.tasks == [before.tasks[0], before.tasks[2]]
    assert (tmp_path / "mine" / "b.txt").is_file()  # data is never deleted
    # a.txt is still read by t_c; its holdout file goes with it
    assert remove_task(tmp_path / "mine", "t_a").unreferenced == ()
    assert remove_task(path, "t_c").unreferenced == ("a.txt", "h.txt")
    text = path.read_text("utf-8")
    assert "tasks: []" in text and "# my tasks: comments stay" in text
    assert read_tasks_file(path).tasks == []
    assert TaskCatalog.from_file(path).specs == {}


def test_tasks_remove_refuses_and_leaves_the_file_alone(tmp_path: Path) -> None:
    from probebench.tasks.catalog import packaged_tasks_file
    from probebench.tasks.scaffold import remove_task

    path = _three_tasks(tmp_path / "mine")
    original = path.read_bytes()
    with pytest.raises(InputError, match=r"no task 't_bb'; did you mean 't_b'\?"):
        remove_task(path, "t_bb")
    with pytest.raises(InputError, match=r"no task 'zzz' \(it registers t_a, t_b, t_c\)"):
        remove_task(path, "zzz")
    with pytest.raises(InputError, match="packaged catalog"):
        remove_task(packaged_tasks_file(), "blimp_passive_1")
    with pytest.raises(InputError, match="no such tasks file"):
        remove_task(tmp_path / "none.yaml", "t_a")
    # an inline list cannot be cut line by line
    inline = tmp_path / "inline"
    inline.mkdir()
    flow = (f"version: 1\ntasks: [{{id: t_a, title: a, format: senteval, version: 1, "
            f"files: {{data: a.txt}}, files_sha256: {{a.txt: '{SHA}'}}, labels: {{0: x}}, "
            f"license: MIT, source: me, test_sha256: '{TEST_SHA}'}}]\n")
    (inline / "tasks.yaml").write_text(flow, "utf-8")
    with pytest.raises(InputError, match="written inline"):
        remove_task(inline, "t_a")
    assert (inline / "tasks.yaml").read_text("utf-8") == flow
    assert path.read_bytes() == original


def test_tasks_remove_on_the_command_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = _three_tasks(tmp_path / "mine")
    assert main(["tasks", "remove", "t_c", "--from", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"removed task t_c (senteval, v1) from {path}" in out
    assert f"  {tmp_path / 'mine' / 'h.txt'}" in out and "a.txt" not in out
    assert "left on disk" in out
    assert main(["tasks", "remove", "blimp_passive_1", "--from", str(path)]) == 2
    assert "no task 'blimp_passive_1'" in capsys.readouterr().err
    assert [t.id for t in read_tasks_file(path).tasks] == ["t_a", "t_b"]


# --- --include: listed where it is accepted, nowhere else -------------------------------

def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every parser of the command line, by its command words ("" for the top)."""
    from probebench.cli import build_parser

    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, words: str) -> None:
        found[words] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{words} {name}".strip())

    walk(build_parser(), "")
    return found


def _lists_include(parser: argparse.ArgumentParser) -> bool:
    return any("--include" in a.option_strings for a in parser._actions)


def test_include_is_listed_only_where_it_is_accepted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command that lists --include runs with it (the tasks it resolves name the
    included file); no command that reads the registry lists it."""
    folder = tmp_path / "mine"
    shutil.copytree(REPO / "examples" / "senteval", folder)
    artifact = REPO / "registry" / "artifacts" / "blimp-det-noun-smollm2-135m-l15-v1"
    unknown = "no_such_task"  # fails after the tasks are resolved, before any model runs
    accepting = {
        "tasks": ["tasks", "--include", str(folder), "list"],
        "tasks list": ["tasks", "list"],
        "tasks show": ["tasks", "show", "example_sentence_length"],
        "tasks verify": ["tasks", "verify"],
        "tasks hash": ["tasks", "hash", "example_sentence_length"],
        "tasks check-verbs": ["tasks", "check-verbs"],
        "tasks generate-verbs": ["tasks", "generate-verbs", "--out", str(tmp_path / "gen"),
                                 "--train", "4", "--val", "4"],
        "validate": ["validate", str(artifact)],
        "train": ["train", "--task", unknown, "--site", "3:last_token",
                  "--out", str(tmp_path / "trained")],
        "sweep": ["sweep", "--task", unknown, "--position", "last_token",
                  "--out", str(tmp_path / "sweep.json")],
        "submit": ["submit", str(artifact), "--tasks", unknown, "--no-guard"],
        "score-lm": ["score-lm", "smollm2-135m", "--tasks", unknown],
    }
    parsers = _parsers()
    listing = {words for words, parser in parsers.items() if _lists_include(parser)}
    # registry check takes --include for a private check (not with --changed: test above)
    assert listing == set(accepting) | {"registry check"}
    for words in ("registry", "registry check-task", "registry evaluate",
                  "registry publish", "registry confine", "registry reproduce", "review",
                  "reeval", "reeval run", "leaderboard", "leaderboard build"):
        assert "--include" not in parsers[words].format_help(), words
    for words, argv in accepting.items():
        if "--include" not in argv:
            argv = [*argv, "--include", str(folder)]
        code = main(argv)
        err = capsys.readouterr().err
        assert "1 included from" in err and str(folder) in err, (words, err)
        assert "for private evaluation" not in err, words
        assert code == 0 or f"unknown task '{unknown}'" in err, (words, code, err)
