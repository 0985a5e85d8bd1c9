"""Fresh-item generators of the BLiMP and SyntaxGym tasks
(``probebench/tasks/families/blimp/fresh.py`` and ``families/syntaxgym/fresh.py``): the
contract, freshness, determinism, fidelity to the registered items, and the grammar rule
of each paradigm, checked against this file's own lexicon."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from functools import cache

import numpy as np
import pytest

from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import FreshGenerator, get_format
from probebench.tasks.families.syntaxgym.format import prediction_results
from probebench.tasks.fresh_items import fresh_seed, overlap, overlap_within, public_items
from probebench.tasks.hygiene import canonical_test_text

BLIMP = get_format("blimp").fresh_generators()
SYNTAXGYM = get_format("syntaxgym").fresh_generators()
GENERATORS = {g.task_id: g for g in (*BLIMP, *SYNTAXGYM)}
TASKS = sorted(GENERATORS)
KEY = secrets.token_bytes(32)  # a throwaway holdout key
PREFIX = "fresh-g1-"


def words(text: str) -> list[str]:
    return text.split()


@cache
def catalog() -> TaskCatalog:
    return TaskCatalog.default()


def run(task: str, key: bytes = KEY, generation: int = 1, n: int | None = None) -> list[Item]:
    gen = GENERATORS[task]
    rng = np.random.default_rng(fresh_seed(key, task, generation))
    return gen.make(catalog().spec(task), catalog().root_of(task), rng,
                    gen.n_items if n is None else n, f"fresh-g{generation}-")


@cache
def fresh(task: str) -> tuple[Item, ...]:
    return tuple(run(task))


@pytest.fixture(scope="module")
def public() -> list[Item]:
    return public_items(catalog())


def texts(item: Item) -> dict[str, str]:
    """condition (or good/bad) -> prompt text."""
    return {str(p.id)[len(item.id) + 1:]: p.text for p in item.prompts}


def regions(item: Item) -> dict[str, dict[int, str]]:
    """condition -> region number -> the region's text."""
    return {p.slices["condition"]: {int(k.split("_")[1]): p.text[s:e]
                                    for k, (s, e) in p.spans.items()}
            for p in item.prompts}


# --- this file's own lexicon (independent of the generators' word lists) ----------------

IRREGULAR = {"man": "men", "woman": "women", "child": "children", "person": "people",
             "mouse": "mice", "goose": "geese", "ox": "oxen", "louse": "lice",
             "tooth": "teeth", "foot": "feet", "cactus": "cacti", "fungus": "fungi",
             "stimulus": "stimuli", "alumnus": "alumni", "criterion": "criteria",
             "phenomenon": "phenomena", "analysis": "analyses", "hypothesis": "hypotheses",
             "diagnosis": "diagnoses", "crisis": "crises", "thesis": "theses",
             "synopsis": "synopses", "wife": "wives", "thief": "thieves", "wolf": "wolves",
             "calf": "calves", "knife": "knives", "leaf": "leaves", "loaf": "loaves",
             "shelf": "shelves", "scarf": "scarves"}


def is_plural_of(plural: str, sing: str) -> bool:
    """English plural morphology, by rule (compounds inflect their last word)."""
    *head_p, p = plural.split()
    *head_s, s = sing.split()
    if head_p != head_s:
        return False
    for man in ("man", "woman"):
        if s.endswith(man) and p == s[: -len(man)] + man.replace("a", "e"):
            return True
    if IRREGULAR.get(s) == p:
        return True
    if s.endswith(("s", "x", "ch", "sh")):
        return p == s + "es"
    if s.endswith("y") and s[-2] not in "aeiou":
        return p == s[:-1] + "ies"
    return p == s + "s"


FEMALE = set(words("woman girl actress waitress mother sister queen aunt niece grandmother "
                   "daughter princess bride lady nun businesswoman wife girlfriend widow duchess "
                   "schoolgirl Alice Anna Emily Sarah Susan Helen Karen Laura Rachel Jessica "
                   "Maria Julia Emma Margaret Rebecca Nancy Barbara Linda Lisa Jane"))
MALE = set(words("man boy father brother king uncle nephew grandfather son prince groom "
                 "gentleman monk husband boyfriend businessman widower duke schoolboy policeman "
                 "fisherman John David Michael Robert William James Thomas Richard Peter Paul "
                 "Mark George Edward Henry Charles Daniel Stephen Andrew Kevin Brian"))
NEUTER = set(words("company government organization university hospital bank newspaper city "
                   "country museum school robot machine computer printer program camera"))
