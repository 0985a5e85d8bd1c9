"""``truth_larger_than`` and ``truth_smaller_than``: "Fifty-one is larger than forty-three."

Marks & Tegmark's numerical comparisons: two whole numbers from 51 to 99, written as
English words (:func:`number_to_words`), one statement an ordered pair, label 1 when the
comparison holds. Of the 1,176 unordered pairs of different numbers in that range, a
numpy Generator seeded with :data:`SEED` draws :data:`PUBLIC_PAIRS` for the shipped files;
each pair gives both orders, one true and one false, so the labels are balanced. The two
tasks share the draw: a pair left out (the spare pool of the fresh-item generators) is in
neither file, in either phrasing. Slice ``difference_band``: how far apart the numbers are
(:data:`DIFFERENCE_BANDS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.families.statements.truth.rows import (
    Row,
    TruthTask,
    band,
    csv_bytes,
    halves,
    read_rows,
)
from probebench.tasks.spec import TaskSpec

LOW, HIGH = 51, 99
SEED = 20231011
#: unordered pairs in the shipped files (two statements each); the rest are spare
PUBLIC_PAIRS = 760
#: ``(low, high, name)``: the absolute difference of the two numbers, low <= d < high
DIFFERENCE_BANDS: tuple[tuple[int, int | None, str], ...] = (
    (1, 5, "1-4"), (5, 15, "5-14"), (15, 30, "15-29"), (30, None, "30-48"))
SLICES = ("difference_band",)
RELATIONS = ("larger", "smaller")

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_to_words(n: int) -> str:
    """``n`` (0 to 999,999) in English words: hyphens between tens and units, no "and"
    after "hundred" (the American style), lower case.

    >>> number_to_words(51), number_to_words(90), number_to_words(115)
    ('fifty-one', 'ninety', 'one hundred fifteen')
    >>> number_to_words(20_007)
    'twenty thousand seven'
    """
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < 1_000_000:
        raise ValueError(f"number_to_words takes a whole number from 0 to 999999, found {n!r}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, units = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[units]}" if units else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_to_words(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{number_to_words(thousands)} thousand" + (f" {number_to_words(rest)}"
                                                       if rest else "")


def all_pairs() -> list[tuple[int, int]]:
    """Every unordered pair of different numbers in LOW..HIGH, as (larger, smaller)."""
    return [(a, b) for a in range(LOW, HIGH + 1) for b in range(LOW, a)]


def split_pairs() -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(the shipped pairs, the spare pairs), each sorted: a seeded permutation of
    :func:`all_pairs`, the first :data:`PUBLIC_PAIRS` shipped."""
    pairs = all_pairs()
    order = np.random.default_rng(SEED).permutation(len(pairs))
    shipped = sorted(pairs[int(i)] for i in order[:PUBLIC_PAIRS])
    spare = sorted(pairs[int(i)] for i in order[PUBLIC_PAIRS:])
    return shipped, spare


def statement(relation: str, first: int, second: int) -> str:
    """``"Fifty-one is larger than forty-three."``"""
    text = f"{number_to_words(first)} is {relation} than {number_to_words(second)}."
    return text[0].upper() + text[1:]


def pair_rows(relation: str, pairs: Sequence[tuple[int, int]], id_prefix: str = ""
              ) -> list[Row]:
    """Both orders of each (larger, smaller) pair: the true statement, then the false."""
    if relation not in RELATIONS:
        raise ValueError(f"relation {relation!r}: expected one of {RELATIONS}")
    rows = []
    for big, small in pairs:
        slices = {"difference_band": band(big - small, DIFFERENCE_BANDS)}
        true_order = (big, small) if relation == "larger" else (small, big)
        for first, second in (true_order, true_order[::-1]):
            rows.append(Row(f"{id_prefix}{relation}-{first}-{second}",
                            statement(relation, first, second),
                            int((first > second) == (relation == "larger")), slices))
    return rows


def build(relation: str) -> dict[str, bytes]:
    return {f"{relation}_than.csv": csv_bytes(pair_rows(relation, split_pairs()[0]), SLICES)}


def make_fresh(relation: str, spec: TaskSpec, rng: np.random.Generator, n_items: int,
               id_prefix: str) -> list[Item]:
    """``n_items`` statements about spare pairs (in no shipped file): half as many pairs,
    drawn without replacement, each in both orders."""
    spare = split_pairs()[1]
    need = halves(n_items, len(spare), "number pairs")
    chosen = [spare[int(i)] for i in rng.choice(len(spare), size=need, replace=False)]
    return read_rows(spec, pair_rows(relation, chosen, id_prefix)[:n_items])


TASKS = (
    TruthTask("truth_larger_than", "larger_than.csv", SLICES, lambda: build("larger")),
    TruthTask("truth_smaller_than", "smaller_than.csv", SLICES, lambda: build("smaller")),
)
