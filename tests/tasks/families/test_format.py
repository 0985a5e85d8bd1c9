from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from probebench.errors import InputError
from probebench.models import token_surprisals
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families.blimp.format import read_blimp
from probebench.tasks.families.senteval.format import read_senteval
from probebench.tasks.families.syntaxgym.format import prediction_results, read_suite
from probebench.tasks.hygiene import canonical_test_sha256, hashed_split
from tests.catalogs import PACKAGED_ROOT

DATA = PACKAGED_ROOT / "data"


# --- SyntaxGym on the real model ---------------------------------------------------------

def _hand_region_7(smollm: Any, item: Any) -> dict[str, float]:
    """Surprisal of region 7 per condition, summed token by token right here."""
    prompts = {p.slices["condition"]: p for p in item.prompts}
    surprisals = token_surprisals(smollm, [p.text for p in item.prompts], progress=False)
    hand: dict[str, float] = {}
    for (cond, prompt), ts in zip(prompts.items(), surprisals, strict=True):
        start, end = prompt.spans["region_7"]  # the matrix verb: "is" / "are"
        hand[cond] = sum(s for (_, b), s in zip(ts.offsets, ts.surprisal, strict=True)
                         if start <= b - 1 < end)  # the token's last character is inside
    return hand


def test_syntaxgym_prediction_by_hand_on_number_src(smollm: Any) -> None:
    """Region surprisal of item 1 computed here token by token, compared by hand."""
    _, items = read_suite(DATA / "syntaxgym" / "number_src.json")
    item = items[0]
    prompts = {p.slices["condition"]: p for p in item.prompts}
    assert prompts["match_sing"].text.endswith("is good")
    assert prompts["mismatch_sing"].text.endswith("are good")
    hand = _hand_region_7(smollm, item)
    expected = (hand["match_sing"] < hand["mismatch_sing"]) and (
        hand["match_plural"] < hand["mismatch_plural"])
    values = {c: {7: v} for c, v in hand.items()}
    assert prediction_results(item, values) == [expected]
    # a real model prefers "The author ... is" over "The author ... are"
    assert hand["match_sing"] < hand["mismatch_sing"]


def test_syntaxgym_errors_name_the_place(tmp_path: Path) -> None:
    suite = json.loads((DATA / "syntaxgym/format/sample_suite.json").read_text())
    bad = tmp_path / "s.json"
    broken = json.loads(json.dumps(suite))
    broken["items"][0]["conditions"][0]["regions"][1]["region_number"] = "2"
    bad.write_text(json.dumps(broken))
    with pytest.raises(InputError, match=r"items\[0\]\.conditions\[0\]\.regions\[1\]"):
        read_suite(bad)
    broken = json.loads(json.dumps(suite))
    broken["meta"]["metric"] = "mode"
    bad.write_text(json.dumps(broken))
    with pytest.raises(InputError, match=r"meta\.metric"):
        read_suite(bad)
    broken = json.loads(json.dumps(suite))
    broken["predictions"][0]["formula"] = "(2;%nope%) > (2;%match%)"
    bad.write_text(json.dumps(broken))
    with pytest.raises(InputError, match="condition 'nope'"):
        read_suite(bad)
    bad.write_text("{\n  \"meta\": ,\n}")
    with pytest.raises(InputError, match=r"s\.json:2: not valid JSON"):
        read_suite(bad)
    broken = json.loads(json.dumps(suite))
    broken["meta"]["metric"] = ["sum", "max"]
    bad.write_text(json.dumps(broken))
    summary, _ = read_suite(bad)
    assert summary["metrics"] == ["sum", "max"]


# --- BLiMP -------------------------------------------------------------------------------

def test_blimp_pairs_split_disjoint_and_stable() -> None:
    catalog = TaskCatalog.default()
    data = catalog.load("blimp_passive_1")
    train_ids = {i.id for i in data.splits["train"]}
    test_ids = {i.id for i in data.splits["test"]}
    holdout = catalog.reeval_set("blimp_passive_1").data.test
    holdout_ids = {i.id for i in holdout}
    assert not train_ids & test_ids and not holdout_ids & (train_ids | test_ids)
    # the third split: carved out of train, none lost (bar pairs sharing a sentence)
    assert 990 <= len(train_ids) + len(test_ids) + len(holdout_ids) <= 1000
    assert 400 < len(test_ids) < 600 and 120 < len(holdout_ids) < 180
    # no sentence of a test pair appears in train either
    train_texts = {p.text for i in data.splits["train"] for p in i.prompts}
    assert not {p.text for i in data.splits["test"] for p in i.prompts} & train_texts
    item = data.test[0]
    assert [p.label for p in item.prompts] == [1, 0]
    assert set(item.slices) == {"field", "linguistics_term", "UID"}
    # the split depends on item ids only, not on file order
    items = read_blimp(DATA / "blimp/passive_1.jsonl")
    _, test_reversed = hashed_split(list(reversed(items)), "probebench-blimp-v1", 0.5)
    assert canonical_test_sha256(test_reversed) == canonical_test_sha256(data.test)


