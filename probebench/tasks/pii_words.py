"""Phone numbers written out in Spanish: digit by digit in words ("seis uno dos, tres
cuatro cinco, seis siete ocho") or in figures ("6 1 2 3 4 5 6 7 8", "el 6-1-2-3-4-5-6-7-8"),
and in groups of number words ("seiscientos doce, trescientos cuarenta y cinco, seiscientos
setenta y ocho", "novecientos uno veintitrés cuarenta y cinco sesenta y siete"), with an
optional country code ("más treinta y cuatro", "+34").

A run of number words is read by a table of the Spanish number words from 0 to 999 and
their grammar (hundreds, then tens with "y" and a unit, or a teen, or a unit), and its
digits are kept only when ``phonenumbers`` accepts them as a valid number of a
Spanish-speaking region. The table is small and closed (``_WORDS``), and the tests check it
against every number from 0 to 999 spelled independently, so no number-parsing dependency
is needed: the libraries that do it (``text2num``) give back text, not the spans a finding
must name.

What keeps prose clean: a run breaks at any other word ("tres perros y cuatro gatos"), at
"mil" or "millón", whose neighbours belong to a larger number ("dos mil veinte"), and at a
"y" that joins no tens to a unit; it needs nine digits at least; a lone spoken digit among
numbers of two or three digits is a list, not a phone ("seis, doce, veinte, treinta y
tres, cuarenta y uno", a lottery draw); digits that count up, down or repeat are counting
("uno dos tres cuatro cinco seis siete ocho nueve"); and the reference words of
``pii_numbers`` ("pedido", "página") make a number no phone. The finder takes
NFKC-normalised text and yields ``(start, end)`` spans of it."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import phonenumbers

from probebench.tasks.pii_numbers import REFERENCE

#: the Spanish-speaking regions of ``pii_numbers.PHONE_REGIONS``
SPANISH_REGIONS = ("ES", "MX", "AR", "CO", "CL", "PE", "VE", "EC")

_UNITS = {"cero": 0, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
          "siete": 7, "ocho": 8, "nueve": 9}
#: 10 to 29 except 20, one word each (accents are dropped before the look-up)
_TEENS = {"diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
          "dieciseis": 16, "diecisiete": 17, "dieciocho": 18, "diecinueve": 19,
          "veintiuno": 21, "veintidos": 22, "veintitres": 23, "veinticuatro": 24,
          "veinticinco": 25, "veintiseis": 26, "veintisiete": 27, "veintiocho": 28,
          "veintinueve": 29}
#: 20 to 90: "veinte" takes no "y", the others may ("treinta y cuatro")
_TENS = {"veinte": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60,
         "setenta": 70, "ochenta": 80, "noventa": 90}
_HUNDREDS = {"cien": 100, "ciento": 100, "doscientos": 200, "trescientos": 300,
             "cuatrocientos": 400, "quinientos": 500, "seiscientos": 600, "setecientos": 700,
             "ochocientos": 800, "novecientos": 900}
_WORDS = {**_UNITS, **_TEENS, **_TENS, **_HUNDREDS}
#: the units that may end a number of two or three digits ("ciento cero" is no number)
_LAST_UNITS = _UNITS.keys() - {"cero"}
#: words whose neighbours are part of a larger number, never of a phone
_LARGE = {"mil", "millon", "millones", "billon", "billones"}

#: a token: a word or a run of figures
_TOKEN = re.compile(r"[^\W\d_]+|\d+")
#: what may stand between two numbers of one phone
_GAP = re.compile(r"\s*[,;:.\-–—/()]?\s*")
#: cheap tests before the tokens (set look-ups run in C, a regex of 50 words does not): a
#: number word among the words of the line, accented or not, with a sign before or after
#: it (of the three words or more of a phone, one has no sign on both sides); or nine lone
#: figures
_SPELLED = frozenset({*_WORDS, "dieciséis", "veintidós", "veintitrés", "veintiséis"})
_FIRST = frozenset({*(w + sign for w in _SPELLED for sign in ("", *",.;:)?!\"'")),
                    *(sign + w for w in _SPELLED for sign in "(\"'¿¡")})
#: (unrolled, with no look-around: a regex that tries every figure of a line of numbers
#: must fail fast)
_LONE_FIGURES = re.compile(r"\d" + r"[^\w]{1,3}\d" * 8)
#: what may stand before a phone as its "+": "más treinta y cuatro", "+34", "+"
_PLUS = re.compile(r"(?:\+\s*(?P<code>\d{1,3})?|\bm[aá]s)\s*$", re.IGNORECASE)
_MIN_DIGITS, _MAX_DIGITS = 9, 15


def _key(word: str) -> str:
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True)
class _Number:
    """One number of a run: its figures, where it stands, and whether it is one spoken or
    written digit (``seis``, ``6``) rather than a number of two or three digits."""

    digits: str
    start: int
    end: int
    digit: bool


def _read_number(text: str, tokens: list[tuple[str, int, int]],
                 k: int) -> tuple[_Number, int] | None:
    """The number that starts at token ``k`` (Spanish grammar, greedy), and the index of
    the token after it; ``None`` when token ``k`` starts no number. The words of one
    number stand apart by spaces alone: "seiscientos, doce" is two numbers."""
    word, start, end = tokens[k]
    if word.isdigit():
        return (_Number(word, start, end, True), k + 1) if len(word) == 1 else None
    key = _key(word)
    if key in _UNITS:
        return _Number(str(_UNITS[key]), start, end, True), k + 1

    def joined(i: int) -> str:
        """The key of token ``i`` when only spaces part it from token ``i - 1``."""
        if i >= len(tokens) or not text[tokens[i - 1][2]:tokens[i][1]].isspace():
            return ""
        return _key(tokens[i][0])

    value, i = 0, k
    if key in _HUNDREDS:
        value, i = _HUNDREDS[key], i + 1
        key = "" if key == "cien" else joined(i)
    if key in _TEENS:
        value, i = value + _TEENS[key], i + 1
    elif key in _TENS:
        value, i = value + _TENS[key], i + 1
        if (key != "veinte" and joined(i) == "y"
                and joined(i + 1) in _LAST_UNITS):
            value, i = value + _UNITS[joined(i + 1)], i + 2
    elif key in _LAST_UNITS and i > k:
        value, i = value + _UNITS[key], i + 1
    if i == k:
        return None
    return _Number(str(value), start, tokens[i - 1][2], False), i


def _runs(text: str) -> Iterator[list[_Number]]:
    """The runs of numbers in ``text``: numbers that follow each other with at most
    spaces and one sign between them."""
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    run: list[_Number] = []
    k = 0
    while k < len(tokens):
        read = _read_number(text, tokens, k)
        if read is None:
            if _key(tokens[k][0]) in _LARGE:
                if run:
                    run.pop()  # "doscientos mil": the number before "mil" is part of it
                after = _read_number(text, tokens, k + 1) if k + 1 < len(tokens) else None
                k = after[1] - 1 if after else k  # "mil doce": so is the one after
            if run:
                yield run
            run = []
            k += 1
            continue
        number, k = read
        if run and _GAP.fullmatch(text[run[-1].end:number.start]) is None:
            yield run
            run = []
        run.append(number)
    if run:
        yield run


#: digits that count up or down, or repeat: "uno dos tres ... nueve", "6 6 6 6 6 6 6 6 6"
_COUNTING = frozenset(
    {d * n for d in "0123456789" for n in range(_MIN_DIGITS, _MAX_DIGITS + 1)}
    | {run[k:k + n] for run in ("0123456789", "9876543210")
       for n in range(_MIN_DIGITS, 11) for k in range(11 - n)})


class _Grouping:
    """Whether a stretch of a run is grouped as a phone is: digits spoken one by one come
    in groups of two or more when numbers of two or three digits stand beside them ("seis
    uno dos, treinta y cuatro", not "seis, doce, veinte"). Prefix counts make each
    question about a stretch ``run[i:j + 1]`` constant time, so a hostile run of
    thousands of numbers costs no more than its length."""

    def __init__(self, run: list[_Number]) -> None:
        self.digit = [n.digit for n in run]
        lone = [d and not (k > 0 and self.digit[k - 1])
                and not (k + 1 < len(run) and self.digit[k + 1])
                for k, d in enumerate(self.digit)]
        self.lone_before = [0]  # lone digits among run[:k]
        self.words_before = [0]  # numbers of two or three digits among run[:k]
        for k in range(len(run)):
            self.lone_before.append(self.lone_before[-1] + lone[k])
            self.words_before.append(self.words_before[-1] + (not self.digit[k]))

    def ok(self, i: int, j: int) -> bool:
        if self.words_before[j + 1] == self.words_before[i]:
            return True  # digit by digit throughout
        # for ``i < j``: lone digits inside, then at either end
        inner = self.lone_before[j] - self.lone_before[i + 1]
        first_alone = self.digit[i] and not self.digit[i + 1]
        last_alone = self.digit[j] and not self.digit[j - 1]
        return not (inner or first_alone or last_alone)


@lru_cache(maxsize=4096)
def _valid(digits: str, international: bool) -> bool:
    try:
        if international:
            return phonenumbers.is_valid_number(phonenumbers.parse("+" + digits, None))
        return any(phonenumbers.is_valid_number(phonenumbers.parse(digits, region))
                   for region in SPANISH_REGIONS)
    except phonenumbers.NumberParseException:
        return False


def _phone_in(text: str, run: list[_Number]) -> Iterator[tuple[int, int]]:
    """The longest phones in a run, left to right."""
    grouping = _Grouping(run)
    i = 0
    while i < len(run):
        before = text[max(0, run[i].start - 24):run[i].start]
        plus = _PLUS.search(before)
        code = (plus.group("code") or "") if plus else ""
        found: tuple[int, int] | None = None
        spoken = ""
        for j in range(i, len(run)):
            spoken += run[j].digits
            digits = code + spoken
            if len(digits) > _MAX_DIGITS:
                break
            if (len(digits) < _MIN_DIGITS or spoken in _COUNTING
                    or (j > i and not grouping.ok(i, j))):
                continue
            if plus and _valid(digits, international=True):
                found = (run[i].start - len(before) + plus.start(), j)
            elif not code and _valid(digits, international=False):
                found = (run[i].start, j)
        if found is None or REFERENCE.search(text[max(0, found[0] - 24):found[0]]):
            i += 1
            continue
        yield found[0], run[found[1]].end
        i = found[1] + 1


def find_spelled_phones(text: str) -> Iterator[tuple[int, int]]:
    if (_FIRST.isdisjoint(text.lower().replace("-", " ").replace("/", " ").split())
            and _LONE_FIGURES.search(text) is None):
        return
    for run in _runs(text):
        if sum(len(n.digits) for n in run) >= _MIN_DIGITS - 2:
            yield from _phone_in(text, run)


def read_numbers(text: str) -> list[list[str]]:
    """The runs of Spanish number words (and lone figures) in ``text``, each as the figures
    of its numbers, read as ``find_spelled_phones`` reads them.

    >>> read_numbers("seiscientos doce, treinta y cuatro; tengo tres perros y cuatro gatos")
    [['612', '34'], ['3'], ['4']]
    """
    return [[n.digits for n in run] for run in _runs(text)]
