"""Fresh ``verb_grammar`` and ``verb_grammar_v2`` items: new EN/ES sentences in the shape
of the hand-written test set.

The mix follows ``data/eval/probes.jsonl`` + ``adversarial.jsonl``, scaled to the size
asked for: core lines (multiple choice with three candidates, a few classification
lines shown right or wrong) and adversarial lines in the six categories (a multiple-choice
and a classification line each, in both languages; ``out_of_scope`` lines are ambiguous).
Sentences come from frames, subjects, time expressions and complements written here
(none from the train/val generator's lexicon). Every line must pass ``check_line``, and
none may equal a packaged verb sentence, nor a train/val sentence under either leakage
key; the lines are then written as the two native JSONL files and read back by the
format (``read_holdout``: with all of check-verbs, coverage included, from 104 items on).

Two versions of the frames (:class:`Frames`). ``verb_grammar`` keeps the first (its
generations, and the digest a test pins, stay as they were), whose time expressions
include some that fix no tense ("During the holidays", "after the summer break", "En
marzo", "el lunes a primera hora"): with them a distractor of another tense is
grammatical too. ``verb_grammar_v2``'s use anchors only (:data:`MARKERS_V2`), and its
lines must also have one right answer (``probebench.tasks.verbs.ambiguity``): a line
with a second one is drawn again.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.families.base import FreshGenerator, get_format
from probebench.tasks.families.drawing import bar_table, bars, normalised_text, quota
from probebench.tasks.spec import HoldoutSpec, TaskSpec
from probebench.tasks.verbs.checks import check_line, check_single_answer
from probebench.tasks.verbs.leakage import Normaliser
from probebench.tasks.verbs.schema import BLANK, PERSONS, REASON_CODES, Line, VerbItem, VerbTables

#: the registered core lines' mix: multiple choice / classification right / wrong, and
#: their tenses and persons (dealt from shuffled decks, so a set keeps the shares)
CORE_MIX = (71, 4, 5)
TENSE_DECK = (["past_simple"] * 23 + ["present_simple"] * 19 + ["future"] * 14
              + ["past_participle"] * 12 + ["infinitive"] * 12)
PERSON_DECK = ["3sg"] * 31 + ["1sg"] * 27 + ["2sg"] * 22
#: from this many items on, the set is read with every rule of the test set
FULL_CHECK_FROM = 104
AUX = {"en": ("have", "have", "has"), "es": ("he", "has", "ha")}
PRONOUN = {"en": ("I", "you"), "es": ("yo", "tú")}

#: subjects (3sg; plural for out_of_scope) and time expressions per tense, at the start of
#: the sentence (lead) or at its end (tail)
WORDS = bar_table("""
en.subject: my grandfather|the librarian|our landlady|the night porter|my oldest friend|
    the new intern|a retired teacher|the girl next door|Uncle Tomas|the bus driver|
    my flatmate|the village doctor
es.subject: mi abuelo|la bibliotecaria|nuestra casera|el portero de noche|mi mejor amiga|
    el nuevo becario|una maestra jubilada|la niña del quinto|el tío Tomás|
    el conductor del autobús|mi compañera de piso|el médico del pueblo
en.plural: my parents|the twins|the new neighbours|both of my brothers|
    the students in my class|my grandparents
es.plural: mis padres|los gemelos|los vecinos nuevos|mis dos hermanos|
    los alumnos de mi clase|mis abuelos
en.present_simple.lead: Most Saturdays|Twice a week|On rainy mornings|Every Thursday|
    Almost every night|Three times a month
en.present_simple.tail: twice a week|on Thursday evenings|most weekends|
    almost every afternoon|before work each morning
en.past_simple.lead: Last Tuesday|Three weeks ago|The day before yesterday|Back in March|
    During the holidays|Late last night|After the match on Sunday,
en.past_simple.tail: last autumn|a few days ago|the night before the wedding|
    during the long weekend|when the power went out
en.future.lead: Next Thursday|In two weeks|The day after tomorrow|Later this year|
    After the holidays,|Next spring
