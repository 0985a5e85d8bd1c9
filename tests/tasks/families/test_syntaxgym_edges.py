"""SyntaxGym edge cases where probebench must agree with syntaxgym-core (cpllab): empty
regions, ``&``/``|`` grouping, the ``=`` tolerance, legacy ``equals``, suites without
predictions, and ties. Each case is a small hand-written suite."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.errors import InputError
from probebench.models.surprisal import TokenSurprisal
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families import get_format
from probebench.tasks.families.syntaxgym import format as sg
from probebench.tasks.families.syntaxgym.formula import Logic, Ref, evaluate, parse_formula
from tests.catalogs import PACKAGED_ROOT

LEGACY = PACKAGED_ROOT / "data" / "syntaxgym" / "format" / "legacy_2019_format.json"


def _suite(tmp_path: Path, predictions: Any, conditions: dict[str, list[str]],
           metric: str | list[str] = "sum") -> Path:
    """A one-item suite; ``conditions`` maps a name to its regions' contents."""
    n = len(next(iter(conditions.values())))
    suite = {
        "meta": {"name": "edges", "metric": metric},
        "predictions": predictions,
        "region_meta": {str(k): f"r{k}" for k in range(1, n + 1)},
        "items": [{"item_number": 1, "conditions": [
            {"condition_name": name,
             "regions": [{"region_number": k, "content": c}
                         for k, c in enumerate(contents, start=1)]}
            for name, contents in conditions.items()]}],
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    return path


def _formula(text: str) -> list[dict[str, str]]:
    return [{"type": "formula", "formula": text}]


def _word_surprisals(prompt: Prompt | str) -> TokenSurprisal:
    """One token per word (its leading space included, as byte-level BPE does), with
    surprisal = the word's length: region sums are then easy to do by hand."""
    text = prompt.text if isinstance(prompt, Prompt) else prompt
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    offsets = np.array([(max(s - 1, 0), e) for s, e in words], dtype=np.int64)
    return TokenSurprisal(text=text, token_ids=np.arange(len(words)), offsets=offsets,
                          surprisal=np.array([float(e - s) for s, e in words]),
                          scored=np.ones(len(words), dtype=bool))


@pytest.fixture
def fake_lm(monkeypatch: pytest.MonkeyPatch) -> object:
    def fake(lm: object, prompts: Sequence[Prompt], **_: object) -> list[TokenSurprisal]:
        return [_word_surprisals(p) for p in prompts]
    monkeypatch.setattr(sg, "token_surprisals", fake)
    return object()


def _values(table: dict[tuple[int | None, str], float]) -> Callable[[Ref], float]:
    return lambda ref: table[(ref.region, ref.condition)]


# --- 1. empty regions -------------------------------------------------------------------

EMPTY = {"gap": ["The dog", "", "barked"], "filled": ["The dog", "quickly", "barked"]}


def test_empty_region_is_scored_with_sum_zero(tmp_path: Path, fake_lm: object) -> None:
    # syntaxgym-core: an empty region has no tokens and sum([]) == 0
    preds = _formula("(2;%gap%) < (2;%filled%)") + _formula("(2;%gap%) = 0") \
        + _formula("(*;%gap%) + 7 = (*;%filled%)")
    _, items = sg.read_suite(_suite(tmp_path, preds, EMPTY))
    item = items[0]
    assert "region_2" not in item.prompts[0].spans  # the empty region has no characters
    assert sg.score_items(fake_lm, items) == {"sum": [[True, True, True]]}  # was KeyError
    values = sg.region_values(item, [_word_surprisals(p) for p in item.prompts], "sum")
    assert values == {"gap": {1: 6.0, 2: 0.0, 3: 6.0}, "filled": {1: 6.0, 2: 7.0, 3: 6.0}}
    assert sg.prediction_results(item, values) == [True, True, True]


def test_empty_region_under_mean_is_nan_so_its_comparisons_fail(tmp_path: Path,
                                                                  fake_lm: object) -> None:
    # syntaxgym-core: np.mean([]) is NaN; every comparison with NaN is false
    preds = _formula("(2;%gap%) < (2;%filled%)") + _formula("(2;%gap%) > (2;%filled%)") \
        + _formula("(3;%gap%) = (3;%filled%)")
    _, items = sg.read_suite(_suite(tmp_path, preds, EMPTY, metric=["sum", "mean"]))
    assert sg.score_items(fake_lm, items) == {"sum": [[True, False, True]],
                                              "mean": [[False, False, True]]}
    values = sg.region_values(items[0], [_word_surprisals(p) for p in items[0].prompts],
                              "mean")
    assert math.isnan(values["gap"][2]) and values["filled"][2] == 7.0
    # (*) adds every region, the empty one included, as syntaxgym-core does
    assert math.isnan(sg.region_values_lookup(values)(Ref(None, "gap")))


def test_a_missing_region_value_is_a_clear_error(tmp_path: Path) -> None:
    _, items = sg.read_suite(_suite(tmp_path, _formula("(2;%gap%) < (2;%filled%)"), EMPTY))
    with pytest.raises(InputError, match=r"region 2 of condition 'gap'"):
        sg.prediction_results(items[0], {"gap": {1: 1.0}, "filled": {2: 1.0}})


# --- 2. & and | -------------------------------------------------------------------------

def test_and_or_share_one_level_and_group_from_the_left() -> None:
    # syntaxgym-core: infixNotation level oneOf("& |"), left-associative
    pred = parse_formula("1 > 0 | 0 > 1 & 0 > 1")
    assert isinstance(pred, Logic) and pred.op == "&"
    assert isinstance(pred.parts[0], Logic) and pred.parts[0].op == "|"
    # (T | F) & F is false; the old grouping T | (F & F) was true
    assert evaluate(pred, _values({})) is False
    # brackets still decide
    assert evaluate(parse_formula("1 > 0 | [0 > 1 & 0 > 1]"), _values({})) is True
    # A & B | C is (A & B) | C either way
    assert evaluate(parse_formula("0 > 1 & 1 > 0 | 1 > 0"), _values({})) is True


def test_left_grouping_decides_a_suite_prediction(tmp_path: Path) -> None:
    formula = "(1;%a%) < (1;%b%) | (1;%a%) > (1;%b%) & (1;%a%) = (1;%b%)"
    _, items = sg.read_suite(_suite(tmp_path, _formula(formula),
                                    {"a": ["x"], "b": ["y"]}))
    # a < b holds, a > b and a = b do not: ((T | F) & F) is False
    assert sg.prediction_results(items[0], {"a": {1: 1.0}, "b": {1: 2.0}}) == [False]


# --- 3. the = tolerance -----------------------------------------------------------------

def test_equality_uses_numpy_isclose_with_syntaxgym_tolerances() -> None:
    pred = parse_formula("(1;%a%) = (1;%b%)")

    def holds(a: float, b: float) -> bool:
        return evaluate(pred, _values({(1, "a"): a, (1, "b"): b}))

    assert holds(100.0, 100.0005)          # within atol 1e-3; the old 1e-9 said no
    assert holds(0.0, 0.0009)
    assert not holds(0.0, 0.002)
    # relative to the right side only, as np.isclose: |a - b| <= 1e-3 + 1e-5 * |b|
    assert holds(1000.0, 1000.01100005) and not holds(1000.01100005, 1000.0)
    for a, b in [(5.0, 5.00099), (5.0, 5.0011), (1e4, 1e4 + 0.1), (1e4, 1e4 + 0.12),
                 (-3.0, -3.0005), (math.nan, math.nan), (math.inf, math.inf)]:
        assert holds(a, b) == bool(np.isclose(a, b, rtol=1e-5, atol=1e-3)), (a, b)


# --- 4. legacy relation names -----------------------------------------------------------

def test_legacy_equals_converts_to_a_formula(tmp_path: Path) -> None:
    suite = json.loads(LEGACY.read_text(encoding="utf-8"))
    suite["predictions"][0]["relation"] = "equals"
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    summary, items = sg.read_suite(path)
    assert summary["formulas"] == ["(3;%that%) = (3;%what%)"]
    assert sg.prediction_results(items[0], {"that": {3: 4.0}, "what": {3: 4.0005}}) == [True]
    assert sg.prediction_results(items[0], {"that": {3: 4.0}, "what": {3: 5.0}}) == [False]


def test_unknown_legacy_relation_is_refused_clearly(tmp_path: Path) -> None:
    legacy = [{"relation": "bigger", "region_number": 1, "l_operand": "a",
               "r_operand": "b"}]
    path = _suite(tmp_path, legacy, {"a": ["x"], "b": ["y"]})
    with pytest.raises(InputError, match=r"suite\.json: predictions\[0\]: relation must "
                                         r"be one of greaterthan, lessthan, equal, equals"):
        sg.read_suite(path)


# --- 5. no predictions ------------------------------------------------------------------

def test_suite_without_predictions_is_read_and_left_unscored(tmp_path: Path,
                                                             fake_lm: object) -> None:
    # syntaxgym-core evaluates every prediction of every item: none gives no result rows
    summary, items = sg.read_suite(_suite(tmp_path, [], {"a": ["x y"], "b": ["y x"]}))
    item = items[0]
    assert summary["formulas"] == [] and item.data["formulas"] == []
    assert [p.label for p in item.prompts] == [None, None]
    assert sg.prediction_results(item, {"a": {1: 1.0}, "b": {1: 2.0}}) == []
    assert sg.item_passes([]) is None
    assert sg.item_passes([True, False]) is False and sg.item_passes([True]) is True
    assert sg.score_items(fake_lm, items) == {"sum": [[]]}
    fmt = get_format("syntaxgym")
    assert fmt.score_item(item, np.array([0.9, 0.1]), None) is None
    assert fmt.item_scores([item, item], np.array([0.9, 0.1, 0.2, 0.8]),
                           np.array([0, 0, 1, 1])) == [None, None]


@pytest.mark.parametrize("bad", [{}, None, "(1;%a%) > (1;%b%)"])
def test_predictions_that_are_not_a_list_are_refused(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(InputError, match=r"suite\.json: predictions must be a list"):
        sg.read_suite(_suite(tmp_path, bad, {"a": ["x"], "b": ["y"]}))


# --- 6. ties ----------------------------------------------------------------------------

def test_ties_score_zero_in_both_paths(tmp_path: Path) -> None:
    # syntaxgym-core's < and > are strict: equal surprisals fail the prediction
    _, items = sg.read_suite(_suite(tmp_path, _formula("(1;%good%) < (1;%bad%)"),
                                    {"good": ["x"], "bad": ["y"]}))
    item = items[0]
    assert sg.prediction_results(item, {"good": {1: 3.0}, "bad": {1: 3.0}}) == [False]
    assert [p.label for p in item.prompts] == [1, 0]
    fmt = get_format("syntaxgym")
    assert fmt.score_item(item, np.array([0.4, 0.4]), None) == 0.0
    assert fmt.score_item(item, np.array([0.41, 0.4]), None) == 1.0
    doc = type(fmt).__doc__ or ""
    assert "tie is wrong" in doc and "0.5" not in doc


def test_probe_item_with_more_conditions_ties_at_the_boundary() -> None:
    item = Item("t", (Prompt("a", label=1), Prompt("b", label=1), Prompt("c", label=0)))
    fmt = get_format("syntaxgym")
    assert fmt.score_item(item, np.array([0.9, 0.5, 0.5]), None) == 0.0
    assert fmt.score_item(item, np.array([0.9, 0.6, 0.5]), None) == 1.0
