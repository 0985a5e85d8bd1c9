"""Writing generated exchange files: one canonical JSON object a line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: task id -> the files its generator writes, relative to the catalog's data folder
EXCHANGE_FILES: dict[str, tuple[str, ...]] = {
    "refusal_harmful": ("refusal/refusal_harmful.jsonl", "refusal/refusal_control.jsonl"),
    "honesty_instructed": ("honesty/honesty_instructed_test.jsonl",
                           "honesty/honesty_instructed_train.jsonl",
                           "honesty/honesty_control.jsonl"),
    "honesty_instructed_cities": ("honesty/honesty_cities_test.jsonl",
                                  "honesty/honesty_cities_train.jsonl"),
}


def exchange(item_id: str, turns: Iterable[tuple[str, str]], label: int,
             **slices: str) -> dict[str, Any]:
    """One JSONL line of a chat task: id, messages, label, then its slices."""
    return {"id": item_id,
            "messages": [{"role": role, "content": content} for role, content in turns],
            "label": label, **slices}


def jsonl_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as JSONL: keys in the order given, UTF-8 unescaped, ``\\n`` after each."""
    return "".join(json.dumps(row, ensure_ascii=False, separators=(", ", ": ")) + "\n"
                   for row in rows)


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows as JSONL, whole or not at all (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text(jsonl_text(rows), encoding="utf-8")
    part.replace(path)
