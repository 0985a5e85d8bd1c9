"""Fresh BLiMP minimal pairs: three paradigms rebuilt from this module's own word lists.

Each generator follows its paradigm's template (Warstadt et al., TACL 2020) and copies
the paradigm's constant fields (``field``, ``linguistics_term``, ``UID``, the
``*_method`` flags, ``lexically_identical``) from the registered file; ``one_prefix_*``
are filled as BLiMP fills them (the sentence up to the critical word, and the two words).
The records are written as BLiMP JSONL and read back with the format's own reader.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.families.base import FreshGenerator, Make, get_format
from probebench.tasks.families.drawing import normalised_text, pairs, pick, prefixed, words
from probebench.tasks.jsonl import jsonl_objects
from probebench.tasks.spec import TaskSpec

N_PAIRS = 120  # 120 prompts of each label: a 10-point AUROC drop is detectable
CONSTANT_FIELDS = ("field", "linguistics_term", "UID", "simple_LM_method", "one_prefix_method",
                   "two_prefix_method", "lexically_identical")


@dataclass(frozen=True)
class Verb:
    base: str
    s: str
    past: str
    pp: str
    ing: str
    prep: str  # a preposition or particle after the verb ("" when none)
    stative: bool  # no progressive or modal frames ("is knowing", "should need")

    def forms(self) -> dict[str, str]:
        return {"base": self.base, "s": self.s, "past": self.past, "pp": self.pp,
                "ing": self.ing}


_STATIVE = frozenset(words("see hate love like trust doubt believe know need want remember"))


#: irregular verbs: base -> 3sg, past, participle, -ing
IRREGULAR_VERBS = {v.split()[0]: tuple(v.split()[1:]) for v in (
    "hurt hurts hurt hurt hurting", "forgive forgives forgave forgiven forgiving",
    "see sees saw seen seeing", "teach teaches taught taught teaching",
    "think thinks thought thought thinking", "write writes wrote written writing",
    "meet meets met met meeting", "know knows knew known knowing",
    "leave leaves left left leaving", "drive drives drove driven driving",
    "go goes went gone going", "find finds found found finding",
    "buy buys bought bought buying", "sell sells sold sold selling",
    "hide hides hid hidden hiding", "take takes took taken taking",
    "bring brings brought brought bringing", "lose loses lost lost losing",
    "keep keeps kept kept keeping", "read reads read read reading",
    "forget forgets forgot forgotten forgetting", "eat eats ate eaten eating",
    "sleep sleeps slept slept sleeping", "bite bites bit bitten biting",
    "upset upsets upset upset upsetting", "drop drops dropped dropped dropping")}


def _regular(base: str) -> tuple[str, str, str, str]:
    """3sg, past, participle and -ing of a regular verb (no consonant doubling)."""
    y_stem = base.endswith("y") and base[-2] not in "aeiou"
    s = (base + "es" if base.endswith(("s", "sh", "ch", "x", "z"))
         else base[:-1] + "ies" if y_stem else base + "s")
    past = base + "d" if base.endswith("e") else base[:-1] + "ied" if y_stem else base + "ed"
    ing = (base[:-2] + "ying" if base.endswith("ie")
           else base[:-1] + "ing" if base.endswith("e") and not base.endswith("ee")
           else base + "ing")
    return s, past, past, ing


def _verbs(text: str) -> tuple[Verb, ...]:
    """``base`` or ``base+preposition`` entries; irregular forms from IRREGULAR_VERBS."""
    out = []
    for entry in text.split():
        base, _, prep = entry.partition("+")
        s, past, pp, ing = IRREGULAR_VERBS.get(base) or _regular(base)
        out.append(Verb(base, s, past, pp, ing, prep, base in _STATIVE))
    return tuple(out)


def _article(word: str) -> str:
    return "An" if word[0].lower() in "aeiou" else "A"


#: (singular template, plural template, progressive or modal): the verb group of a clause
FRAMES = (("{past}", "{past}", False), ("{s}", "{base}", False),
          ("has {pp}", "have {pp}", False), ("hasn't {pp}", "haven't {pp}", False),
          ("had {pp}", "had {pp}", False), ("hadn't {pp}", "hadn't {pp}", False),
          ("is {ing}", "are {ing}", True), ("isn't {ing}", "aren't {ing}", True),
          ("was {ing}", "were {ing}", True), ("wasn't {ing}", "weren't {ing}", True),
          ("doesn't {base}", "don't {base}", False), ("didn't {base}", "didn't {base}", False),
          *((f"{m} {{base}}", f"{m} {{base}}", True) for m in
            words("can can't could couldn't might should shouldn't would wouldn't will "
                  "won't must")))


def _verb_group(rng: np.random.Generator, verb: Verb, plural: bool) -> str:
    frames = [f for f in FRAMES if not (f[2] and verb.stative)]
    frame = pick(rng, frames)
    group = str(frame[1 if plural else 0]).format(**verb.forms())
    return f"{group} {verb.prep}" if verb.prep else group


FEMALE_NAMES = words("Alice Amanda Amy Andrea Angela Anna Barbara Beth Brenda Carol Caroline "
                     "Chloe Claire Diana Donna Elena Ellen Emily Emma Fiona Grace Hannah Helen "
                     "Irene Jane Janet Jennifer Jessica Joanna Julia Karen Kate Laura Linda Lisa "
                     "Lucy Margaret Maria Megan Monica Nancy Natalie Nicole Olivia Paula Rachel "
                     "Rebecca Rose Ruth Sarah Sophie Susan Teresa Victoria Wendy Zoe")
MALE_NAMES = words("Adam Alan Andrew Anthony Benjamin Brian Carl Charles Daniel David Dennis "
                   "Edward Eric Frank George Gregory Henry Jack James Jason Jeffrey John Jonathan "
                   "Joseph Kenneth Kevin Larry Mark Martin Matthew Michael Nathan Oliver Patrick "
                   "Paul Peter Philip Richard Robert Roger Samuel Scott Simon Stephen Thomas "
                   "Timothy Victor Walter William")
FEMALE_NOUNS = words("woman girl actress waitress mother sister queen aunt niece grandmother "
                     "daughter princess bride lady nun businesswoman wife girlfriend widow "
                     "duchess schoolgirl")
MALE_NOUNS = words("man boy father brother king uncle nephew grandfather son prince groom "
                   "gentleman monk husband boyfriend businessman widower duke schoolboy policeman "
                   "fisherman")
#: antecedents of "itself": institutions and machines, each with verbs that fit them
IT_NOUNS = {
    "institution": words("company government organization university hospital bank newspaper "
                         "city country museum school"),
    "machine": words("robot machine computer printer program camera")}
IT_VERBS = {
    "institution": _verbs("defend protect describe promote reinvent advertise reorganize "
                          "finance govern reform"),
    "machine": _verbs("repair clean correct restart update protect test calibrate")}
PERSON_REFLEXIVE_VERBS = _verbs(
    "hurt help admire praise criticize blame describe forgive trust doubt question defend "
    "protect introduce surprise embarrass impress amuse photograph see teach fool push hate "
    "love distract talk+about talk+to think+about worry+about complain+about boast+about "
    "laugh+at look+at listen+to argue+with write+about lie+to believe+in")
REFLEXIVES = ("herself", "himself", "itself")
#: the good reflexive's share (herself 45%, himself 40%, itself 15%; the registered file
#: has 64/33/3); the bad one is either of the other two, equally often
_GENDER_WEIGHTS = ("herself",) * 9 + ("himself",) * 8 + ("itself",) * 3


def _det_np(rng: np.random.Generator, noun: str) -> str:
    det = pick(rng, ("The", "The", "This", "That", "Every", "A"))
    return f"{_article(noun) if det == 'A' else det} {noun}"


def _anaphor_pair(rng: np.random.Generator) -> tuple[str, str, str, str]:
    good = str(pick(rng, _GENDER_WEIGHTS))
    bad = str(pick(rng, [r for r in REFLEXIVES if r != good]))
    if good == "itself":
        kind = str(pick(rng, tuple(IT_NOUNS)))
        subject = _det_np(rng, pick(rng, IT_NOUNS[kind]))
        verb = pick(rng, IT_VERBS[kind])
    else:
        names, nouns = ((FEMALE_NAMES, FEMALE_NOUNS) if good == "herself"
                        else (MALE_NAMES, MALE_NOUNS))
        subject = (pick(rng, names) if rng.integers(4) else _det_np(rng, pick(rng, nouns)))
        verb = pick(rng, PERSON_REFLEXIVE_VERBS)
    return f"{subject} {_verb_group(rng, verb, plural=False)}", good, bad, ""


PEOPLE = pairs("teacher doctor nurse student child/children woman/women man/men customer "
                "guest neighbor cashier waiter actor dancer driver patient lawyer pilot farmer "
                "baby/babies lady/ladies boy girl musician tourist visitor worker manager "
                "professor scientist player journalist engineer")
#: object nouns by kind, and the verbs that take each kind
OBJECTS = {
    "person": PEOPLE,
    "place": pairs("library/libraries museum hospital school restaurant church/churches bank "
                    "park store cafe mall theater office hotel airport bakery/bakeries "
                    "art_gallery/art_galleries university/universities city/cities village "
                    "town market stadium factory/factories garden neighborhood train_station"),
    "thing": pairs("chair table lamp box/boxes glass/glasses dish/dishes knife/knives "
                    "photograph painting map bottle cup plate sweater jacket shirt "
                    "scarf/scarves watch/watches key bicycle computer phone mirror candle "
                    "blanket pillow brush/brushes umbrella suitcase backpack hat glove coat "
                    "basket wallet ladder toy fork spoon vase camera"),
    "text": pairs("book letter report article story/stories poem essay magazine newspaper "
                   "novel diary/diaries email textbook speech/speeches recipe note poster "
                   "manual biography/biographies"),
}
OBJECT_VERBS = {
    "person": _verbs("visit help call hire meet know like admire remember thank interview "
                     "greet invite ignore follow talk+to listen+to work+with wait+for look+at"),
    "place": _verbs("visit leave explore tour walk+through drive+to go+to return+to describe "
                    "photograph remember like avoid find"),
    "thing": _verbs("buy sell find carry move hide take bring need want like notice examine "
                    "drop borrow lose keep pick+up look+at"),
    "text": _verbs("read write like discuss print copy remember forget find review hate edit "
                   "translate talk+about think+about complain+about"),
}
SING_DETS = ("The", "The", "This", "That", "Every", "A")
PLURAL_DETS = ("The", "The", "These", "Those", "Some", "Many", "Most", "All", "A lot of",
               "Several", "")


def _subject(rng: np.random.Generator, plural: bool) -> tuple[str, str]:
    """(subject, its head noun): a name or a determiner and a person noun."""
    if not plural and rng.integers(2):
        name = str(pick(rng, (*FEMALE_NAMES, *MALE_NAMES)))
        return name, name
    sing, pl = pick(rng, PEOPLE)
    noun = pl if plural else sing
    det = str(pick(rng, PLURAL_DETS if plural else SING_DETS))
    if det == "A":
        det = _article(noun)
    return (f"{det} {noun}" if det else noun.capitalize()), noun


def _det_noun_pair(rng: np.random.Generator) -> tuple[str, str, str, str]:
    plural_subject = bool(rng.integers(3) == 0)
    subject, head = _subject(rng, plural_subject)
    kind = str(pick(rng, tuple(OBJECTS)))
    verb = pick(rng, OBJECT_VERBS[kind])
    sing, pl = pick(rng, OBJECTS[kind])
    if head in (sing, pl):
        return _det_noun_pair(rng)  # "The teacher visited this teacher": draw again
    det = str(pick(rng, ("this", "that", "these", "those")))
    good, bad = (sing, pl) if det in ("this", "that") else (pl, sing)
    prefix = f"{subject} {_verb_group(rng, verb, plural_subject)} {det}"
    return prefix, good, bad, ""


#: irregular (singular, plural) nouns by what they can do
IRREGULAR = {
    "human": pairs("man/men woman/women child/children person/people alumnus/alumni "
                    "gentleman/gentlemen policeman/policemen businessman/businessmen "
                    "fireman/firemen fisherman/fishermen salesman/salesmen "
                    "businesswoman/businesswomen policewoman/policewomen wife/wives "
                    "thief/thieves"),
    "animal": pairs("mouse/mice goose/geese ox/oxen wolf/wolves calf/calves louse/lice"),
    "thing": pairs("cactus/cacti fungus/fungi tooth/teeth foot/feet knife/knives leaf/leaves "
                    "loaf/loaves shelf/shelves"),
    "idea": pairs("analysis/analyses hypothesis/hypotheses diagnosis/diagnoses crisis/crises "
                   "thesis/theses synopsis/synopses phenomenon/phenomena criterion/criteria "
                   "stimulus/stimuli"),
}
PSYCH = _verbs("annoy worry surprise bother upset confuse bore distract scare shock disturb "
               "embarrass frighten irritate alarm")
AGENT_TRANSITIVE = _verbs("visit help call hire meet follow greet ignore thank talk+to")
INTRANSITIVE = {
    "human": _verbs("leave arrive laugh complain wait cough smile escape return"),
    "animal": _verbs("disappear escape sleep hide eat return"),
    "thing": _verbs("disappear"),
    "idea": (),
}
ANIMAL_TRANSITIVE = _verbs("scare follow bite bother annoy frighten")
#: the agreeing frames: (singular, plural) verb groups; the first word carries number
AGREEMENT_FRAMES = (("{s}", "{base}", False), ("is {ing}", "are {ing}", True),
                    ("isn't {ing}", "aren't {ing}", True), ("was {ing}", "were {ing}", True),
                    ("wasn't {ing}", "weren't {ing}", True), ("has {pp}", "have {pp}", False),
                    ("hasn't {pp}", "haven't {pp}", False),
                    ("doesn't {base}", "don't {base}", False))
THING_PSYCH = frozenset(words("bother distract annoy surprise scare disturb"))
OBJECT_DETS = ("the", "this", "that", "these", "those", "some", "every", "a")


def _person_object(rng: np.random.Generator) -> str:
    if rng.integers(2):
        return str(pick(rng, (*FEMALE_NAMES, *MALE_NAMES)))
    sing, pl = pick(rng, PEOPLE[:20])
    det = str(pick(rng, OBJECT_DETS))
    noun = pl if det in ("these", "those", "some") else sing
    return f"{_article(noun).lower() if det == 'a' else det} {noun}"


def _irregular_pair(rng: np.random.Generator) -> tuple[str, str, str, str]:
    kind = str(pick(rng, ("human", "human", "animal", "thing", "idea", "idea")))
    sing, pl = pick(rng, IRREGULAR[kind])
    plural = bool(rng.integers(2))
    det = str(pick(rng, PLURAL_DETS if plural else SING_DETS))
    noun = pl if plural else sing
    if det == "A":
        det = _article(noun)
    subject = f"{det} {noun}" if det else noun.capitalize()
    psych = [v for v in PSYCH if kind != "thing" or v.base in THING_PSYCH]
    choices: list[tuple[Verb, bool]] = [(v, True) for v in psych]
    choices += [(v, False) for v in INTRANSITIVE[kind]] * 2
    if kind == "human":
        choices += [(v, True) for v in AGENT_TRANSITIVE]
    if kind == "animal":
        choices += [(v, True) for v in ANIMAL_TRANSITIVE]
    verb, transitive = pick(rng, choices)
    frames = [f for f in AGREEMENT_FRAMES if not (f[2] and verb.stative)]
    frame = pick(rng, frames)
    good, bad = ((frame[1], frame[0]) if plural else (frame[0], frame[1]))
    good_words = str(good).format(**verb.forms()).split()
    bad_word = str(bad).format(**verb.forms()).split()[0]
    rest = " ".join(good_words[1:] + ([verb.prep] if verb.prep else [])
                    + ([_person_object(rng)] if transitive else []))
    return subject, good_words[0], bad_word, f" {rest}" if rest else ""


Draw = Callable[[np.random.Generator], tuple[str, str, str, str]]


def _family_texts(folder: Path) -> set[str]:
    """Normalised sentences of every packaged BLiMP file next to the task's."""
    out: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")):
        for _, obj in jsonl_objects(path):
            out.update(normalised_text(str(obj.get(k, ""))) for k in
                       ("sentence_good", "sentence_bad"))
    return out


