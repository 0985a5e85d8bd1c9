"""The kinds of personal data no maintained library finds: e-mail addresses (plain,
obfuscated, spelled out in English or Spanish) and street addresses (English and Spanish,
capitalised or not). Each finder takes NFKC-normalised text (so a fullwidth ``＠`` is
already ``@``) and yields ``(start, end)`` spans of it; ``pii.py`` maps them back."""

from __future__ import annotations

import re
from collections.abc import Iterator

_TLD = (r"(?:com|org|net|edu|gov|info|io|eu|es|uk|de|fr|it|pt|mx|ar|co|cl|pe|ve|uy|ec|"
        r"bo|py|us|ca|au|ie|jp)")
_AT = r"(?:at|arroba)"
_DOT = r"(?:dot|punto)"
_OPEN, _CLOSE = r"[\[({<]", r"[\])}>]"
#: words that end a spelled-out user name's phrase rather than begin a domain:
#: "looked at the dot com boom" is prose, "ana at example dot com" an address
_NOT_DOMAIN = r"(?!(?:the|a|an|this|that|his|her|their|el|la|los|las|un|una|mi|su)\b)"
EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b"
    # spaces round the sign: ana @ example.org
    rf"|(?<![\w.%+-])[\w.%+-]+\s@\s[\w-]+(?:\.[\w-]+)*\.{_TLD}\b"
    # bracketed: ana (at) example (dot) org, pedro[arroba]ejemplo[punto]com
    rf"|\b[\w.+-]+\s*{_OPEN}\s*{_AT}\s*{_CLOSE}\s*[\w-]+"
    rf"(?:\s*(?:{_OPEN}\s*{_DOT}\s*{_CLOSE}|\.)\s*[\w-]+)+"
    # spelled out: lucia dot moreno at gmail dot com, ana punto ruiz arroba correo punto es
    rf"|\b\w+(?:\s+{_DOT}\s+\w+|\.\w+)*\s+{_AT}\s+{_NOT_DOMAIN}[\w-]+"
    rf"(?:\s+{_DOT}\s+[\w-]+)*\s+{_DOT}\s+{_TLD}\b",
    re.IGNORECASE)

# --- street addresses --------------------------------------------------------------------

_STREET_EN = (r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|"
              r"Drive|Dr\.?|Place|Pl\.?|Square|Sq\.?|Crescent|Terrace|Way|Close|Court)")
#: the street words that are not also common prose words ("a 3 way tie", "came close")
_STREET_EN_ANY_CASE = (r"(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|terrace|"
                       r"crescent)")
_STREET_ES = r"(?:Calle|C/|Avenida|Avda\.|Av\.|Plaza|Pza\.|Paseo|Carrer|Camino|Ronda|Travesía)"
_STREET_ES_ANY_CASE = (r"(?:calle|c/|avenida|avda\.?|av\.|plaza|pza\.?|paseo|p[º°o]\.?(?=\s)|"
                       r"carrer|camino|ronda|traves[ií]a|glorieta|carretera|ctra\.)")
_CAP = r"[A-ZÁÉÍÓÚÑ][a-zñáéíóúü]+"
_LINK_ES = r"(?:(?:de|del|la|las|los|el)\s+)"
#: words that never name a street, so "3 cars on the road" and "5 km down the road" stay
#: prose when case cannot tell a name from a word
_STOP_EN = (r"(?:the|a|an|on|in|at|of|to|by|and|or|for|from|into|onto|down|up|along|across|"
            r"over|under|near|past|off|is|was|were|are|be|it|its|this|that|my|his|her|our|"
            r"their|mile|miles|km|kms|kilometre|kilometres|kilometer|kilometers|metre|metres|"
            r"meter|meters|yard|yards|foot|feet|block|blocks|minute|minutes|min|mins|hour|"
            r"hours|day|days|lane|lanes|way|car|cars|people|times|more|other|new|old)")
_STOP_ES = (r"(?:hab[ií]a|hay|hubo|estaba|estaban|est[aá]|era|eran|es|son|fue|tiene|ten[ií]a|"
            r"mide|med[ií]a|con|sin|y|e|o|u|en|a|al|para|por|que|se|unos|unas|m[aá]s|menos|"
            r"hasta|desde|durante|hace|cerca|tras|entre|sobre|muy|ya)")
_WORD_EN = rf"(?!{_STOP_EN}\b|{_STREET_EN_ANY_CASE}\b)[a-z][a-z'-]*"
_WORD_ES = rf"(?!{_STOP_ES}\b|{_LINK_ES})[a-záéíóúñü][a-záéíóúñü'-]*"
ADDRESS = (
    # 221 Baker Street, 221B Baker St, 1600 Pennsylvania Ave
    re.compile(rf"\b\d{{1,5}}[A-Z]?\s+(?:{_CAP}\s+){{1,3}}{_STREET_EN}(?![a-z])"),
    # any case: 221b baker street, 42 elm rd.
    re.compile(rf"\b\d{{1,5}}[a-z]?\s+(?:{_WORD_EN}\s+){{1,3}}{_STREET_EN_ANY_CASE}\b",
               re.IGNORECASE),
    # Calle Mayor 12, Avenida de la Constitución 12, C/ Mayor 5
    re.compile(rf"(?<!\w){_STREET_ES}\s*{_LINK_ES}{{0,2}}{_CAP}(?:\s+{_LINK_ES}?{_CAP})?"
               rf",?\s+\d{{1,4}}\b"),
    # any case, where the number cannot be prose's: "calle mayor 12, 3º", "avda. de la paz
    # nº 8", "calle del prado número 5"; not "la calle principal mide 300 metros"
    re.compile(rf"(?<!\w){_STREET_ES_ANY_CASE}\s*{_LINK_ES}{{0,2}}{_WORD_ES}"
               rf"(?:\s+{_LINK_ES}?{_WORD_ES}){{0,2}},?\s*"
               r"(?:(?:n[º°o]\.?|n[úu]m\.?|n[úu]mero)\s*\d{1,4}\b"
               r"|\d{1,4}(?:\s?[a-z]\b)?(?=\s*(?:$|[,.;:)]|\s+(?:piso|puerta|bajo|planta|"
               r"esc\.?|izq|izda|dcha|dcho)\b|\s+\d{1,2}\s?[º°ªoa]\b)))",
               re.IGNORECASE),
)


#: what every e-mail pattern needs, a cheap test before them
_EMAIL_SIGN = re.compile(rf"@|\b{_AT}\b", re.IGNORECASE)


def find_emails(text: str) -> Iterator[tuple[int, int]]:
    if _EMAIL_SIGN.search(text) is None:
        return
    for m in EMAIL.finditer(text):
        yield m.span()


_DIGIT = re.compile(r"\d")
#: a year, not a house number: "in 2012 Oxford Street was closed"
_YEAR = re.compile(r"(?:1[89]|20)\d\d\s")
_BEFORE_YEAR = re.compile(r"\b(?:in|since|by|until|from|en|desde|hasta)\s+$", re.IGNORECASE)


def find_addresses(text: str) -> Iterator[tuple[int, int]]:
    if _DIGIT.search(text) is None:  # every address has a number
        return
    for pattern in ADDRESS:
        for m in pattern.finditer(text):
            if not (_YEAR.match(m.group(0))
                    and _BEFORE_YEAR.search(text[max(0, m.start() - 8):m.start()])):
                yield m.span()
