"""Licenses probebench accepts: SPDX license expressions, plus ``custom`` and ``closed``.

A license is written as in the YAML field: one SPDX id (``Apache-2.0``), an SPDX
expression (``MIT OR Apache-2.0``, ``GPL-2.0-only WITH Classpath-exception-2.0``), or
one of the two declarations ``custom`` and ``closed``, which stand alone. Expressions
are read by the ``license-expression`` library against its SPDX index (the SPDX list
and ScanCode's ``LicenseRef-scancode-*`` ids), plus ``OpenRAIL``, which models use and
SPDX lacks. An expression is accepted when it parses and every id in it is known and
spelled as SPDX spells it (``MIT``, never ``mit``; ``GPL-2.0-only``, never the
deprecated ``GPL-2.0``).

Each id belongs to one class, from the most permissive to the least:

1. ``osi``: approved by the Open Source Initiative (``OSI_APPROVED``);
2. ``open-content``: open but not an OSI-approved software license: Creative Commons and
   Open Data Commons without non-commercial or no-derivatives terms, public-domain
   dedications (``OPEN_CONTENT``), and any other id the index calls permissive,
   copyleft or public domain;
3. ``restricted``: non-commercial, no-derivatives or use-based restrictions
   (``RESTRICTED``), and every other id of the index (source-available, proprietary
   but free, commercial, ...).

An expression's class follows its operators: for ``A AND B`` both licenses bind, so it
is the *most restrictive* class of the parts; for ``A OR B`` the user picks, so it is
the *most permissive*. ``WITH`` an exception keeps the class of the license (an
exception only grants more). ``custom`` and ``closed`` are their own classes, and
anything not accepted is ``unknown``. ``license_value`` applies the same rule to any
per-id number (ProbeScore's license axis).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from typing import Any, Literal

#: the two declarations that are no SPDX id; each stands alone, never in an expression
NON_SPDX = frozenset({"custom", "closed"})
#: ids that models use and the SPDX index lacks
EXTRA_IDS = frozenset({"OpenRAIL"})
#: ids the Open Source Initiative approved (SPDX's ``isOsiApproved``); data licenses such
#: as CC-BY are not software licenses and are not OSI-approved
OSI_APPROVED = frozenset({
    "0BSD", "AFL-1.1", "AFL-1.2", "AFL-2.0", "AFL-2.1", "AFL-3.0", "AGPL-3.0-only",
    "AGPL-3.0-or-later", "APL-1.0", "APSL-2.0", "Apache-1.1", "Apache-2.0", "Artistic-1.0",
    "Artistic-2.0", "BSD-1-Clause", "BSD-2-Clause", "BSD-2-Clause-Patent", "BSD-3-Clause",
    "BSD-3-Clause-LBNL", "BSL-1.0", "BlueOak-1.0.0", "CAL-1.0", "CDDL-1.0", "CECILL-2.1",
    "CNRI-Python", "CPAL-1.0", "CPL-1.0", "ECL-1.0", "ECL-2.0", "EFL-2.0", "EPL-1.0",
    "EPL-2.0", "EUPL-1.1", "EUPL-1.2", "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only",
    "GPL-3.0-or-later", "HPND", "ISC", "LGPL-2.0-only", "LGPL-2.0-or-later", "LGPL-2.1-only",
    "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later", "LPPL-1.3c", "MIT", "MIT-0",
    "MPL-1.0", "MPL-1.1", "MPL-2.0", "MS-PL", "MS-RL",
    "MirOS", "MulanPSL-2.0", "NCSA", "OFL-1.1", "OSL-3.0", "PostgreSQL", "Python-2.0",
    "UPL-1.0", "Unicode-DFS-2016", "Unlicense", "W3C", "ZPL-2.0", "ZPL-2.1", "Zlib",
})
#: open licenses for data and content (Creative Commons and Open Data Commons without
#: non-commercial or no-derivatives terms, public-domain dedications): accepted like
#: OSI-approved software licenses
OPEN_CONTENT = frozenset({
    "CC-BY-2.0", "CC-BY-3.0", "CC-BY-4.0", "CC-BY-SA-3.0", "CC-BY-SA-4.0", "CC0-1.0",
    "CDLA-Permissive-2.0", "ODC-By-1.0", "ODbL-1.0", "PDDL-1.0", "BSD-3-Clause-Clear",
    "WTFPL",
})
#: licenses that restrict use or derivatives (non-commercial, no-derivatives, use-based
#: restrictions): accepted, shown, and scored below every open license
RESTRICTED = frozenset({"CC-BY-NC-4.0", "CC-BY-NC-ND-4.0", "CC-BY-NC-SA-4.0", "CC-BY-ND-4.0",
                        "OpenRAIL"})
#: the index's categories (ScanCode's) of ids outside the tables above that are open
_OPEN_CATEGORIES = frozenset({"Permissive", "Public Domain", "Copyleft", "Copyleft Limited"})

LicenseKind = Literal["osi", "open-content", "restricted", "custom", "closed", "unknown"]
#: the classes an expression's ids can have, most permissive first
_RANKED: tuple[LicenseKind, ...] = ("osi", "open-content", "restricted")
_OPERATORS = {"AND", "OR", "WITH"}


class _Index:
    """The SPDX index of license-expression, read once (about 0.1 s) when first needed."""

    def __init__(self) -> None:
        import license_expression as le

        entries = [e for e in le.get_license_index() if e.get("spdx_license_key")]
        entries += [{"spdx_license_key": k, "category": "Proprietary Free",
                     "is_exception": False} for k in sorted(EXTRA_IDS)]
        self.licensing = le.build_spdx_licensing(entries)
        self.licenses = frozenset(e["spdx_license_key"] for e in entries
                                  if not e.get("is_exception"))
        self.exceptions = frozenset(e["spdx_license_key"] for e in entries
                                    if e.get("is_exception"))
        self.category = {e["spdx_license_key"]: str(e.get("category") or "") for e in entries}
        #: every spelling the index accepts (any case, deprecated aliases) -> the SPDX id
        self.spelling: dict[str, str] = {}
        for e in entries:
            for alias in e.get("other_spdx_license_keys") or ():
                self.spelling.setdefault(alias.lower(), e["spdx_license_key"])
        for e in entries:  # an id's own spelling wins over another's alias
            self.spelling[e["spdx_license_key"].lower()] = e["spdx_license_key"]


@functools.cache
def _index() -> _Index:
    return _Index()


def known_license_ids() -> frozenset[str]:
    """Every license id an expression may name (the SPDX index and ``EXTRA_IDS``; the
    exceptions that may follow ``WITH`` are not among them)."""
    return _index().licenses


def _id_rank(key: str) -> int:
    """The class of one known id, as its place in ``_RANKED``."""
    if key in OSI_APPROVED:
        return 0
    if key in OPEN_CONTENT:
        return 1
    if key in RESTRICTED:
        return 2
    return 1 if _index().category.get(key) in _OPEN_CATEGORIES else 2


@functools.lru_cache(maxsize=1024)
def _parse(value: str) -> Any:
    """The parsed expression; raises on a malformed one."""
    return _index().licensing.parse(value, validate=True, strict=True)


def _fold(node: Any, leaf: Callable[[str], float]) -> float:
    """``leaf`` over the ids of a parsed expression: the least over AND, the greatest
    over OR; ``WITH`` keeps its license's value."""
    import license_expression as le

    if isinstance(node, le.LicenseWithExceptionSymbol):
        return leaf(node.license_symbol.key)
    if isinstance(node, le.LicenseSymbol):
        return leaf(node.key)
    values = [_fold(arg, leaf) for arg in node.args]
    return min(values) if isinstance(node, le.AND) else max(values)


