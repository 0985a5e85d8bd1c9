"""What the fresh-item generators of every family draw with: word lists written as one
string, a seeded pick, shares by weight, item ids under a prefix, and the normalised
text by which a drawn sentence is compared with the packaged ones.

A generator writes its task's **native** records (BLiMP JSONL lines, a SyntaxGym suite,
verb-grammar JSONL, SentEval TSV), and the task's own format reads them back into items:
a fresh item is read exactly as a registered one would be.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from probebench.tasks.anatomy import Item


def words(text: str) -> tuple[str, ...]:
    """A word list written as one string."""
    return tuple(text.split())


def pairs(text: str) -> tuple[tuple[str, str], ...]:
    """``sing/plural`` entries (``_`` for a space); a bare word takes ``-s``."""
    out = []
    for entry in text.split():
        sing, _, plural = entry.replace("_", " ").partition("/")
        out.append((sing, plural or sing + "s"))
    return tuple(out)


def bars(text: str) -> list[str]:
    """``"a|b|c"`` -> ``["a", "b", "c"]``: the word lists of the generators."""
    return text.split("|")


def bar_table(text: str) -> dict[str, list[str]]:
    """``key: a|b|c`` lines (an indented line continues the one above) -> lists."""
    joined = re.sub(r"\n +", " ", text.strip())
    return {key: [v.strip() for v in value.split("|")] for key, _, value in
            (line.partition(": ") for line in joined.splitlines())}


def pick(rng: np.random.Generator, seq: tuple[Any, ...] | list[Any]) -> Any:
    """One entry of ``seq``, drawn from ``rng``."""
    return seq[int(rng.integers(len(seq)))]


def quota(n: int, weights: Sequence[int]) -> list[int]:
    """``n`` shared in proportion to ``weights`` (largest remainders).

    >>> quota(5, [1, 1]), quota(10, [20, 20, 15])
    ([3, 2], [4, 3, 3])
    """
    exact = [n * w / sum(weights) for w in weights]
    out = [int(x) for x in exact]
    for i in sorted(range(len(weights)), key=lambda i: out[i] - exact[i])[:n - sum(out)]:
        out[i] += 1
    return out


def prefixed(item: Item, prefix: str) -> Item:
    """``item`` with ``prefix`` before its id and its prompts' ids."""
    new_id = prefix + item.id
    prompts = tuple(replace(p, id=new_id + p.id[len(item.id):]) if p.id else p
                    for p in item.prompts)
    return replace(item, id=new_id, prompts=prompts)


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def normalised_text(text: str) -> str:
    """A prompt's text for overlap checks: NFKC, case-folded, punctuation removed,
    whitespace collapsed ("The cat, sleeps." and "the cat sleeps" are the same)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


__all__ = ["bar_table", "bars", "normalised_text", "pairs", "pick", "prefixed", "quota",
           "words"]