SING_DETS = {"this", "that", "a", "an", "every"}
PLURAL_DETS = {"these", "those", "some", "many", "most", "all", "several", "lot"}
SING_AUX = {"is", "isn't", "was", "wasn't", "has", "hasn't", "doesn't"}
AUX_PAIRS = {("is", "are"), ("isn't", "aren't"), ("was", "were"), ("wasn't", "weren't"),
             ("has", "have"), ("hasn't", "haven't"), ("doesn't", "don't")}


def singular_verb(verb: str, other: str) -> bool:
    """Whether ``verb`` is the singular one of an agreeing pair ``{verb, other}``."""
    for sing, plural in AUX_PAIRS:
        if {verb, other} == {sing, plural}:
            return verb == sing
    base, s = sorted((verb, other), key=len)
    assert s in (base + "s", base + "es", base[:-1] + "ies"), (verb, other)
    return verb == s


# --- the contract ------------------------------------------------------------------------

def test_one_generator_per_task_and_each_is_registered() -> None:
    assert len(TASKS) == 6 == len(BLIMP) + len(SYNTAXGYM)
    assert set(TASKS) == {
        "blimp_anaphor_gender_agreement", "blimp_determiner_noun_agreement_1",
        "blimp_irregular_plural_subject_verb_agreement_1", "syntaxgym_npi_orc_any",
        "syntaxgym_number_prep", "syntaxgym_reflexive_src_masc"}
    for task, gen in GENERATORS.items():
        assert isinstance(gen, FreshGenerator)
        assert catalog().spec(task).format == task.split("_")[0]
        assert gen.description.endswith(".") and 40 < len(gen.description) < 400
        assert gen.n_items <= (120 if task.startswith("blimp") else 80)


@pytest.mark.parametrize("task", TASKS)
def test_items_are_fresh_sized_and_prefixed(task: str, public: list[Item]) -> None:
    items = fresh(task)
    assert len(items) == GENERATORS[task].n_items
    assert all(i.id.startswith(PREFIX) for i in items)
    assert all(str(p.id).startswith(i.id + "-") for i in items for p in i.prompts)
    assert len({i.id for i in items}) == len(items)
    labels = Counter(p.label for i in items for p in i.prompts)
    assert labels[1] >= 100 and labels[0] >= 100, labels
    assert overlap(items, public) == []
    assert overlap_within(list(items)) == []


@pytest.mark.parametrize("task", TASKS)
def test_a_large_draw_stays_fresh(task: str) -> None:
    """The combinatorial space is far larger than a generation: 8x the default draws
    without running dry or repeating a sentence."""
    items = run(task, generation=2, n=8 * GENERATORS[task].n_items)
    assert overlap_within(items) == []
    assert len({p.text for i in items for p in i.prompts}) == sum(len(i.prompts) for i in items)


@pytest.mark.parametrize("task", TASKS)
def test_same_key_same_items_other_key_other_items(task: str) -> None:
    same = canonical_test_text(run(task))
    assert same == canonical_test_text(fresh(task))
    other = run(task, key=secrets.token_bytes(32))
    assert canonical_test_text(other) != same
    shared = {p.text for i in other for p in i.prompts} & {p.text for i in fresh(task)
                                                          for p in i.prompts}
    assert len(shared) < 10  # two keys draw (nearly) disjoint sets
    assert canonical_test_text(run(task, generation=2)) != same


#: sha256 of the items' records under a fixed key (generation 3): the generators draw the
#: same items from the same key after any refactoring; a change of word lists or rules
#: changes these on purpose
PINNED = {
    "blimp_anaphor_gender_agreement":
        "3c3094792d7f5b5a8cb1fbd85ca1221ed07e03b699ad7efd72594f4f2c65427b",
    "blimp_determiner_noun_agreement_1":
        "574cf8c0ba2cc3dbdfb290a8956d573cc91e5d0286ff7bd655322c5b47888830",
    "blimp_irregular_plural_subject_verb_agreement_1":
        "8c41289c9b49f85d65c125b39df2b970088a8809bf97d006f710726c4719051e",
    "syntaxgym_npi_orc_any":
        "d3e5c8c6832994087cf3a1c34287091a3c6e8a116439cd75d9ada0ecf4cabceb",
    "syntaxgym_number_prep":
        "a9b613efa90833bb252ac5788c8a9c3d401e9e95e29459a45cc1fbfa37568a50",
    "syntaxgym_reflexive_src_masc":
        "386f63dd6ac4e4ca22b84b910d45a0fe3e3dc245613712839481ece75fdd900b",
}