def license_value(value: str, leaf: Callable[[str], float]) -> float:
    """A number for a license from a number per id, higher meaning more permissive:
    the least of the parts over ``AND``, the greatest over ``OR`` (the module
    docstring's rule). ``custom``, ``closed`` and a value that is not an accepted
    expression are given to ``leaf`` whole.

    >>> score = {"MIT": 0.9, "GPL-3.0-only": 0.8, "CC-BY-NC-4.0": 0.4}.__getitem__
    >>> license_value("CC-BY-NC-4.0 OR (GPL-3.0-only AND MIT)", score)
    0.8
    """
    if value in NON_SPDX or check_license(value) is not None:
        return float(leaf(value))
    return float(_fold(_parse(value), leaf))


def license_kind(value: str) -> LicenseKind:
    """Which of probebench's license classes ``value`` belongs to (one policy for the
    entry check, the review and ProbeScore's license axis).

    >>> license_kind("MIT"), license_kind("MIT AND CC-BY-4.0"), license_kind("MIT OR closed")
    ('osi', 'open-content', 'unknown')
    >>> license_kind("CC-BY-NC-4.0 OR Apache-2.0"), license_kind("CC-BY-NC-4.0 AND MIT")
    ('osi', 'restricted')
    """
    if value == "custom":
        return "custom"
    if value == "closed":
        return "closed"
    if check_license(value) is not None:
        return "unknown"
    rank = -license_value(value, lambda key: -_id_rank(key))  # higher is more permissive
    return _RANKED[int(rank)]


