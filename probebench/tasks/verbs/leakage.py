"""Leakage keys: two normal forms of a verb item's correct sentence.

* **exact**: the correct sentence (blank or inline form replaced by ``expected``),
  case-folded, punctuation removed, whitespace collapsed.
* **strict**: the exact form with every word that is not a verb form of the tables, a
  time-marker word or a function word replaced by ``<NOUN>``: two sentences that differ
  only in their content nouns (and adjectives) collide.

A test item leaks when either key equals that of any train or val sentence.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from probebench.hashing import sha256_bytes
from probebench.tasks.verbs.schema import BLANK, VerbItem, VerbTables

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)


def correct_sentence(item: VerbItem) -> str:
    if item.multiple_choice:
        return item.prompt.replace(BLANK, item.expected)
    inline = item.inline_candidates()
    if not inline:
        return item.prompt
    return re.sub(rf"(?<!\w){re.escape(inline[0])}(?!\w)", item.expected, item.prompt, count=1)


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFC", text).casefold())


@dataclass(frozen=True)
class LeakageKeys:
    exact: str
    strict: str


class Normaliser:
    def __init__(self, tables: VerbTables, lexicon: dict[str, object]) -> None:
        keep = set(tables.all_forms)
        markers = lexicon.get("time_markers", {})
        assert isinstance(markers, dict)
        for per_tense in markers.values():
            for phrases in per_tense.values():
                for phrase in phrases:
                    keep.update(words(phrase))
        function_words = lexicon.get("function_words", {})
        assert isinstance(function_words, dict)
        for lang_words in function_words.values():
            keep.update(w.casefold() for w in lang_words)
        self.keep = keep

    def keys(self, item: VerbItem) -> LeakageKeys:
        tokens = words(correct_sentence(item))
        exact = " ".join(tokens)
        strict = " ".join(t if t in self.keep else "<NOUN>" for t in tokens)
        return LeakageKeys(sha256_bytes(exact.encode()), sha256_bytes(strict.encode()))