@pytest.mark.parametrize("task", TASKS)
def test_a_fixed_key_gives_the_pinned_items(task: str) -> None:
    gen = GENERATORS[task]
    rng = np.random.default_rng(fresh_seed(bytes(range(32)), task, 3))
    items = gen.make(catalog().spec(task), catalog().root_of(task), rng, gen.n_items, "fresh-g3-")
    records = json.dumps([i.record() for i in items], sort_keys=True).encode()
    assert hashlib.sha256(records).hexdigest() == PINNED[task]


# --- fidelity to the registered items ----------------------------------------------------

@pytest.mark.parametrize("task", TASKS)
def test_items_are_shaped_like_the_registered_ones(task: str) -> None:
    registered = catalog().load(task).test[0]
    pattern = {str(p.id)[len(registered.id):]: p.label for p in registered.prompts}
    for item in fresh(task):
        assert item.slices == registered.slices
        assert item.data.keys() == registered.data.keys()
        assert len(item.prompts) == len(registered.prompts)
        assert {str(p.id)[len(item.id):]: p.label for p in item.prompts} == pattern
        assert Counter(p.label for p in item.prompts) == Counter(
            p.label for p in registered.prompts)
        for prompt, reg in zip(item.prompts, registered.prompts, strict=True):
            assert prompt.slices.keys() == reg.slices.keys()
            assert prompt.spans.keys() == reg.spans.keys()
            if task.startswith("blimp"):
                assert prompt.slices == reg.slices


@pytest.mark.parametrize("task", [t for t in TASKS if t.startswith("syntaxgym")])
def test_syntaxgym_predictions_evaluate_as_registered(task: str) -> None:
    registered = catalog().load(task).test[0]

    def outcome(item: Item, expected: float, anomalous: float) -> list[bool]:
        values = {p.slices["condition"]: dict.fromkeys(
            range(1, 10), expected if p.label == 1 else anomalous) for p in item.prompts}
        return prediction_results(item, values)

    want_right, want_wrong = outcome(registered, 1.0, 5.0), outcome(registered, 5.0, 1.0)
    assert want_right and all(want_right) and not any(want_wrong)
    for item in fresh(task):
        assert item.data == registered.data
        assert outcome(item, 1.0, 5.0) == want_right
        assert outcome(item, 5.0, 1.0) == want_wrong


# --- the grammar of each paradigm -------------------------------------------------------

def _good_bad(item: Item) -> tuple[list[str], list[str]]:
    pair = texts(item)
    assert pair["good"].endswith(".") and pair["bad"].endswith(".")
    return pair["good"][:-1].split(), pair["bad"][:-1].split()


def test_det_noun_good_noun_has_the_determiners_number() -> None:
    for item in fresh("blimp_determiner_noun_agreement_1"):
        good, bad = _good_bad(item)
        at = max(i for i, w in enumerate(good) if w in ("this", "that", "these", "those"))
        assert good[: at + 1] == bad[: at + 1]
        noun_good, noun_bad = " ".join(good[at + 1:]), " ".join(bad[at + 1:])
        if good[at] in ("these", "those"):
            assert is_plural_of(noun_good, noun_bad), item.prompts
        else:
            assert is_plural_of(noun_bad, noun_good), item.prompts


def test_anaphor_good_reflexive_has_the_antecedents_gender() -> None:
    items = run("blimp_anaphor_gender_agreement", generation=3, n=600)
    reflexive_of: dict[str, str] = {}
    checked = 0
    for item in items:
        good, bad = _good_bad(item)
        assert good[:-1] == bad[:-1] and good[-1] != bad[-1]
        assert {good[-1], bad[-1]} <= {"herself", "himself", "itself"}
        head = good[1] if good[0] in ("The", "This", "That", "Every", "A", "An") else good[0]
        assert reflexive_of.setdefault(head, good[-1]) == good[-1], head
        for words, reflexive in ((FEMALE, "herself"), (MALE, "himself"), (NEUTER, "itself")):
            if head in words:
                assert good[-1] == reflexive, item.prompts
                checked += 1
    assert checked > 200
    assert set(reflexive_of.values()) == {"herself", "himself", "itself"}


def noun_is_plural(word: str) -> bool | None:
    """Whether an irregular noun is plural (None: not an irregular noun)."""
    word = word.lower()
    if word in IRREGULAR or word.endswith("man"):
        return False
    if word in IRREGULAR.values() or word.endswith("men"):
        return True
    return None


def test_irregular_plural_good_verb_agrees_with_the_subject() -> None:
    for item in fresh("blimp_irregular_plural_subject_verb_agreement_1"):
        good, bad = _good_bad(item)
        at = next(i for i, w in enumerate(good) if noun_is_plural(w) is not None)
        plural = noun_is_plural(good[at])
        assert good[: at + 1] == bad[: at + 1] and good[at + 2:] == bad[at + 2:]
        assert singular_verb(good[at + 1], bad[at + 1]) is not plural, item.prompts
        det = good[at - 1].lower() if at else ""
        assert det not in (PLURAL_DETS if not plural else SING_DETS), item.prompts


