"""Submitters' Markdown on the leaderboard, through markdown-it-py: raw HTML shown as
text, every link target resolved and checked, images never embedded."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest

from probebench.leaderboard.markdown import (
    breakable,
    inline_markdown,
    link_url,
    plain_markdown,
    render_markdown,
    safe_url,
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs


def _parse(html: str) -> _Tags:
    parsed = _Tags()
    parsed.feed(html)
    return parsed


def _hrefs(html: str) -> list[str]:
    return [v or "" for k, v in _parse(html).attrs if k == "href"]


HOSTILE_TARGETS = [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", "&#106;avascript:alert(1)",
    "javascript&#58;alert(1)", "%6Aavascript:alert(1)", "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>", "data:image/svg+xml;base64,PHN2Zz4=",
    "file:///etc/passwd", "//evil.example/x", "\\\\evil.example\\x", "ftp://host/x",
    "mailto:a@b.org?body=<script>",
]


@pytest.mark.parametrize("target", HOSTILE_TARGETS)
def test_no_hostile_target_becomes_a_link(target: str) -> None:
    for text in (f"[label]({target})", f"![alt]({target})", f"<{target}>",
                 f"[ref][r]\n\n[r]: {target}", f'[label]({target} "title")'):
        html = str(render_markdown(text))
        assert _hrefs(html) == [], (text, html)
        assert "<img" not in html and "<script" not in html, html
        assert not [k for k, _ in _parse(html).attrs if k.startswith("on")], html


def test_safe_links_survive_with_nofollow() -> None:
    html = str(render_markdown("[paper](https://arxiv.org/abs/1) and [mail](mailto:me@x.org)"
                               " and <https://auto.example/a?b=1>"))
    assert _hrefs(html) == ["https://arxiv.org/abs/1", "mailto:me@x.org",
                            "https://auto.example/a?b=1"]
    assert html.count('rel="nofollow noopener"') == 3
    # a quote in a web link is percent-encoded, never the end of the attribute
    html = str(render_markdown('[x](https://x.org/"onmouseover=alert(1))'))
    assert _hrefs(html) == ["https://x.org/%22onmouseover=alert(1)"]
    assert [k for k, _ in _parse(html).attrs] == ["href", "rel"]
    # a relative link survives only when the resolver knows the file
    files = {"train.ipynb": "../files/e/artifact/train.ipynb"}
    html = str(render_markdown("[nb](train.ipynb) [nb2](./train.ipynb) [x](evil.html)",
                               lambda t: files.get(t.removeprefix("./")) or link_url(t)))
    assert _hrefs(html) == ["../files/e/artifact/train.ipynb"] * 2
    assert "[x](evil.html)" in html  # refused: shown as written


def test_every_href_is_checked_after_the_resolver() -> None:
    """A resolver that answers with a dangerous href is overruled."""
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example", "a b",
                'x" onclick="alert(1)'):
        def resolve(_target: str, bad: str = bad) -> str:
            return bad

        html = str(render_markdown("[a](ok.md) ![b](ok.png) <https://x.org>", resolve))
        assert _hrefs(html) == [], (bad, html)
        assert "[a](ok.md)" in html


def test_raw_html_is_text_and_images_are_links() -> None:
    text = ('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">\n\n'
            'Inline <b onclick="x">bold</b> and ![a chart](https://x.org/c.png "t").')
    html = str(render_markdown(text))
    assert _parse(html).tags == ["p", "p", "p", "a"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b onclick=&quot;x&quot;&gt;bold&lt;/b&gt;" in html
    assert '<a href="https://x.org/c.png" rel="nofollow noopener">a chart</a>' in html


def test_readme_structure_renders() -> None:
    text = ("# Title\n\nSome **bold** and `code <x>`.\n\n## Part\n\n- one\n- two\n\n"
            "1. first\n2. second\n\n| C | acc |\n| --: | --- |\n| 1 | `0.7` |\n\n"
            "```python\nprint('<hi>')\n```\n\n###### deep\n")
    html = str(render_markdown(text))
    tags = _parse(html).tags
    assert tags[:2] == ["h3", "p"] and "h4" in tags and "h6" in tags  # two levels down
    assert {"ul", "ol", "li", "table", "thead", "tbody", "th", "td", "pre", "code",
            "strong"} <= set(tags)
    assert '<pre><code class="language-python">print(\'&lt;hi&gt;\')' in html
    assert str(render_markdown("# T", heading_offset=0)) == "<h1>T</h1>\n"


def test_inline_fields() -> None:
    assert str(inline_markdown("**b** `<i>` *e* snake_case_id <b>x</b>")) == (
        "<strong>b</strong> <code>&lt;i&gt;</code> <em>e</em> snake_case_id "
        "&lt;b&gt;x&lt;/b&gt;")
    # one-line fields never grow links, headings or lists
    assert str(inline_markdown("[a](https://x.org) # h")) == "[a](https://x.org) # h"
    assert plain_markdown("the **95%** interval of `auroc_score`") == \
        "the 95% interval of auroc_score"
    assert str(breakable("a_<b>")) == "a_<wbr>&lt;b&gt;"


def test_url_checks() -> None:
    assert safe_url(" https://x.org/a ") == "https://x.org/a"
    assert safe_url("mailto:a@b.org") is None  # paper and Colab links are web pages
    assert link_url("mailto:a@b.org") == "mailto:a@b.org"
    for bad in ("https://x.org/a\nb", "http:///path", "https://x.org/<", "javascript:x"):
        assert safe_url(bad) is None and link_url(bad) is None, bad
    assert re.fullmatch(r"https?", urlsplit(str(safe_url("http://x.org"))).scheme)