en.future.tail: in a couple of days|before the end of the month|as soon as the shop opens|
    first thing on Monday|after the summer break
es.present_simple.lead: Los domingos|Casi todas las tardes|Dos veces por semana|
    Los jueves por la noche|En verano|Cada mañana
es.present_simple.tail: todos los jueves|casi cada tarde|después del trabajo|
    los fines de semana|cuando hace buen tiempo
es.past_simple.lead: El martes pasado|Hace tres semanas|Anteayer|Anoche|En marzo|
    El verano pasado|Después del partido del domingo,
es.past_simple.tail: el otoño pasado|hace unos días|la víspera de la boda|durante el puente|
    después de la tormenta
es.future.lead: El próximo jueves|Dentro de dos semanas|Pasado mañana|
    Después de las vacaciones,|La primavera que viene
es.future.tail: dentro de un par de días|antes de fin de mes|en cuanto abra la tienda|
    el lunes a primera hora|después del verano
""")
#: verb_grammar_v2's time expressions of the past and the future: anchors only, each
#: naming a time that is past or future whatever the verb (a past expression lets no
#: present or future form fit, a future one no past form)
MARKERS_V2 = bar_table("""
en.past_simple.lead: Last Tuesday|Three weeks ago|The day before yesterday|Back in March|
    Late last night|Last weekend|Four days ago
en.past_simple.tail: last autumn|a few days ago|the night before last|last weekend|
    earlier this afternoon
en.future.lead: Next Thursday|In two weeks|The day after tomorrow|Later this year|
    Next spring|Tomorrow morning
en.future.tail: next weekend|tomorrow afternoon|later this month|first thing tomorrow|
    next Monday
es.past_simple.lead: El martes pasado|Hace tres semanas|Anteayer|Anoche|El verano pasado|
    En marzo del año pasado|Después del partido del domingo pasado,
es.past_simple.tail: el otoño pasado|hace unos días|ayer por la tarde|
    el fin de semana pasado|anoche
es.future.lead: El próximo jueves|Dentro de dos semanas|Pasado mañana|
    La primavera que viene|Después de las próximas vacaciones,
es.future.tail: dentro de un par de días|el mes que viene|el próximo lunes a primera hora|
    después del verano que viene|mañana por la tarde
""")
#: present perfect: (adverb, tail) pairs; EN adverbs sit after the auxiliary, ES before it
PERFECT = {
    "en": [("just ", ""), ("already ", " this morning"), ("never ", " before"),
           ("", " twice this month"), ("", " several times this year"),
           ("finally ", " after all these years"), ("recently ", ""), ("", " this week")],
    "es": [("ya ", ""), ("", " esta semana"), ("nunca ", ""), ("", " dos veces este mes"),
           ("por fin ", ""), ("", " varias veces este año"), ("todavía no ", ""), ("", " hoy")],
}
#: infinitive frames: (frame, the governing verb for 1sg, 2sg, 3sg)
INFINITIVE = {
    "en": [("{S} {w} to {V} {C} one day", ("hope", "hope", "hopes")),
           ("{S} {w} to {V} {C} next weekend", ("plan", "plan", "plans")),
           ("{S} would love to {V} {C} again", ("", "", "")),
           ("{S} {w} to {V} {C} before dinner", ("promised", "promised", "promised")),
           ("After a long week, {S} {w} to {V} {C}", ("decided", "decided", "decided")),
           ("{S} {w} trying to {V} {C} more often", ("am", "are", "is"))],
    "es": [("{S} {w} {V} {C} algún día", ("espero", "esperas", "espera")),
           ("{S} {w} {V} {C} el fin de semana que viene", ("pienso", "piensas", "piensa")),
           ("{S} {w} {V} {C} más a menudo", ("intento", "intentas", "intenta")),
           ("Después de una semana larga, {S} {w} {V} {C}", ("decidí", "decidiste", "decidió")),
           ("{S} {w} {V} {C} antes de la cena", ("prometí", "prometiste", "prometió")),
           ("{S} {w} {V} {C} otra vez", ("necesito", "necesitas", "necesita"))],
}
#: what each verb does (the same five fit every tense)
COMPLEMENTS = bar_table("""
walk: to the harbour|home from the stadium|across the old bridge|around the lake|
    along the canal with the dog
