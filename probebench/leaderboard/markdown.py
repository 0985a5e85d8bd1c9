"""Submitters' text on the leaderboard, rendered inert: safe links and Markdown.

Everything a submitter controls reaches a page through Jinja2's autoescape, except what
is made here:

* ``safe_url``: a URL becomes a link only when it is ``http`` or ``https`` with a host
  (never ``javascript:``, ``data:``, ``file:`` or a scheme-relative ``//host``);
  ``link_url`` also lets a ``mailto:`` address through;
* ``render_markdown``: an artifact's README as HTML, parsed by markdown-it-py
  (CommonMark with pipe tables). Raw HTML is off, so a tag is shown as text, and every
  piece of text is escaped by the renderer. A link's target goes through a resolver
  that returns a safe href or None: markdown-it asks it before it makes a link
  (``validateLink``), so a refused target stays in the text as written, and every href
  the resolver gave is checked once more before the page is written (only ``http(s)``,
  ``mailto`` and relative paths pass). Images are never embedded: an image becomes a
  link to its picture, labelled with its alt text;
* ``inline_markdown`` and ``plain_markdown``: the one-line fields (descriptions, task
  sources, axis definitions) with ``**bold**``, ``*emphasis*`` and ```code``` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import OptionsDict
from markupsafe import Markup, escape

#: characters a URL may hold on the leaderboard: no space, quote, angle bracket or control
_URL_CHARS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+\Z")
#: what a ``mailto:`` link may name: one plain address
_MAILTO = re.compile(r"^mailto:[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\Z",
                     re.IGNORECASE)


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


def link_url(url: str | None) -> str | None:
    """``url`` when it is a safe http(s) URL (``safe_url``) or a ``mailto:`` of one
    plain address, else None: the links a README may hold anywhere.

    >>> link_url("mailto:probes@example.org"), link_url("mailto:a@b.org?body=x")
    ('mailto:probes@example.org', None)
    """
    if url and _MAILTO.match(url.strip()):
        return url.strip()
    return safe_url(url)


def _href_ok(href: str) -> bool:
    """The last check on an href a resolver returned: http(s) with a host, a plain
    ``mailto:``, or a relative path (no scheme, no ``//host``)."""
    if not _URL_CHARS.match(href):
        return False
    parts = urlsplit(href)
    if parts.scheme:
        return link_url(href) is not None
    return not parts.netloc and not href.startswith("//")


Resolver = Callable[[str], str | None]


def _checked(resolve: Resolver, target: str) -> str | None:
    href = resolve(target)
    return href if href is not None and _href_ok(href) else None


def _inline_parser() -> MarkdownIt:
    return MarkdownIt("zero").enable(["emphasis", "backticks"])


_INLINE = _inline_parser()


def plain_markdown(text: str) -> str:
    """Inline Markdown (``**bold**``, ```code```) as plain text, for tooltips.

    >>> plain_markdown("the **95%** interval of `auroc`")
    'the 95% interval of auroc'
    """
    out = []
    for block in _INLINE.parseInline(text):
        for token in block.children or ():
            if token.type in ("text", "code_inline"):
                out.append(token.content)
            elif token.type == "softbreak":
                out.append("\n")
    return "".join(out)


def inline_markdown(text: str) -> Markup:
    """Inline Markdown (``**bold**``, ``*emphasis*``, ```code```) as escaped HTML.

    >>> str(inline_markdown("**bold** `<b>` <i>"))
    '<strong>bold</strong> <code>&lt;b&gt;</code> &lt;i&gt;'
    """
    return Markup(_INLINE.renderInline(text))


def breakable(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity after each underscore (long task
    ids in narrow columns break between words, not inside them).

    >>> str(breakable("blimp_passive_1"))
    'blimp_<wbr>passive_<wbr>1'
    """
    return Markup("_<wbr>").join(escape(part) for part in text.split("_"))


def _relink(children: list[Token], resolve: Resolver) -> list[Token]:
    """Links with the resolver's hrefs (nofollow); a link whose target the resolver
    refuses keeps its label, followed by the target as text."""
    out: list[Token] = []
    pending: list[str | None] = []  # per open link: the text to add after its label
    for token in children:
        if token.type == "link_open":
            target = str(token.attrGet("href") or "")
            href = _checked(resolve, target)
            if href is None:
                pending.append(target)
                continue
            pending.append(None)
            token.attrs = {"href": href, "rel": "nofollow noopener",
                           **({"title": token.attrs["title"]} if "title" in token.attrs
                              else {})}
        elif token.type == "link_close" and pending:
            refused = pending.pop()
            if refused is not None:
                note = Token("text", "", 0, content=f" ({refused})")
                out.append(note)
                continue
        elif token.children:
            token.children = _relink(token.children, resolve)
        out.append(token)
    return out


def _render_image(resolve: Resolver) -> Callable[..., str]:
    def image(renderer: RendererHTML, tokens: Sequence[Token], idx: int,
              options: OptionsDict, env: Any) -> str:
        token = tokens[idx]
        alt = escapeHtml(renderer.renderInlineAsText(token.children or [], options, env)
                         or "image")
        href = _checked(resolve, str(token.attrGet("src") or ""))
        if href is None:
            return alt
        return f'<a href="{escapeHtml(href)}" rel="nofollow noopener">{alt}</a>'
    return image


def _readme_parser(resolve: Resolver, heading_offset: int) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    # a refused target is no link at all: markdown-it leaves "[label](target)" as text
    md.validateLink = lambda url: _checked(resolve, url) is not None  # type: ignore[method-assign]

    def sanitise(state: StateCore) -> None:
        for token in state.tokens:
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(6, int(token.tag[1:]) + heading_offset)}"
            elif token.type == "inline" and token.children:
                token.children = _relink(token.children, resolve)

    md.core.ruler.push("probebench_sanitise", sanitise)
    md.add_render_rule("image", _render_image(resolve))
    return md


def render_markdown(text: str, resolve: Resolver = link_url, *,
                    heading_offset: int = 2) -> Markup:
    """``text`` as HTML with raw HTML off, links resolved and images as links (module
    docstring). Headings move down ``heading_offset`` levels (a README's ``#`` under a
    page's h2).

    >>> print(render_markdown("# T\\n<script>x</script> [a](javascript:y) [b](/b)"))
    <h3>T</h3>
    <p>&lt;script&gt;x&lt;/script&gt; [a](javascript:y) [b](/b)</p>
    <BLANKLINE>
    >>> str(render_markdown("[b](https://b.org)"))
    '<p><a href="https://b.org" rel="nofollow noopener">b</a></p>\\n'
    """
    return Markup(_readme_parser(resolve, heading_offset).render(text))


__all__ = ["Resolver", "breakable", "inline_markdown", "link_url", "plain_markdown",
           "render_markdown", "safe_url"]
