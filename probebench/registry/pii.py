"""A scan of test sets for personal data, with a line-numbered report.

Looks for e-mail addresses, phone numbers, payment-card numbers (13-19 digits that pass
the Luhn check), national-id patterns (US SSN, Spanish DNI/NIE, UK National Insurance)
and street addresses (a number and a capitalised street name with a street word, in
English or Spanish). Patterns are deliberately conservative: each hit is for a human
to look at, not an automatic verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_STREET_EN = r"(?:Street|St\.|Avenue|Ave\.|Road|Rd\.|Boulevard|Blvd\.|Lane|Ln\.|Drive|Dr\.)"
_STREET_ES = r"(?:Calle|Avenida|Avda\.|Plaza|Paseo|Carrer)"
PATTERNS: dict[str, re.Pattern[str]] = {
    "e-mail address": re.compile(
        r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    # not inside a longer run of digit groups (card numbers, ids): no digit just before
    # or after, even across one separator
    "phone number": re.compile(
        r"(?<![\w.])(?<!\d[\s.-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\d{2,4}[\s.-])"
        r"\d{3,4}[\s.-]\d{3,4}(?!\w|[\s.-]?\d)"),
    "national id": re.compile(r"\b(?:\d{3}-\d{2}-\d{4}|\d{8}[A-HJ-NP-TV-Z]|[XYZ]\d{7}[A-Z]|"
                              r"[A-CEGHJ-PR-TW-Z]{2}\d{6}[A-D])\b"),
    "street address": re.compile(
        rf"\b\d{{1,5}}\s+(?:[A-Z][a-z]+\s+){{1,3}}{_STREET_EN}|"
        rf"\b{_STREET_ES}\s+(?:de\s+|del\s+|la\s+)?[A-Z][a-zñáéíóú]+(?:\s+[A-Z][a-zñáéíóú]+)?"
        rf",?\s+\d{{1,4}}\b"),
}
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")


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
        for kind, pattern in PATTERNS.items():
            out.extend(Finding(path, number, kind, m.group(0)) for m in pattern.finditer(line))
        for m in _CARD.finditer(line):
            digits = re.sub(r"\D", "", m.group(0))
            if 13 <= len(digits) <= 19 and luhn_ok(digits):
                out.append(Finding(path, number, "payment-card number", m.group(0)))
    return out


def scan_file(path: Path) -> list[Finding]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        return scan_lines(path, handle)