@pytest.mark.parametrize(("line", "message"), [
    ('{"sentence_good": "A.", "sentence_bad": "B."}', "field 'field' is missing"),
    ('not json', "not valid JSON"),
    ('[1, 2]', "expected a JSON object"),
])
def test_blimp_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    good = (DATA / "blimp/passive_1.jsonl").read_text().splitlines()[0]
    path = tmp_path / "p.jsonl"
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(InputError, match=rf"p\.jsonl:2: {message}"):
        read_blimp(path)


def test_blimp_wrong_type_and_duplicate_pair(tmp_path: Path) -> None:
    good = json.loads((DATA / "blimp/passive_1.jsonl").read_text().splitlines()[0])
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({**good, "pairID": 7}) + "\n")
    with pytest.raises(InputError, match=r":1: field 'pairID' must be str, found int 7"):
        read_blimp(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(InputError, match=r":2: pairID '0' already used on line 1"):
        read_blimp(path)
    path.write_text(json.dumps({**good, "colour": "red"}) + "\n")
    with pytest.raises(InputError, match="unknown field"):
        read_blimp(path)


# --- SentEval ----------------------------------------------------------------------------

SENTEVAL = (
    "tr\tPRES\tThe dog runs home .\n"
    "tr\tPAST\tThe dog ran home .\n"
    "va\tPAST\tShe walked to school .\n"
    "te\tPRES\tHe sings every day .\n"
    "te\tPAST\tx\ty\tThey played chess .\n"
)


def test_senteval_binary_and_multiclass(tmp_path: Path) -> None:
    path = tmp_path / "past_present.txt"
    path.write_text(SENTEVAL)
    splits = read_senteval(path, positive_class="PAST")
    assert [len(splits[s]) for s in ("train", "val", "test")] == [2, 1, 2]
    test = splits["test"]
    assert [i.prompts[0].text for i in test] == ["He sings every day .", "They played chess ."]
    assert [i.prompts[0].label for i in test] == [0, 1]
    assert test[1].data == {"middle": ["x", "y"]}  # optional middle fields kept
    multi = read_senteval(path, positive_class=None)
    assert [i.prompts[0].label for i in multi["test"]] == [None, None]
    assert [i.prompts[0].slices["class"] for i in multi["test"]] == ["PRES", "PAST"]


@pytest.mark.parametrize(("content", "positive", "message"), [
    ("xx\tPRES\tA .\n", None, r":1: partition must be tr, va or te"),
    ("te\tPRES\n", None, r":1: expected partition, label and sentence"),
    ("te\tA\tx .\nte\tB\ty .\nte\tC\tz .\n", "A", "a binary task has two"),
    ("te\tA\tx .\n", "Z", "positive class 'Z' never occurs"),
    ("tr\tA\tx .\n", None, "no test"),
])
def test_senteval_errors(tmp_path: Path, content: str, positive: str | None,
                         message: str) -> None:
    path = tmp_path / "t.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_senteval(path, positive)


def test_every_registered_syntaxgym_task_has_labelled_train_and_test() -> None:
    catalog = TaskCatalog.default()
    gym = [t.id for t in catalog.with_format("syntaxgym")]
    blimp = [t.id for t in catalog.with_format("blimp")]
    assert len(gym) >= 10 and len(blimp) >= 10
    for task in gym:
        data = catalog.load(task)
        for split in ("train", "test"):
            labels = [p.label for i in data.splits[split] for p in i.prompts]
            assert labels.count(0) and labels.count(1), (task, split)


def test_score_items_runs_syntaxgym_protocol_on_a_suite(smollm: Any) -> None:
    from probebench.tasks.families.syntaxgym.format import score_items

    _, items = read_suite(DATA / "syntaxgym" / "number_src.json")
    results = score_items(smollm, items[:6])
    assert set(results) == {"sum"}
    assert len(results["sum"]) == 6 and all(len(r) == 1 for r in results["sum"])
    # the first item agrees with the hand computation of the test above
    hand = _hand_region_7(smollm, items[0])
    first = (hand["match_sing"] < hand["mismatch_sing"]
             and hand["match_plural"] < hand["mismatch_plural"])
    assert results["sum"][0] == [first]
    # subject-verb agreement across a relative clause: SmolLM2 gets most items right
    assert sum(r[0] for r in results["sum"]) >= 3
