"""The README starts a newcomer and the docs hold the reference: short, self-contained,
with links that lead somewhere inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "METHODOLOGY.md",
        REPO / "BENCHMARKS.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str, *, keep_code: bool = False) -> list[str]:
    """The lines outside code fences, with inline code blanked (a link there is code)
    unless ``keep_code``."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else line if keep_code else re.sub(r"`[^`]*`", "", line))
    return out


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file (duplicates get -1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for line in _prose_lines(path.read_text("utf-8"), keep_code=True):
        match = HEADING.match(line)
        if not match:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))
        slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def link_problems(files: list[Path]) -> list[str]:
    problems = []
    for doc in files:
        for number, line in enumerate(_prose_lines(doc.read_text("utf-8")), 1):
            for match in LINK.finditer(line):
                target = match.group(1)
                where = f"{doc.relative_to(REPO)}:{number}: {target}"
                if re.match(r"^[a-z]+:", target):
                    if not target.startswith(("https://", "http://", "mailto:")):
                        problems.append(f"{where}: odd scheme")
                    continue
                path, _, anchor = target.partition("#")
                dest = (doc.parent / path).resolve() if path else doc
                if not dest.is_relative_to(REPO):
                    problems.append(f"{where}: outside the repository")
                elif not dest.exists():
                    problems.append(f"{where}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problems.append(f"{where}: no such heading")
    return problems


def test_the_readme_is_short_and_has_the_two_commands() -> None:
    text = (REPO / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= 200
    assert "make demo" in text and "make test" in text
    assert "docs/words.md" in text


def test_no_issue_numbers_in_the_docs() -> None:
    """Issues are not in the repository: a reader cannot follow "issue 16"."""
    found = [f"{doc.relative_to(REPO)}:{n}: {line.strip()}"
             for doc in DOCS for n, line in enumerate(doc.read_text("utf-8").splitlines(), 1)
             if re.search(r"\bissues? #?\d+", line, re.IGNORECASE)]
    assert found == []


def test_every_link_resolves_inside_the_repository() -> None:
    assert link_problems(DOCS) == []


def test_the_link_check_can_fail(tmp_path: Path) -> None:
    doc = REPO / "docs" / "words.md"
    assert link_problems([doc]) == []
    # the same text with a link out of the repository, a missing file and heading
    planted = REPO / "docs" / "__planted_test_doc.md"
    try:
        planted.write_text("[a](../../outside.md) [b](nowhere.md) [c](words.md#no-such)\n"
                           "`[code](not-a-link.md)`\n", "utf-8")
        problems = link_problems([planted])
    finally:
        planted.unlink()
    assert [p.rsplit(": ", 1)[1] for p in problems] == [
        "outside the repository", "no such file", "no such heading"]