talk: to the landlord about the heating|about the new timetable|
    with the neighbours over the fence|to the plants on the balcony|
    on the phone with a cousin
play: the drums in the garage|tennis with a colleague|chess at the club|
    a board game with the kids|the trumpet in a brass band
work: at the bakery on the corner|on the night shift|in a second-hand bookshop|
    from the kitchen table|at the harbour office
cook: dinner for the whole family|a lentil stew|pancakes for the guests|fish on the barbecue|
    a curry for the neighbours
clean: the bathroom|the fridge|the car inside and out|the dusty attic|
    the stairs of the building
watch: a football match|the sunset from the balcony|a cooking show|the children at the pool|
    a film about whales
visit: the botanical garden|an aunt in Lisbon|the science museum|a vineyard near the coast|
    the old fortress
open: the shutters|a jar of honey|the garden gate|the post at the kitchen table|
    the windows of the classroom
call: the landlord|a doctor|the bank about a card|a friend from school|
    the garage about the car
help: the neighbours with their shopping|a classmate with homework|the new intern|
    the old man next door|the volunteers at the food bank
finish: the crossword|the monthly report|the last chapter|the washing-up|
    a jigsaw of the Alps
go: to the cinema|to the swimming pool|to the flea market|to the seaside|to the gym
eat: a bowl of porridge|a plate of noodles|some grapes|lunch at the canteen|fish and chips
write: a letter to the council|a short poem|a shopping list|a long message to a friend|
    an article for the newsletter
see: the doctor|a deer in the woods|a play at the theatre|the new exhibition|
    the sea from the train
take: the ferry|the night train|a taxi home|the dog to the vet|a short nap
begin: a painting class|the day with a swim|work at seven|the meeting with a joke|
    a new chapter of the novel
run: along the river|to the bus stop|five kilometres|up the hill|a small bakery
speak: to the head teacher|at the town hall|to the reporters|Italian with the guests|
    on the local radio
hablar: con la vecina del tercero|por teléfono con su hermano|de fútbol con los compañeros|
    en la radio local|con el casero sobre la calefacción
caminar: hasta el faro|por la orilla del río|con el perro por el parque|al trabajo|
    por el casco antiguo
trabajar: en una librería de viejo|en el turno de noche|en el hospital del barrio|
    desde la mesa de la cocina|en la oficina del puerto
estudiar: historia del arte|para el carné de conducir|en la cafetería de la facultad|
    alemán con una aplicación|las tablas de multiplicar
cantar: en la ducha|villancicos con los vecinos|en un bar de jazz|canciones de cuna|
    en el coro del barrio
bailar: flamenco|en la boda de su prima|con su abuelo|en la cocina|bachata en la plaza
comer: lentejas con chorizo|en la terraza|con los compañeros de clase|un bocadillo de queso|
    arroz con verduras
beber: leche caliente|mucha agua|limonada casera|un café con leche|zumo de tomate
aprender: a conducir|japonés|a tocar el piano|a hacer pan|recetas nuevas
vender: pan casero|ropa usada|entradas para el concierto|miel del pueblo|
    libros de segunda mano
vivir: en una casa con jardín|en el centro|cerca de la playa|con dos compañeros|
    en un pueblo de la sierra
recibir: cartas de su abuela|visitas de la familia|muchos mensajes|paquetes para los vecinos|
    flores en el trabajo
ser: muy puntual|parte del coro|miembro del jurado|responsable del huerto|feliz en el pueblo
ir: al gimnasio|a la playa|al mercado del barrio|a clase de yoga|a la biblioteca municipal
tener: clase de piano|una cita con el médico|mucha prisa|una reunión con el jefe|
    guardia en el hospital
hacer: la compra|la cena|ejercicio en el parque|una tortilla de patatas|yoga en el salón
decir: buenos días al conductor|la hora a los turistas|adiós desde la ventana|
    mentiras piadosas|cosas muy bonitas
