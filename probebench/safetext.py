"""Text from strangers, made visible: no control or disguising character reaches a view.

Task files, registry entries, stored results and registry mirrors are written by people
we do not know. Their text reaches a terminal (the CLI), REPORT.md, the leaderboard's
pages and its CSV and JSON. A terminal obeys ``ESC`` sequences (``ESC[2J`` clears the
screen, ``ESC]8;;URL ESC\\`` makes a hidden hyperlink), ``BEL`` rings, ``CR`` overwrites
a line, and the bidirectional controls (``U+202E`` RIGHT-TO-LEFT OVERRIDE and its kin)
reorder what a reader sees on any page. ``visible`` replaces each such character by an
escape a reader can see, in Python's spelling: ``\\x1b``, ``\\x9b``, ``\\u202e``,
``\\U000e0041``.

What is *hidden* (``hidden``), by Unicode general category (``unicodedata``):

* ``Cc``, the C0 controls, DEL and the C1 controls (U+0080-U+009F), except ``\\n`` and
  ``\\t`` where the view is laid out in lines (``lines=True``: a page, a file, a
  terminal); ``\\r`` is always hidden, as it can overwrite a line;
* ``Cf``, the format characters: the bidirectional marks, embeddings, overrides and
  isolates (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), zero-width space
  and word joiner, the byte-order mark, soft hyphen, interlinear annotations and the tag
  characters (U+E0000-U+E007F, which spell invisible text). Two are kept:
  ZERO WIDTH NON-JOINER (U+200C) and ZERO WIDTH JOINER (U+200D), which Persian and Indic
  scripts need and which join emoji sequences (``👩‍🔬``); neither moves or hides text.
  Emoji flags of regions (England, Scotland) are spelled with tag characters and so
  show their tags escaped;
* ``Cs``, lone surrogates (a file read with ``surrogateescape``), which no UTF-8 view can
  show; ``Zl`` and ``Zp``, the line and paragraph separators (U+2028, U+2029), line
  breaks that some viewers obey and others do not.

Everything else is kept as it is: accents (``canción``), CJK, emoji, right-to-left
letters (Arabic and Hebrew text is ordered by the letters themselves), no-break spaces,
private-use and unassigned code points. A backslash is kept too, so ``\\x1b`` in a view
may be those four characters as written; either way nothing invisible got through.

``VisibleWriter`` is a stream that makes everything written through it visible (the
CLI's stdout and stderr). ``without_hidden`` drops hidden characters instead (for values
whose syntax a backslash would break, such as BibTeX), and ``json_visible`` writes JSON
whose text is unchanged once parsed but whose file holds no hidden character (each is a
``\\uXXXX`` escape).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, TextIO

#: format characters (Cf) that are kept: they join letters and emoji, and move nothing
KEPT_FORMAT = frozenset({"\u200c", "\u200d"})
#: categories whose characters are hidden (Cf apart from KEPT_FORMAT)
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: the layout characters a view laid out in lines keeps
LINE_LAYOUT = frozenset({"\n", "\t"})
#: the escapes of the three layout controls, as Python writes them
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: short names of the C0 controls (unicodedata has no names for Cc)
_C0_NAMES = ("NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB", "LF", "VT",
             "FF", "CR", "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB",
             "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US")


def _all_shown(text: str, lines: bool) -> bool:
    """Whether ``text`` holds no hidden character, answered in C for the usual text
    (everything printable, apart from line layout where ``lines``)."""
    if text.isprintable():
        return True
    return lines and text.replace("\n", "").replace("\t", "").isprintable()


def hidden(char: str, *, lines: bool = False) -> bool:
    """Whether ``char`` (one character) is hidden: see the module's docstring.

    >>> hidden("\\x1b"), hidden("\\u202e"), hidden("ñ"), hidden("\\u200d")
    (True, True, False, False)
    >>> hidden("\\n"), hidden("\\n", lines=True), hidden("\\r", lines=True)
    (True, False, True)
    """
    if char.isprintable():  # every category but C* and Z* (space itself is printable)
        return False
    if lines and char in LINE_LAYOUT:
        return False
    category = unicodedata.category(char)
    if category == "Cf":
        return char not in KEPT_FORMAT
    return category in HIDDEN_CATEGORIES


def escape_char(char: str) -> str:
    """The visible form of one character, as Python spells it in a string literal.

    >>> escape_char("\\x1b"), escape_char("\\u202e"), escape_char("\\U000e0041")
    ('\\\\x1b', '\\\\u202e', '\\\\U000e0041')
    >>> escape_char("\\r")
    '\\\\r'
    """
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every hidden character replaced by its escape (``escape_char``);
    ``lines=True`` keeps ``\\n`` and ``\\t`` (a view laid out in lines).

    >>> visible("\\x1b[2Jtitle\\x07")
    '\\\\x1b[2Jtitle\\\\x07'
    >>> visible("abc\\u202edef.exe")
    'abc\\\\u202edef.exe'
    >>> visible("¿Qué canción? 漢字 👩\\u200d🔬")
    '¿Qué canción? 漢字 👩\\u200d🔬'
    >>> visible("one\\ntwo\\r"), visible("one\\ntwo\\r", lines=True)
    ('one\\\\ntwo\\\\r', 'one\\ntwo\\\\r')
    """
    if _all_shown(text, lines):
        return text
    return "".join(escape_char(c) if hidden(c, lines=lines) else c for c in text)


