"""Fresh holdout items: items of a registered task that exist in no public release.

``fresh_items(catalog, task_id, key, generation)`` runs the task's generator under a
seed derived from the holdout key and checks the result against every packaged file
(every split and public holdout of every registered task) by item id, exact text and
normalised text: a fresh item shares nothing with what anyone can download. The items
are then sealed (``probebench.tasks.sealed.seal``), never written to the repository.

The generators belong to the task formats (``TaskFormat.fresh_generators``), each in its
family's folder (``probebench/tasks/families/<family>/fresh.py``): the one registry of
formats answers which task has one. Their code is public, so their seed is not: it is
derived from the holdout key (``fresh_seed``), so nobody without the key can rerun a
generator to obtain the sealed items.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

import numpy as np

from probebench.errors import InputError
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import FreshGenerator, format_names, get_format
from probebench.tasks.families.drawing import normalised_text

FRESH_SALT = b"probebench-fresh-items/1"


def fresh_seed(key: bytes, task_id: str, generation: int) -> int:
    """A generator's seed: HMAC-SHA256 of the task and generation under the holdout key,
    first 8 bytes. Without the key it cannot be computed, so the public generator code
    does not give away the sealed items."""
    message = FRESH_SALT + b"\0" + task_id.encode("utf-8") + b"\0" + str(generation).encode()
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")


def generators() -> dict[str, FreshGenerator]:
    """Every fresh-item generator, by task id: those of every registered format."""
    out: dict[str, FreshGenerator] = {}
    for name in format_names():
        for gen in get_format(name).fresh_generators():
            if gen.task_id in out:
                raise ValueError(f"two fresh-item generators for {gen.task_id}")
            out[gen.task_id] = gen
    return dict(sorted(out.items()))


def generator_for(task_id: str) -> FreshGenerator:
    gens = generators()
    if task_id not in gens:
        raise InputError(f"no fresh-item generator for task {task_id!r}; tasks with one: "
                         f"{', '.join(gens)}")
    return gens[task_id]


def public_items(catalog: TaskCatalog) -> list[Item]:
    """Every item anyone can read: every split and public holdout of every task of the
    catalog (the packaged files)."""
    out: list[Item] = []
    for task_id in catalog.ids:
        out.extend(item for split in catalog.load(task_id).splits.values() for item in split)
        spec = catalog.spec(task_id)
        for holdout in spec.holdouts:
            out.extend(catalog.load_holdout(task_id, holdout).test)
    return out


def texts_of(items: Iterable[Item]) -> tuple[set[str], set[str], set[str]]:
    """(item ids, prompt texts, normalised prompt texts) of ``items``."""
    ids: set[str] = set()
    texts: set[str] = set()
    norm: set[str] = set()
    for item in items:
        ids.add(item.id)
        for prompt in item.prompts:
            texts.add(prompt.text)
            norm.add(normalised_text(prompt.text))
    return ids, texts, norm


def overlap(items: Iterable[Item], public: Iterable[Item]) -> list[str]:
    """Why ``items`` are not fresh against ``public`` (empty when they are): shared item
    ids, exact prompt texts, or normalised prompt texts."""
    ids, texts, norm = texts_of(public)
    problems: list[str] = []
    for item in items:
        if item.id in ids:
            problems.append(f"{item.id}: item id already used in a packaged file")
        for prompt in item.prompts:
            if prompt.text in texts:
                problems.append(f"{item.id}: prompt {prompt.text!r} is in a packaged file")
            elif normalised_text(prompt.text) in norm:
                problems.append(f"{item.id}: prompt {prompt.text!r} is, normalised, in a "
                                "packaged file")
    return problems


def fresh_items(catalog: TaskCatalog, task_id: str, key: bytes, generation: int, *,
                n_items: int | None = None, public: list[Item] | None = None) -> list[Item]:
    """Generation ``generation``'s fresh items of ``task_id``: its generator run with the
    key-derived seed, item ids prefixed ``fresh-g<generation>-``, checked to share no
    id, text or normalised text with any packaged file. ``public`` (default: every item
    of the catalog) may be given to check several tasks against one load."""
    gen = generator_for(task_id)
    spec = catalog.spec(task_id)
    rng = np.random.default_rng(fresh_seed(key, task_id, generation))
    n = gen.n_items if n_items is None else n_items
    if n < 1:
        raise InputError(f"n_items {n}: expected at least 1")
    prefix = f"fresh-g{generation}-"
    items = gen.make(spec, catalog.root_of(task_id), rng, n, prefix)
    bad = [i.id for i in items if not i.id.startswith(prefix)]
    if bad or len({i.id for i in items}) != len(items) or len(items) != n:
        raise ValueError(f"the {task_id} generator broke its contract: {len(items)} items "
                         f"for {n}, ids {bad[:3]} without the prefix {prefix!r}, or ids "
                         "repeated")
    problems = overlap(items, public_items(catalog) if public is None else public)
    if problems:
        raise InputError(f"fresh items of {task_id} overlap the packaged files: "
                         + "; ".join(problems[:5]))
    own = overlap_within(items)
    if own:
        raise InputError(f"fresh items of {task_id} repeat themselves: " + "; ".join(own[:5]))
    return items


def overlap_within(items: list[Item]) -> list[str]:
    """Prompt texts (normalised) that two items of ``items`` share."""
    seen: dict[str, str] = {}
    problems: list[str] = []
    for item in items:
        for text in {normalised_text(p.text) for p in item.prompts}:
            if text in seen and seen[text] != item.id:
                problems.append(f"{item.id} and {seen[text]} share the prompt {text!r}")
            seen.setdefault(text, item.id)
    return problems


__all__ = ["FRESH_SALT", "FreshGenerator", "fresh_items", "fresh_seed", "generator_for",
           "generators", "normalised_text", "overlap", "overlap_within", "public_items",
           "texts_of"]