poder: salir antes del trabajo|dormir con ruido|cocinar sin receta|correr diez kilómetros|
    aparcar delante de casa
poner: la lavadora|flores en el balcón|la calefacción|música en la cocina|
    la mesa del comedor
venir: a cenar con nosotros|en bicicleta|a la fiesta del barrio|desde el pueblo|
    con los niños
""")
EN_OVER = dict(zip(bars("go|eat|write|see|take|begin|run|speak"),
                   bars("goed|eated|writed|seed|taked|beginned|runned|speaked"), strict=True))
#: Spanish over-regularised forms: tense -> 1sg|2sg|3sg (a participle has one form)
ES_OVER = {v: {t: bars(f) for t, f in forms.items()} for v, forms in {
    "tener": {"present_simple": "teno|tenes|tene", "past_simple": "tení|teniste|tenió",
              "future": "teneré|tenerás|tenerá"},
    "poner": {"past_simple": "poní|poniste|ponió", "future": "poneré|ponerás|ponerá",
              "past_participle": "ponido"},
    "hacer": {"past_simple": "hací|haciste|hació", "future": "haceré|hacerás|hacerá",
              "past_participle": "hacido"},
    "decir": {"past_simple": "decí|deciste|deció", "future": "deciré|decirás|decirá",
              "past_participle": "decido"},
    "venir": {"past_simple": "vení|veniste|venió", "future": "veniré|venirás|venirá"},
    "poder": {"past_simple": "podí|podiste|podió", "future": "poderé|poderás|poderá"},
}.items()}
#: verbs with a target verb of the other language that translates them
CROSS = {"en": {"walk": "caminar", "talk": "hablar", "work": "trabajar", "go": "ir",
                "eat": "comer", "speak": "hablar"},
         "es": {"caminar": "walk", "hablar": "speak", "trabajar": "work", "ir": "go",
                "comer": "eat"}}
#: an adversarial line's explanation ({w} the mistake, {e} the expected form)
EXPLAIN = bar_table("""
en.over_regularisation: '{w}' regularises the irregular form '{e}'.
en.wrong_person: The subject needs '{e}', not '{w}'.
en.wrong_tense_marker: The time expression calls for '{e}', not '{w}'.
en.auxiliary_mismatch: The auxiliary agrees with the subject: '{e}'.
en.cross_lingual_form: '{w}' is a Spanish form; the sentence needs '{e}'.
en.out_of_scope: Both '{e}' and '{w}' can be defended here.
es.over_regularisation: '{w}' aplica la terminación regular a la forma irregular '{e}'.
es.wrong_person: El sujeto pide '{e}', no '{w}'.
es.wrong_tense_marker: El marcador temporal pide '{e}', no '{w}'.
es.auxiliary_mismatch: El auxiliar concuerda con el sujeto: '{e}'.
es.cross_lingual_form: '{w}' es una forma inglesa; la frase pide '{e}'.
es.out_of_scope: Tanto '{e}' como '{w}' son defendibles aquí.
""")


class _Draw:
    """Choices from the generator's numpy rng only."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def deck(self, cards: Sequence[Any]) -> Iterator[Any]:
        """Endless: shuffled copies of ``cards`` one after another (even coverage)."""
        while True:
            yield from (cards[int(i)] for i in self.rng.permutation(len(cards)))


def _ing(verb: str) -> str:
    if verb in ("run", "begin"):
        return verb + verb[-1] + "ing"
    return (verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb) + "ing"


