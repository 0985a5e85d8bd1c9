"""A scan of test sets for personal data, with a line-numbered report.

Finds e-mail addresses (also fullwidth ``＠``, obfuscated ``(at)``/``[dot]`` and spelled
out, ``ana at example dot com``, ``ana arroba correo punto es`` or ``lucia.gomez arroba
gmail.com``), IBANs, national ids (US SSN, Spanish DNI and NIE, French NIR, UK National
Insurance, Mexican CURP, Chilean RUT, Argentine CUIT), payment-card numbers, phone
numbers (in figures, and in Spanish spelled digit by digit, ``seis uno dos ...``, or in
number words, ``seiscientos doce, trescientos cuarenta y cinco, ...``) and street
addresses (English and Spanish, in any case, with a floor, ``Alcalá 45, 3º piso``).
Numbers come from maintained validators (``pii_numbers.py``: ``phonenumbers`` for phones,
``python-stdnum`` for check digits; ``pii_words.py`` reads Spanish number words into the
digits ``phonenumbers`` then validates), so a look-alike run of digits or of number words
is not reported; e-mail and street addresses from patterns (``pii_text.py``). Text is
matched after NFKC normalisation (fullwidth letters, digits and signs), and each finding
names the original line and span.

A span is reported once, as its most specific kind. Recall is measured on
``tests/data/pii_corpus.tsv``. Each hit is for a human to look at, not a verdict.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from probebench.tasks.pii_numbers import (
    find_cards,
    find_ibans,
    find_national_ids,
    find_phones,
    luhn_ok,
)
from probebench.tasks.pii_text import find_addresses, find_emails
from probebench.tasks.pii_words import find_spelled_phones

Finder = Callable[[str], Iterator[tuple[int, int]]]


def _phones(text: str) -> Iterator[tuple[int, int]]:
    """Phones in figures (``pii_numbers``), then phones spelled out (``pii_words``)."""
    yield from find_phones(text)
    yield from find_spelled_phones(text)


#: kinds in priority order: a span overlapping an earlier kind's is not reported again
KINDS: dict[str, Finder] = {
    "e-mail address": find_emails,
    "bank account number": find_ibans,
    "national id": find_national_ids,
    "payment-card number": find_cards,
    "phone number": _phones,
    "street address": find_addresses,
}


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    kind: str
    #: the text as it stands in the line (not normalised)
    text: str
    #: ``(start, end)`` of ``text`` in the original line, 0-based; ``None`` when unknown
    span: tuple[int, int] | None = None

    @property
    def column(self) -> int | None:
        """The 1-based column where the finding starts."""
        return None if self.span is None else self.span[0] + 1

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 6 else self.text[:3] + "…" + self.text[-2:]
        return f"{self.path}:{self.line}: {self.kind} ({shown})"


@dataclass(frozen=True)
class _Normalised:
    """A line after NFKC, with where each of its characters came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end - 1]


def _normalise(line: str) -> _Normalised:
    if line.isascii():
        return _Normalised(line, tuple(range(len(line))), tuple(range(1, len(line) + 1)))
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(line):
        # a character with its combining marks, so "e" + U+0301 becomes one "é"
        j = i + 1
        while j < len(line) and unicodedata.combining(line[j]):
            j += 1
        piece = unicodedata.normalize("NFKC", line[i:j])
        pieces.append(piece)
        starts += [i] * len(piece)
        ends += [j] * len(piece)
        i = j
    return _Normalised("".join(pieces), tuple(starts), tuple(ends))


def scan_line(line: str) -> list[tuple[str, int, int]]:
    """``(kind, start, end)`` of each finding in one line, spans in the original line,
    in order of position."""
    norm = _normalise(line)
    taken: list[tuple[int, int]] = []
    found: list[tuple[str, int, int]] = []
    for kind, finder in KINDS.items():
        for start, end in finder(norm.text):
            if start >= end or any(start < e and s < end for s, e in taken):
                continue  # already reported as a more specific kind
            taken.append((start, end))
            found.append((kind, *norm.original(start, end)))
    return sorted(found, key=lambda f: (f[1], f[2]))


def scan_lines(path: Path, lines: Iterable[str]) -> list[Finding]:
    return [Finding(path, number, kind, line[start:end], (start, end))
            for number, line in enumerate(lines, start=1)
            for kind, start, end in scan_line(line)]


def scan_file(path: Path) -> list[Finding]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        return scan_lines(path, handle)


__all__ = ["KINDS", "Finding", "luhn_ok", "scan_file", "scan_line", "scan_lines"]
