"""Verb items with two right answers: a second candidate that the sentence also takes.

A multiple-choice item is scored as if only ``expected`` fits its blank; when another
candidate fits too, a probe that prefers it is marked wrong for a grammatical sentence.
:func:`second_answers` finds such candidates from the sentence's cues, which are word
lists, not a parser, and err towards flagging (a flagged item is read by a person, then
reworded under a new id or deprecated):

* **Tense.** A *past anchor* ("yesterday", "last week", "two days ago", "in 1998";
  "ayer", "anoche", "la semana pasada", "hace dos días") lets only the past simple fit.
  A *future anchor* ("tomorrow", "next month", "in two weeks" opening the sentence;
  "mañana", "el año que
  viene", "dentro de un año", "el próximo lunes") lets the future and the present fit:
  the scheduled present ("Next month I see my parents", "Mañana voy al dentista"). A
  *now anchor* ("now", "these days"; "ahora", "hoy en día") lets the present and the
  future fit. Without an anchor (a frequency adverb alone, such as "every morning", "on
  Sundays", "usually", "siempre", "cada día", "todos los días", or no time marker at all)
  every finite tense fits: the habitual past ("Every morning I wrote three pages") and
  the preterite of a closed period ("Siempre dije la verdad a mis amigos") are
  grammatical. A present perfect ("has walked", "ha caminado") fits where no past or
  future anchor is.
* **Person.** English compares forms, so ``you`` (one form for the singular and the
  plural) never makes two candidates. Spanish drops subject pronouns: a 1sg or 2sg item
  without ``yo`` or ``tú`` lets the form of every person fit ("Cada noche pone el
  despertador": she sets it), and so does a 3sg item with nothing before its blank but
  time words and clitics ("Ayer ___ una tarta": *hice* fits as well as *hizo*); a 3sg
  item with a word before the blank is taken to have its subject there ("Mi tía ___").
* **Aspect** (English): a progressive ("was walking") of a fitting tense and person, and
  an ``-ing`` candidate right after a form of *be*, or after a verb that takes a gerund
  (an infinitive item whose blank follows no ``to`` and no modal).

Only items whose expected form is a finite tense (present, past, future) are read for
tense and person; infinitive and participle blanks sit in frames that fix the form. A
classification line labelled ``incorrect`` is read the same way, with the form it shows
as the one candidate: the label is wrong when that form fits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from probebench.tasks.verbs.schema import BLANK, PERSONS, VerbItem, VerbTables

FINITE = ("present_simple", "past_simple", "future")

_EN_TIME = ("night|week|weekend|month|year|decade|century|winter|summer|spring|autumn|fall|"
            "term|semester|season|time|monday|tuesday|wednesday|thursday|friday|saturday|"
            "sunday|christmas|easter|january|february|march|april|may|june|july|august|"
            "september|october|november|december")
_EN_COUNT = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|\d+)"
_EN_UNIT = r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
_ES_COUNT = (r"(?:un|una|unos|unas|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|"
             r"varios|varias|\d+)")
_ES_UNIT = r"(?:segundos?|minutos?|horas?|días?|semanas?|mes|meses|años?)"

#: per language: the cues of each kind, as case-insensitive patterns
CUES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "past": (r"\byesterday\b", rf"(?<!the )\blast (?:{_EN_TIME})(?:'s)?\b",
                 r"\bago\b", r"\bbefore last\b", r"\bback in\b",
                 r"\bin (?:1\d{3}|20[01]\d)\b", r"\bthe other day\b",
                 r"\bearlier (?:today|this \w+)\b"),
        "future": (r"\btomorrow\b", rf"(?<!the )\bnext (?:{_EN_TIME})\b",
                   rf"^in {_EN_COUNT} (?:\w+ )?{_EN_UNIT}\b",
                   r"\blater (?:today|tonight|this \w+)\b", r"\bthis coming \w+\b"),
        "now": (r"\b(?:right )?now\b", r"\bat the moment\b", r"\bthese days\b",
                r"\bnowadays\b", r"\bcurrently\b"),
        "habitual": (r"\b(?:almost )?every(?: \w+)?\b", r"\beach \w+\b", r"\busually\b",
                     r"\balways\b", r"\boften\b", r"\bsometimes\b", r"\bnormally\b",
                     r"\bgenerally\b", r"\brarely\b", r"\bnever\b",
                     r"\bon (?:\w+ )?(?:mondays|tuesdays|wednesdays|thursdays|fridays|"
                     r"saturdays|sundays|weekdays|weekends|mornings|evenings|afternoons|"
                     r"nights)\b", r"\bat weekends\b", r"\bmost \w+s\b",
                     r"\b(?:once|twice|\w+ times) a \w+\b"),
    },
    "es": {
        "past": (r"\bayer\b", r"\banoche\b", r"\banteayer\b", r"\banteanoche\b",
                 r"\bpasad[oa]s?\b(?! mañana)",
                 rf"\bhace {_ES_COUNT} (?:\w+ )?{_ES_UNIT}\b",
                 r"\bhace (?:mucho |poco )?tiempo\b(?! que)", r"\bel otro día\b",
                 r"\ben (?:1\d{3}|20[01]\d)\b"),
        "future": (r"\bpasado mañana\b", r"\bpróxim[oa]s?\b", r"\bque viene\b",
                   r"\bdentro de\b", rf"^en {_ES_COUNT} {_ES_UNIT}\b"),
        "now": (r"\bahora\b", r"\ben este momento\b", r"\bhoy en día\b", r"\bactualmente\b",
                r"\bestos días\b"),
        "habitual": (r"\bsiempre\b", r"\bcada \w+\b", r"\btod[oa]s l[oa]s \w+\b",
                     r"\blos (?:lunes|martes|miércoles|jueves|viernes|sábados|domingos|"
                     r"fines de semana)\b", r"\bnormalmente\b", r"\bhabitualmente\b",
                     r"\ba menudo\b", r"\ba veces\b", r"\bnunca\b",
                     r"\b\w+ veces (?:por|al|a la) \w+\b",
                     r"\bpor las (?:mañanas|tardes|noches)\b"),
    },
}
#: the words before "mañana" that make it "the morning", not "tomorrow"
_ES_MORNING = {"la", "esta", "cada", "una", "toda", "esa", "aquella", "misma", "buena",
               "media", "otra", "próxima", "siguiente", "cualquier", "de"}
_EN_BE = {"am", "is", "are", "was", "were", "be", "been", "being", "'m", "'s", "'re"}
_EN_BE_PROGRESSIVE = {"present_simple": ("am", "are", "is"),
                      "past_simple": ("was", "were", "was"),
                      "future": ("will be", "will be", "will be")}
_EN_NO_GERUND = {"to", "can", "could", "will", "would", "shall", "should", "may", "might",
                 "must", "let", "make", "help", "not", "'ll", "'d"}
_SUBJECT_PRONOUN = {"es": {"1sg": ("yo",), "2sg": ("tú", "vos")}}
#: Spanish words before a blank that are no subject (clitics, negation, adverbs)
_ES_NO_SUBJECT = {"no", "me", "te", "se", "le", "les", "lo", "la", "los", "las", "nos", "os",
                  "ya", "también", "tampoco", "hoy", "siempre", "nunca", "casi", "y", "pero",
                  "luego", "después", "entonces", "por", "fin", "todavía", "aún"}


@dataclass(frozen=True)
class Context:
    """What a sentence's time cues allow: ``tenses`` (of :data:`FINITE`), ``perfect``
    (whether a present perfect fits), and the cue words found, by kind."""

    tenses: frozenset[str]
    perfect: bool
    found: dict[str, list[str]]

    def why(self, tense: str) -> str:
        """Why ``tense`` fits, in words (for a report line)."""
        def quoted(kind: str) -> str:
            return ", ".join(f"'{w}'" for w in self.found.get(kind, []))

        if self.found.get("past") and self.found.get("future"):
            return f"the sentence has both past ({quoted('past')}) and future " \
                   f"({quoted('future')}) cues"
        if self.found.get("past"):
            return f"the past anchor {quoted('past')} allows it"
        if self.found.get("future"):
            return (f"the future anchor {quoted('future')} also takes the present "
                    "(a scheduled future)" if tense == "present_simple"
                    else f"the future anchor {quoted('future')} allows it")
        if self.found.get("now"):
            return f"the anchor {quoted('now')} allows it"
        if self.found.get("habitual"):
            return (f"the frequency adverb {quoted('habitual')} fits every tense and no "
                    "past or present anchor fixes one")
        return "no time marker fixes the tense"


def _cues(text: str, language: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for kind, patterns in CUES[language].items():
        spans: list[tuple[int, int]] = []
        for pattern in patterns:
            for m in re.finditer(pattern, text, re.IGNORECASE):
                if not any(a <= m.start() and m.end() <= b for a, b in spans):
                    spans.append(m.span())
                    found.setdefault(kind, []).append(m.group(0))
    if language == "es":
        for m in re.finditer(r"\bmañana\b", text, re.IGNORECASE):
            before = text[:m.start()].split()
            previous = before[-1].casefold() if before else ""
            if previous == "pasado":
                continue  # "pasado mañana" is a future cue of its own
            if previous not in _ES_MORNING:
                found.setdefault("future", []).append(m.group(0))
    return {kind: words for kind, words in found.items() if words}


def context(text: str, language: str) -> Context:
    """The tenses that the time cues of ``text`` (a sentence) allow."""
    found = _cues(text, language)
    past, future, now = (bool(found.get(k)) for k in ("past", "future", "now"))
    if past and not future:
        tenses = {"past_simple"}
    elif future and not past:
        tenses = {"future", "present_simple"}
    elif now and not past:
        tenses = {"present_simple", "future"}
    else:  # no anchor, a frequency adverb alone, or cues that disagree
        tenses = set(FINITE)
    return Context(frozenset(tenses), not past and not future, found)


@dataclass(frozen=True)
class SecondAnswer:
    """A candidate other than ``expected`` that fits the sentence too."""

    candidate: str
    reading: str  # e.g. "past_simple 1sg of 'write'"
    reason: str

    def describe(self) -> str:
        return f"{self.candidate!r} also fits ({self.reading}: {self.reason})"


def _words(text: str) -> list[str]:
    return [w.casefold() for w in re.findall(r"[^\W\d_]+", text)]


def _persons(item: VerbItem, frame: str) -> tuple[str, ...]:
    """The persons whose forms fit the blank's subject."""
    if item.language != "es":
        return (item.person,)
    pronouns = _SUBJECT_PRONOUN["es"].get(item.person)
    if pronouns is not None:
        return (item.person,) if set(_words(frame)) & set(pronouns) else PERSONS
    before = frame[:frame.index(BLANK)]
    for cue in (w for words in _cues(before, "es").values() for w in words):
        before = before.replace(cue, " ")
    return (item.person,) if set(_words(before)) - _ES_NO_SUBJECT else PERSONS