def _wrong(tables: VerbTables, lang: str, verb: str, tense: str, p: int) -> list[str]:
    """Forms that are wrong in any frame of ``tense`` for person ``p`` (never a form a
    native speaker could defend there, e.g. no habitual past in a present frame)."""
    e = tables.verbs(lang)[verb]
    ps, pst, pp, inf = e["present_simple"], e["past_simple"], e["past_participle"], e["infinitive"]
    irr = e["regularity"] == "irregular"
    others = [q for q in range(3) if q != p]
    if lang == "en":
        over = [EN_OVER[verb]] if irr else []
        opts = {"present_simple": [ps[2] if p < 2 else ps[0], _ing(verb)] + ([pp] if irr else []),
                "past_simple": [ps[p], ps[2], _ing(verb), f"will {inf}", *over]
                + ([pp] if irr else []),
                "future": [f"will {pst[p]}", pst[p], _ing(verb), f"will {ps[2]}"],
                "past_participle": [inf, ps[2], _ing(verb), *over] + ([pst[p]] if irr else []),
                "infinitive": [pst[p], ps[2], _ing(verb)] + ([pp] if irr else [])}[tense]
    else:
        row = ES_OVER.get(verb, {}).get(tense, [])
        over = [row[0] if len(row) == 1 else row[p]] if row else []
        opts = {"present_simple": [ps[q] for q in others] + [inf],
                "past_simple": [pst[q] for q in others] + [e["future"][p]],
                "future": [e["future"][q] for q in others] + [pst[p]],
                "past_participle": [pst[p], ps[p], inf],
                "infinitive": [ps[p], pst[p]]}[tense] + over
    right = tables.form(lang, verb, tense, PERSONS[p])
    return list(dict.fromkeys(o for o in opts if o and o != right))


@dataclass(frozen=True)
class Frames:
    """What a version of the generator draws with: its word table (subjects and time
    expressions) and whether a line needs one right answer."""

    words: Mapping[str, list[str]]
    single_answer: bool


#: verb_grammar's frames, as its generations were drawn
V1 = Frames(WORDS, single_answer=False)
#: verb_grammar_v2's: time expressions that anchor, one right answer per line
V2 = Frames({**WORDS, **MARKERS_V2}, single_answer=True)


def _sentence(d: _Draw, lang: str, tense: str, p: int, subject: str, comp: str, slot: str,
              *, aux: bool = True, words: Mapping[str, list[str]] = WORDS) -> str:
    """A sentence of ``tense`` with ``slot`` (the blank or a form) as its verb; with
    ``aux`` False the slot holds the auxiliary of a perfect too."""
    if tense == "past_participle":
        pairs = [pr for pr in PERFECT[lang] if aux or lang == "es" or not pr[0]]
        adv, tail = d.pick(pairs)
        have = f"{AUX[lang][p]} " if aux else ""
        core = (f"{subject} {have}{adv}{slot} {comp}{tail}" if lang == "en"
                else f"{subject} {adv}{have}{slot} {comp}{tail}")
    elif tense == "infinitive":
        frame, gov = d.pick(INFINITIVE[lang])
        core = frame.format(S=subject, w=gov[p], V=slot, C=comp).replace("  ", " ")
    else:
        core = (f"{d.pick(words[f'{lang}.{tense}.lead'])} {subject} {slot} {comp}"
                if d.rng.random() < 0.5
                else f"{subject} {slot} {comp} {d.pick(words[f'{lang}.{tense}.tail'])}")
    return core[0].upper() + core[1:] + "."


