"""Submitters' text on the leaderboard, rendered inert: safe links and a small Markdown subset.

Everything a submitter controls reaches a page through Jinja2's autoescape, except two
things made here:

* ``safe_url``: a URL becomes a link only when it is ``http`` or ``https`` with a host
  (never ``javascript:``, ``data:``, ``file:`` or a scheme-relative ``//host``);
* ``render_markdown``: an artifact's README as HTML from a subset of Markdown
  (headings, paragraphs, lists, fenced code, pipe tables, ``code``, **bold** and
  links). Every piece of text is escaped before it is wrapped in a tag, raw HTML is
  shown as text, images are never embedded (their alt text is kept), and a link's
  target goes through a resolver that returns a safe href or None (then the target is
  shown as text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from markupsafe import Markup, escape

#: characters a URL may hold on the leaderboard: no space, quote, angle bracket or control
_URL_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an absolute http(s) URL with a host, else None.

    >>> safe_url("https://arxiv.org/abs/1909.03368")
    'https://arxiv.org/abs/1909.03368'
    >>> safe_url("javascript:alert(1)") is None, safe_url("//evil.example") is None
    (True, True)
    """
    if not url:
        return None
    url = url.strip()
    if not _URL_CHARS.match(url):
        return None
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return url


def plain_markdown(text: str) -> str:
    """Inline Markdown (``**bold**``, ```code```) as plain text, for tooltips."""
    return text.replace("**", "").replace("`", "")


def inline_markdown(text: str) -> Markup:
    """Inline Markdown (``**bold**``, ```code```) as escaped HTML."""
    html = str(escape(text))
    html = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html)
    html = re.sub(r"`(.+?)`", r"<code>\1</code>", html)
    return Markup(html)


def breakable(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity after each underscore (long task
    ids in narrow columns break between words, not inside them).

    >>> str(breakable("blimp_passive_1"))
    'blimp_<wbr>passive_<wbr>1'
    """
    return Markup("_<wbr>").join(escape(part) for part in text.split("_"))


Resolver = Callable[[str], str | None]

_INLINE = re.compile(r"`([^`]+)`"                                   # code span
                     r"|!?\[([^\]]+)\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"  # link/image
                     r"|\*\*(.+?)\*\*")                              # bold


def _inline(text: str, resolve: Resolver) -> str:
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(str(escape(text[pos:m.start()])))
        code, label, target, bold = m.groups()
        if code is not None:
            out.append(f"<code>{escape(code)}</code>")
        elif label is not None:
            inner = _inline(label, resolve)
            href = None if m.group(0).startswith("!") else resolve(target)
            if href is None:
                out.append(f'{inner} <span class="note">({escape(target)})</span>')
            else:
                out.append(f'<a href="{escape(href)}" rel="nofollow noopener">{inner}</a>')
        else:
            out.append(f"<strong>{_inline(bold, resolve)}</strong>")
        pos = m.end()
    out.append(str(escape(text[pos:])))
    return "".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") else line
    return [c.strip() for c in line.split("|")]


_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_ITEM = re.compile(r"^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def render_markdown(text: str, resolve: Resolver = safe_url, *,
                    heading_offset: int = 2) -> Markup:
    """``text`` as HTML: a small Markdown subset, every text escaped (module docstring).
    Headings move down ``heading_offset`` levels (a README's ``#`` under a page's h2).

    >>> str(render_markdown("# T\\n<script>x</script> [a](javascript:y)"))
    '<h3>T</h3>\\n<p>&lt;script&gt;x&lt;/script&gt; a <span class="note">(javascript:y)</span></p>'
    """
    lines = text.replace("\r\n", "\n").split("\n")
    html: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            html.append(f"<p>{_inline(' '.join(s.strip() for s in para), resolve)}</p>")
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            flush()
            body = []
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith("```"):
                body.append(lines[i])
                i += 1
            html.append(f"<pre><code>{escape(chr(10).join(body))}</code></pre>")
        elif not line.strip():
            flush()
        elif heading := _HEADING.match(line):
            flush()
            level = min(6, len(heading.group(1)) + heading_offset)
            html.append(f"<h{level}>{_inline(heading.group(2), resolve)}</h{level}>")
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            flush()
            head = "".join(f"<th>{_inline(c, resolve)}</th>" for c in _cells(line))
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append("<tr>" + "".join(f"<td>{_inline(c, resolve)}</td>"
                                             for c in _cells(lines[i])) + "</tr>")
                i += 1
            html.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
                        "</tbody></table>")
            continue
        elif item := _ITEM.match(line):
            flush()
            tag = "ol" if item.group(1) else "ul"
            items = [item.group(2)]
            i += 1
            while i < len(lines) and lines[i].strip():
                more = _ITEM.match(lines[i])
                if more and bool(more.group(1)) == (tag == "ol"):
                    items.append(more.group(2))
                elif more:
                    break
                else:
                    items[-1] += " " + lines[i].strip()  # a continuation line
                i += 1
            html.append(f"<{tag}>" + "".join(f"<li>{_inline(s, resolve)}</li>" for s in items)
                        + f"</{tag}>")
            continue
        else:
            para.append(line)
        i += 1
    flush()
    return Markup("\n".join(html))


__all__ = ["Resolver", "breakable", "inline_markdown", "plain_markdown", "render_markdown",
           "safe_url"]
