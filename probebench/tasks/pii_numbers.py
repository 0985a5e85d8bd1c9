"""The numbered kinds of personal data, found by a loose pattern and kept only when a
maintained validator accepts them: phone numbers by ``phonenumbers`` (valid numbers of the
regions below, so a list of years is no phone), IBANs, national ids and payment cards by
``python-stdnum`` (check digits, so a look-alike run of digits fails). Each finder takes
NFKC-normalised text and yields ``(start, end)`` spans of it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import phonenumbers
from stdnum import iban, luhn
from stdnum.ar import cuit
from stdnum.cl import rut
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.mx import curp
from stdnum.us import ssn

#: the regions whose national formats are read (numbers written with ``+`` are read
#: whatever the region): English- and Spanish-speaking countries, and the European and
#: Japanese formats test sets quote most. Not India or Uruguay: their numbering plans
#: accept most runs of 8 or 10 digits ("order 1234567890", "2024-03-12")
PHONE_REGIONS = ("US", "GB", "IE", "AU", "NZ", "ES", "MX", "AR", "CO", "CL", "PE", "VE",
                 "EC", "DE", "FR", "JP")
#: a run of at least seven digits, however grouped: the cheap test before the matcher
_DIGITS = re.compile(r"\d(?:[\s().\-/]{0,3}\d){6}")
#: words after which a number is a reference, not a phone: "ISBN 84 376 0494 7",
#: "pedido 612345678"
REFERENCE = re.compile(
    r"(?:\b(?:isbn(?:-1[03])?|issn|order|invoice|ticket|ref|reference|serial|tracking|"
    r"account|acct|pedido|factura|referencia|expediente|cuenta|p[aá]gina|page|pp?|"
    r"versi[oó]n|version|v)\.?\s*(?:number|n[uú]mero|no\.?|n[º°o]\.?|#|:)?\s*)$",
    re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)\d\d")
#: grouped in thousands ("46 754 783 habitantes"); nine digits so grouped stay phones, as
#: Spain writes its numbers ("654 321 987")
_THOUSANDS = re.compile(r"\d{1,3}([ .,])\d{3}(?:\1\d{3})*")
_DATE = re.compile(r"(?:19|20)\d\d([-./])[01]?\d\1[0-3]?\d|[0-3]?\d([-./])[01]?\d\2(?:19|20)?\d\d")


def _not_a_phone(text: str, match: phonenumbers.PhoneNumberMatch) -> bool:
    """Digits the numbering plans accept that no one writes as a phone: years, dates, a
    reference's number, single digits apart ("4 8 15 16 23 42"), a count in thousands."""
    groups = re.findall(r"\d+", match.raw_string)
    return (all(_YEAR.fullmatch(g) for g in groups)
            or (_THOUSANDS.fullmatch(match.raw_string) is not None
                and sum(map(len, groups)) != 9)
            or _DATE.fullmatch(match.raw_string) is not None
            or (not match.raw_string.startswith("+")
                and sum(len(g) == 1 for g in groups) >= 2)
            or REFERENCE.search(text[max(0, match.start - 24):match.start]) is not None)


def find_phones(text: str) -> Iterator[tuple[int, int]]:
    if _DIGITS.search(text) is None:
        return
    spans: set[tuple[int, int]] = set()
    for region in PHONE_REGIONS:
        for m in phonenumbers.PhoneNumberMatcher(text, region,
                                                 leniency=phonenumbers.Leniency.VALID):
            if not _not_a_phone(text, m):
                spans.add((m.start, m.end))
    yield from sorted(spans)


# --- numbers with check digits -----------------------------------------------------------

_SEP = r"[ .\-]"
#: no letter or digit just before, nor a digit across one separator
_START = r"(?<![\w])(?<!\d[.\-])"
_END = r"(?![\w])(?![.\-,]\d)"