class _Maker:
    """Draws lines, keeping only those that pass the per-line rules and leak nothing."""

    def __init__(self, tables: VerbTables, norm: Normaliser, banned: set[str],
                 public: set[str], d: _Draw, frames: Frames = V1) -> None:
        self.tables, self.norm, self.banned, self.public, self.d = tables, norm, banned, public, d
        self.frames = frames
        self.used: set[str] = set()

    def subject(self, lang: str, p: int) -> str:
        return PRONOUN[lang][p] if p < 2 else str(self.d.pick(self.frames.words[f"{lang}.subject"]))

    def sentence(self, lang: str, tense: str, p: int, subject: str, comp: str, slot: str,
                 *, aux: bool = True) -> str:
        return _sentence(self.d, lang, tense, p, subject, comp, slot, aux=aux,
                         words=self.frames.words)

    def line(self, fields: dict[str, Any], sentences: list[str]) -> VerbItem | None:
        item = VerbItem.model_validate({**fields, "source": "generated"})
        norms = {normalised_text(s) for s in sentences}
        keys = self.norm.keys(item)
        line = Line(Path("fresh"), 0, item)
        if (check_line(line, self.tables) or len(norms) < len(sentences)
                or norms & (self.public | self.used) or {keys.exact, keys.strict} & self.banned
                or (self.frames.single_answer and check_single_answer(line, self.tables))):
            return None
        self.used |= norms
        return item

    def draw(self, lid: str, lang: str, verb: str, tense: str, p: int, form: str,
             code: str | None) -> VerbItem:
        for _ in range(500):
            item = self._try(lid, lang, verb, tense, p, form, code)
            if item is not None:
                return item
        raise RuntimeError(f"no fresh sentence for {lang}:{verb} {tense} {PERSONS[p]} {form}")

    def _try(self, lid: str, lang: str, verb: str, tense: str, p: int, form: str,
             code: str | None) -> VerbItem | None:
        d, tables = self.d, self.tables
        right = tables.form(lang, verb, tense, PERSONS[p])
        pool = _wrong(tables, lang, verb, tense, p)
        subject, comp, aux = self.subject(lang, p), str(d.pick(COMPLEMENTS[verb])), True
        label, keyed = "correct", pool
        if code in MISTAKES:
            keyed = MISTAKES[code](tables, lang, verb, tense, p)
        elif code == "auxiliary_mismatch":
            aux, pp = False, right
            right = f"{AUX[lang][p]} {pp}"
            keyed = [f"{a} {pp}" for a in AUX[lang] if a != AUX[lang][p]]
            past = tables.form(lang, verb, "past_simple", PERSONS[p])
            pool = [f"{AUX[lang][p]} {past}"] if lang == "en" else []
        elif code == "cross_lingual_form":
            keyed = [tables.form("es" if lang == "en" else "en", CROSS[lang][verb], tense,
                                 PERSONS[p])]
        elif code == "out_of_scope":
            label, pool, e = "ambiguous", [], tables.verbs(lang)[verb]
            keyed = [e["present_simple"][p]]
            if tense == "present_simple":  # a plural subject: the plural form is expected
                subject = d.pick(self.frames.words[f"{lang}.plural"])
                right = e["infinitive"] if lang == "en" else (
                    "son" if verb == "ser" else e["present_simple"][2] + "n")
        if not keyed:
            return None
        first = d.pick(keyed)
        rest = list(dict.fromkeys(w for w in keyed + pool if w not in (first, right)))
        n_mc = 3 if code is None or (rest and d.rng.random() < 0.5) else 2
        if form == "mc":
            cands = [right, first] + ([d.pick(rest)] if n_mc == 3 and rest else [])
            filled = [self.sentence(lang, tense, p, subject, comp, BLANK, aux=aux)]
            sentences = [filled[0].replace(BLANK, c) for c in cands]
            prompt = filled[0]
        else:
            shown = right if form == "ok" else first
            cands = [right, first] if form == "ok" else [first, right]
            prompt = self.sentence(lang, tense, p, subject, comp, shown, aux=aux)
            sentences = [prompt]
            label = "correct" if form == "ok" else "incorrect"
        fields: dict[str, Any] = {
            "id": lid, "language": lang, "verb": verb,
            "regularity": tables.verbs(lang)[verb]["regularity"], "tense": tense,
            "person": PERSONS[p], "prompt": prompt, "candidates": cands, "expected": right,
            "label": label, "category": "core" if code is None else "adversarial"}
        if code:
            fields["reason_code"] = code
            fields["explanation"] = EXPLAIN[f"{lang}.{code}"][0].format(w=first, e=right)
        return self.line(fields, sentences)


def _over(tables: VerbTables, lang: str, verb: str, tense: str, p: int) -> list[str]:
    if lang == "en":
        return [EN_OVER[verb]]
    row = ES_OVER[verb][tense]
    return [row[0] if len(row) == 1 else row[p]]


def _person(tables: VerbTables, lang: str, verb: str, tense: str, p: int) -> list[str]:
    forms = tables.verbs(lang)[verb][tense]
    return [forms[q] for q in range(3) if forms[q] != forms[p]]


