"""Per-item and per-slice accuracy (each format scores its own items), hand-checked on
small fixtures."""

from __future__ import annotations

import numpy as np

from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families import get_format, group_by_slice
from probebench.tasks.verbs.render import render_item
from probebench.tasks.verbs.schema import VerbItem

TEMPLATE = "Sentence: {sentence}\nJudgement:"


def _verb(id_: str, language: str, prompt: str, candidates: list[str], expected: str,
          label: str = "correct", tense: str = "past_simple",
          category: str = "core", reason: str | None = None) -> VerbItem:
    return VerbItem.model_validate({
        "id": id_, "language": language, "verb": "walk" if language == "en" else "comer",
        "regularity": "regular", "tense": tense, "person": "3sg", "prompt": prompt,
        "candidates": candidates, "expected": expected, "label": label, "category": category,
        "reason_code": reason})


def test_verb_accuracy_and_slices_by_hand() -> None:
    verbs = [
        _verb("a", "en", "Yesterday she ___ home.", ["walked", "walks", "walking"], "walked"),
        _verb("b", "en", "Yesterday he ___ far.", ["walks", "walked"], "walked"),
        _verb("c", "es", "Ayer él ___ pan.", ["comió", "come"], "comió", tense="present_simple"),
        _verb("d", "es", "Ellos ___ pan.", ["comen", "come"], "comen", label="ambiguous",
              category="adversarial", reason="out_of_scope"),
        _verb("e", "en", "Every day she walk home.", ["walk", "walks"], "walks",
              label="incorrect", tense="present_simple", category="adversarial",
              reason="wrong_person"),
    ]
    items = [render_item(v, TEMPLATE) for v in verbs]
    assert [len(i.prompts) for i in items] == [3, 2, 2, 2, 1]
    # P(correct) per prompt, in prompt order
    scores = np.array([
        0.9, 0.2, 0.1,   # a: "walked" wins -> right
        0.7, 0.6,        # b: "walks" (0.7) beats "walked" (0.6) -> wrong
        0.4, 0.4,        # c: a tie between the two -> half credit
        0.1, 0.9,        # d: ambiguous -> not scored
        0.2,             # e: classification, P < 0.5 says "wrong", and it is wrong -> right
    ])
    item_of = np.repeat(np.arange(5), [3, 2, 2, 2, 1])
    got = get_format("verbs").item_scores(items, scores, item_of)
    assert got == [1.0, 0.0, 0.5, None, 1.0]
    slices = group_by_slice(items, got, ["language", "category", "reason_code", "tense"])
    assert slices["language"] == {"en": [1.0, 0.0, 1.0], "es": [0.5]}
    assert slices["category"] == {"adversarial": [1.0], "core": [1.0, 0.0, 0.5]}
    assert slices["reason_code"] == {"none": [1.0, 0.0, 0.5], "wrong_person": [1.0]}
    assert slices["tense"] == {"past_simple": [1.0, 0.0], "present_simple": [0.5, 1.0]}
    # mean accuracy over scored items: (1 + 0 + 0.5 + 1) / 4
    assert np.mean([g for g in got if g is not None]) == 0.625


def _pair(good: float, bad: float) -> tuple[Item, np.ndarray]:
    item = Item("p", (Prompt("Good.", label=1), Prompt("Bad.", label=0)))
    return item, np.array([good, bad])


def test_pair_and_condition_scoring() -> None:
    for good, bad, want in ((0.8, 0.3, 1.0), (0.3, 0.8, 0.0), (0.5, 0.5, 0.5)):
        item, s = _pair(good, bad)
        assert get_format("blimp").item_scores([item], s, np.zeros(2, int)) == [want]
    item = Item("g", (Prompt("a", label=1), Prompt("b", label=0), Prompt("c", label=1),
                      Prompt("d", label=None)))
    of = np.zeros(4, int)
    assert get_format("syntaxgym").item_scores([item], np.array([0.9, 0.2, 0.5, 0.0]), of) == [1.0]
    assert get_format("syntaxgym").item_scores([item], np.array([0.9, 0.6, 0.5, 0.0]), of) == [0.0]


def test_surprisal_scores_leave_classification_lines_unscored() -> None:
    v = _verb("e", "en", "Every day she walk home.", ["walk", "walks"], "walks",
              label="incorrect", tense="present_simple")
    item = render_item(v, TEMPLATE)
    assert get_format("verbs").item_scores([item], np.array([-40.0]), np.zeros(1, int),
                       threshold=None) == [None]
