"""Derived results (``cached_json``) are cached, signed and keyed like activations."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probebench.models.cache import ActivationCache, cached_json


def test_a_derived_result_is_cached_signed_and_keyed_by_every_input(tmp_path: Path) -> None:
    store = ActivationCache(tmp_path / "cache")
    calls: list[int] = []

    def compute() -> dict[str, object]:
        calls.append(1)
        return {"value": 0.123456789, "list": [1.5, None], "nan": float("nan")}

    first, hit = cached_json(store, {"kind": "t", "seed": 0}, compute, what="test")
    again, hit_again = cached_json(store, {"kind": "t", "seed": 0}, compute, what="test")
    assert (hit, hit_again, len(calls)) == (False, True, 1)
    assert again["value"] == first["value"] and again["list"] == [1.5, None]
    assert np.isnan(again["nan"])
    cached_json(store, {"kind": "t", "seed": 1}, compute, what="test")  # another input
    assert len(calls) == 2
    # a tampered entry is refused and rebuilt, never used
    (entry,) = [p for p in (tmp_path / "cache").rglob("*.safetensors")
                if p.name.startswith(store.result_key({"kind": "t", "seed": 0})[:8])]
    data = bytearray(entry.read_bytes())
    data[-2] ^= 0x01
    entry.write_bytes(bytes(data))
    rebuilt, hit = cached_json(store, {"kind": "t", "seed": 0}, compute, what="test")
    assert not hit and len(calls) == 3 and rebuilt["value"] == first["value"]


def test_no_store_always_computes() -> None:
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return 1

    for _ in range(2):
        cached_json(None, {"kind": "t"}, compute, what="test")
    assert len(calls) == 2