def _suggest(value: str, known: frozenset[str]) -> str:
    lowered: dict[str, str] = {}
    for key in sorted(known):
        lowered.setdefault(key.lower(), key)
    close = difflib.get_close_matches(value.lower(), list(lowered), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(repr(lowered[c]) for c in close)}?" if close else ""


def _token_problem(token: str, after_with: bool) -> str | None:
    index = _index()
    known = index.exceptions if after_with else index.licenses
    what = "license exception" if after_with else "license"
    if token in known:
        return None
    if token in NON_SPDX:
        return (f"{token!r} stands alone, never inside an expression: the license is "
                f"either {token!r} or an SPDX expression")
    spelled = index.spelling.get(token.lower())
    if spelled is not None and spelled in known:
        return f"{what} {token!r} is spelled {spelled!r} in SPDX"
    if token.upper() in _OPERATORS:
        return f"the operator {token!r} is written {token.upper()!r}"
    other = index.licenses if after_with else index.exceptions
    if token in other:
        return (f"{token!r} is a license exception, used only after WITH" if not after_with
                else f"{token!r} is a license, not an exception; after WITH comes an "
                     "exception such as 'Classpath-exception-2.0'")
    extra = " nor 'custom' or 'closed'" if not after_with else ""
    return f"{what} {token!r} is not a known SPDX id{extra}{_suggest(token, known)}"


def check_license(value: str) -> str | None:
    """None when ``value`` is accepted, else the reason (with a suggestion).

    >>> check_license("MIT OR Apache-2.0") is None
    True
    >>> check_license("CC-BY4").split("; ")[-1]
    "did you mean 'CC-BY-4.0', 'CC-BY-SA-4.0', 'CC-BY-ND-4.0'?"
    """
    if value in NON_SPDX:
        return None
    if not value.strip():
        return "the license is empty; give an SPDX id or expression, custom or closed"
    whole = _index().spelling.get(value.strip().lower())
    if whole is not None and whole != value:  # "Apache 2.0", a deprecated id, a case slip
        return f"license {value!r} is spelled {whole!r} in SPDX"
    tokens = re.findall(r"[^\s()]+", value)
    if len(tokens) > 1 and not _OPERATORS & {t.upper() for t in tokens}:  # "Apache 2"
        return (f"license {value!r} is not a known SPDX id nor 'custom' or 'closed' (an id "
                f"has no spaces; several are joined by AND or OR)"
                f"{_suggest('-'.join(tokens), _index().licenses)}")
    for n, token in enumerate(tokens):
        if token in _OPERATORS:
            continue
        problem = _token_problem(token, after_with=n > 0 and tokens[n - 1] == "WITH")
        if problem is not None:
            return problem
    try:
        _parse(value)
    except Exception as exc:  # the library raises several types for a malformed expression
        return f"license {value!r} is not a valid SPDX expression ({exc})"
    return None


def all_of(*licenses: str) -> str:
    """The license of data made of parts under ``licenses``: every part binds, so the
    parts joined by ``AND`` (a compound part in parentheses, a repeated one once), whose
    class is the most restrictive of the parts (the module docstring's rule). ``closed``
    and ``custom`` stand alone: a part that is ``closed`` makes the whole ``closed``, else
    one that is ``custom`` makes it ``custom``.

    >>> all_of("Apache-2.0", "CC-BY-NC-4.0")
    'Apache-2.0 AND CC-BY-NC-4.0'
    >>> all_of("MIT OR Apache-2.0", "CC-BY-4.0", "MIT OR Apache-2.0")
    '(MIT OR Apache-2.0) AND CC-BY-4.0'
    >>> all_of("MIT AND CC-BY-NC-4.0", "CC-BY-NC-4.0")  # a plain AND is flattened
    'MIT AND CC-BY-NC-4.0'
    >>> license_kind(all_of("Apache-2.0", "CC-BY-NC-4.0"))
    'restricted'
    """
    if not licenses:
        raise ValueError("all_of needs at least one license")
    for declaration in ("closed", "custom"):
        if declaration in licenses:
            return declaration
    terms = [term.strip() for value in licenses
             for term in (value.split(" AND ") if re.fullmatch(r"[^()]*", value)
                          and not re.search(r"\s(OR|WITH)\s", value) else [value])]
    parts = list(dict.fromkeys(terms))
    if len(parts) == 1:
        return parts[0]
    return " AND ".join(f"({p})" if re.search(r"\s(AND|OR)\s", p) else p for p in parts)


__all__ = ["EXTRA_IDS", "NON_SPDX", "OPEN_CONTENT", "OSI_APPROVED", "RESTRICTED", "LicenseKind",
           "all_of", "check_license", "known_license_ids", "license_kind", "license_value"]
