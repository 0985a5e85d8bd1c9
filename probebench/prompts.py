"""Prompts: texts given to the model, with named character spans.

A span is a half-open character range ``[start, end)`` into the prompt's text. Sites
whose position needs a marker (the end of the question, the think block, the answer)
read it from a span of a fixed name; see ``probebench.models.activations``.

A prompt may be a chat exchange (``messages``: ``(role, content)`` pairs). Its ``text``
is then the exchange's plain rendering (``plain_chat_text``: ``User: ...`` and
``Assistant: ...`` paragraphs), which is what test-set hashes, lengths and pages read;
the model reads the exchange through its own tokenizer's chat template
(``probebench.models.chat``), with the ``question`` span on the last user turn and the
``answer`` span on the last assistant turn in either rendering. An exchange that ends
on a user turn is read with the template's generation prompt (the tokens that open the
assistant's turn), so ``last_token`` is the last post-instruction token.
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
#: the roles of a chat exchange's turns
CHAT_ROLES = ("system", "user", "assistant")
#: what the plain rendering calls each role
_ROLE_NAMES = {"system": "System", "user": "User", "assistant": "Assistant"}

Messages = tuple[tuple[str, str], ...]


def check_messages(messages: Sequence[tuple[str, str]], where: str) -> Messages:
    """A chat exchange as ``(role, content)`` pairs, checked: known roles, non-empty
    contents without surrounding whitespace, at most one leading system turn, then user
    and assistant turns alternating from a user turn."""
    out: list[tuple[str, str]] = []
    for k, pair in enumerate(messages):
        role, content = pair
        if role not in CHAT_ROLES:
            raise InputError(f"{where}: turn {k + 1}: role must be one of "
                             f"{', '.join(CHAT_ROLES)}, found {role!r}")
        if not isinstance(content, str) or not content.strip():
            raise InputError(f"{where}: turn {k + 1} ({role}): content must be a non-empty "
                             "string")
        if content != content.strip():
            raise InputError(f"{where}: turn {k + 1} ({role}): content has leading or "
                             "trailing whitespace (chat templates strip it differently; "
                             "strip it in the file)")
        out.append((role, content))
    turns = [r for r, _ in out]
    if turns and turns[0] == "system":
        turns = turns[1:]
    expected = ["user" if k % 2 == 0 else "assistant" for k in range(len(turns))]
    if not turns or turns != expected:
        raise InputError(f"{where}: a chat exchange is an optional system turn, then user "
                         f"and assistant turns alternating from a user turn; found "
                         f"{', '.join(r for r, _ in out) or 'no turns'}")
    return tuple(out)


def chat_spans(text: str, messages: Messages) -> dict[str, tuple[int, int]]:
    """The ``question`` (last user turn) and ``answer`` (last assistant turn, when there
    is one) spans of ``messages`` in ``text``, a rendering that writes every turn's
    content verbatim and in order; an error when a content is not found."""
    spans: dict[str, tuple[int, int]] = {}
    at = 0
    for role, content in messages:
        start = text.find(content, at)
        if start < 0:
            raise InputError(f"the rendered exchange does not contain the {role} turn "
                             f"{content[:40]!r} verbatim (does the chat template rewrite "
                             "turns?)")
        at = start + len(content)
        if role == "user":
            spans["question"] = (start, at)
        elif role == "assistant":
            spans["answer"] = (start, at)
    return spans


def plain_chat_text(messages: Messages) -> str:
    """The model-independent rendering of an exchange: one ``Role: content`` paragraph a
    turn, and a closing ``Assistant:`` when the exchange waits for the assistant.

    >>> plain_chat_text((("user", "Hi."), ("assistant", "Hello.")))
    'User: Hi.\n\nAssistant: Hello.'
    >>> plain_chat_text((("user", "Hi."),))
    'User: Hi.\n\nAssistant:'
    """
    parts = [f"{_ROLE_NAMES[role]}: {content}" for role, content in messages]
    if messages and messages[-1][0] == "user":
        parts.append("Assistant:")
    return "\n\n".join(parts)


def chat_prompt(messages: Sequence[tuple[str, str]], *, id: str | None = None,
                label: int | None = None, slices: Mapping[str, str] | None = None,
                where: str | None = None) -> Prompt:
    """A chat exchange as a prompt: its plain rendering, with its spans."""
    checked = check_messages(messages, where or f"prompt {id!r}")
    text = plain_chat_text(checked)
    spans: dict[str, tuple[int, int]] = {}
    at = 0
    for role, content in checked:  # each paragraph is "Role: content", in order
        start = at + len(_ROLE_NAMES[role]) + 2
        at = start + len(content)
        spans["question" if role == "user" else "answer" if role == "assistant"
              else "system"] = (start, at)
        at += 2
    spans.pop("system", None)
    return Prompt(text, spans=spans, id=id, label=label, slices=dict(slices or {}),
                  messages=checked)


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
    #: a chat exchange, ``(role, content)`` pairs, read through the model's chat
    #: template; ``text`` is then its plain rendering (``chat_prompt`` makes both)
    messages: Messages | None = None

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
        """The fields that decide the model's activations, in a hashable JSON form (a
        chat exchange's ``messages`` too: the model reads those)."""
        out: dict[str, Any] = {
            "text": self.text,
            "spans": {k: [int(v[0]), int(v[1])] for k, v in sorted(self.spans.items())}}
        if self.messages is not None:
            out["messages"] = [[role, content] for role, content in self.messages]
        return out

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
