"""Licenses: SPDX expressions read by license-expression, one class per expression by
the AND/OR rule, and refusals that say what was meant."""

from __future__ import annotations

import pytest

from probebench.licenses import check_license, known_license_ids, license_kind, license_value


@pytest.mark.parametrize("value", [
    "MIT", "Apache-2.0", "CC-BY-4.0", "CC0-1.0", "OpenRAIL", "custom", "closed",
    "MIT OR Apache-2.0", "(MIT OR Apache-2.0) AND CC-BY-4.0",
    "GPL-2.0-only WITH Classpath-exception-2.0", "Beerware",
    "LicenseRef-scancode-llama-3.1-license-2024",
])
def test_accepted(value: str) -> None:
    assert check_license(value) is None
    assert license_kind(value) != "unknown"


@pytest.mark.parametrize(("value", "message"), [
    ("CC-BY4", "did you mean 'CC-BY-4.0'"),
    ("cc-by-4.0", "license 'cc-by-4.0' is spelled 'CC-BY-4.0' in SPDX"),
    ("mit", "is spelled 'MIT'"),
    ("GPL-2.0", "is spelled 'GPL-2.0-only'"),  # a deprecated id
    ("Apache 2", "an id has no spaces; several are joined by AND or OR); did you mean "
                 "'Apache-2.0'"),
    ("MIT or Apache-2.0", "the operator 'or' is written 'OR'"),
    ("MIT OR Apache2", "license 'Apache2' is not a known SPDX id"),
    ("MIT OR custom", "'custom' stands alone, never inside an expression"),
    ("MIT WITH Apache-2.0", "'Apache-2.0' is a license, not an exception"),
    ("Classpath-exception-2.0", "is a license exception, used only after WITH"),
    ("GPL-2.0-only WITH Classpath", "license exception 'Classpath' is not a known SPDX id"),
    ("MIT OR", "is not a valid SPDX expression"),
    ("(MIT AND Apache-2.0", "is not a valid SPDX expression"),
    ("", "the license is empty"),
    ("Proprietary", "is not a known SPDX id nor 'custom' or 'closed'"),
])
def test_refused_with_a_reason(value: str, message: str) -> None:
    reason = check_license(value)
    assert reason is not None and message in reason, reason
    assert license_kind(value) == "unknown"


def test_classes_follow_the_operators() -> None:
    """AND: both licenses bind, the most restrictive class counts; OR: the user picks,
    the most permissive counts."""
    assert license_kind("MIT") == "osi"
    assert license_kind("CC-BY-4.0") == "open-content"
    assert license_kind("CC-BY-NC-4.0") == "restricted"
    assert license_kind("MIT AND CC-BY-4.0") == "open-content"
    assert license_kind("MIT AND CC-BY-NC-4.0") == "restricted"
    assert license_kind("MIT OR CC-BY-NC-4.0") == "osi"
    assert license_kind("CC-BY-NC-4.0 OR CC-BY-4.0") == "open-content"
    assert license_kind("(MIT OR CC-BY-NC-4.0) AND CC-BY-4.0") == "open-content"
    assert license_kind("CC-BY-NC-4.0 AND (MIT OR CC-BY-4.0)") == "restricted"
    assert license_kind("GPL-2.0-only WITH Classpath-exception-2.0") == "osi"
    assert license_kind("custom") == "custom" and license_kind("closed") == "closed"
    # ids outside probebench's tables take their class from the index's category
    assert license_kind("CC-BY-NC-SA-3.0") == "restricted"
    assert license_kind("CC-BY-SA-2.5") == "open-content"
    assert license_kind("LicenseRef-scancode-llama-3.1-license-2024") == "restricted"


def test_values_fold_by_the_same_rule() -> None:
    score = {"MIT": 3.0, "CC-BY-4.0": 2.0, "CC-BY-NC-4.0": 1.0, "custom": 0.5}.__getitem__
    assert license_value("MIT AND CC-BY-NC-4.0", score) == 1.0
    assert license_value("MIT OR CC-BY-NC-4.0", score) == 3.0
    assert license_value("CC-BY-NC-4.0 OR (MIT AND CC-BY-4.0)", score) == 2.0
    assert license_value("custom", score) == 0.5
    with pytest.raises(KeyError):  # not an expression: given whole to the leaf
        license_value("MIT OR", score)


def test_the_index_is_the_libraries() -> None:
    known = known_license_ids()
    assert {"MIT", "Apache-2.0", "CC-BY-4.0", "OpenRAIL"} <= known
    assert "Classpath-exception-2.0" not in known  # exceptions only follow WITH
    assert "custom" not in known and "closed" not in known
