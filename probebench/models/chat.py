"""Chat exchanges read through a model's own chat template.

A task whose items are chat exchanges (``Prompt.messages``) hands the model no fixed
text: the exchange is hashed into the test set as ``(role, content)`` turns, and each
model reads it rendered by its own tokenizer's chat template
(``tokenizer.apply_chat_template``, with the generation prompt when the exchange ends on
a user turn). The rendered prompt keeps the exchange's spans (``question``: the last user
turn, ``answer``: the last assistant turn), found in the rendering by their content, so
``end_answer`` reads the last token of the assistant's turn and ``last_token`` of an
exchange that ends on a user turn reads the last post-instruction token (the end of the
template's assistant header: Arditi et al.'s refusal-direction position).

The rendered text already holds the template's special tokens, so it is tokenized
without adding the tokenizer's own (no second BOS). A tokenizer without a chat template
(an encoder such as all-MiniLM-L6-v2) reads the exchange's plain rendering
(``probebench.prompts.plain_chat_text``) with its usual special tokens; results say
which rendering a model read (``rendering``).

The template is part of the tokenizer, so of the model identity that keys the
activation cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from probebench.errors import InputError, SiteError
from probebench.prompts import Prompt, chat_spans

#: what ``rendering`` says for a model that reads exchanges through its template
TEMPLATE = "chat template"
#: ... and for one without a template (the plain ``User: ...`` rendering)
PLAIN = "plain"


def has_chat_template(tokenizer: Any) -> bool:
    """Whether the tokenizer has a chat template to apply."""
    return bool(getattr(tokenizer, "chat_template", None))


def rendering(tokenizer: Any) -> str:
    """How this tokenizer reads chat exchanges: ``TEMPLATE`` or ``PLAIN``."""
    return TEMPLATE if has_chat_template(tokenizer) else PLAIN


def render(tokenizer: Any, prompt: Prompt) -> Prompt:
    """The prompt as this tokenizer's model reads it: a chat exchange rendered by the
    chat template with its spans found again; any other prompt (or a tokenizer without a
    template) unchanged."""
    if prompt.messages is None or not has_chat_template(tokenizer):
        return prompt
    turns = [{"role": role, "content": content} for role, content in prompt.messages]
    waiting = prompt.messages[-1][0] == "user"
    try:
        text = tokenizer.apply_chat_template(turns, tokenize=False,
                                             add_generation_prompt=waiting)
    except Exception as exc:  # jinja errors: a template that refuses the exchange
        raise SiteError(f"prompt {prompt.label_name}: the model's chat template refused the "
                        f"exchange ({type(exc).__name__}: {exc})") from None
    if not isinstance(text, str) or not text:
        raise SiteError(f"prompt {prompt.label_name}: the chat template rendered nothing")
    try:
        spans = chat_spans(text, prompt.messages)
    except InputError as exc:
        raise SiteError(f"prompt {prompt.label_name}: {exc}") from None
    return Prompt(text, spans=spans, id=prompt.id, label=prompt.label,
                  slices=dict(prompt.slices), messages=prompt.messages)


def rendered(tokenizer: Any, prompts: Sequence[Prompt]) -> list[Prompt]:
    """``render`` of every prompt, in order."""
    return [render(tokenizer, p) for p in prompts]


def is_templated(tokenizer: Any, prompt: Prompt) -> bool:
    """Whether the model reads this prompt through its chat template (then its text is
    tokenized without the tokenizer's own special tokens)."""
    return prompt.messages is not None and has_chat_template(tokenizer)


__all__ = ["PLAIN", "TEMPLATE", "has_chat_template", "is_templated", "render", "rendered",
           "rendering"]
