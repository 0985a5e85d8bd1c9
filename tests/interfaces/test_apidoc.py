"""docs/api.md is generated from the public API's docstrings, and stays current."""

from __future__ import annotations

from pathlib import Path

from probebench.apidoc import COMMAND, markdown, render, signature, undocumented

API_PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_every_public_name_has_a_docstring() -> None:
    assert undocumented() == [], "write a docstring for each of these, then run " \
        f"`{COMMAND}`"


def test_the_api_page_is_current() -> None:
    committed = API_PAGE.read_text("utf-8")
    assert render() == committed, f"docs/api.md is stale: run `{COMMAND}` and commit"
    import probebench

    for name in probebench.__all__:
        assert f"### `{name}`" in committed, name
    # what a reader comes for: the new entry point, its Args, and a dict of a submission
    assert "probebench.load_probe(ref: str | Path, *, registry: str | Path | None = None" in \
        committed
    assert "- `ref`: a registry id `org/name`" in committed
    assert "#### `Submission.to_dict`" in committed
    assert "0x" not in committed  # no object addresses: the page is reproducible


def test_docstrings_become_markdown() -> None:
    doc = ("Score ``x``.\n\nArgs:\n    x: the input,\n        on two lines.\n"
           "    a, b: two at once.\n\nReturns:\n    the ``score``.\n\nExample::\n\n"
           "    f(1)\n\n>>> f(2)\n3\n")
    assert markdown(doc) == (
        "Score `x`.\n\n**Args:**\n\n- `x`: the input, on two lines.\n- `a`, `b`: two at "
        "once.\n\n**Returns:**\n\nthe `score`.\n\nExample:\n\n```python\nf(1)\n```\n\n"
        "```pycon\n>>> f(2)\n3\n```\n")

    def f(a: int, *, b: object = markdown, _private: int = 0) -> str:
        return ""

    # string annotations unquoted, a function default by name, private parameters hidden
    assert signature(f) == "(a: int, *, b: object = markdown) -> str"
