"""Deterministic train/val sentences for the verb-grammar task.

``generate(seed)`` draws (language, verb, tense, person, subject, complement, time
marker) with ``random.Random(seed)`` from the task's lexicon (``data/verbs/lexicon.json``
in the packaged catalog) and the verb tables, builds a classification sentence, and
makes half of them wrong with a form that is wrong *for that frame* (so the label is
never in doubt):

=============== ====================================================================
tense           wrong forms drawn from
=============== ====================================================================
present_simple  the present forms of the other persons ("I walks", "yo vive")
past_simple     the present and future forms of the same person ("Yesterday I walk")
future          the past form of the same person ("Tomorrow I walked")
past_participle the infinitive, and the simple past when it differs ("has went")
infinitive      the past and the 3sg present ("wants to walked")
=============== ====================================================================

Irregular English verbs also get over-regularised pasts and participles ("goed").
Sentences equal to an evaluation probe under either leakage key, and repeats, are
skipped. The same seed gives byte-identical files.

A wrong form is wrong only if the time marker excludes it: with "soon" (``pronto``) a
narrative past ("Soon our coach walked along the beach") is grammatical, so a line
labelled incorrect would have two right answers. The lexicon decides which markers a
task uses (``verb_grammar_v2``'s has anchors only); with ``single_answer`` (a task whose
``ambiguity_check`` is ``error``) the generator also skips any line that
``probebench.tasks.verbs.ambiguity`` flags, so it never writes what the task's checks
refuse. ``verb_grammar``'s files are generated without it, as they were registered.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from probebench.hashing import atomic_write_bytes
from probebench.tasks.verbs.ambiguity import second_answers
from probebench.tasks.verbs.leakage import Normaliser
from probebench.tasks.verbs.schema import (
    LANGUAGES,
    PERSONS,
    TENSES,
    VerbItem,
    VerbTables,
    read_verb_file,
)

AUX = {"en": ["have", "have", "has"], "es": ["he", "has", "ha"]}


def _wrong_forms(tables: VerbTables, lang: str, verb: str, tense: str, person: str) -> list[str]:
    entry = tables.verbs(lang)[verb]
    p = PERSONS.index(person)
    correct = tables.form(lang, verb, tense, person)
    if tense == "present_simple":
        options = list(entry["present_simple"])
    elif tense == "past_simple":
        options = [entry["present_simple"][p], entry["future"][p]]
    elif tense == "future":
        options = [entry["past_simple"][p]]
    elif tense == "past_participle":
        options = [entry["infinitive"], entry["past_simple"][p]]
    else:
        options = [entry["past_simple"][2], entry["present_simple"][2]]
    if lang == "en" and entry["regularity"] == "irregular" and tense in ("past_simple",
                                                                        "past_participle"):
        options.append(entry["infinitive"] + ("d" if entry["infinitive"].endswith("e")
                                              else "ed"))
    return sorted({o for o in options if o != correct})


def _sentence(lex: dict[str, Any], lang: str, tense: str, person: str, subject: str,
              form: str, complement: str, marker: str) -> tuple[str, str]:
    """(sentence, the form as written), capitalised, with a final full stop."""
    p = PERSONS.index(person)
    if tense == "past_participle":
        core = f"{subject} {marker} {AUX[lang][p]} {form} {complement}" if lang == "es" else \
            f"{subject} {AUX[lang][p]} {marker} {form} {complement}"
    elif tense == "infinitive":
        want = lex["want"][lang][p]
        core = f"{subject} {want} {'to ' if lang == 'en' else ''}{form} {complement}"
    else:
        core = f"{marker} {subject} {form} {complement}"
    core = core.strip()
    return core[0].upper() + core[1:] + ".", form


def generate(tables: VerbTables, lexicon: dict[str, Any], *, seed: int, n_train: int,
             n_val: int, exclude: list[VerbItem],
             exclude_exact: list[VerbItem] | None = None, single_answer: bool = False
             ) -> tuple[list[VerbItem], list[VerbItem]]:
    """``exclude``: items no sentence may equal under either leakage key (the test set);
    ``exclude_exact``: items no sentence may repeat exactly (e.g. train/val for a holdout);
    ``single_answer``: skip lines with two right answers (the task's ambiguity check is
    an error)."""
    rng = random.Random(seed)
    norm = Normaliser(tables, lexicon)
    banned = {k for item in exclude for k in (norm.keys(item).exact, norm.keys(item).strict)}
    banned |= {norm.keys(item).exact for item in exclude_exact or []}
    out: list[VerbItem] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < n_train + n_val:
        attempts += 1
        if attempts > 200 * (n_train + n_val):
            raise RuntimeError("the lexicon is too small for this many distinct sentences")
        lang = rng.choice(LANGUAGES)
        verb = rng.choice(sorted(tables.verbs(lang)))
        tense = rng.choice(TENSES)
        person = rng.choice(PERSONS)
        subject = rng.choice(lexicon["subjects"][lang][person])
        complement = rng.choice(lexicon["complements"][lang][verb])
        markers = lexicon["time_markers"][lang][tense] or [""]
        marker = rng.choice(markers)
        correct = tables.form(lang, verb, tense, person)
        wrong_options = _wrong_forms(tables, lang, verb, tense, person)
        make_wrong = rng.random() < 0.5 and bool(wrong_options)
        wrong = rng.choice(wrong_options) if wrong_options else correct
        shown = wrong if make_wrong else correct
        sentence, _ = _sentence(lexicon, lang, tense, person, subject, shown, complement,
                                marker)
        if sentence in seen:
            continue
        candidates = sorted({correct, wrong}) if wrong != correct else [correct, wrong + "x"]
        item = VerbItem.model_validate({
            "id": "pending", "language": lang, "verb": verb,
            "regularity": tables.verbs(lang)[verb]["regularity"], "tense": tense,
            "person": person, "prompt": sentence, "candidates": candidates,
            "expected": correct, "label": "incorrect" if make_wrong else "correct",
            "category": "core", "source": "generated"})
        keys = norm.keys(item)
        if keys.exact in banned or keys.strict in banned:
            continue
        if single_answer and second_answers(item, tables):
            continue
        seen.add(sentence)
        out.append(item)
    train = [i.model_copy(update={"id": f"gen-train-{k:05d}"}) for k, i in
             enumerate(out[:n_train], start=1)]
    val = [i.model_copy(update={"id": f"gen-val-{k:05d}"}) for k, i in
           enumerate(out[n_train:], start=1)]
    return train, val


def generate_holdout(tables: VerbTables, lexicon: dict[str, Any], *, seed: int, n: int,
                     test: list[VerbItem], seen: list[VerbItem],
                     single_answer: bool = False) -> list[VerbItem]:
    """A fresh holdout from a new seed: no sentence of the test set (either key) nor of
    train/val (exactly) reappears. Ids are ``gen-holdout-s<seed>-NNNNN``."""
    items, _ = generate(tables, lexicon, seed=seed, n_train=n, n_val=0, exclude=test,
                        exclude_exact=seen, single_answer=single_answer)
    return [i.model_copy(update={"id": f"gen-holdout-s{seed}-{k:05d}"})
            for k, i in enumerate(items, start=1)]


def write_jsonl(path: Path, items: list[VerbItem]) -> None:
    lines = [json.dumps(i.model_dump(exclude_defaults=True), ensure_ascii=False) for i in items]
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))


def _inputs(files: dict[str, Path]) -> tuple[VerbTables, dict[str, Any], list[VerbItem]]:
    """(verb tables, lexicon, the hand-written test items) of a verbs task's files."""
    tables = VerbTables.read(files["verbs"])
    lexicon = json.loads(files["lexicon"].read_text("utf-8"))
    test = [ln.item for role in ("test", "adversarial") for ln in read_verb_file(files[role])]
    return tables, lexicon, test