def _tense(tables: VerbTables, lang: str, verb: str, tense: str, p: int) -> list[str]:
    e = tables.verbs(lang)[verb]
    return [e["present_simple"][p], e["future"][p]] if tense == "past_simple" \
        else [e["past_simple"][p]]


#: the mistake each of these adversarial categories is about
MISTAKES = {"over_regularisation": _over, "wrong_person": _person, "wrong_tense_marker": _tense}


def _adversarial_slot(d: _Draw, tables: VerbTables, code: str, lang: str
                      ) -> tuple[str, str, int]:
    """(verb, tense, person) where ``code``'s mistake can be made."""
    verbs = sorted(tables.verbs(lang))
    if code == "over_regularisation":
        pool = sorted(EN_OVER) if lang == "en" else sorted(ES_OVER)
        verb = d.pick(pool)
        tenses = ["past_simple", "past_participle"] if lang == "en" else sorted(ES_OVER[verb])
        return verb, d.pick(tenses), int(d.rng.integers(3))
    if code == "wrong_person":
        tense = "present_simple" if lang == "en" else d.pick(
            ["present_simple", "present_simple", "past_simple", "future"])
        return d.pick(verbs), tense, int(d.rng.integers(3))
    if code == "cross_lingual_form":
        return (d.pick(sorted(CROSS[lang])), d.pick(["present_simple", "past_simple", "future"]),
                int(d.rng.integers(3)))
    tense = d.pick({"wrong_tense_marker": ["past_simple", "past_simple", "future"],
                    "auxiliary_mismatch": ["past_participle"],
                    "out_of_scope": ["present_simple", "future"]}[code])
    # out of scope in the present: a plural subject, filed (like the test set) as 3sg
    person = 2 if code == "out_of_scope" and tense == "present_simple" else int(d.rng.integers(3))
    return d.pick(verbs), tense, person


def _keys_and_texts(files: Sequence[Path], norm: Normaliser) -> tuple[set[str], set[str]]:
    """(leakage keys, normalised sentences with every candidate) of packaged verb files."""
    keys: set[str] = set()
    texts: set[str] = set()
    for path in files:
        for raw in path.read_text("utf-8").splitlines():
            if raw.strip():
                item = VerbItem.model_validate(json.loads(raw))
                k = norm.keys(item)
                keys |= {k.exact, k.strict}
                fills = [item.prompt.replace(BLANK, c) for c in item.candidates]
                texts |= {normalised_text(s) for s in (fills if item.multiple_choice
                                                       else [item.prompt])}
    return keys, texts


def draw_lines(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
               id_prefix: str, *, frames: Frames = V1
               ) -> tuple[list[VerbItem], list[VerbItem]]:
    """The native lines of a fresh set: (core lines, adversarial lines), drawn with
    ``frames`` (:data:`V1` for ``verb_grammar``, :data:`V2` for ``verb_grammar_v2``)."""
    files = {role: data_file(root, rel) for role, rel in spec.files.items()}
    tables = VerbTables.read(files["verbs"])
    norm = Normaliser(tables, json.loads(files["lexicon"].read_text("utf-8")))
    packaged = [files[r] for r in ("test", "adversarial", "train", "val")] + [
        data_file(root, rel) for h in spec.holdouts for rel in h.files.values()]
    d = _Draw(rng)
    maker = _Maker(tables, norm, *_keys_and_texts(packaged, norm), d, frames)
    n_adv = min(30, round(n_items * 24 / 104))  # the test set's share, 3 to 5 a category
    codes = [REASON_CODES[int(i)] for i in rng.permutation(len(REASON_CODES))]
    adversarial: list[VerbItem] = []
    for code, k in zip(codes, quota(n_adv, [1] * len(codes)), strict=True):
        first = int(rng.integers(2))
        for j in range(k):  # both languages; about half multiple choice, half shown wrong
            lang = ("en", "es")[(first + j) % 2]
            form = "mc" if code == "out_of_scope" or j < (k + 1) // 2 else "bad"
            verb, tense, p = _adversarial_slot(d, tables, code, lang)
            adversarial.append(maker.draw("pending", lang, verb, tense, p, form, code))
    adversarial = [a.model_copy(update={"id": f"{id_prefix}{a.language}-adv-{i:03d}"})
                   for i, a in enumerate(adversarial, start=1)]
    n_core = n_items - n_adv
    forms = [f for f, k in zip(("mc", "ok", "bad"), quota(n_core, CORE_MIX), strict=True)
             for _ in range(k)]
    forms = [forms[int(i)] for i in rng.permutation(n_core)]
    tenses, persons = d.deck(TENSE_DECK), d.deck(PERSON_DECK)
    core: list[VerbItem] = []
    for lang, count in zip(("en", "es"), quota(n_core, [1, 1]), strict=True):
        table = tables.verbs(lang)  # every verb, irregular ones twice, before any repeat
        verbs = d.deck([v for v in sorted(table)
                        for _ in range(2 if table[v]["regularity"] == "irregular" else 1)])
        for k in range(1, count + 1):
            core.append(maker.draw(f"{id_prefix}{lang}-core-{k:03d}", lang, next(verbs),
                                   next(tenses), PERSONS.index(next(persons)),
                                   forms[len(core)], None))
    return core, adversarial