def without_hidden(text: str, *, lines: bool = False) -> str:
    """``text`` with every hidden character removed.

    >>> without_hidden("Ada\\u202e Lovelace\\x1b")
    'Ada Lovelace'
    """
    if _all_shown(text, lines):
        return text
    return "".join(c for c in text if not hidden(c, lines=lines))


def first_hidden(text: str, *, lines: bool = False) -> tuple[int, str] | None:
    """(position, description) of the first hidden character of ``text``, or None;
    the description names it as ``U+202E (RIGHT-TO-LEFT OVERRIDE)``.

    >>> first_hidden("ok"), first_hidden("a\\x1b[2J")
    (None, (1, 'U+001B (ESC, a control character)'))
    >>> first_hidden("x\\u202ey")
    (1, 'U+202E (RIGHT-TO-LEFT OVERRIDE)')
    """
    if _all_shown(text, lines):
        return None
    for position, char in enumerate(text):
        if hidden(char, lines=lines):
            return position, describe(char)
    return None


def describe(char: str) -> str:
    """``U+XXXX (NAME)`` for one character; a control without a Unicode name gives its
    short name and kind.

    >>> describe("\\x07"), describe("\\x9b"), describe("\\u2066")
    ('U+0007 (BEL, a control character)', 'U+009B (a control character)', \
'U+2066 (LEFT-TO-RIGHT ISOLATE)')
    """
    code = ord(char)
    name = unicodedata.name(char, "")
    if name:
        return f"U+{code:04X} ({name})"
    short = (_C0_NAMES[code] + ", " if code < 0x20 else "DEL, " if code == 0x7F else "")
    kinds = {"Cc": "a control character", "Cs": "a lone surrogate",
             "Cf": "a format character"}
    return f"U+{code:04X} ({short}{kinds.get(unicodedata.category(char), 'unnamed')})"


def visible_data(value: Any, *, lines: bool = True) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with ``visible`` applied to
    every string, keys included.

    >>> visible_data({"name\\x1b": ["a\\u202eb", 1, None]})
    {'name\\\\x1b': ['a\\\\u202eb', 1, None]}
    """
    if isinstance(value, str):
        return visible(value, lines=lines)
    if isinstance(value, dict):
        return {visible_data(k, lines=lines): visible_data(v, lines=lines)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible_data(v, lines=lines) for v in value]
    return value


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters above the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(value: Any, **dumps: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **dumps)`` with every hidden character
    written as a JSON ``\\uXXXX`` escape: parsed, the text is exactly ``value``'s, yet
    the file shows no control, bidi or format character raw (``json`` itself escapes
    only the C0 controls, and leaves DEL, C1, U+2028 and U+202E as they are).

    >>> text = json_visible({"t": "a\\u202eb\\x85ñ"})
    >>> text, json.loads(text) == {"t": "a\\u202eb\\x85ñ"}
    ('{"t": "a\\\\u202eb\\\\u0085ñ"}', True)
    """
    text = json.dumps(value, ensure_ascii=False, **dumps)
    if _all_shown(text, True):
        return text
    # outside its strings a JSON text holds only ASCII and layout: every hidden
    # character is inside a string, where a \\u escape means the same character
    return "".join(_json_escape(c) if hidden(c, lines=True) else c for c in text)


class VisibleWriter:
    """A text stream that passes everything written to ``stream`` through ``visible``
    (``lines=True``): the CLI's stdout and stderr, so no printer can put a stranger's
    control character on a terminal. Other attributes are ``stream``'s."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text, lines=True))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


__all__ = ["HIDDEN_CATEGORIES", "KEPT_FORMAT", "LINE_LAYOUT", "VisibleWriter", "describe",
           "escape_char", "first_hidden", "hidden", "json_visible", "visible", "visible_data",
           "without_hidden"]
