"""The statements format (single labelled statements) and truth_facts, its first task:
files read faithfully, each malformed file refused with its file and line, the split
deterministic and disjoint, and the task trained and submitted on the embedded model."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog, split_overlap
from probebench.tasks.datapaths import data_file
from probebench.tasks.families import get_format
from probebench.tasks.families.base import TaskData
from probebench.tasks.families.statements.format import (
    StatementOptions,
    StatementsFormat,
    folded,
    read_statements,
)
from probebench.tasks.spec import TaskSpec
from tests.conftest import SHARED_DATA, needs_shared_data

FORMAT = StatementsFormat()
SHARED_FACTS = SHARED_DATA / "honesty" / "facts_true_false.csv"
PLACEHOLDER = "0" * 64


def _spec(files: dict[str, str], *, options: dict[str, Any] | None = None,
          slices: list[str] | None = None, split: bool = True) -> TaskSpec:
    raw: dict[str, Any] = {
        "id": "t", "title": "t", "format": "statements", "version": 1, "files": files,
        "files_sha256": dict.fromkeys(files.values(), PLACEHOLDER),
        "labels": {1: "true", 0: "false"}, "slices": slices or [], "license": "MIT",
        "source": "written for the tests", "options": options or {},
        "test_sha256": PLACEHOLDER}
    if split:
        raw["split"] = {"method": "hash", "test_fraction": 0.5, "salt": "s"}
    return TaskSpec.model_validate(raw)


def _read(tmp_path: Path, text: str, *, name: str = "facts.csv",
          options: dict[str, Any] | None = None, slices: list[str] | None = None
          ) -> list[Item]:
    """The items of one file, in file order, as the task with ``options`` reads them."""
    path = tmp_path / name
    path.write_text(text, "utf-8")
    spec = _spec({"data": name}, options=options, slices=slices)
    return [s.item for s in read_statements(path, StatementOptions.of(spec))]


def _split(tmp_path: Path, text: str, *, options: dict[str, Any] | None = None) -> TaskData:
    """The task over one CSV file under the hashed split."""
    path = tmp_path / "facts.csv"
    path.write_text(text, "utf-8")
    return FORMAT.read(_spec({"data": "facts.csv"}, options=options), {"data": path})


def _all(data: TaskData) -> list[Item]:
    return sorted((i for items in data.splits.values() for i in items), key=lambda i: i.id)


# --- truth_facts: the shared CSV, through the catalog -------------------------------------

def test_truth_facts_reads_every_statement_of_the_file_as_written() -> None:
    catalog = TaskCatalog.default()
    spec = catalog.spec("truth_facts")
    assert (spec.format, spec.license, spec.labels) == (
        "statements", "MIT", {1: "the statement is true", 0: "the statement is false"})
    root = catalog.root_of("truth_facts")
    path = data_file(root, spec.files["data"])
    data = get_format(spec.format).read(spec, {"data": path})   # before any carving
    items = {i.id: i for i in _all(data)}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["statement", "label"]
    expected = {f"data-{line}": (text, int(label))
                for line, (text, label) in enumerate(rows[1:], start=2)}
    assert {k: (i.prompts[0].text, i.prompts[0].label) for k, i in items.items()} == expected
    assert Counter(i.prompts[0].label for i in items.values()) == {1: 306, 0: 306}
    assert items["data-2"].prompts[0].text == ("The Earth's atmosphere protects us from "
                                               "harmful radiation from the sun.")
    # a quoted field keeps its comma; the file's CRLF line ends are not part of a text
    assert items["data-5"].prompts[0].text.startswith("The theory of evolution, proposed")
    assert not any("\r" in i.prompts[0].text for i in items.values())
    # the statement the file labels both ways stays, on both of its lines, in one split
    nile = "The Nile River is the longest river in the world."
    assert (items["data-207"].prompts[0].label, items["data-367"].prompts[0].label) == (1, 0)
    assert items["data-207"].prompts[0].text == items["data-367"].prompts[0].text == nile
    home = {s for s, its in data.splits.items() for i in its if i.prompts[0].text == nile}
    assert len(home) == 1
    # the loaded task: carved holdout out of train, hashes verified, splits disjoint
    loaded = catalog.load("truth_facts")
    assert len(loaded.test) == 311 and split_overlap(loaded) == []
    held = catalog.load_holdout("truth_facts", spec.holdouts[0]).test
    assert {i.id for i in held}.isdisjoint(i.id for its in loaded.splits.values() for i in its)
    assert len(loaded.splits["train"]) + len(held) == len(data.splits["train"])


@needs_shared_data
def test_the_packaged_facts_are_the_shared_file_unchanged() -> None:
    catalog = TaskCatalog.default()
    packaged = catalog.root_of("truth_facts") / "data" / "truth"
    assert (packaged / "facts_true_false.csv").read_bytes() == SHARED_FACTS.read_bytes()
    assert (packaged / "LICENSE-representation-engineering").read_bytes() == (
        SHARED_FACTS.parent / "LICENSE-representation-engineering").read_bytes()


def test_the_format_and_the_task_are_registered(capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(get_format("statements"), StatementsFormat)
    assert main(["tasks", "list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("truth_facts"))
    assert line.split()[:4] == ["truth_facts", "statements", "truth", "1"]


# --- faithful reading ---------------------------------------------------------------------

def test_csv_columns_ids_label_map_and_slices(tmp_path: Path) -> None:
    items = _read(tmp_path, "key,claim,truth,topic\n"
                              "a,Water boils at 100 C at sea level.,yes,physics\n"
                              "b,\"Paris, not Rome, is in Italy.\",no,geography\n",
                    options={"id_column": "key", "text_column": "claim",
                             "label_column": "truth", "label_map": {"yes": 1, "no": 0}},
                    slices=["topic"])
    assert {i.id: (i.prompts[0].text, i.prompts[0].label, dict(i.slices))
            for i in items} == {
        "a": ("Water boils at 100 C at sea level.", 1, {"topic": "physics"}),
        "b": ("Paris, not Rome, is in Italy.", 0, {"topic": "geography"})}
    assert items[0].prompts[0].spans == {}  # the probe reads the whole statement


def test_jsonl_fields_and_labels_written_as_json_booleans(tmp_path: Path) -> None:
    lines = [{"id": "x1", "text": "Ice is cold.", "label": True, "source": "hand", "n": 3},
             {"id": "x2", "text": "Fire is cold.", "label": False, "source": "hand", "n": 4}]
    items = _read(tmp_path, "".join(json.dumps(x) + "\n" for x in lines), name="f.jsonl",
                  options={"label_map": {True: 1, False: 0}}, slices=["source"])
    assert [(i.id, i.prompts[0].label) for i in items] == [("x1", 1), ("x2", 0)]
    # every other field is a slice tag, a number in its JSON spelling
    assert dict(items[1].slices) == {"source": "hand", "n": "4"}


# --- named errors: file, line, field, what was expected ------------------------------------

FACTS = ("statement,label\n"
         "The sky is blue.,1\n"
         "Grass is purple.,0\n"
         "Snow is white.,1\n"
         "Coal is white.,0\n")


@pytest.mark.parametrize(("text", "options", "line", "message"), [
    (FACTS.replace("Snow is white.,1", "Snow is white.,2"), {}, 4,
     "column 'label': label '2' is not one of the declared labels 1 or 0"),
    (FACTS.replace("Grass is purple.,0", "Grass is purple.,true"), {}, 3,
     "column 'label': label 'true' is not one of the declared labels 1 or 0"),
    (FACTS.replace("Coal is white.,0", "Coal is white.,"), {}, 5,
     "column 'label' is empty; every statement needs a label (1 or 0)"),
    (FACTS.replace("Grass is purple.,0", " ,0"), {}, 3,
     "column 'statement' is empty; every item needs a statement"),
    (FACTS.replace("Snow is white.,1", "Snow is white.,1,extra"), {}, 4,
     "3 field(s), but the header names 2 columns"),
    (FACTS.replace("statement,label", "text,label"), {}, 1,
     "no column 'statement' (options.text_column) in the header; it has text, label"),
    (FACTS.replace("statement,label", "statement,truth"), {}, 1,
     "no column 'label' (options.label_column) in the header; it has statement, truth"),
    ("id,statement,label\na,The sky is blue.,1\nb,Grass is purple.,0\nb,Snow is white.,1\n",
     {"id_column": "id"}, 4, "id 'b' already used on line 3"),
    ("statement,label,topic\nThe sky is blue.,1,x\nGrass is purple.,0,y\n", {"strict": True},
     1,
     "unknown column(s) topic (options.strict: every column is the text, the label, the id "
     "or a declared slice: none)"),
    (FACTS.replace("The sky is blue.,1", "yes,1"), {"label_map": {"1": 1, "0": 0, "y": 1}},
     None, None),
], ids=["bad-label", "word-label", "missing-label", "empty-statement", "extra-field",
        "no-text-column", "no-label-column", "duplicate-id", "strict-unknown-column",
        "well-formed"])
def test_a_malformed_csv_is_refused_with_its_file_and_line(
        tmp_path: Path, text: str, options: dict[str, Any], line: int | None,
        message: str | None) -> None:
    options = {"text_column": "statement", **options}
    if message is None:  # the control: a well-formed file reads
        assert [i.prompts[0].text for i in _read(tmp_path, text, options=options)] == [
            "yes", "Grass is purple.", "Snow is white.", "Coal is white."]
        return
    path = tmp_path / "facts.csv"
    with pytest.raises(InputError) as caught:
        _read(tmp_path, text, options=options)
    assert str(caught.value) == f"{path}:{line}: {message}"


def test_a_label_outside_the_label_map_names_the_declared_words(tmp_path: Path) -> None:
    path = tmp_path / "facts.csv"
    text = "statement,label\nA.,true\nB.,false\nC.,maybe\n"
    with pytest.raises(InputError, match=re.escape(
            f"{path}:4: column 'label': label 'maybe' is not one of the declared labels "
            "'true', 'false' (options.label_map)")):
        _read(tmp_path, text, options={"text_column": "statement",
                                       "label_map": {"true": 1, "false": 0}})


@pytest.mark.parametrize(("line", "message"), [
    ({"id": "a", "text": "B.", "label": 2}, "field 'label': label 2 is not one of the "
                                             "declared labels 1 or 0"),
    ({"id": "a", "text": "B.", "label": True}, "field 'label': label True is not one of the "
                                                "declared labels 1 or 0"),
    ({"id": "a", "text": "B."}, "field 'label' is missing"),
    ({"id": "a", "text": "  ", "label": 1}, "field 'text' is empty; every item needs a "
                                            "statement"),
    ({"text": "B.", "label": 1}, "field 'id' is missing"),
    ({"id": "one", "text": "B.", "label": 1}, "id 'one' already used on line 1"),
    ({"id": "a", "text": "B.", "label": 1, "tag": ["x"]},
     "field 'tag' (a slice) must be a string, number or boolean, found list ['x']"),
    ({"id": "a", "messages": [{"role": "user", "content": "Hi"}], "label": 1},
     "field 'messages' (a chat exchange) needs the task option chat_template: true (each "
     "model then reads it through its own chat template); a plain statement is a 'text' "
     "field"),
], ids=["bad-label", "boolean-label", "missing-label", "empty-text", "missing-id",
        "duplicate-id", "list-slice", "messages"])
def test_a_malformed_jsonl_line_is_refused_with_its_file_and_line(
        tmp_path: Path, line: dict[str, Any], message: str) -> None:
    first = {"id": "one", "text": "A.", "label": 0}
    text = json.dumps(first) + "\n\n" + json.dumps(line) + "\n"
    path = tmp_path / "f.jsonl"
    with pytest.raises(InputError) as caught:
        _read(tmp_path, text, name="f.jsonl")
    assert str(caught.value) == f"{path}:3: {message}"


def test_task_options_are_checked_before_any_file_is_read(tmp_path: Path) -> None:
    def problem(options: dict[str, Any], slices: list[str] | None = None) -> str:
        with pytest.raises(InputError) as caught:
            FORMAT.read(_spec({"data": "x.csv"}, options=options, slices=slices),
                        {"data": tmp_path / "x.csv"})
        return str(caught.value)

    assert problem({"positive_class": "x"}) == (
        "task t: unknown option(s) positive_class for format statements (known: "
        "text_column, label_column, id_column, label_map, strict, chat_template)")
    assert problem({"chat_template": "yes"}) == (
        "task t: options.chat_template must be true or false, found 'yes'")
    assert problem({"strict": "true"}) == ("task t: options.strict must be true or false, "
                                           "found 'true'")
    assert problem({"label_map": {"yes": 1}}) == (
        "task t: options.label_map must give both 1 and 0, found only [1]")
    assert problem({"label_map": {"yes": "1", "no": 0}}) == (
        "task t: options.label_map maps a label to 1 or 0, found 'yes': '1'")
    assert problem({}, slices=["label"]) == (
        "task t: slices label name a column the task reads as its text, label or id")
    assert problem({}) == f"{tmp_path / 'x.csv'}: no such file"


def test_a_declared_slice_must_be_on_every_item(tmp_path: Path) -> None:
    path = tmp_path / "facts.csv"
    with pytest.raises(InputError, match=re.escape(
            f"{path}:1: no column 'topic' (a slice the task declares) in the header")):
        _read(tmp_path, FACTS, options={"text_column": "statement"}, slices=["topic"])
    text = json.dumps({"id": "a", "text": "A.", "label": 1, "topic": "x"}) + "\n" + \
        json.dumps({"id": "b", "text": "B.", "label": 0}) + "\n"
    with pytest.raises(InputError, match=re.escape(
            f"{tmp_path / 'f.jsonl'}:2: field 'topic' (a slice the task declares) is "
            "missing")):
        _read(tmp_path, text, name="f.jsonl", slices=["topic"])


def test_one_label_only_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="every statement is labelled 1; a statements task "
                                         "needs both labels"):
        _split(tmp_path, "statement,label\nA.,1\nB.,1\n", options={"text_column": "statement"})


# --- the split -----------------------------------------------------------------------------

def _many(n: int) -> str:
    return "statement,label\n" + "".join(f"Statement number {k} holds.,{k % 2}\n"
                                         for k in range(n))


def test_the_hashed_split_is_deterministic_disjoint_and_keyed_on_the_text(
        tmp_path: Path) -> None:
    options = {"text_column": "statement"}
    first = _split(tmp_path, _many(200), options=options)
    again = _split(tmp_path, _many(200), options=options)
    assert {s: [i.id for i in v] for s, v in first.splits.items()} == \
        {s: [i.id for i in v] for s, v in again.splits.items()}
    test = {i.prompts[0].text for i in first.test}
    train = {i.prompts[0].text for i in first.splits["train"]}
    assert test.isdisjoint(train) and len(test) + len(train) == 200
    assert 60 < len(test) < 140 and set(first.splits) == {"test", "train"}
    # the rule reads the text, not the line: reversed rows, and a row repeated with other
    # case and spacing, land where they did
    rows = _many(200).splitlines()
    shuffled = "\n".join([rows[0], *reversed(rows[1:]), "STATEMENT  number 7 holds.,1"])
    moved = _split(tmp_path, shuffled + "\n", options=options)
    assert {i.prompts[0].text for i in moved.test} - {"STATEMENT  number 7 holds."} == test
    seven = {s for s, v in moved.splits.items() for i in v
             if folded(i.prompts[0].text) == "statement number 7 holds."}
    assert len(seven) == 1


def test_separate_files_give_the_splits_and_may_not_share_a_statement(tmp_path: Path) -> None:
    (tmp_path / "test.csv").write_text("statement,label\nA is a.,1\nB is c.,0\n", "utf-8")
    (tmp_path / "train.csv").write_text("statement,label\nC is c.,1\nD is e.,0\n", "utf-8")
    (tmp_path / "val.jsonl").write_text(
        json.dumps({"id": "v1", "text": "E is e.", "label": 1}) + "\n", "utf-8")
    files = {"data": "test.csv", "train": "train.csv", "val": "val.jsonl"}
    paths = {role: tmp_path / rel for role, rel in files.items()}
    spec = _spec(files, split=False, options={})
    with pytest.raises(InputError, match="options text_column name CSV columns"):
        FORMAT.read(_spec(files, split=False, options={"text_column": "statement"}), paths)
    (tmp_path / "test.csv").write_text("text,label\nA is a.,1\nB is c.,0\n", "utf-8")
    (tmp_path / "train.csv").write_text("text,label\nC is c.,1\nD is e.,0\n", "utf-8")
    data = FORMAT.read(spec, paths)
    assert {s: [i.id for i in v] for s, v in data.splits.items()} == {
        "test": ["data-2", "data-3"], "train": ["train-2", "train-3"], "val": ["v1"]}
    (tmp_path / "train.csv").write_text("text,label\nC is c.,1\nb  IS c.,0\n", "utf-8")
    with pytest.raises(InputError) as caught:
        FORMAT.read(spec, paths)
    assert str(caught.value) == (
        f"{paths['train']}:3: this statement is also in the test split ({paths['data']}:3); "
        "train, val and test must not share statements")
    with pytest.raises(InputError, match=r"give either a 'split' .* or train"):
        FORMAT.read(_spec(files, options={}), paths)
    with pytest.raises(InputError, match=r"needs a 'split' .* or train"):
        FORMAT.read(_spec({"data": "test.csv"}, split=False), {"data": paths["data"]})


def test_tasks_add_registers_a_statements_csv(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "facts.csv").write_text(_many(40), "utf-8")
    assert main(["tasks", "add", str(folder / "facts.csv"), "--to", str(folder), "--id",
                 "my_facts", "--format", "statements", "--option", "text_column=statement",
                 "--test-fraction", "0.5", "--license", "CC0-1.0", "--source", "test"]) == 0
    assert "added task my_facts (statements, binary" in capsys.readouterr().out
    catalog = TaskCatalog.from_file(folder / "tasks.yaml")
    assert catalog.spec("my_facts").labels == {1: "the statement is true",
                                               0: "the statement is false"}
    assert [r.ok for r in catalog.verify()] == [True]


# --- end to end on the embedded model -------------------------------------------------------

@pytest.mark.slow
def test_truth_facts_trains_and_submits_on_the_embedded_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    probe = tmp_path / "probe"
    assert main(["train", "--task", "truth_facts", "--model", "smollm2-135m", "--site",
                 "15:last_token", "--out", str(probe)]) == 0
    out, report = tmp_path / "submission.json", tmp_path / "REPORT.md"
    assert main(["submit", str(probe), "--tasks", "truth_facts", "--limit", "30",
                 "--bootstrap", "200", "--latency-prompts", "3", "--quiet", "--out",
                 str(out), "--report", str(report)]) == 0
    (task,) = json.loads(out.read_text("utf-8"))["tasks"]
    assert (task["id"], task["format"], task["n_items"]) == ("truth_facts", "statements", 30)
    assert task["test_sha256"] == TaskCatalog.default().spec("truth_facts").test_sha256
    assert 0.0 <= task["auroc"]["value"] <= 1.0
    # single statements on a causal model: the mean log-probability and, from the task's
    # readout, the model's own answer beside the single-prompt baselines
    assert set(task["baselines"]) == {"majority", "length", "random_features", "surprisal",
                                      "own_answer"}
    assert "not for the registry" in report.read_text("utf-8")