def _readings(item: VerbItem, tables: VerbTables, ctx: Context, persons: tuple[str, ...]
              ) -> dict[str, tuple[str, str]]:
    """Every form that fits -> (its reading, why it fits)."""
    entry = tables.verbs(item.language).get(item.verb)
    if entry is None:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for tense in FINITE:
        if tense not in ctx.tenses:
            continue
        for person in persons:
            form = tables.form(item.language, item.verb, tense, person)
            reason = ctx.why(tense)
            if person != item.person:
                reason = (f"no subject pronoun, so the {person} form fits (Spanish drops "
                          f"it); {reason}")
            out.setdefault(form, (f"{tense} {person} of {item.verb!r}", reason))
            if item.language == "en":
                be = _EN_BE_PROGRESSIVE[tense][PERSONS.index(person)]
                ing = _ing(item.verb)
                out.setdefault(f"{be} {ing}", (f"{tense} progressive {person} of "
                                               f"{item.verb!r}", reason))
    if ctx.perfect:
        aux = tables.raw.get("auxiliaries", {}).get(item.language, {})
        forms = next(iter(aux.values()), None)
        if forms:
            for person in persons:
                form = f"{forms[PERSONS.index(person)]} {entry['past_participle']}"
                out.setdefault(form, (f"present perfect {person} of {item.verb!r}",
                                      "no past or future anchor excludes it"))
    return out


