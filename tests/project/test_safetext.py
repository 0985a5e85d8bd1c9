"""Text from strangers never reaches a terminal, REPORT.md or a page raw.

A task whose texts (prompts, prompt ids, slice values, title, source) hold ``ESC[2J``
(clear the screen), an OSC 8 hyperlink (``ESC]8;;URL ESC\\``), BEL and U+202E
(RIGHT-TO-LEFT OVERRIDE) is shown through ``probebench.safetext``: REPORT.md, the
samples file, the CLI's printers, the leaderboard's entry page, CSV and JSON hold none
of them raw, and say that something was there. An entry with such a character is
refused by ``registry check``, naming the field and the character. No model is loaded:
the results are a real stored result of the reference registry, changed where a task's
text would reach it.
"""

from __future__ import annotations

import doctest
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench import safetext
from probebench.cli import main
from probebench.evaluation.report import render_report
from probebench.evaluation.results import SliceOut, Submission, TaskResult
from probebench.evaluation.samples import confident_errors, samples_jsonl
from probebench.leaderboard.build import build_leaderboard, page_name
from probebench.registry.entry import entry_path
from probebench.registry.store import ResultHistory, ResultRecord, latest_results, result_path
from probebench.safetext import visible
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry

REPO = Path(__file__).resolve().parents[2]
#: a real stored result (its model identity is complete, so REPORT.md renders)
REFERENCE = "probebench/verb-grammar-mlp-smollm2-135m-l20-v1"
TASK = "verb_grammar"
#: what a hostile task text holds: clear screen, an OSC 8 hyperlink, BEL, and an
#: override that shows "exe.png" as "gnp.exe"
CLEAR, OSC8 = "\x1b[2J", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
HOSTILE = f"{CLEAR}{OSC8} \u202egnp.exe\x07"
#: the characters that must never arrive raw
RAW = ("\x1b", "\x07", "\u202e")


def raw_characters(text: str) -> list[str]:
    """Every control or format character of ``text`` a view must not hold raw, found by
    Unicode category alone (line breaks, tabs and the two joiners are allowed)."""
    return sorted({f"U+{ord(c):04X}" for c in text
                   if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")
                   and c not in "\n\t\u200c\u200d"})


def assert_shown_not_obeyed(text: str, where: str) -> None:
    assert raw_characters(text) == [], f"{where}: raw {raw_characters(text)}"
    # and the reader sees that something was there
    assert "\\x1b" in text and "\\u202e" in text, f"{where}: no visible escape"


# --- the sanitiser -----------------------------------------------------------------

def test_the_modules_doctests_pass() -> None:
    assert doctest.testmod(safetext).failed == 0


def test_visible_escapes_every_hidden_character_and_keeps_ordinary_text() -> None:
    shown = visible(HOSTILE)
    assert raw_characters(shown) == []
    assert shown == ("\\x1b[2J\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\ "
                     "\\u202egnp.exe\\x07")
    assert visible(shown) == shown  # escaping twice changes nothing
    ordinary = ("¿Dónde está la estación? Ñandú, pingüino. 日本語の文。 مرحبا "
                "👩\u200d🔬 👨\u200d👩\u200d👧 no\u00a0break")
    assert visible(ordinary) == ordinary
    # every character of the Basic Multilingual Plane and the tag block: none that a
    # category marks as control or format survives (the joiners apart), and nothing
    # printable is touched
    for code in [*range(0x10000), *range(0xE0000, 0xE0080)]:
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        out = visible(char)
        assert raw_characters(out) == [] or char in "\u200c\u200d", f"U+{code:04X}"
        if char.isprintable():
            assert out == char, f"U+{code:04X}"


def test_json_visible_keeps_the_data_exact_and_the_file_clean() -> None:
    records = [{"task": "t", "prompt_id": f"p{HOSTILE}", "text": HOSTILE + "\u2028\x85",
                "slices": {HOSTILE: "x"}}]
    text = samples_jsonl(records)
    assert raw_characters(text.replace("\n", "")) == []
    assert json.loads(text) == records[0]


# --- REPORT.md ---------------------------------------------------------------------

def hostile_result(result: TaskResult, n_ids: int = 4) -> TaskResult:
    """``result`` as a task with hostile texts would make it: the prompt ids of its most
    confident errors and one slice value carry ``HOSTILE``."""
    ids = list(result.predictions.prompt_ids)
    for error in confident_errors(result)[:n_ids]:
        ids[error.position] = f"{ids[error.position]}{HOSTILE}"
    slices = dict(result.slices)
    name = sorted(slices)[0]
    values: dict[str, SliceOut] = dict(slices[name])
    values[HOSTILE] = next(iter(values.values()))
    slices[name] = values
    predictions = result.predictions.model_copy(update={"prompt_ids": ids})
    return result.model_copy(update={"predictions": predictions, "slices": slices})


