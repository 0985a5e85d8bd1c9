"""Reading REPORT.md's Markdown: a section's text and its first table's cells."""

from __future__ import annotations

import re


def section(report: str, heading: str) -> str:
    """The text under ``## heading`` up to the next ``## ``."""
    start = report.index(f"## {heading}\n")
    end = report.find("\n## ", start + 3)
    return report[start:end if end != -1 else len(report)]


def cells(line: str) -> list[str]:
    """A Markdown table row's cells (escaped pipes stay inside their cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def table(section: str) -> tuple[list[str], list[list[str]]]:
    """The first table of ``section``: its header and its rows."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return cells(lines[0]), [cells(line) for line in lines[2:]]
