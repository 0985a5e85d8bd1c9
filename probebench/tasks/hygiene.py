"""Test-set hashes and deterministic splits.

Canonical test set: the test items sorted by id, each as canonical JSON (sorted keys,
no insignificant whitespace, UTF-8, ``Item.record``: id, slices, format data and every
prompt's text, spans, label and slices), joined with ``\\n``. Its SHA-256 is the task's
``test_sha256``. It changes exactly when something a metric could see changes, and not
with the file's formatting (the raw files are pinned separately by ``files_sha256``).

Hashed split: an item is in the test split when the first 8 bytes of
``sha256("<salt>/<item id>")``, read as a big-endian integer, fall below
``test_fraction * 2**64``. Deterministic, independent of file order, and an item's
split never changes when others are added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from probebench.hashing import canonical_json, sha256_bytes
from probebench.tasks.anatomy import Item


def canonical_test_text(items: Iterable[Item]) -> str:
    rows = sorted(items, key=lambda item: item.id)
    return "\n".join(canonical_json(item.record()) for item in rows)


def canonical_test_sha256(items: Iterable[Item]) -> str:
    return sha256_bytes(canonical_test_text(items).encode("utf-8"))


def hash_order(salt: str, item_id: str) -> int:
    """An item's place in a salted pseudo-random order (the first 8 bytes of SHA-256)."""
    return int.from_bytes(hashlib.sha256(f"{salt}/{item_id}".encode()).digest()[:8], "big")


def in_test_split(salt: str, item_id: str, test_fraction: float) -> bool:
    return hash_order(salt, item_id) < int(test_fraction * 2**64)


def hashed_split(items: Sequence[Item], salt: str,
                 test_fraction: float) -> tuple[list[Item], list[Item]]:
    """(train, test) by the hashed rule above."""
    train: list[Item] = []
    test: list[Item] = []
    for item in items:
        (test if in_test_split(salt, item.id, test_fraction) else train).append(item)
    return train, test