@pytest.fixture(scope="module")
def reference() -> ResultRecord:
    return latest_results(REPO / "registry", REFERENCE)[TASK]


def test_report_md_shows_a_hostile_task_text_escaped(reference: ResultRecord) -> None:
    result = hostile_result(reference.result)
    submission = Submission(
        spec_version="0.3.0", probebench_version="0.1.0", probe=reference.probe,
        model=reference.model, device=reference.device, seed=reference.seed,
        bootstrap_resamples=reference.bootstrap_resamples, versions=reference.versions,
        definitions={}, tasks=[result], run=reference.run)
    assert confident_errors(result), "the reference result has errors to list"
    stored = render_report(submission)  # prompt ids only, as the leaderboard renders it
    assert_shown_not_obeyed(stored, "REPORT.md (stored result)")
    samples = [{"task": TASK, "prompt_id": pid, "text": f"Sentence {n}: {HOSTILE}"}
               for n, pid in enumerate(result.predictions.prompt_ids)]
    texts = render_report(submission, samples=samples)
    assert_shown_not_obeyed(texts, "REPORT.md (with texts)")
    assert "Sentence" in texts and "gnp.exe" in texts  # the texts themselves are shown


# --- the terminal ------------------------------------------------------------------

def test_tasks_show_prints_a_hostile_task_escaped(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    rows = [f"{'tr' if i < 24 else 'va' if i < 32 else 'te'}\t"
            f"{'past' if i % 2 else 'pres' + HOSTILE}\tSentence {i}" for i in range(40)]
    (folder / "data.tsv").write_text("\n".join(rows) + "\n", "utf-8")
    assert main(["tasks", "add", str(folder / "data.tsv"), "--to", str(folder), "--id",
                 "hostile_task", "--format", "senteval", "--license", "MIT", "--source",
                 f"from {HOSTILE}", "--title", f"Title {HOSTILE}", "--option",
                 "positive_class=past"]) == 0
    capsys.readouterr()
    assert main(["tasks", "show", "hostile_task", "--tasks-file",
                 str(folder / "tasks.yaml")]) == 0
    out = capsys.readouterr()
    assert "Title" in out.out and "gnp.exe" in out.out
    assert_shown_not_obeyed(out.out, "tasks show")
    assert raw_characters(out.err) == []


def test_registry_check_refuses_an_entry_with_an_override_in_its_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = tmp_path / "registry"
    (entry_id,) = synthetic_registry(registry, 1)
    path = entry_path(registry, entry_id)
    data = yaml.safe_load(path.read_text("utf-8"))
    data["name"] = "Probe \u202egnp.exe"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "utf-8")
    assert "\u202e" in path.read_text("utf-8")  # written raw, as a stranger would
    assert main(["registry", "check", "--registry", str(registry), "--repo",
                 str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "field 'name'" in out and "U+202E (RIGHT-TO-LEFT OVERRIDE)" in out
    assert "character 7" in out and "expected visible text" in out
    assert raw_characters(out) == []


def test_an_escape_in_a_multiline_field_is_refused_and_a_line_break_is_not(
        tmp_path: Path) -> None:
    from probebench.errors import InputError
    from probebench.registry.entry import read_entry

    registry = tmp_path / "registry"
    (entry_id,) = synthetic_registry(registry, 1)
    path = entry_path(registry, entry_id)
    data = yaml.safe_load(path.read_text("utf-8"))
    data["description"] = "Reads tense.\nTrained on\tSpanish: ¿qué?"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "utf-8")
    assert read_entry(path).description == data["description"]
    data["description"] = f"Reads tense. {CLEAR}"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "utf-8")
    with pytest.raises(InputError, match=r"field 'description'.*U\+001B \(ESC"):
        read_entry(path)


