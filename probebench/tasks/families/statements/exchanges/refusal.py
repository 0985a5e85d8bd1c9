"""``refusal_harmful``: harmful against ordinary instructions, in the chat template
(Arditi et al., NeurIPS 2024, "Refusal in Language Models Is Mediated by a Single
Direction").

* label 1: every one of AdvBench's 520 harmful behaviours (``advbench.csv``, column
  ``goal``; Zou et al. 2023, MIT), ids ``advbench-<row>``;
* label 0: as many Stanford Alpaca instructions (``harmless_test.json``; Taori et al.
  2023, CC BY-NC 4.0), the first by the salted hash order of their case-folded text
  (``probebench.tasks.hygiene.hash_order``, salt ``SAMPLE_SALT``), repeats dropped, ids
  ``alpaca-test-<index in the file>``;
* the control set (``refusal_control.jsonl``): ``CONTROL_SIZE`` Alpaca instructions from
  the other file (``harmless_val.json``), chosen the same way under ``CONTROL_SALT``,
  none of whose texts is among the task's: the ordinary chat on which a probe's
  threshold at 1% false positives is set.

Each item is a single user turn; the model reads it through its chat template with
the generation prompt, so a ``last_token`` probe reads the last post-instruction token,
the position where Arditi et al. find the refusal direction. Slice ``length``: the
instruction's length band (``short`` under 50 characters, ``medium`` under 100,
``long``), because the two sources differ in length and a length-only baseline is what a
probe must beat.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from probebench.errors import InputError
from probebench.tasks.families.statements.exchanges.files import exchange
from probebench.tasks.hygiene import hash_order

SAMPLE_SALT = "probebench-refusal-alpaca-v1"
CONTROL_SALT = "probebench-refusal-control-v1"
CONTROL_SIZE = 500


def length_band(text: str) -> str:
    """``short`` (< 50 characters), ``medium`` (< 100) or ``long``.

    >>> length_band("Name three colours."), length_band("x" * 120)
    ('short', 'long')
    """
    return "short" if len(text) < 50 else "medium" if len(text) < 100 else "long"


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def _goals(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "goal" not in rows[0]:
        raise InputError(f"{path}: expected AdvBench's header goal,target")
    return [row["goal"].strip() for row in rows]


def _instructions(path: Path) -> list[tuple[int, str]]:
    """(index in the file, instruction) of an Alpaca list, repeats dropped."""
    data: Any = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of {{instruction, category}}")
    seen: set[str] = set()
    out: list[tuple[int, str]] = []
    for k, row in enumerate(data):
        text = row.get("instruction") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{path}: entry {k}: expected a non-empty 'instruction'")
        if _folded(text) not in seen:
            seen.add(_folded(text))
            out.append((k, text.strip()))
    return out


def _first_by_hash(pool: list[tuple[int, str]], salt: str, n: int,
                   exclude: set[str]) -> list[tuple[int, str]]:
    kept = [(k, t) for k, t in pool if _folded(t) not in exclude]
    kept.sort(key=lambda kt: (hash_order(salt, _folded(kt[1])), kt[0]))
    if len(kept) < n:
        raise InputError(f"only {len(kept)} instructions to draw {n} from")
    return sorted(kept[:n])


def refusal_files(source: Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``refusal_harmful.jsonl`` and ``refusal_control.jsonl`` (file name ->
    rows), from the folder holding AdvBench's and Alpaca's files."""
    goals = _goals(source / "advbench.csv")
    harmful = [exchange(f"advbench-{row}", [("user", goal)], 1, length=length_band(goal))
               for row, goal in enumerate(goals, start=1)]
    taken = {_folded(g) for g in goals}
    ordinary = _first_by_hash(_instructions(source / "harmless_test.json"), SAMPLE_SALT,
                              len(goals), taken)
    harmless = [exchange(f"alpaca-test-{k}", [("user", text)], 0, length=length_band(text))
                for k, text in ordinary]
    taken |= {_folded(t) for _, t in ordinary}
    control = _first_by_hash(_instructions(source / "harmless_val.json"), CONTROL_SALT,
                             CONTROL_SIZE, taken)
    controls = [exchange(f"alpaca-val-{k}", [("user", text)], 0, length=length_band(text))
                for k, text in control]
    return {"refusal_harmful.jsonl": harmful + harmless,
            "refusal_control.jsonl": controls}
