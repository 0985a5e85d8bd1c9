"""The interface of a fresh-item generator, and the rules every generated set obeys.

A *fresh* holdout generation holds items that exist in no public release: written by this
project following the task's own templates and rules. The generators' code is public
(here), so their seed is not: it is derived from the holdout key (``fresh_seed``), so
nobody without the key can rerun a generator to obtain the sealed items.

A generator writes the task's **native** records (BLiMP JSONL lines, a SyntaxGym suite,
verb-grammar JSONL, SentEval TSV), and the task's own format reads them back into
items: a fresh item is read exactly as a registered one would be.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probebench.tasks.anatomy import Item
from probebench.tasks.spec import TaskSpec

FRESH_SALT = b"probebench-fresh-items/1"

#: (spec, the task's data folder, a seeded generator, how many items, the id prefix) ->
#: the items; every item id starts with the prefix
Make = Callable[[TaskSpec, Path, np.random.Generator, int, str], list[Item]]


@dataclass(frozen=True)
class FreshGenerator:
    """How fresh items of one registered task are made."""

    task_id: str
    #: the default number of items of a generation (sized so that a 10-point AUROC drop
    #: is detectable; see ``probebench.evaluation.power``)
    n_items: int
    #: one line on what the generator varies and which rules it keeps
    description: str
    make: Make


def bars(text: str) -> list[str]:
    """``"a|b|c"`` -> ``["a", "b", "c"]``: the word lists of the generators."""
    return text.split("|")


def bar_table(text: str) -> dict[str, list[str]]:
    """``key: a|b|c`` lines (an indented line continues the one above) -> lists."""
    joined = re.sub(r"\n +", " ", text.strip())
    return {key: [v.strip() for v in value.split("|")] for key, _, value in
            (line.partition(": ") for line in joined.splitlines())}


def fresh_seed(key: bytes, task_id: str, generation: int) -> int:
    """A generator's seed: HMAC-SHA256 of the task and generation under the holdout key,
    first 8 bytes. Without the key it cannot be computed, so the public generator code
    does not give away the sealed items."""
    message = FRESH_SALT + b"\0" + task_id.encode("utf-8") + b"\0" + str(generation).encode()
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def normalised_text(text: str) -> str:
    """A prompt's text for overlap checks: NFKC, case-folded, punctuation removed,
    whitespace collapsed ("The cat, sleeps." and "the cat sleeps" are the same)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


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


__all__ = ["FRESH_SALT", "FreshGenerator", "Make", "bar_table", "bars", "fresh_seed",
           "normalised_text", "texts_of"]