def test_npi_any_is_licensed_by_the_matrix_no_only() -> None:
    for item in fresh("syntaxgym_npi_orc_any"):
        parts = regions(item)
        labels = {p.slices["condition"]: p.label for p in item.prompts}
        for cond, words in parts.items():
            assert words[1] == ("No" if cond.startswith("neg") else "The")
            assert words[4] == ("no" if cond.endswith("neg") else "the")
            assert words[8] == "any"
            assert labels[cond] == (1 if cond.startswith("neg") else 0)
            head_plural, rc_plural = words[2].endswith("s"), words[5].endswith("s")
            assert head_plural != rc_plural, words
            assert words[7].split()[0] == ("have" if head_plural else "has"), words


def test_number_prep_verb_agrees_with_the_head_not_the_attractor() -> None:
    for item in fresh("syntaxgym_number_prep"):
        r = regions(item)
        assert is_plural_of(r["match_plural"][2], r["match_sing"][2])
        assert is_plural_of(r["match_sing"][5], r["match_plural"][5])
        sing_verb, plural_verb = r["match_sing"][6], r["match_plural"][6]
        assert singular_verb(sing_verb, plural_verb)
        assert r["mismatch_sing"][6] == plural_verb and r["mismatch_plural"][6] == sing_verb
        for cond in r:
            assert [r[cond][k] for k in (1, 3, 4, 7)] == [r["match_sing"][k]
                                                            for k in (1, 3, 4, 7)]


def test_reflexive_agrees_with_the_head_not_the_relative_clause() -> None:
    for item in fresh("syntaxgym_reflexive_src_masc"):
        r = regions(item)
        assert is_plural_of(r["match_plural"][2], r["match_sing"][2])
        assert is_plural_of(r["match_sing"][6], r["match_plural"][6])
        assert r["match_sing"][8] == r["mismatch_plural"][8] == "himself"
        assert r["match_plural"][8] == r["mismatch_sing"][8] == "themselves"
        assert r["match_sing"][2] not in FEMALE
        for cond in r:
            assert {k: v for k, v in r[cond].items() if k not in (2, 6, 8)} == {
                k: v for k, v in r["match_sing"].items() if k not in (2, 6, 8)}


# --- drawing again on a repeat or a public sentence -------------------------------------

def test_blimp_draws_again_on_repeats_and_public_sentences() -> None:
    from probebench.tasks.families.blimp.fresh import _make

    # one of the five is public: "Katherine can't help herself." (anaphor_gender_agreement)
    names = ("Katherine", "Anna", "Julia", "Emma", "Laura", "Helen")

    def draw(rng: np.random.Generator) -> tuple[str, str, str, str]:
        return f"{names[int(rng.integers(len(names)))]} can't help", "herself", "himself", ""

    task = "blimp_anaphor_gender_agreement"
    make = _make(draw)
    items = make(catalog().spec(task), catalog().root_of(task), np.random.default_rng(0), 5, "x-")
    assert sorted(texts(i)["good"].split()[0] for i in items) == sorted(names[1:])
    with pytest.raises(ValueError, match="drew only 5 fresh pairs of 6"):
        make(catalog().spec(task), catalog().root_of(task), np.random.default_rng(0), 6, "x-")


def test_syntaxgym_draws_again_on_repeats_and_public_sentences() -> None:
    from probebench.tasks.families.syntaxgym.fresh import _make

    # "The author next to the senators is good" (and its conditions) are public
    heads = (("author", "senators"), ("baker", "senators"), ("judge", "senators"))

    def draw(rng: np.random.Generator) -> dict[str, list[str]]:
        head, other = heads[int(rng.integers(len(heads)))]
        sing = ["The", head, "next to", "the", other]
        plural = ["The", head + "s", "next to", "the", other[:-1]]
        return {"match_sing": [*sing, "is", "good"], "mismatch_sing": [*sing, "are", "good"],
                "mismatch_plural": [*plural, "is", "good"],
                "match_plural": [*plural, "are", "good"]}

    task = "syntaxgym_number_prep"
    make = _make(draw)
    items = make(catalog().spec(task), catalog().root_of(task), np.random.default_rng(0), 2, "x-")
    assert sorted(regions(i)["match_sing"][2] for i in items) == ["baker", "judge"]
    with pytest.raises(ValueError, match="drew only 2 fresh items of 3"):
        make(catalog().spec(task), catalog().root_of(task), np.random.default_rng(0), 3, "x-")