# --- the leaderboard ---------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile_board(tmp_path_factory: pytest.TempPathFactory,
                  reference: ResultRecord) -> dict[str, Any]:
    """A leaderboard of two synthetic entries; the one on verb_grammar carries the
    reference result with a hostile task's texts (prompt ids, a slice value) and a
    hostile run description (hardware, accuracy name, a baseline's note)."""
    root = tmp_path_factory.mktemp("hostile")
    registry = root / "registry"
    ids = synthetic_registry(registry, 2)
    entry_id = ids[1]  # live, on verb_grammar and blimp_passive_1
    entry = yaml.safe_load(entry_path(registry, entry_id).read_text("utf-8"))
    result = hostile_result(reference.result)
    baselines = {k: v.model_copy(update={"note": f"baseline {HOSTILE}"})
                 for k, v in result.baselines.items()}
    result = result.model_copy(update={"baselines": baselines,
                                       "accuracy_name": f"mc_accuracy{HOSTILE}"})
    assert reference.run is not None
    record = reference.model_copy(update={
        "result": result,
        "probe": reference.probe.model_copy(update={"bundle_sha256":
                                                    entry["artifact_sha256"]}),
        "run": reference.run.model_copy(update={"hardware": f"CPU {HOSTILE}"})})
    result_path(registry, entry_id, TASK).write_text(
        ResultHistory(entry=entry_id, task=TASK, history=[record]).to_json(), "utf-8")
    # its artifact folder, so the leaderboard's registry mirror lists it
    (root / entry["artifact_url"]).mkdir(parents=True)
    (root / entry["artifact_url"] / "meta.yaml").write_text("probe_type: linear\n", "utf-8")
    out = root / "board"
    build_leaderboard(registry, out, catalog=TaskCatalog.default(), n_resamples=20)
    return {"out": out, "entry": entry_id, "registry": registry}


def test_the_entry_page_shows_the_hostile_texts_escaped(hostile_board: dict[str, Any]
                                                        ) -> None:
    out: Path = hostile_board["out"]
    page = (out / page_name(hostile_board["entry"])).read_text("utf-8")
    assert_shown_not_obeyed(page, "entry page")
    assert "gnp.exe" in page
    # the REPORT.md the page links, rendered from the stored result
    reports = sorted(out.glob("files/**/REPORT.md"))
    assert reports, "the reference record renders a REPORT.md"
    for report in reports:
        if TASK in report.parts:
            assert_shown_not_obeyed(report.read_text("utf-8"), str(report))
    # no page, report or download of the leaderboard holds one raw
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.suffix in (".html", ".md", ".csv", ".json", ".svg"):
            assert raw_characters(path.read_text("utf-8")) == [], path


def test_the_csv_and_json_show_the_hostile_texts_escaped(hostile_board: dict[str, Any]
                                                         ) -> None:
    out: Path = hostile_board["out"]
    csv_text = (out / "leaderboard.csv").read_text("utf-8")
    assert_shown_not_obeyed(csv_text, "leaderboard.csv")
    board = json.loads((out / "leaderboard.json").read_text("utf-8"))
    (row,) = [r for r in board["results"]
              if r["entry_id"] == hostile_board["entry"] and r["task"] == TASK]
    # parsed, the JSON's fields still hold the escapes, not the characters
    assert row["hardware"] == visible(f"CPU {HOSTILE}")
    assert row["accuracy_name"] == visible(f"mc_accuracy{HOSTILE}")
    assert raw_characters(json.dumps(board, ensure_ascii=False)) == []


def test_registry_list_and_show_print_a_hostile_mirror_escaped(
        hostile_board: dict[str, Any], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setenv("PROBEBENCH_HOME", str(tmp_path / "home"))
    # the built leaderboard as a mirror whose server changed its index: a hostile model
    # and task id, which `list` reads from the index alone
    mirror = tmp_path / "mirror"
    shutil.copytree(hostile_board["out"], mirror)
    index = json.loads((mirror / "registry.json").read_text("utf-8"))
    (listed_entry,) = index["entries"]
    assert listed_entry["id"] == hostile_board["entry"]
    listed_entry["model"] = f"smollm2{HOSTILE}"
    listed_entry["auroc"] = {f"{TASK}{HOSTILE}": 0.5}
    (mirror / "registry.json").write_text(json.dumps(index, ensure_ascii=False), "utf-8")
    assert "\u202e" in (mirror / "registry.json").read_text("utf-8")
    code = main(["registry", "list", "--registry", str(mirror)])
    listed = capsys.readouterr()
    # listed, or refused with a named error: either way shown, never obeyed
    assert code in (0, 2), listed
    assert_shown_not_obeyed(listed.out + listed.err, "registry list")
    # show reads the entry and its stored results (the hostile accuracy name)
    assert main(["registry", "show", hostile_board["entry"], "--registry",
                 str(hostile_board["registry"])]) == 0
    shown = capsys.readouterr()
    assert "mc_accuracy" in shown.out
    assert_shown_not_obeyed(shown.out, "registry show")
    assert raw_characters(shown.err) == []