def _compact(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", text).upper()


def _valid(check: Callable[[str], object]) -> Callable[[str], bool]:
    """A ``python-stdnum`` validator that ignores separators and case."""

    def ok(text: str) -> bool:
        return bool(check(_compact(text)))
    return ok


def _dni_ok(text: str) -> bool:
    number = _compact(text)
    return bool(dni.is_valid(number.zfill(9)))


def _card_ok(text: str) -> bool:
    digits = _compact(text)
    return 13 <= len(digits) <= 19 and digits[0] in "23456" and bool(luhn.is_valid(digits))


def _nino_ok(text: str) -> bool:
    # no maintained validator; HMRC never issues these prefixes
    return _compact(text)[:2] not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


#: (loose pattern, validator) of each national id
NATIONAL_IDS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    # US social security number: 536-82-4719, 536 82 4719
    (re.compile(rf"{_START}\d{{3}}[\-\s]\d{{2}}[\-\s]\d{{4}}{_END}"), _valid(ssn.is_valid)),
    # Spanish DNI: 47382915V, 47.382.915-V, 5831264 M
    (re.compile(rf"{_START}(?:\d{{1,2}}\.\d{{3}}\.\d{{3}}|\d{{7,8}})[\s\-]?[A-Z]{_END}"),
     _dni_ok),
    # Spanish NIE: X1234567L, Y-2841736-P, Z.1478203.K
    (re.compile(rf"{_START}[XYZxyz]{_SEP}?\d\.?\d{{3}}\.?\d{{3}}{_SEP}?[A-Za-z]{_END}"),
     _valid(nie.is_valid)),
    # French NIR: 1 85 05 78 006 084 91, 2 53 07 2B 073 004 70
    (re.compile(rf"{_START}[12]{_SEP}?\d\d{_SEP}?\d\d{_SEP}?(?:\d\d|2[ABab]){_SEP}?\d{{3}}"
                rf"{_SEP}?\d{{3}}{_SEP}?\d\d{_END}"), _valid(nir.is_valid)),
    # UK National Insurance number: AB123456C, AB 12 34 56 C
    (re.compile(r"(?<!\w)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d\d\s?\d\d\s?\d\d\s?[A-D]"
                r"(?!\w)"), _nino_ok),
    # Mexican CURP: GOML850612MDFRRC04
    (re.compile(r"(?<!\w)[A-Z]{4}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d(?!\w)", re.IGNORECASE),
     _valid(curp.is_valid)),
    # Chilean RUT: 15.482.973-3
    (re.compile(rf"{_START}\d{{1,2}}\.\d{{3}}\.\d{{3}}-[\dkK]{_END}"), _valid(rut.is_valid)),
    # Argentine CUIT/CUIL: 27-31846205-9
    (re.compile(rf"{_START}(?:20|23|24|27|30|33|34)-\d{{8}}-\d{_END}"), _valid(cuit.is_valid)),
)


#: six digits, however grouped: what every national id, IBAN and card has
_SIX_DIGITS = re.compile(r"\d(?:[\s.\-]{0,3}\d){5}")


def _placeholder(text: str) -> bool:
    """All its digits zero, as forms show the format: 00000000T."""
    return set(re.sub(r"\D", "", text)) <= {"0"}


def find_national_ids(text: str) -> Iterator[tuple[int, int]]:
    if _SIX_DIGITS.search(text) is None:
        return
    for pattern, ok in NATIONAL_IDS:
        for m in pattern.finditer(text):
            if not _placeholder(m.group(0)) and ok(m.group(0)):
                yield m.span()


#: a country code, check digits and 11 to 30 letters or digits, in groups or not; the
#: match may run into the next word, so the longest valid prefix is what counts
_IBAN = re.compile(r"(?<![0-9A-Za-z])[A-Z]{2}\d\d(?:[ \-]?[0-9A-Z]{1,4}){3,}", re.IGNORECASE)


def find_ibans(text: str) -> Iterator[tuple[int, int]]:
    if _SIX_DIGITS.search(text) is None:
        return
    for m in _IBAN.finditer(text):
        ends = [end.start() for end in re.finditer(r"(?=[ \-]|$)", m.group(0))]
        for end in reversed(ends):
            if len(_compact(m.group(0)[:end])) < 15:
                break
            if iban.is_valid(_compact(m.group(0)[:end])):
                yield m.start(), m.start() + end
                break


#: 13 to 19 digits: unbroken, in fours (the last group may be shorter), or 4-6-5 and 4-6-4
#: (American Express, Diners), one separator throughout
_CARD = re.compile(
    rf"{_START}(?:\d{{13,19}}"
    r"|\d{4}(?P<s>[ .\-])\d{4}(?P=s)\d{4}(?P=s)\d{1,4}"
    rf"|\d{{4}}(?P<t>[ .\-])\d{{6}}(?P=t)\d{{4,5}}){_END}")


def find_cards(text: str) -> Iterator[tuple[int, int]]:
    if _SIX_DIGITS.search(text) is None:
        return
    for m in _CARD.finditer(text):
        if _card_ok(m.group(0)):
            yield m.span()


def luhn_ok(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (``stdnum.luhn``)."""
    return digits.isdigit() and bool(luhn.is_valid(digits))
