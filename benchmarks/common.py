"""Shared pieces of the benchmarks: a seeded sentence generator and a matmul probe."""

from __future__ import annotations

import random
import time

SUBJECTS = ["the old farmer", "my younger sister", "a tired doctor", "the new teacher",
            "our neighbours", "the quiet student", "a famous painter", "the small children",
            "his best friend", "the local baker", "a curious journalist", "the two pilots"]
VERBS = ["carried", "noticed", "painted", "repaired", "described", "borrowed", "cleaned",
         "photographed", "delivered", "forgot", "discovered", "followed"]
OBJECTS = ["a heavy wooden box", "the broken kitchen window", "an unusual red bicycle",
           "the letters from the bank", "a basket of ripe apples", "the map of the city",
           "several old photographs", "the blue umbrella", "a long winding road"]
ENDINGS = ["before the storm arrived", "near the river last week", "after a long day at work",
           "during the summer holidays", "early on Sunday morning", "without saying a word",
           "in the middle of the night", "while everyone was watching"]


def sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct English sentences of about 12 words, the same for a given seed."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        text = (f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
                f"{rng.choice(ENDINGS)}.")
        text = text[0].upper() + text[1:]
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def matmul_gflops(size: int = 2048, repeats: int = 10) -> float:
    """The machine's float32 matmul rate (GFLOP/s) with torch's default threads."""
    import torch

    a = torch.randn(size, size)
    b = torch.randn(size, size)
    for _ in range(3):
        a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9
