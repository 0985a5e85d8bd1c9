from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from probebench.errors import InputError
from probebench.tasks.families.syntaxgym.format import prediction_results, read_suite
from probebench.tasks.families.syntaxgym.formula import (
    Ref,
    condition_labels,
    evaluate,
    legacy_to_formula,
    parse_formula,
)
from tests.catalogs import PACKAGED_ROOT

SHARED = PACKAGED_ROOT / "data" / "syntaxgym"
FORMAT = SHARED / "format"


Values = dict[tuple[int | None, str], float]


def _lookup(values: Values) -> Callable[[Ref], float]:
    return lambda ref: values[(ref.region, ref.condition)]


def test_parse_and_evaluate_by_hand() -> None:
    pred = parse_formula("[(7;%match%) < (7;%mismatch%)] & [(2;%a%) > (2;%b%)]")
    vals: Values = {(7, "match"): 3.0, (7, "mismatch"): 5.5, (2, "a"): 1.0, (2, "b"): 0.5}
    assert evaluate(pred, _lookup(vals)) is True
    vals[(2, "b")] = 2.0  # 1.0 > 2.0 fails, so the conjunction fails
    assert evaluate(pred, _lookup(vals)) is False
    either = parse_formula("((7;%match%) < (7;%mismatch%)) | ((2;%a%) > (2;%b%))")
    assert evaluate(either, _lookup(vals)) is True


def test_arithmetic_numbers_star_and_equality() -> None:
    cleft = parse_formula("[(6;%x%)-(6;%y%)]+[[(5;%x%)+(6;%x%)]-[(5;%y%)+(6;%y%)]]>0")
    vals: Values = {(6, "x"): 4.0, (6, "y"): 1.0, (5, "x"): 2.0, (5, "y"): 2.5}
    # (4-1) + ((2+4) - (2.5+1)) = 3 + 2.5 = 5.5 > 0
    assert evaluate(cleft, _lookup(vals)) is True
    vals[(6, "x")] = 0.0  # (0-1) + ((2+0) - 3.5) = -2.5
    assert evaluate(cleft, _lookup(vals)) is False
    star = parse_formula("(*;%a%) = 3.5")
    assert star == parse_formula("( * ; %a% )=3.5")
    assert evaluate(star, lambda ref: 3.5 if ref == Ref(None, "a") else 0.0) is True


@pytest.mark.parametrize("bad", ["(1;%a%) >", "(1;%a% > (2;%b%)", "(1;%a%) ? (2;%b%)",
                                 "(x;%a%) > (1;%b%)", "(1;%a%) > (1;%b%) &", ""])
def test_malformed_formulas_are_refused(bad: str) -> None:
    with pytest.raises(InputError, match="formula"):
        parse_formula(bad, "suite.json: predictions[0]")


def test_legacy_prediction_converts_to_the_same_formula() -> None:
    text = legacy_to_formula({"relation": "greaterthan", "region_number": 3,
                              "l_operand": "that", "r_operand": "what"}, "s")
    assert text == "(3;%that%) > (3;%what%)"
    assert parse_formula(text) == parse_formula("[(3;%that%)>(3;%what%)]")
    with pytest.raises(InputError, match="relation must be one of"):
        legacy_to_formula({"relation": "bigger", "region_number": 3, "l_operand": "a",
                           "r_operand": "b"}, "s")


def test_legacy_suite_file_is_read_and_evaluated() -> None:
    summary, items = read_suite(FORMAT / "legacy_2019_format.json")
    assert summary["formulas"] == ["(3;%that%) > (3;%what%)"]
    assert summary["metrics"] == ["sum", "mean", "median", "range", "max", "min"]  # "all"
    item = items[0]
    assert {p.slices["condition"]: p.label for p in item.prompts} == {"that": 0, "what": 1}
    values = {"that": {3: 9.0}, "what": {3: 4.0}}
    assert prediction_results(item, values) == [True]
    assert prediction_results(item, {"that": {3: 1.0}, "what": {3: 4.0}}) == [False]


def test_labels_of_real_suites() -> None:
    def labels(name: str) -> dict[str, int | None]:
        _, items = read_suite(SHARED / f"{name}.json")
        return {p.slices["condition"]: p.label for p in items[0].prompts}

    assert labels("number_src") == {"match_sing": 1, "mismatch_sing": 0, "match_plural": 1,
                                    "mismatch_plural": 0}
    # simple comparisons decide; the interaction term labels nothing
    assert labels("mvrr") == {"reduced_ambig": 0, "unreduced_ambig": 1,
                              "reduced_unambig": 1, "unreduced_unambig": None}
    # only a sum of differences > 0: the sign rule
    assert labels("cleft") == {"np_mismatch": 0, "np_match": 1, "vp_match": 1,
                               "vp_mismatch": 0}


def test_condition_given_both_labels_is_unlabelled() -> None:
    preds = [parse_formula("(1;%a%) < (1;%b%)"), parse_formula("(2;%a%) > (2;%b%)")]
    assert condition_labels(preds, ["a", "b", "c"]) == {"a": None, "b": None, "c": None}


def test_suite_regions_join_with_single_spaces(tmp_path: Path) -> None:
    _, items = read_suite(SHARED / "number_src.json")
    prompt = items[0].prompts[0]
    assert prompt.text == "The author that hurt the senators is good"
    start, end = prompt.spans["region_7"]
    assert prompt.text[start:end] == "is"
