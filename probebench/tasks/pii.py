"""A scan of test sets for personal data, with a line-numbered report.

Looks for e-mail addresses (also non-ASCII and obfuscated: ``(at)``, ``[dot]``, ``at …
dot com``), phone numbers (international with any grouping, ``tel:`` links, and national
groupings of 9 to 15 digits such as Spanish, French and British ones), payment-card
numbers (13-19 digits that pass the Luhn check), national-id patterns (US SSN, also
spaced; Spanish DNI/NIE; UK National Insurance, also spaced) and street addresses (a
house number, ``221B`` included, and a capitalised street name with a street word, in
English or Spanish, ``C/`` and ``Avenida de la …`` included). A span is reported once,
as its most specific kind. Recall is measured on ``tests/data/pii_corpus.tsv``. Each
hit is for a human to look at, not an automatic verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_STREET_EN = (r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|"
              r"Drive|Dr\.?|Place|Pl\.?|Square|Sq\.?|Crescent|Terrace|Way|Close|Court)")
_STREET_ES = r"(?:Calle|C/|Avenida|Avda\.|Av\.|Plaza|Pza\.|Paseo|Carrer|Camino|Ronda|Travesía)"
_CAP = r"[A-ZÁÉÍÓÚÑ][a-zñáéíóúü]+"
_LINK_ES = r"(?:(?:de|del|la|las|los|el)\s+)"
_TLD = r"(?:com|org|net|edu|gov|es|uk|de|fr|it|eu|io|info|co)"
#: kinds in priority order: a finding overlapping an earlier kind's is not reported again
PATTERNS: dict[str, re.Pattern[str]] = {
    "e-mail address": re.compile(
        r"\b[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b"
        # obfuscated: name (at) domain (dot) org, name[at]domain[dot]com
        r"|\b[\w.+-]+\s*[\[(]\s*at\s*[\])]\s*[\w-]+(?:\s*[\[(]\s*dot\s*[\])]\s*[\w-]+)+"
        # spelled out: lucia dot moreno at gmail dot com
        rf"|\b\w+(?:\s+dot\s+\w+)*\s+at\s+[\w-]+(?:\s+dot\s+[\w-]+)*\s+dot\s+{_TLD}\b",
        re.IGNORECASE),
    "national id": re.compile(
        r"\b(?:\d{3}[-\s]\d{2}[-\s]\d{4}|\d{8}[A-HJ-NP-TV-Z]|[XYZ]\d{7}[A-Z]|"
        r"[A-CEGHJ-PR-TW-Z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D])\b"),
    # not inside a longer run of digit groups (card numbers, ids): no digit just before
    # or after, even across one separator
    "phone number": re.compile(
        r"(?<![\w.])(?<!\d[\s.-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\d{2,4}[\s.-])"
        r"\d{3,4}[\s.-]\d{3,4}(?!\w|[\s.-]?\d)"
        # international, any grouping: +CC then 8 to 14 more digits (tel: links too)
        r"|(?<![\w+])\+\d{1,3}(?:[\s.-]?\(?\d{1,4}\)?){2,6}(?![\w]|[\s.-]\d)"
        # national, three to five groups of 2-4 digits (ES 612 34 56 78, FR 01 23 45 67 89)
        r"|(?<![\w.,:/-])(?<!\d\s)\d{2,4}(?:[\s.-]\d{2,4}){2,4}(?![\w.,:/-]?\d)(?!\w)"),
    "street address": re.compile(
        rf"\b\d{{1,5}}[A-Z]?\s+(?:{_CAP}\s+){{1,3}}{_STREET_EN}(?![a-z])|"
        rf"(?<!\w){_STREET_ES}\s*{_LINK_ES}{{0,2}}{_CAP}(?:\s+{_LINK_ES}?{_CAP})?"
        rf",?\s+\d{{1,4}}\b"),
}
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
#: digits a phone number has, whatever its grouping
_PHONE_DIGITS = range(9, 16)


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    kind: str
    text: str

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 6 else self.text[:3] + "…" + self.text[-2:]
        return f"{self.path}:{self.line}: {self.kind} ({shown})"


def scan_lines(path: Path, lines: Iterable[str]) -> list[Finding]:
    out: list[Finding] = []
    for number, line in enumerate(lines, start=1):
        taken: list[tuple[int, int]] = []

        def add(kind: str, m: re.Match[str], found: list[Finding] = out,
                taken: list[tuple[int, int]] = taken, number: int = number) -> None:
            if any(m.start() < end and start < m.end() for start, end in taken):
                return  # already reported as a more specific kind
            taken.append((m.start(), m.end()))
            found.append(Finding(path, number, kind, m.group(0)))

        for m in _CARD.finditer(line):
            digits = re.sub(r"\D", "", m.group(0))
            if 13 <= len(digits) <= 19 and luhn_ok(digits):
                add("payment-card number", m)
        for kind, pattern in PATTERNS.items():
            for m in pattern.finditer(line):
                if kind == "phone number" and \
                        len(re.sub(r"\D", "", m.group(0))) not in _PHONE_DIGITS:
                    continue
                add(kind, m)
    return sorted(out, key=lambda f: (f.line, line_order(f)))


def line_order(finding: Finding) -> int:
    """Report kinds in a stable order within a line."""
    kinds = [*PATTERNS, "payment-card number"]
    return kinds.index(finding.kind)


def scan_file(path: Path) -> list[Finding]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        return scan_lines(path, handle)
