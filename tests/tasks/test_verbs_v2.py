"""``verb_grammar_v2``: the verb-grammar task with one right answer per item.

The check for a second right answer (``probebench/tasks/verbs/ambiguity.py``, run by
``check_verbs``) flags the items of ``verb_grammar`` that score a grammatical sentence as
wrong; ``verb_grammar_v2``'s files deprecate each of them (with a replacement of the same
verb, tense and person) and hold none live; ``verb_grammar`` stays byte for byte as
registered and still loads, its findings listed as warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.errors import InputError
from probebench.hashing import sha256_file
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families.verbs.format import VerbsFormat, verb_files
from probebench.tasks.verbs.ambiguity import context, second_answers
from probebench.tasks.verbs.checks import check_verbs
from probebench.tasks.verbs.schema import BLANK, VerbItem, VerbTables, read_verb_file
from tests.catalogs import PACKAGED_ROOT, PACKAGED_TASKS, copy_catalog

V1, V2 = "verb_grammar", "verb_grammar_v2"
TABLES = VerbTables.read(PACKAGED_ROOT / "data/verbs/verbs.json")
#: the three sentences a demo probe "got wrong" although they are grammatical
EXAMPLES = {"en-core-019": ("wrote", "Every morning I wrote three pages in my diary."),
            "en-core-006": ("cleaned", "On Sundays I cleaned the whole apartment."),
            "es-core-025": ("dije", "Siempre dije la verdad a mis amigos.")}
EVAL_FILES = ("probes.jsonl", "adversarial.jsonl", "holdout-probes.jsonl",
              "holdout-adversarial.jsonl")


@pytest.fixture(scope="module")
def catalog() -> TaskCatalog:
    return TaskCatalog.default()


def _items(folder: str, name: str) -> list[VerbItem]:
    return [ln.item for ln in read_verb_file(PACKAGED_ROOT / "data" / folder / name)]


def _mc(language: str, prompt: str, candidates: list[str], expected: str, *, verb: str,
        tense: str, person: str, label: str = "correct") -> VerbItem:
    regularity = TABLES.verbs(language)[verb]["regularity"]
    return VerbItem.model_validate({
        "id": "t", "language": language, "verb": verb, "regularity": regularity,
        "tense": tense, "person": person, "prompt": prompt, "candidates": candidates,
        "expected": expected, "label": label, "category": "core"})


# --- the checker on verb_grammar -----------------------------------------------------

def test_the_three_examples_are_flagged_with_their_second_answer() -> None:
    v1 = {i.id: i for i in _items("eval", "probes.jsonl")}
    for item_id, (second, _) in EXAMPLES.items():
        found = second_answers(v1[item_id], TABLES)
        assert second in [f.candidate for f in found], (item_id, found)
    reason = second_answers(v1["en-core-019"], TABLES)[0].reason
    assert "frequency adverb 'Every morning'" in reason


def test_verb_grammar_lists_them_as_warnings_and_still_loads(catalog: TaskCatalog) -> None:
    files = verb_files(catalog.files_of(catalog.spec(V1)))
    report = check_verbs(files)
    assert report.ok, report.failures
    for item_id in EXAMPLES:
        assert any(f"({item_id}): two right answers" in w for w in report.warnings), item_id
    # the train/val generator's "Soon our coach walked ..." lines, labelled incorrect
    assert sum("data/verbs/train.jsonl" in w for w in report.warnings) == 38
    assert sum("data/verbs/val.jsonl" in w for w in report.warnings) == 13
    strict = check_verbs(files, ambiguity="error")
    assert not strict.ok and not strict.warnings
    assert any("(es-core-025): two right answers: 'dice' also fits" in f
               for f in strict.failures), strict.failures
    assert len(catalog.load(V1).test) == 104


def test_verb_grammar_files_are_byte_identical_to_their_pins(catalog: TaskCatalog) -> None:
    spec = catalog.spec(V1)
    pinned = dict(spec.files_sha256)
    for holdout in spec.holdouts:
        pinned.update(holdout.files_sha256)
    assert all(rel.startswith(("data/eval/", "data/verbs/")) for rel in pinned)
    for rel, sha in pinned.items():
        assert sha256_file(catalog.root_of(V1) / rel, memo=False) == sha, rel
    assert catalog.file_drift(spec) == []


# --- verb_grammar_v2's files ---------------------------------------------------------

def test_every_deprecated_v2_line_is_flagged_and_replaced() -> None:
    deprecated = 0
    for name in EVAL_FILES:
        items = _items("eval_v2", name)
        by_id = {i.id: i for i in items}
        for item in items:
            if not item.deprecated:
                continue
            deprecated += 1
            live = item.model_copy(update={"deprecated": False})
            assert second_answers(live, TABLES), item.id  # what the checker finds
            assert item.deprecation_reason and item.replaced_by, item.id
            new = by_id[item.replaced_by]
            assert not new.deprecated and second_answers(new, TABLES) == [], new.id
            assert (new.verb, new.tense, new.person, new.language) == (
                item.verb, item.tense, item.person, item.language)
    assert deprecated == 22 + 19


def test_v2_copies_v1_and_only_adds(catalog: TaskCatalog) -> None:
    """Each v1 line is in v2 unchanged, or deprecated with nothing else changed; the
    replacements are new ids."""
    for name in EVAL_FILES:
        old = {i.id: i for i in _items("eval", name)}
        new = {i.id: i for i in _items("eval_v2", name)}
        assert set(old) <= set(new)
        for item_id, item in old.items():
            changed = new[item_id].model_dump(exclude={"deprecated", "deprecation_reason",
                                                       "replaced_by"})
            assert changed == item.model_dump(exclude={"deprecated", "deprecation_reason",
                                                       "replaced_by"})
        assert all(not new[i].deprecated for i in set(new) - set(old))


def test_v2_has_no_live_line_with_two_right_answers(catalog: TaskCatalog) -> None:
    spec = catalog.spec(V2)
    files = catalog.files_of(spec)
    for role in ("test", "adversarial", "train", "val"):
        for line in read_verb_file(files[role]):
            assert second_answers(line.item, TABLES) == [], line.where
    for holdout in spec.holdouts:
        for rel in holdout.files.values():
            for line in read_verb_file(catalog.root_of(V2) / rel):
                assert second_answers(line.item, TABLES) == [], line.where
    report = check_verbs(verb_files(files), ambiguity="error")
    assert report.ok and not report.warnings, report.failures


def test_v2_loads_without_deprecated_items_and_scores_no_example_as_wrong(
        catalog: TaskCatalog) -> None:
    spec = catalog.spec(V2)
    assert spec.options == {"ambiguity_check": "error"}
    data = catalog.load(V2)
    deprecated = {i.id for name in EVAL_FILES for i in _items("eval_v2", name) if i.deprecated}
    assert len(data.test) == 104
    assert not {i.id for i in data.test} & deprecated
    held = catalog.load_holdout(V2, spec.holdouts[0])
    assert len(held.test) == 104 and not {i.id for i in held.test} & deprecated
    template = (catalog.root_of(V2) / spec.files["template"]).read_text("utf-8")
    head, tail = template.split("{sentence}")
    wrong = {p.text[len(head):len(p.text) - len(tail)]
             for items in (data.test, held.test) for i in items for p in i.prompts
             if p.label == 0}
    right = {p.text[len(head):len(p.text) - len(tail)]
             for i in data.test for p in i.prompts if p.label == 1}
    for _, sentence in EXAMPLES.values():
        assert sentence not in wrong
    # every second answer of every v1 line: no v2 prompt scores it as wrong
    for name in EVAL_FILES:
        for item in _items("eval", name):
            for found in second_answers(item, TABLES):
                assert item.prompt.replace(BLANK, found.candidate) not in wrong
    assert "These days I write three pages in my diary every morning." in right
    assert "Every morning I write three pages in my diary." not in right  # deprecated


def test_a_v2_line_with_two_right_answers_refuses_the_task(tmp_path: Path) -> None:
    """The same line that only warns in verb_grammar fails verb_grammar_v2 (its option
    ambiguity_check: error)."""
    catalog = copy_catalog(tmp_path)
    path = tmp_path / "data/eval_v2/probes.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for row in rows:
        if row["id"] == "en-core-019":
            for key in ("deprecated", "deprecation_reason", "replaced_by"):
                row.pop(key)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    spec = catalog.spec(V2)
    with pytest.raises(InputError, match=r"en-core-019\): two right answers: 'wrote'"):
        VerbsFormat().read(spec, catalog.files_of(spec))
    warned = spec.model_copy(update={"options": {"ambiguity_check": "warn"}})
    assert len(VerbsFormat().read(warned, catalog.files_of(spec)).test) == 105
    for options, message in (({"ambiguity_check": "maybe"}, "expected one of error, warn"),
                             ({"strictness": "error"}, "unknown option")):
        odd = spec.model_copy(update={"options": options})
        with pytest.raises(InputError, match=message):
            VerbsFormat().read(odd, catalog.files_of(spec))


def test_deprecation_fields_are_checked(tmp_path: Path) -> None:
    catalog = copy_catalog(tmp_path)
    path = tmp_path / "data/eval_v2/probes.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    rows[0]["replaced_by"] = "en-core-041"  # on a live line
    by_id = {r["id"]: r for r in rows}
    by_id["en-core-006"]["replaced_by"] = "en-core-041"  # talk 3sg, not clean 1sg
    by_id["en-core-007"]["replaced_by"] = "en-core-999"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    report = check_verbs(verb_files(catalog.files_of(catalog.spec(V2))), ambiguity="error")
    joined = "\n".join(report.failures)
    assert "(en-core-001): replaced_by is for deprecated lines" in joined
    assert "(en-core-006): replaced_by 'en-core-041' is en:talk present_simple 3sg" in joined
    assert "(en-core-007): replaced_by 'en-core-999' is not a live line" in joined


# --- the cues, case by case ----------------------------------------------------------

@pytest.mark.parametrize(("language", "prompt", "candidates", "verb", "tense", "person",
                          "flagged"), [
    # a past anchor: only the past fits
    ("en", "Yesterday morning I ___ three pages.", ["wrote", "write", "writing"], "write",
     "past_simple", "1sg", []),
    # a frequency adverb alone: the habitual past fits
    ("en", "Most weekends I ___ three pages.", ["write", "writes", "wrote"], "write",
     "present_simple", "1sg", ["wrote"]),
    # "the next day" is narrative, not a future anchor
    ("en", "The next day I ___ to the bakery.", ["walked", "will walk"], "walk",
     "past_simple", "1sg", ["will walk"]),
    # "last" that is no time ("the last chapter") anchors nothing
    ("en", "I ___ the last chapter.", ["finished", "finish"], "finish", "past_simple",
     "1sg", ["finish"]),
    # a future anchor takes the scheduled present of the right person only
    ("en", "Next week you ___ the museum.", ["will visit", "visited", "visits"], "visit",
     "future", "2sg", []),
    ("en", "Next week you ___ the museum.", ["will visit", "visit"], "visit", "future",
     "2sg", ["visit"]),
    # aspect: a progressive of the right tense, an -ing form after "be" or a gerund verb
    ("en", "Yesterday at six my aunt ___ to the bakery.", ["walked", "was walking"], "walk",
     "past_simple", "3sg", ["was walking"]),
    ("en", "I enjoy ___ along the river.", ["walk", "walking"], "walk", "infinitive",
     "1sg", ["walking"]),
    ("en", "I want to ___ along the river.", ["walk", "walking"], "walk", "infinitive",
     "1sg", []),
    # Spanish: "mañana" is tomorrow, "por la mañana" is not; "pasado mañana" is future
    ("es", "Mañana yo ___ al médico.", ["iré", "fui"], "ir", "future", "1sg", []),
    ("es", "Por la mañana yo ___ al médico.", ["iré", "fui"], "ir", "future", "1sg",
     ["fui"]),
    ("es", "Pasado mañana yo ___ al médico.", ["iré", "fui"], "ir", "future", "1sg", []),
    # Spanish drops the subject: without "yo" the third person fits too
    ("es", "Ayer ___ una tarta.", ["hice", "hizo", "hago"], "hacer", "past_simple", "1sg",
     ["hizo"]),
    ("es", "Ayer yo ___ una tarta.", ["hice", "hizo", "hago"], "hacer", "past_simple",
     "1sg", []),
    ("es", "Ayer ___ una tarta.", ["hizo", "hice", "hace"], "hacer", "past_simple", "3sg",
     ["hice"]),
    ("es", "Ayer mi tía ___ una tarta.", ["hizo", "hice", "hace"], "hacer", "past_simple",
     "3sg", []),
    # "hace buen tiempo" is the weather, "hace tres días" a past anchor
    ("es", "Cuando hace buen tiempo tú ___ por el parque.", ["caminas", "caminaste"],
     "caminar", "present_simple", "2sg", ["caminaste"]),
    ("es", "Hace tres días tú ___ por el parque.", ["caminaste", "caminas"], "caminar",
     "past_simple", "2sg", []),
])
def test_cues(language: str, prompt: str, candidates: list[str], verb: str, tense: str,
              person: str, flagged: list[str]) -> None:
    item = _mc(language, prompt, candidates, candidates[0], verb=verb, tense=tense,
               person=person)
    assert [f.candidate for f in second_answers(item, TABLES)] == flagged


def test_a_classification_line_labelled_incorrect_is_read_with_its_shown_form() -> None:
    soon = VerbItem(id="t", language="en", verb="walk", regularity="regular", tense="future",
                    person="3sg", prompt="Soon our coach walked along the beach.",
                    candidates=["walked", "will walk"], expected="will walk",
                    label="incorrect", category="core")
    assert [f.candidate for f in second_answers(soon, TABLES)] == ["walked"]
    anchored = soon.model_copy(update={"prompt": "Tomorrow our coach walked along the beach."})
    assert second_answers(anchored, TABLES) == []
    assert second_answers(soon.model_copy(update={"label": "ambiguous"}), TABLES) == []
    assert second_answers(soon.model_copy(update={"deprecated": True}), TABLES) == []


def test_context_reads_anchors() -> None:
    assert context("Every morning I write.", "en").tenses == {
        "present_simple", "past_simple", "future"}
    assert context("These days I write.", "en").tenses == {"present_simple", "future"}
    assert context("Hace dos días escribí.", "es").tenses == {"past_simple"}
    assert context("El año que viene escribiré.", "es").tenses == {"future", "present_simple"}
    both = context("Yesterday I said I would write tomorrow.", "en")
    assert both.tenses == {"present_simple", "past_simple", "future"} and not both.perfect


# --- the commands --------------------------------------------------------------------

def test_check_verbs_reports_both_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "check-verbs"]) == 0
    out = capsys.readouterr().out
    v1_part, v2_part = out.split(f"\n{V2}: ", 1)
    for item_id in EXAMPLES:
        assert f"({item_id}): two right answers" in v1_part
    assert "WARN" not in v2_part and "FAIL" not in v2_part
    assert "two right answers: error (options.ambiguity_check)" in v2_part
    assert f"{V2} holdout v2: " in v2_part and out.rstrip().endswith("all checks pass")
    assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "check-verbs",
                 "--task", "blimp_passive_1"]) == 2
    assert "is not a verb-grammar task" in capsys.readouterr().err


def test_generate_verbs_reproduces_v2_train_and_val(tmp_path: Path) -> None:
    assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "generate-verbs", "--task", V2,
                 "--seed", "42", "--out", str(tmp_path)]) == 0
    for name in ("train.jsonl", "val.jsonl"):
        registered = PACKAGED_ROOT / "data/verbs_v2" / name
        assert (tmp_path / name).read_bytes() == registered.read_bytes()
        assert registered.read_bytes() != (PACKAGED_ROOT / "data/verbs" / name).read_bytes()
    lexicon = json.loads((PACKAGED_ROOT / "data/verbs_v2/lexicon.json").read_text("utf-8"))
    assert "soon" not in lexicon["time_markers"]["en"]["future"]
    assert "pronto" not in lexicon["time_markers"]["es"]["future"]