def read_lines(spec: TaskSpec, root: Path, core: list[VerbItem],
               adversarial: list[VerbItem]) -> list[Item]:
    """Write the native files beside copies of the task's other files and read them with
    the format as a holdout of the task: from FULL_CHECK_FROM lines on as a hand-written
    holdout (every rule of check-verbs, coverage and both leakage keys included), below it
    as one generated file (the per-line rules, no train/val repeat)."""
    with tempfile.TemporaryDirectory(prefix="fresh-verbs-") as tmp:
        tmp_root = Path(tmp)
        for role, rel in spec.files.items():
            if role not in ("test", "adversarial"):
                (tmp_root / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(data_file(root, rel), tmp_root / rel)
        outputs = {"test": ("fresh/probes.jsonl", core),
                   "adversarial": ("fresh/adversarial.jsonl", adversarial)}
        if len(core) + len(adversarial) < FULL_CHECK_FROM:
            outputs = {"test": ("fresh/probes.jsonl", core + adversarial)}
        (tmp_root / "fresh").mkdir()
        for rel, lines in outputs.values():
            (tmp_root / rel).write_text("".join(
                json.dumps(i.model_dump(exclude_defaults=True), ensure_ascii=False) + "\n"
                for i in lines), "utf-8")
        holdout = HoldoutSpec(version=2, files={r: rel for r, (rel, _) in outputs.items()},
                              test_sha256="0" * 64)
        return get_format(spec.format).read_holdout(spec, holdout, tmp_root).test


def make(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
         id_prefix: str, *, frames: Frames = V1) -> list[Item]:
    items = read_lines(spec, root, *draw_lines(spec, root, rng, n_items, id_prefix,
                                               frames=frames))
    if len(items) != n_items:
        raise RuntimeError(f"read back {len(items)} verb items for {n_items}")
    return items


def make_v2(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
            id_prefix: str) -> list[Item]:
    """``verb_grammar_v2``'s fresh items: :func:`make` with the :data:`V2` frames."""
    return make(spec, root, rng, n_items, id_prefix, frames=V2)


GENERATORS: tuple[FreshGenerator, ...] = (
    FreshGenerator(
        task_id="verb_grammar",
        n_items=126,
        description=("New EN/ES sentence frames, subjects, time expressions and complements "
                     "over the 40 target verbs in the test set's mix of tenses, persons, "
                     "forms and the six adversarial categories; every line passes "
                     "check-verbs' per-line rules (and coverage from 104 items) and equals no "
                     "train/val sentence under either leakage key."),
        make=make,
    ),
    FreshGenerator(
        task_id="verb_grammar_v2",
        n_items=126,
        description=("The verb_grammar generator with time expressions that anchor a tense, "
                     "keeping only lines with one right answer (no distractor of another "
                     "tense or person that the sentence also takes) that pass check-verbs' "
                     "per-line rules (and coverage from 104 items) and equal no train/val "
                     "sentence under either leakage key."),
        make=make_v2,
    ),
)
