"""Markdown for pull-request comments, safe with untrusted text in it.

Entry fields, file names, notebook errors and metric names come from strangers. Before
they reach a comment they lose control characters and newlines, Markdown punctuation is
escaped (no fake check marks, links, images, headings or HTML), and ``@`` cannot mention
anyone. Code blocks are fenced so that no line can close the fence.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
#: characters with a meaning inside a line (a flattened line cannot start a list,
#: heading or quote): emphasis, code, links and images, HTML, tables, strikethrough,
#: mentions
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~@])")
#: a comment stays well under GitHub's 65,536-character limit
MAX_CHARS = 60000


def md_text(text: str, limit: int = 4000) -> str:
    """Untrusted text as one line of inert Markdown (at most ``limit`` characters)."""
    flat = _CONTROL.sub(" ", text)
    if len(flat) > limit:
        flat = flat[:limit] + " [cut]"
    return _SPECIAL.sub(r"\\\1", flat)


def code_block(lines: list[str]) -> str:
    """Lines in a fenced block no line can close (backticks become ' and control
    characters are dropped)."""
    body = [_CONTROL.sub(" ", line).replace("`", "'") for line in lines]
    return "\n".join(["```text", *body, "```"])


def capped(markdown: str) -> str:
    """A comment body cut to :data:`MAX_CHARS`, saying so."""
    if len(markdown) <= MAX_CHARS:
        return markdown
    return markdown[:MAX_CHARS] + "\n\n(cut: the full text is in the workflow run)\n"


__all__ = ["MAX_CHARS", "capped", "code_block", "md_text"]