def _make(draw: Draw) -> Make:
    def make(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
             id_prefix: str) -> list[Item]:
        source = data_file(root, spec.files["data"])
        first = next(obj for _, obj in jsonl_objects(source))
        constant = {k: first[k] for k in CONSTANT_FIELDS}
        taken = _family_texts(source.parent)
        records: list[dict[str, Any]] = []
        for _ in range(200 * n_items):
            if len(records) == n_items:
                break
            prefix, good, bad, rest = draw(rng)
            sentences = (f"{prefix} {good}{rest}.", f"{prefix} {bad}{rest}.")
            norm = {normalised_text(s) for s in sentences}
            if len(norm) < 2 or norm & taken:
                continue  # a repeat, or a sentence that is public: draw again
            taken |= norm
            records.append({"sentence_good": sentences[0], "sentence_bad": sentences[1],
                            "one_prefix_prefix": prefix, "one_prefix_word_good": good,
                            "one_prefix_word_bad": bad, **constant,
                            "pairID": str(len(records))})
        if len(records) < n_items:
            raise ValueError(f"{spec.id}: drew only {len(records)} fresh pairs of {n_items}")
        with tempfile.TemporaryDirectory(prefix="fresh-blimp-") as tmp:
            path = Path(tmp) / source.name
            path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
            data = get_format(spec.format).read(spec, {"data": path})
        by_id = {i.id: i for split in data.splits.values() for i in split}
        return [prefixed(by_id[f"{r['UID']}-{r['pairID']}"], id_prefix) for r in records]
    return make


