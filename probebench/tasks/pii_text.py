"""The kinds of personal data no maintained library finds: e-mail addresses (plain,
obfuscated, spelled out in English or Spanish, "arroba" before a written domain) and street
addresses (English and Spanish, capitalised or not; Spanish ones also with no street word
when a floor follows the number, "Alcalá 45, 3º piso", with the number first, "el número
12 de la calle Mayor", and Colombian crossings, "Carrera 7 # 45-10"). Each finder takes
NFKC-normalised text (so a fullwidth ``＠`` is already ``@``) and yields ``(start, end)``
spans of it; ``pii.py`` maps them back."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

_TLD = (r"(?:com|org|net|edu|gov|info|io|eu|es|uk|de|fr|it|pt|mx|ar|co|cl|pe|ve|uy|ec|"
        r"bo|py|us|ca|au|ie|jp|cat|gal|eus|dev|app|biz|tv)")
_AT = r"(?:at|arroba)"
_DOT = r"(?:dot|punto)"
#: the last dot and domain, spelled: "punto com", or run together, "puntocom"
_LAST_DOT = rf"(?:\s+{_DOT}\s+{_TLD}|\s+(?:puntocom|dotcom))\b"
#: words read out for the signs of a user name: "lucia guion bajo gomez" is lucia_gomez
_JOIN = r"(?:dot|punto|guion bajo|gui[oó]n bajo|barra baja|underscore|gui[oó]n|dash|hyphen)"
#: a spelled-out user name: lucia punto gomez, ana.soto, lucia guion bajo gomez. It starts
#: where a name can (not inside "a.b.c"), and its parts are bounded, as are a spelled
#: domain's: a hostile line of "a.a.a…" or "a punto a punto …" then costs its length, not
#: its square
_USER = rf"(?<![\w.+-])\w+(?:\s+{_JOIN}\s+\w+|[.\-+]\w+){{0,8}}"
_SPELLED_DOMAIN = rf"[\w-]+(?:\s+{_DOT}\s+[\w-]+){{0,8}}"
_OPEN, _CLOSE = r"[\[({<]", r"[\])}>]"
#: words that end a spelled-out user name's phrase rather than begin a domain:
#: "looked at the dot com boom" is prose, "ana at example dot com" an address
_NOT_DOMAIN = r"(?!(?:the|a|an|this|that|his|her|their|el|la|los|las|un|una|mi|su)\b)"
EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b"
    # spaces round the sign: ana @ example.org
    rf"|(?<![\w.%+-])[\w.%+-]+\s@\s[\w-]+(?:\.[\w-]+)*\.{_TLD}\b"
    # the sign, the dots spelled: ana @ gmail punto com, ana@correo punto es
    rf"|(?<![\w.%+-])[\w.%+-]+\s*@\s*{_SPELLED_DOMAIN}{_LAST_DOT}"
    # bracketed: ana (at) example (dot) org, pedro[arroba]ejemplo[punto]com
    rf"|(?<![\w.+-])[\w.+-]+\s*{_OPEN}\s*{_AT}\s*{_CLOSE}\s*[\w-]+"
    rf"(?:\s*(?:{_OPEN}\s*{_DOT}\s*{_CLOSE}|\.)\s*[\w-]+){{1,8}}"
    # spelled out: lucia dot moreno at gmail dot com, ana punto ruiz arroba correo punto es
    rf"|{_USER}\s+{_AT}\s+{_NOT_DOMAIN}{_SPELLED_DOMAIN}{_LAST_DOT}"
    # "arroba" and a written domain: lucia.gomez arroba gmail.com (not English "at", which
    # prose puts before a domain: "sign in at example.com")
    rf"|{_USER}\s+arroba\s+{_NOT_DOMAIN}[\w-]+(?:\.[\w-]+)*\.{_TLD}\b",
    re.IGNORECASE)

# --- street addresses --------------------------------------------------------------------

_STREET_EN = (r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|"
              r"Drive|Dr\.?|Place|Pl\.?|Square|Sq\.?|Crescent|Terrace|Way|Close|Court)")
#: the street words that are not also common prose words ("a 3 way tie", "came close")
_STREET_EN_ANY_CASE = (r"(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|terrace|"
                       r"crescent)")
_STREET_ES = (r"(?:Calle|C/|Avenida|Avda\.|Av\.|Plaza|Pza\.|Paseo|Carrer|Camino|Ronda|"
              r"Travesía|Jirón)")
_STREET_ES_ANY_CASE = (r"(?:calle|c/|avenida|avda\.?|av\.|plaza|pza\.?|paseo|p[º°o]\.?(?=\s)|"
                       r"carrer|camino|ronda|traves[ií]a|glorieta|carretera|ctra\.|jir[oó]n)")
#: the street words that name nothing else ("la ronda final" is a round of a game)
_STREET_ES_ONLY = (r"(?:calle|c/|avenida|avda\.?|av\.|plaza|pza\.?|paseo|carrer|traves[ií]a|"
                   r"glorieta|carretera|ctra\.|jir[oó]n)")
#: Colombian streets are numbered, and so are their crossings: "Carrera 7 # 45-10"
_STREET_CO = (r"(?:calle|cl\.?|carrera|cra\.?|kra\.?|cr\.?|avenida|av\.?|diagonal|dg\.?|"
              r"transversal|tv\.?|tr\.?)")
_CAP = r"[A-ZÁÉÍÓÚÑ][a-zñáéíóúü]+"
_LINK_ES = r"(?:(?:de|del|la|las|los|el)\s+)"
#: a street named for a date: "Calle 5 de Mayo", "avenida 9 de julio"
_DATE_NAME = r"(?:\d{1,2}\s+de\s+)"
#: the house number's "nº": "nº 8", "n.º 12" (NFKC makes "º" an "o"), "núm. 5", "número 5"
_NUMBER_SIGN = r"(?:n\.?[º°o]\.?|n[úu]m\.?|n[úu]mero)"
#: an ordinal floor in figures: 3º, 3.º, 1ª, and the Latin American 3er, 2do, 4to, 7mo
_ORD = r"\d{1,2}(?:\.?[º°ªoa]\.?|er|ro|do|to|vo|no|mo)"
_ORD_WORD = (r"(?:primer|primero|segundo|tercer|tercero|cuarto|quinto|sexto|s[eé]ptimo|"
             r"octavo|noveno|d[eé]cimo)")
#: the floor (and door) after a house number: "3º piso", "piso 2", "3er piso", "tercer
#: piso", "2ª planta", and a floor with its door, "3º B", "3.º izda."
_FLOOR = (rf"(?:(?:{_ORD}|{_ORD_WORD})\s*(?:piso|planta)\b"
          rf"|(?:piso|planta)\s+(?:{_ORD}|\d{{1,2}}|{_ORD_WORD})(?!\w)"
          rf"|{_ORD}\s*(?:[A-H]|izq|izq\.|izqda\.?|izda\.?|izquierda|dcha\.?|dcho\.?|dch\.|"
          r"derecha|centro|ext\.?|exterior|int\.?|interior)(?!\w))")
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
#: capitalised words that begin a sentence or name a place in a building, not a street:
#: "En 2019, 3er piso", "Torre 2, piso 14", "Capítulo 12, 3º B", "Lunes 12, 2ª planta"
_NOT_STREET_NAME = (rf"(?!(?i:{_STOP_ES}|el|la|lo|los|las|un|una|mi|tu|su|vivo|vive|viven|"
                    r"vivimos|a[ñn]os?|p[aá]gina|cap[ií]tulo|tema|lecci[oó]n|nivel|edificio|"
                    r"torre|bloque|portal|escalera|planta|piso|puerta|sala|aula|habitaci[oó]n|"
                    r"oficina|despacho|local|semana|d[ií]a|mes|hora|minuto|n[uú]mero|grupo|"
                    r"equipo|temporada|episodio|parte|fase|paso|punto|ronda|vuelta|etapa|"
                    r"jornada|partido|juego|mesa|fila|asiento|puesto|l[ií]nea|lunes|martes|"
                    r"mi[eé]rcoles|jueves|viernes|s[aá]bado|domingo|enero|febrero|marzo|abril|"
                    r"mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
                    r"diciembre|ejercicio|pregunta|apartado|secci[oó]n|art[ií]culo|libro|"
                    r"volumen|tomo)\b)")
ADDRESS = (
    # 221 Baker Street, 221B Baker St, 1600 Pennsylvania Ave
    re.compile(rf"\b\d{{1,5}}[A-Z]?\s+(?:{_CAP}\s+){{1,3}}{_STREET_EN}(?![a-z])"),
    # any case: 221b baker street, 42 elm rd.
    re.compile(rf"\b\d{{1,5}}[a-z]?\s+(?:{_WORD_EN}\s+){{1,3}}{_STREET_EN_ANY_CASE}\b",
               re.IGNORECASE),
    # Calle Mayor 12, Avenida de la Constitución 12, C/ Mayor 5, Calle 5 de Mayo 123
    re.compile(rf"(?<!\w){_STREET_ES}\s*{_DATE_NAME}?{_LINK_ES}{{0,2}}{_CAP}"
               rf"(?:\s+{_LINK_ES}?{_CAP})?,?\s+(?:{_NUMBER_SIGN}\s*)?\d{{1,4}}\b"),
    # any case, where the number cannot be prose's: "calle mayor 12, 3º", "avda. de la paz
    # nº 8", "calle del prado número 5"; not "la calle principal mide 300 metros"
    re.compile(rf"(?<!\w){_STREET_ES_ANY_CASE}\s*{_DATE_NAME}?{_LINK_ES}{{0,2}}{_WORD_ES}"
               rf"(?:\s+{_LINK_ES}?{_WORD_ES}){{0,2}},?\s*"
               rf"(?:{_NUMBER_SIGN}\s*\d{{1,4}}\b"
               r"|\d{1,4}(?:\s?[a-z]\b)?(?=\s*(?:$|[,.;:)]|\s+(?:piso|puerta|bajo|planta|"
               r"esc\.?|izq|izda|dcha|dcho)\b|\s+\d{1,2}\s?[º°ªoa]\b"
               rf"|\s*[,\-–]?\s*{_FLOOR}|\s*[\-–]\s*{_ORD}(?!\w))))",
               re.IGNORECASE),
)


_ORDINAL_HINT = re.compile(r"\d(?:\.?[º°ªoa]|er|ro|do|to|vo|no|mo)")
_DE_HINT = re.compile(r"\d\s+(?:de|DE)")
_CROSSING_HINT = re.compile(r"\d\s?[A-Za-z]?\s*-\s*\d")


def _has_floor(text: str) -> bool:
    # substring tests run in C; a regex alternation of the words is slower than both
    return (any(word in text for word in ("piso", "Piso", "PISO", "planta", "Planta", "PLANTA"))
            or _ORDINAL_HINT.search(text) is not None)


#: the patterns that need something rarer than a digit, each with a cheap test for it:
#: ``(pattern, a test that is truthy when the line can hold a match)``
GATED_ADDRESS: tuple[tuple[re.Pattern[str], Callable[[str], object]], ...] = (
    # no street word, a floor after the number: "Alcalá 45, 3º piso", "Ríos Rosas 24,
    # piso 4", "Insurgentes Sur 1234, piso 5", "Gran Vía 28, 5º A"
    (re.compile(rf"(?<![\w/.]){_NOT_STREET_NAME}{_CAP}(?:\s+{_LINK_ES}?{_CAP}){{0,2}},?\s+"
                rf"\d{{1,4}}(?:\s?[A-Za-z](?!\w))?(?=\s*[,\-–]?\s*(?i:{_FLOOR}))"),
     _has_floor),
    # the number first: "el número 12 de la calle Mayor", "nº 5 de la calle del Prado"
    (re.compile(rf"(?<!\w){_NUMBER_SIGN}\s*\d{{1,4}}\s+(?:de|del)\s+(?:la\s+)?"
                rf"{_STREET_ES_ONLY}\s*{_DATE_NAME}?{_LINK_ES}{{0,2}}{_WORD_ES}",
                re.IGNORECASE),
     lambda text: ("de" in text or "DE" in text) and _DE_HINT.search(text)),
    # Colombian: "Carrera 7 # 45-10", "Calle 100 No. 19-54", "Cra. 15 #93-47"
    (re.compile(rf"(?<!\w){_STREET_CO}\s*\d{{1,3}}\s?[a-z]?(?:\s+bis)?(?:\s+[a-z])?\s*"
                r"(?:#|n\.?[º°o]\.?|no\.?|n[úu]mero)\s*\d{1,3}\s?[a-z]?\s*-\s*\d{1,3}\b",
                re.IGNORECASE),
     lambda text: "-" in text and _CROSSING_HINT.search(text)),
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
    patterns = [*ADDRESS, *(p for p, can_hold in GATED_ADDRESS if can_hold(text))]
    for pattern in patterns:
        for m in pattern.finditer(text):
            if not (_YEAR.match(m.group(0))
                    and _BEFORE_YEAR.search(text[max(0, m.start() - 8):m.start()])):
                yield m.span()
