"""One line of the verb-grammar files: a ``VerbItem``, and the verb tables.

Two prompt forms:

* **multiple choice**: ``prompt`` holds ``___`` once; ``candidates`` (2-4) fill it;
  ``expected`` is the right one. ``label`` is ``correct`` (one right answer) or
  ``ambiguous`` (more than one acceptable, e.g. out of scope: not penalised).
* **classification**: ``prompt`` shows one candidate inline; ``label`` says whether the
  sentence as written is ``correct`` or ``incorrect`` (or ``ambiguous``); ``expected``
  is the form that would be right.

A line is never edited once used: a wrong one is marked ``deprecated`` (kept, not
scored), with its ``deprecation_reason`` and the id of the line that replaces it
(``replaced_by``), when there is one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.errors import InputError, field_problem
from probebench.tasks.jsonl import jsonl_objects

LANGUAGES = ("en", "es")
TENSES = ("infinitive", "present_simple", "past_simple", "past_participle", "future")
PERSONS = ("1sg", "2sg", "3sg")
LABELS = ("correct", "incorrect", "ambiguous")
CATEGORIES = ("core", "adversarial")
#: the six adversarial categories
REASON_CODES = ("over_regularisation", "wrong_person", "wrong_tense_marker",
                "auxiliary_mismatch", "cross_lingual_form", "out_of_scope")
BLANK = "___"


class VerbItem(BaseModel):
    """One verb-grammar question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    language: Literal["en", "es"]
    verb: str = Field(min_length=1, description="Infinitive of the target verb.")
    regularity: Literal["regular", "irregular"]
    tense: Literal["infinitive", "present_simple", "past_simple", "past_participle", "future"]
    person: Literal["1sg", "2sg", "3sg"]
    prompt: str = Field(min_length=1, description="With ___ (multiple choice) or inline.")
    candidates: list[str] = Field(min_length=2, max_length=4)
    expected: str
    label: Literal["correct", "incorrect", "ambiguous"]
    category: Literal["core", "adversarial"]
    reason_code: str | None = None
    explanation: str | None = None
    source: Literal["hand", "generated"] | None = None
    deprecated: bool = False
    deprecation_reason: str | None = Field(
        default=None, min_length=1,
        description="Why a deprecated line left the scored set (e.g. its second right answer).")
    replaced_by: str | None = Field(
        default=None, min_length=1,
        description="The id of the live line that replaces a deprecated one.")

    @property
    def multiple_choice(self) -> bool:
        return BLANK in self.prompt

    def inline_candidates(self) -> list[str]:
        """Candidates written in a classification prompt as whole words."""
        import re

        return [c for c in self.candidates
                if re.search(rf"(?<!\w){re.escape(c)}(?!\w)", self.prompt)]


@dataclass(frozen=True)
class Line:
    path: Path
    number: int
    item: VerbItem

    @property
    def where(self) -> str:
        return f"{self.path}:{self.number} ({self.item.id})"


def read_verb_file(path: Path) -> list[Line]:
    """Parse a verb-grammar JSONL file; errors name file, line and field."""
    out = []
    for number, obj in jsonl_objects(path):
        try:
            item = VerbItem.model_validate(obj)
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: {field_problem(exc, '(line)')}") from None
        out.append(Line(path, number, item))
    return out


@dataclass(frozen=True)
class VerbTables:
    """``data/verbs/verbs.json``: the 40 target verbs and their forms."""

    raw: dict[str, Any]

    @classmethod
    def read(cls, path: Path) -> VerbTables:
        try:
            raw = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read the verb tables ({exc})") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("verbs"), dict):
            raise InputError(f"{path}: expected an object with 'verbs'")
        return cls(raw)

    def verbs(self, language: str) -> dict[str, dict[str, Any]]:
        verbs: dict[str, dict[str, Any]] = self.raw["verbs"].get(language, {})
        return verbs

    def form(self, language: str, verb: str, tense: str, person: str) -> str:
        entry = self.verbs(language)[verb][tense]
        return str(entry[PERSONS.index(person)] if isinstance(entry, list) else entry)

    @cached_property
    def all_forms(self) -> set[str]:
        """Every word of every form of every target verb and auxiliary (lower case)."""
        words: set[str] = set()
        for lang in LANGUAGES:
            for entry in self.verbs(lang).values():
                for tense in TENSES:
                    value = entry[tense]
                    for form in value if isinstance(value, list) else [value]:
                        words.update(form.lower().split())
        for lang_aux in self.raw.get("auxiliaries", {}).values():
            for forms in lang_aux.values():
                words.update(f.lower() for f in forms)
        return words