GENERATORS: tuple[FreshGenerator, ...] = (
    FreshGenerator(
        "blimp_anaphor_gender_agreement", N_PAIRS,
        "A name or a gendered/inanimate noun phrase, a verb group (tense, aspect, modal, "
        "negation) and a verb or verb-preposition; the good reflexive matches the "
        "antecedent's gender (herself/himself/itself), the bad one is another of the three.",
        _make(_anaphor_pair)),
    FreshGenerator(
        "blimp_determiner_noun_agreement_1", N_PAIRS,
        "A subject (name or determiner + person noun, singular or plural, with an agreeing "
        "verb group) and a verb taking a person, place, thing or text object after "
        "this/that/these/those; the good noun's number matches the determiner's, the bad "
        "one is the same noun in the other number.",
        _make(_det_noun_pair)),
    FreshGenerator(
        "blimp_irregular_plural_subject_verb_agreement_1", N_PAIRS,
        "A determiner and an irregular noun (men, mice, teeth, crises, ...) in either "
        "number, then a psych, agentive or intransitive verb in an agreeing frame "
        "(present, is/are, was/were, has/have, doesn't/don't); the good finite "
        "verb agrees with the subject, the bad one takes the other number in the same tense.",
        _make(_irregular_pair)),
)

__all__ = ["GENERATORS"]