def write_train_val(files: dict[str, Path], *, seed: int, n_train: int, n_val: int,
                    out: Path | None = None, single_answer: bool = False
                    ) -> tuple[Path, Path]:
    """Generate and write ``train.jsonl`` and ``val.jsonl`` (default: beside the registered
    train file); sentences that leak into the test set are skipped, and with
    ``single_answer`` those with two right answers."""
    tables, lexicon, test = _inputs(files)
    train, val = generate(tables, lexicon, seed=seed, n_train=n_train, n_val=n_val,
                          exclude=test, single_answer=single_answer)
    folder = out if out is not None else files["train"].parent
    write_jsonl(folder / "train.jsonl", train)
    write_jsonl(folder / "val.jsonl", val)
    return folder / "train.jsonl", folder / "val.jsonl"


def write_holdout(files: dict[str, Path], *, seed: int, n: int,
                  out: Path | None = None, single_answer: bool = False) -> Path:
    """Generate ``holdout-s<seed>.jsonl``: ``n`` fresh sentences that repeat no train, val
    or test sentence (register it under the task's ``holdouts`` with its hashes)."""
    tables, lexicon, test = _inputs(files)
    seen = [ln.item for role in ("train", "val") for ln in read_verb_file(files[role])]
    items = generate_holdout(tables, lexicon, seed=seed, n=n, test=test, seen=seen,
                             single_answer=single_answer)
    path = (out if out is not None else files["train"].parent) / f"holdout-s{seed}.jsonl"
    write_jsonl(path, items)
    return path
