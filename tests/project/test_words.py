"""One word, one meaning (docs/words.md), in code, templates, CLI help and docs.

An explicit list of spellings and uses that are refused, each with the word to use. The
scan covers every text file a reader meets: the package's code, templates and specs, the
tests, tools and benchmarks, the workflows, the README and docs/, and the help of every
command. Task data (``probebench/catalog/data``) and the registry's stored files are
quoted material, not our words, and are not scanned.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    use: str


def _rule(pattern: str, use: str) -> Rule:
    return Rule(re.compile(pattern, re.IGNORECASE), use)


RULES = [
    # one spelling, as in the YAML field
    _rule(r"\blicenc\w*", "license"),
    # "site" is where a probe reads (layer, position); the website is the leaderboard
    _rule(r"\bthe site's (?:root|origin|tables?|pages?|index|files?|column|headers?)\b",
          "the leaderboard's"),
    _rule(r"\b(?:static|whole|built|rendered) site\b", "the leaderboard"),
    _rule(r"\b(?:into|onto|on|across) the site\b", "the leaderboard"),
    _rule(r"\bthe site (?:was|is|gets|being) (?:built|rendered|served|written)\b",
          "the leaderboard"),
    _rule(r"\bsite[-_ ](?:shots|browser|build|pages?)\b", "leaderboard"),
    _rule(r"\bweb ?site'?s? (?:root|origin)\b", "the leaderboard's root"),
    # "submission" is submission.json; a proposal is a pull request
    _rule(r"\bprobe submissions?\b", "probe pull request"),
    _rule(r"\bregistry submissions?\b", "pull request"),
    _rule(r"\bsubmission (?:PR|pull request)s?\b", "pull request"),
    _rule(r"\ba submission (?:adds|brings|never|sets|may|is refused|changes|touches)\b",
          "a pull request"),
    _rule(r"\bthe submission (?:is|was) refused\b", "the pull request"),
    _rule(r"\bsubmission refused\b", "pull request refused"),
    # load_probe is probebench.load_probe (a Probe); a folder's weights are load_weights
    _rule(r"\bforms import load_probe\b|\bforms\.load_probe\b", "load_weights"),
]

#: files whose subject is the words themselves
EXEMPT = {"docs/words.md", "tests/project/test_words.py"}

#: the text files a reader meets
GLOBS = ("probebench/**/*.py", "probebench/**/templates/*", "probebench/**/*.yaml",
         "tests/**/*.py", "tools/**/*.py", "benchmarks/**/*.py", ".github/workflows/*.yml",
         "docs/*.md", "README.md", "METHODOLOGY.md", "BENCHMARKS.md", "Makefile", ".ci/run",
         "pyproject.toml")

#: file and folder names that may hold "site": they are about (layer, position)
SITE_NAMES = {"sites.py", "test_sites.py"}


def scanned_files() -> dict[str, str]:
    found: dict[str, str] = {}
    for pattern in GLOBS:
        for path in sorted(REPO.glob(pattern)):
            rel = path.relative_to(REPO).as_posix()
            if (not path.is_file() or rel in EXEMPT or "/catalog/data/" in rel
                    or "__pycache__" in rel):
                continue
            found[rel] = path.read_text("utf-8", errors="replace")
    return found


def word_problems(texts: dict[str, str]) -> list[str]:
    """``where:line: "found" (use ...)`` for every refused use in ``texts``."""
    problems = []
    for where, text in texts.items():
        for number, line in enumerate(text.splitlines(), 1):
            for rule in RULES:
                for match in rule.pattern.finditer(line):
                    problems.append(f"{where}:{number}: {match.group(0)!r} (use {rule.use!r})")
    return problems


def name_problems(paths: list[str]) -> list[str]:
    """Module, file, test and template names that call the leaderboard a site."""
    return [p for p in paths
            if any("site" in part.lower() and part not in SITE_NAMES
                   for part in Path(p).parts)]


def _help_texts(parser: argparse.ArgumentParser, prefix: str = "probebench") -> dict[str, str]:
    texts = {prefix: parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                texts.update(_help_texts(sub, f"{prefix} {name}"))
    return texts


def test_code_templates_and_docs_use_the_words() -> None:
    assert word_problems(scanned_files()) == []


def test_names_use_the_words() -> None:
    paths = [p.relative_to(REPO).as_posix() for pattern in GLOBS for p in REPO.glob(pattern)]
    paths += [p.relative_to(REPO).as_posix() for p in (REPO / "probebench").rglob("*")
              if p.is_dir()]
    assert name_problems(paths) == []


def test_cli_help_uses_the_words() -> None:
    from probebench.cli import build_parser

    texts = _help_texts(build_parser())
    assert word_problems(texts) == []
    # one verb each for the three re-evaluations
    assert "re-evaluate" in texts["probebench submit"].lower()
    assert "record" in texts["probebench registry evaluate"].lower()
    assert "audit" in texts["probebench reeval"].lower()


def test_the_rules_can_fail() -> None:
    """A planted "licence" in a real template, the leaderboard called a site, and a pull
    request called a submission are each found, with the line."""
    template = REPO / "probebench/leaderboard/templates/entry.html.j2"
    text = template.read_text("utf-8")
    assert word_problems({"entry.html.j2": text}) == []
    planted = text.replace("license", "licence", 1)
    assert planted != text
    found = word_problems({"entry.html.j2": planted})
    assert len(found) == 1 and "'licence'" in found[0] and "use 'license'" in found[0]
    line = next(i for i, s in enumerate(planted.splitlines(), 1) if "licence" in s)
    assert found[0].startswith(f"entry.html.j2:{line}:")
    assert word_problems({"x.md": "Every number on the static site is traced."})
    assert word_problems({"x.py": "# a probe submission adds one entry"})
    assert not word_problems({"x.py": "a model at a site; write submission.json"})
    assert name_problems(["tests/test_site_browser.py"]) == ["tests/test_site_browser.py"]
    assert name_problems(["probebench/sites.py", "tests/test_sites.py"]) == []


@pytest.mark.parametrize("word", ["licence", "Licences"])
def test_a_planted_spelling_in_help_is_found(word: str) -> None:
    assert word_problems({"probebench tasks add": f"--license  the data's {word}"})
