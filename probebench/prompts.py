"""Prompts: texts given to the model, with named character spans.

A span is a half-open character range ``[start, end)`` into the prompt's text. Sites
whose position needs a marker (the end of the question, the think block, the answer)
read it from a span of a fixed name; see ``probebench.models.activations``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from probebench.errors import InputError, field_problem

#: Span names that positions read (``question``, ``think``, ``answer``); others are kept.
SPAN_NAMES = ("question", "think", "answer")


@dataclass(frozen=True)
class Prompt:
    """One text given to the model, with its label and slice tags when it comes from a task.

    ``spans`` maps a name to a half-open character range ``(start, end)`` of ``text``.
    ``label`` is 1 (positive), 0 (negative) or None (not scored). ``slices`` maps a slice
    name (``language``, ``tense``, ...) to this prompt's value. Only ``text`` and
    ``spans`` reach the model, so only they key the activation cache.
    """

    text: str
    spans: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    id: str | None = None
    label: int | None = None
    slices: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text:
            raise InputError(f"prompt {self.label_name}: text must be a non-empty string")
        if self.label not in (0, 1, None):
            raise InputError(f"prompt {self.label_name}: label must be 1, 0 or null, found "
                             f"{self.label!r}")
        for name, span in self.spans.items():
            start, end = span
            if not (0 <= start < end <= len(self.text)):
                raise InputError(
                    f"prompt {self.label_name}: span {name!r} must satisfy "
                    f"0 <= start < end <= {len(self.text)} (the text's length), found {list(span)}"
                )

    @property
    def label_name(self) -> str:
        """How errors name this prompt: its id, or the start of its text."""
        if self.id is not None:
            return repr(self.id)
        short = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return repr(short)

    def canonical(self) -> dict[str, Any]:
        """The fields that decide the model's activations, in a hashable JSON form."""
        return {"text": self.text,
                "spans": {k: [int(v[0]), int(v[1])] for k, v in sorted(self.spans.items())}}

    def record(self) -> dict[str, Any]:
        """Everything about the prompt, for test-set hashes: text, spans, label, slices."""
        return {**self.canonical(), "id": self.id, "label": self.label,
                "slices": dict(sorted(self.slices.items()))}


class _PromptLine(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(min_length=1, description="The prompt text given to the model.")
    id: str | None = Field(default=None, description="An optional identifier, unique per file.")
    spans: dict[str, tuple[int, int]] = Field(
        default_factory=dict,
        description="Named half-open character ranges [start, end) into text.",
    )

    @field_validator("spans", mode="before")
    @classmethod
    def _lists_are_pairs(cls, value: Any) -> Any:
        # JSON has no tuples; accept [start, end] lists as the pair they mean.
        if isinstance(value, dict):
            return {k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}
        return value


def read_prompts_jsonl(path: Path) -> list[Prompt]:
    """Read prompts from a JSONL file: one object per line with ``text``, ``id``, ``spans``.

    Blank lines are skipped. Every error names the file, the line and the field.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    prompts: list[Prompt] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"{path}:{number}"
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")\
                    from None
            if not isinstance(obj, dict):
                raise InputError(f"{where}: expected a JSON object with a 'text' field, "
                                 f"found {type(obj).__name__}")
            try:
                line = _PromptLine.model_validate(obj)
            except ValidationError as exc:
                raise InputError(f"{where}: {field_problem(exc, '(line)')}") from None
            if line.id is not None:
                if line.id in seen:
                    raise InputError(f"{where}: field 'id': {line.id!r} already used on line "
                                     f"{seen[line.id]}")
                seen[line.id] = number
            try:
                prompts.append(Prompt(text=line.text, spans=dict(line.spans), id=line.id))
            except InputError as exc:
                raise InputError(f"{where}: {exc}") from None
    if not prompts:
        raise InputError(f"{path}: no prompts (the file is empty)")
    return prompts


def as_prompts(items: Sequence[Prompt | str]) -> list[Prompt]:
    """Accept plain strings where prompts are expected."""
    return [p if isinstance(p, Prompt) else Prompt(text=p) for p in items]
