"""Every rule of the verb-grammar probe set, each with a fixture that breaks it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.tasks.verbs.checks import VerbFiles, check_verbs
from probebench.tasks.verbs.render import render_item
from probebench.tasks.verbs.schema import VerbItem, read_verb_file
from tests.catalogs import PACKAGED_ROOT, PACKAGED_TASKS

TEMPLATE = (PACKAGED_ROOT / "data/eval/probe_prompt.txt").read_text()


@pytest.fixture
def files(tmp_path: Path) -> VerbFiles:
    shutil.copytree(PACKAGED_ROOT / "data/eval", tmp_path / "eval")
    shutil.copytree(PACKAGED_ROOT / "data/verbs", tmp_path / "verbs")
    return VerbFiles(probes=tmp_path / "eval/probes.jsonl",
                     adversarial=tmp_path / "eval/adversarial.jsonl",
                     train=tmp_path / "verbs/train.jsonl", val=tmp_path / "verbs/val.jsonl",
                     verbs=tmp_path / "verbs/verbs.json", lexicon=tmp_path / "verbs/lexicon.json")


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def _edit(which: str, index: int, **changes: object) -> Callable[[VerbFiles], None]:
    def mutate(f: VerbFiles) -> None:
        path = getattr(f, which)
        rows = _rows(path)
        rows[index].update(changes)
        for key, value in changes.items():
            if value is None:
                rows[index].pop(key)
        _write(path, rows)
    return mutate


def _deprecate(pred: Callable[[dict[str, object]], bool]) -> Callable[[VerbFiles], None]:
    def mutate(f: VerbFiles) -> None:
        for path in (f.probes, f.adversarial):
            _write(path, [{**r, "deprecated": True} if pred(r) else r for r in _rows(path)])
    return mutate


def _raw_line(f: VerbFiles) -> None:
    with f.probes.open("a") as handle:
        handle.write('{"id": "broken", \n')


def _duplicate_id(f: VerbFiles) -> None:
    rows = _rows(f.adversarial)
    rows[1]["id"] = rows[0]["id"]
    _write(f.adversarial, rows)


def _leak(strict: bool) -> Callable[[VerbFiles], None]:
    def mutate(f: VerbFiles) -> None:
        probe = _rows(f.probes)[0]  # "Yesterday my grandmother ___ to the bakery ..."
        sentence = str(probe["prompt"]).replace("___", str(probe["expected"]))
        if strict:
            sentence = sentence.replace("grandmother", "plumber").replace("bakery", "harbour")
        train = _rows(f.train)
        train.append({**train[0], "id": "gen-train-leak", "language": "en", "verb": "walk",
                      "regularity": "regular", "tense": "past_simple", "person": "3sg",
                      "prompt": sentence, "candidates": ["walked", "walks"],
                      "expected": "walked", "label": "correct"})
        _write(f.train, train)
    return mutate


def _verb_counts(f: VerbFiles) -> None:
    table = json.loads(f.verbs.read_text())
    table["verbs"]["en"]["walk"]["regularity"] = "irregular"
    f.verbs.write_text(json.dumps(table))


def _only_one_go(f: VerbFiles) -> None:
    rows = _rows(f.probes)
    gos = [i for i, r in enumerate(rows) if r["verb"] == "go"]
    for i in gos[1:]:
        rows[i]["deprecated"] = True
    _write(f.probes, rows)
    adv = _rows(f.adversarial)
    _write(f.adversarial, [{**r, "deprecated": True} if r["verb"] == "go" else r for r in adv])


CASES: list[tuple[str, Callable[[VerbFiles], None], str]] = [
    ("bad-json", _raw_line, "probes.jsonl:81: not valid JSON"),
    ("missing-field", _edit("probes", 0, expected=None), "probes.jsonl:1: field 'expected'"),
    ("language-set", _edit("probes", 1, language="fr"), "probes.jsonl:2: field 'language'"),
    ("tense-set", _edit("probes", 2, tense="pluperfect"), "probes.jsonl:3: field 'tense'"),
    ("person-set", _edit("probes", 3, person="1pl"), "probes.jsonl:4: field 'person'"),
    ("label-set", _edit("probes", 4, label="maybe"), "probes.jsonl:5: field 'label'"),
    ("category-set", _edit("probes", 4, category="hard"), "probes.jsonl:5: field 'category'"),
    ("too-many-candidates", _edit("probes", 0, candidates=["a", "b", "c", "d", "walked"]),
     "probes.jsonl:1: field 'candidates'"),
    ("expected-in-candidates", _edit("probes", 0, expected="walking2"),
     "probes.jsonl:1 (en-core-001): expected 'walking2' is not among the candidates"),
    ("regularity-matches", _edit("probes", 0, regularity="irregular"),
     "'walk' is regular, the line says irregular"),
    ("verb-list", _edit("probes", 0, verb="stroll"), "verb 'stroll' is not one of the 20"),
    ("unique-ids", _duplicate_id, "adversarial.jsonl:2 (en-adv-001): id already used"),
    ("one-blank", _edit("probes", 0, prompt="Yesterday ___ my grandmother ___ to town."),
     "holds ___ exactly once"),
    ("inline-candidate", _edit("probes", 8, prompt="The shop has its doors early today."),
     "exactly one candidate inline"),
    ("correct-shows-expected", _edit("probes", 8, prompt="The shop has open its doors."),
     "labelled correct but shows 'open'"),
    ("form-vs-table", _edit("probes", 0, expected="walks", candidates=["walked", "walks"]),
     "does not contain the past_simple 3sg form 'walked'"),
    ("mc-not-incorrect", _edit("probes", 0, label="incorrect"),
     "multiple-choice lines are 'correct' or 'ambiguous'"),
    ("reason-code", _edit("adversarial", 0, reason_code=None), "need a reason_code"),
    ("category-file", _edit("adversarial", 0, category="core"),
     "category 'core' in the adversarial file"),
    ("generated-source", _edit("train", 0, source="hand"), "lines have source 'generated'"),
    ("coverage-language", _deprecate(lambda r: r["language"] == "es"),
     "coverage: language es has 0 probes; at least 30"),
    ("coverage-regularity", _deprecate(lambda r: r["regularity"] == "regular"),
     "coverage: regularity regular has 0"),
    ("coverage-tense", _deprecate(lambda r: r["tense"] == "infinitive"),
     "coverage: tense infinitive has 0 probes; at least 10"),
    ("coverage-person", _deprecate(lambda r: r["person"] == "2sg"),
     "coverage: person 2sg has 0 probes; at least 15"),
    ("coverage-adversarial", _deprecate(lambda r: r["category"] == "adversarial"),
     "coverage: 0 adversarial probes; at least 20"),
    ("coverage-category", _deprecate(lambda r: r.get("reason_code") == "wrong_person"),
     "adversarial category wrong_person has 0 probes; 3 to 5"),
    ("coverage-regular-verb", _deprecate(lambda r: r["verb"] == "cook"),
     "regular verb en:cook has 0 probes; at least 1"),
    ("coverage-irregular-verb", _only_one_go, "irregular verb en:go has 1 probes; at least 2"),
    ("verb-table-counts", _verb_counts, "needs 12 regular and 8 irregular verbs"),
    ("leakage-exact", _leak(strict=False), "en-core-001): leakage: the same sentence is in"),
    ("leakage-strict", _leak(strict=True), "en-core-001): leakage: equal up to content nouns"),
]


def test_the_shipped_set_passes_every_check(files: VerbFiles) -> None:
    report = check_verbs(files)
    assert report.ok, report.failures
    assert report.counts["probes"] >= 60 and report.counts["adversarial"] >= 20


@pytest.mark.parametrize(("name", "mutate", "message"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_has_a_failing_fixture(files: VerbFiles, name: str,
                                         mutate: Callable[[VerbFiles], None],
                                         message: str) -> None:
    mutate(files)
    report = check_verbs(files)
    assert not report.ok
    assert any(message in f for f in report.failures), report.failures


def test_check_verbs_cli(files: VerbFiles, tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "check-verbs"]) == 0
    assert "all checks pass" in capsys.readouterr().out
    tasks = (PACKAGED_TASKS).read_text().replace("data/eval/", "eval/").replace(
        "data/verbs/", "verbs/")
    (tmp_path / "tasks.yaml").write_text(tasks)
    _edit("probes", 0, expected="walking2")(files)
    assert main(["tasks", "--tasks-file", str(tmp_path / "tasks.yaml"), "check-verbs",
                 "--task", "verb_grammar"]) == 1
    assert "FAIL  " in capsys.readouterr().out


def test_generator_is_byte_identical_for_a_seed(tmp_path: Path) -> None:
    for out in ("a", "b", "c"):
        seed = "7" if out == "c" else "42"
        assert main(["tasks", "--tasks-file", str(PACKAGED_TASKS), "generate-verbs",
                     "--seed", seed, "--out", str(tmp_path / out)]) == 0
    for name in ("train.jsonl", "val.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        registered = PACKAGED_ROOT / "data/verbs" / name
        assert (tmp_path / "a" / name).read_bytes() == registered.read_bytes()
        assert (tmp_path / "a" / name).read_bytes() != (tmp_path / "c" / name).read_bytes()


def test_deprecated_lines_are_kept_but_not_scored(files: VerbFiles) -> None:
    _deprecate(lambda r: r["id"] == "en-core-001")(files)
    assert check_verbs(files).ok
    lines = read_verb_file(files.probes)
    assert lines[0].item.deprecated and lines[0].item.id == "en-core-001"
    from probebench.tasks.catalog import TaskCatalog
    from probebench.tasks.families.verbs.format import VerbsFormat

    catalog = TaskCatalog.default()
    spec = catalog.spec("verb_grammar")
    paths = {"test": files.probes, "adversarial": files.adversarial, "train": files.train,
             "val": files.val, "verbs": files.verbs, "lexicon": files.lexicon,
             "template": catalog.root / "data/eval/probe_prompt.txt"}
    data = VerbsFormat().read(spec, paths)
    ids = {item.id for item in data.test}
    assert "en-core-001" not in ids and "en-core-002" in ids


def test_rendering_multiple_choice_classification_and_ambiguous() -> None:
    lines = {ln.item.id: ln.item for ln in read_verb_file(PACKAGED_ROOT / "data/eval/probes.jsonl")
             + read_verb_file(PACKAGED_ROOT / "data/eval/adversarial.jsonl")}
    mc = render_item(lines["en-core-001"], TEMPLATE)
    assert [p.label for p in mc.prompts] == [1, 0, 0]  # walked, walks, walking
    for prompt, cand in zip(mc.prompts, ["walked", "walks", "walking"], strict=True):
        a, b = prompt.spans["answer"]
        assert prompt.text[a:b] == cand
        q0, q1 = prompt.spans["question"]
        assert prompt.text[q0:q1].endswith("before breakfast.")
        assert prompt.text.endswith("Judgement:\n") or prompt.text.endswith("Judgement:")
    cls = render_item(lines["en-core-012"], TEMPLATE)  # "Every day she finish ..."
    assert len(cls.prompts) == 1 and cls.prompts[0].label == 0
    a, b = cls.prompts[0].spans["answer"]
    assert cls.prompts[0].text[a:b] == "finish"
    amb = render_item(lines["en-adv-011"], TEMPLATE)
    assert lines["en-adv-011"].label == "ambiguous"
    assert all(p.label is None for p in amb.prompts)
    assert mc.slices["tense"] == "past_simple" and mc.slices["form"] == "multiple_choice"


def test_verb_item_schema_is_strict() -> None:
    from pydantic import ValidationError

    row = json.loads((PACKAGED_ROOT / "data/eval/probes.jsonl").read_text().splitlines()[0])
    VerbItem.model_validate(row)
    with pytest.raises(ValidationError):
        VerbItem.model_validate({**row, "mood": "subjunctive"})
