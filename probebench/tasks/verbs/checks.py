"""``probebench tasks check-verbs``: every rule of the verb-grammar probe set.

Each failure names the offending file and line. The task refuses to load while any
check fails. Deprecated items are kept and checked for form, but count toward neither
coverage nor metrics.

One rule depends on the task: a line with two right answers (a second candidate that
its sentence also takes, :mod:`probebench.tasks.verbs.ambiguity`). With
``ambiguity="error"`` (a task's ``options: {ambiguity_check: error}``, as
``verb_grammar_v2`` sets) such a live line is a failure; with ``"warn"`` (the default,
for the frozen ``verb_grammar``, whose files may not change) it is listed as a warning
and the task still loads. Deprecated and ``ambiguous`` lines are exempt.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from probebench.errors import InputError
from probebench.tasks.verbs.ambiguity import second_answers
from probebench.tasks.verbs.leakage import Normaliser
from probebench.tasks.verbs.schema import (
    BLANK,
    LANGUAGES,
    PERSONS,
    REASON_CODES,
    TENSES,
    Line,
    VerbTables,
    read_verb_file,
)

MIN_PER_LANGUAGE = 30
MIN_PER_REGULARITY = 30
MIN_PER_TENSE = 10
MIN_PER_PERSON = 15
MIN_ADVERSARIAL = 20
MIN_PER_REGULAR_VERB = 1
MIN_PER_IRREGULAR_VERB = 2
ADVERSARIAL_PER_CATEGORY = (3, 5)
#: what a line with two right answers is: a failure, or a warning (a frozen task)
AMBIGUITY_MODES = ("error", "warn")


@dataclass
class VerbFiles:
    probes: Path
    adversarial: Path
    train: Path
    val: Path
    verbs: Path
    lexicon: Path


@dataclass
class VerbCheckReport:
    failures: list[str] = field(default_factory=list)
    #: lines with two right answers, in a task that lists them rather than failing
    warnings: list[str] = field(default_factory=list)
    coverage: dict[str, Counter[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


def _contains_words(haystack: str, needle: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def check_line(line: Line, tables: VerbTables) -> list[str]:
    """Rules every line must follow, in any file."""
    item, where = line.item, line.where
    out = []
    verbs = tables.verbs(item.language)
    if item.verb not in verbs:
        out.append(f"{where}: verb {item.verb!r} is not one of the {len(verbs)} target verbs "
                   f"of {item.language!r}")
    elif verbs[item.verb]["regularity"] != item.regularity:
        out.append(f"{where}: {item.verb!r} is {verbs[item.verb]['regularity']}, the line says "
                   f"{item.regularity}")
    if len(set(item.candidates)) != len(item.candidates):
        out.append(f"{where}: candidates repeat: {item.candidates}")
    if item.expected not in item.candidates:
        out.append(f"{where}: expected {item.expected!r} is not among the candidates")
    if item.multiple_choice:
        if item.prompt.count(BLANK) != 1:
            out.append(f"{where}: a multiple-choice prompt holds {BLANK} exactly once")
        if item.label == "incorrect":
            out.append(f"{where}: multiple-choice lines are 'correct' or 'ambiguous'; "
                       "'incorrect' is for classification lines")
    else:
        inline = item.inline_candidates()
        if len(inline) != 1:
            out.append(f"{where}: a classification prompt shows exactly one candidate inline; "
                       f"found {inline or 'none'}")
        elif item.label == "correct" and inline[0] != item.expected:
            out.append(f"{where}: labelled correct but shows {inline[0]!r}, not the expected "
                       f"{item.expected!r}")
        elif item.label == "incorrect" and inline[0] == item.expected:
            out.append(f"{where}: labelled incorrect but shows the expected form")
    if item.label != "ambiguous" and item.verb in verbs:
        form = tables.form(item.language, item.verb, item.tense, item.person)
        if not _contains_words(item.expected, form):
            out.append(f"{where}: expected {item.expected!r} does not contain the {item.tense} "
                       f"{item.person} form {form!r} of {item.verb!r}")
    if item.category == "adversarial" and item.reason_code not in REASON_CODES:
        out.append(f"{where}: adversarial lines need a reason_code in "
                   f"{', '.join(REASON_CODES)}; found {item.reason_code!r}")
    for name in ("deprecation_reason", "replaced_by"):
        if getattr(item, name) is not None and not item.deprecated:
            out.append(f"{where}: {name} is for deprecated lines; this one is live")
    return out


def check_single_answer(line: Line, tables: VerbTables) -> list[str]:
    """A live line whose sentence takes a second candidate too (none for deprecated or
    ``ambiguous`` lines): one message per second right answer."""
    return [f"{line.where}: two right answers: {found.describe()}"
            for found in second_answers(line.item, tables)]


def _check_replacements(lines: Sequence[Line], report: VerbCheckReport) -> None:
    """``replaced_by`` names a live line of the same verb, tense and person, so the
    replacement keeps the coverage of the line it replaces."""
    by_id = {ln.item.id: ln.item for ln in lines}
    for line in lines:
        item = line.item
        if item.replaced_by is None:
            continue
        new = by_id.get(item.replaced_by)
        if new is None or new.deprecated:
            report.failures.append(f"{line.where}: replaced_by {item.replaced_by!r} is not a "
                                   "live line of the evaluation files")
        elif (new.language, new.verb, new.tense, new.person) != (
                item.language, item.verb, item.tense, item.person):
            report.failures.append(f"{line.where}: replaced_by {item.replaced_by!r} is "
                                   f"{new.language}:{new.verb} {new.tense} {new.person}; a "
                                   "replacement keeps the verb, tense and person")


def _coverage(lines: Sequence[Line], tables: VerbTables, report: VerbCheckReport) -> None:
    live = [ln.item for ln in lines if not ln.item.deprecated]
    cov: dict[str, Counter[str]] = {
        "language": Counter(i.language for i in live),
        "regularity": Counter(i.regularity for i in live),
        "tense": Counter(i.tense for i in live),
        "person": Counter(i.person for i in live),
        "category": Counter(i.category for i in live),
        "reason_code": Counter(i.reason_code or "none" for i in live
                               if i.category == "adversarial"),
        "verb": Counter(f"{i.language}:{i.verb}" for i in live),
    }
    report.coverage = cov
    minimums = [("language", LANGUAGES, MIN_PER_LANGUAGE),
                ("regularity", ("regular", "irregular"), MIN_PER_REGULARITY),
                ("tense", TENSES, MIN_PER_TENSE), ("person", PERSONS, MIN_PER_PERSON)]
    for name, values, minimum in minimums:
        for value in values:
            if cov[name][value] < minimum:
                report.failures.append(f"coverage: {name} {value} has {cov[name][value]} "
                                       f"probes; at least {minimum} are required")
    if cov["category"]["adversarial"] < MIN_ADVERSARIAL:
        report.failures.append(f"coverage: {cov['category']['adversarial']} adversarial "
                               f"probes; at least {MIN_ADVERSARIAL} are required")
    low, high = ADVERSARIAL_PER_CATEGORY
    for code in REASON_CODES:
        n = cov["reason_code"][code]
        if not low <= n <= high:
            report.failures.append(f"coverage: adversarial category {code} has {n} probes; "
                                   f"{low} to {high} are required")
    for lang in LANGUAGES:
        for verb, entry in tables.verbs(lang).items():
            need = MIN_PER_REGULAR_VERB if entry["regularity"] == "regular" \
                else MIN_PER_IRREGULAR_VERB
            have = cov["verb"][f"{lang}:{verb}"]
            if have < need:
                report.failures.append(f"coverage: {entry['regularity']} verb {lang}:{verb} "
                                       f"has {have} probes; at least {need} are required")


def check_verbs(files: VerbFiles, *, ambiguity: str = "warn") -> VerbCheckReport:
    """Run every rule; never raises for rule breaks (they are listed), only for I/O.
    ``ambiguity``: ``"error"`` lists lines with two right answers as failures, ``"warn"``
    as warnings."""
    import json

    if ambiguity not in AMBIGUITY_MODES:
        raise InputError(f"ambiguity {ambiguity!r}: expected one of "
                         f"{', '.join(AMBIGUITY_MODES)}")
    report = VerbCheckReport()
    tables = VerbTables.read(files.verbs)
    try:
        lexicon = json.loads(files.lexicon.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{files.lexicon}: cannot read the lexicon ({exc})") from None
    for lang in LANGUAGES:
        regs = Counter(v["regularity"] for v in tables.verbs(lang).values())
        if regs != Counter({"regular": 12, "irregular": 8}):
            report.failures.append(f"{files.verbs}: {lang} declares {dict(regs)}; the set needs "
                                   "12 regular and 8 irregular verbs")
    parsed: dict[str, list[Line]] = {}
    for role, path in (("probes", files.probes), ("adversarial", files.adversarial),
                       ("train", files.train), ("val", files.val)):
        try:
            parsed[role] = read_verb_file(path)
        except InputError as exc:
            report.failures.append(str(exc))
            parsed[role] = []
    seen: dict[str, str] = {}
    for role, lines in parsed.items():
        for line in lines:
            if line.item.id in seen:
                report.failures.append(f"{line.where}: id already used at {seen[line.item.id]}")
            seen.setdefault(line.item.id, f"{line.path}:{line.number}")
            report.failures.extend(check_line(line, tables))
            found = check_single_answer(line, tables)
            (report.failures if ambiguity == "error" else report.warnings).extend(found)
            wanted = "adversarial" if role == "adversarial" else "core"
            if line.item.category != wanted:
                report.failures.append(f"{line.where}: category {line.item.category!r} in the "
                                       f"{role} file, expected {wanted!r}")
            if role in ("train", "val") and line.item.source != "generated":
                report.failures.append(f"{line.where}: {role} lines have source 'generated'")
    evaluation = parsed["probes"] + parsed["adversarial"]
    _check_replacements(evaluation, report)
    report.counts = {role: len(lines) for role, lines in parsed.items()}
    _coverage(evaluation, tables, report)
    norm = Normaliser(tables, lexicon)
    exact: dict[str, str] = {}
    strict: dict[str, str] = {}
    for line in parsed["train"] + parsed["val"]:
        keys = norm.keys(line.item)
        exact.setdefault(keys.exact, f"{line.path}:{line.number}")
        strict.setdefault(keys.strict, f"{line.path}:{line.number}")
    for line in evaluation:
        keys = norm.keys(line.item)
        if keys.exact in exact:
            report.failures.append(f"{line.where}: leakage: the same sentence is in "
                                   f"{exact[keys.exact]}")
        elif keys.strict in strict:
            report.failures.append(f"{line.where}: leakage: equal up to content nouns to "
                                   f"{strict[keys.strict]}")
    return report