def _ing(verb: str) -> str:
    if verb in ("run", "begin", "swim", "stop", "sit", "get", "put"):
        return verb + verb[-1] + "ing"
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    return (verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb) + "ing"


def _aspect(item: VerbItem, frame: str, candidate: str) -> str | None:
    """Why an English ``-ing`` candidate fits the blank (None when it does not)."""
    if item.language != "en" or not candidate.endswith("ing") or " " in candidate:
        return None
    before = frame[:frame.index(BLANK)].split()
    previous = before[-1].casefold() if before else ""
    if previous in _EN_BE:
        return f"after {previous!r} the progressive fits"
    if item.tense == "infinitive" and previous not in _EN_NO_GERUND:
        return f"after {previous!r}, with no 'to', a gerund fits"
    return None


def frame_and_candidates(item: VerbItem) -> tuple[str, list[str]] | None:
    """(the sentence with its blank, the candidates to read) for a multiple-choice item,
    or a classification line labelled incorrect (the form it shows); None otherwise."""
    if item.multiple_choice:
        return item.prompt, [c for c in item.candidates if c != item.expected]
    if item.label != "incorrect":
        return None
    inline = item.inline_candidates()
    if len(inline) != 1 or inline[0] == item.expected:
        return None
    shown = inline[0]
    frame = re.sub(rf"(?<!\w){re.escape(shown)}(?!\w)", BLANK, item.prompt, count=1)
    return frame, [shown]


def second_answers(item: VerbItem, tables: VerbTables) -> list[SecondAnswer]:
    """The candidates other than ``expected`` that fit ``item``'s sentence too (for a
    classification line labelled incorrect: its shown form, when that fits). Empty for
    an ambiguous or deprecated item, which are not scored."""
    if item.label == "ambiguous" or item.deprecated:
        return []
    framed = frame_and_candidates(item)
    if framed is None:
        return []
    frame, candidates = framed
    out: list[SecondAnswer] = []
    readings: dict[str, tuple[str, str]] = {}
    if item.tense in FINITE:
        ctx = context(frame.replace(BLANK, " "), item.language)
        readings = _readings(item, tables, ctx, _persons(item, frame))
    for cand in candidates:
        if cand in readings:
            reading, reason = readings[cand]
            out.append(SecondAnswer(cand, reading, reason))
            continue
        why = _aspect(item, frame, cand)
        if why is not None:
            out.append(SecondAnswer(cand, f"-ing form of {item.verb!r}", why))
    return out
