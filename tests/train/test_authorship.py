"""What ``train`` writes as meta.yaml's author, contact and license when it is not told:
git config for the first two, the task's data license for the third, each said on stderr.
Real git runs against a config file made here (``GIT_CONFIG_GLOBAL``); no model is loaded."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from probebench.tasks.catalog import TaskCatalog
from probebench.train.artifact import UNKNOWN_AUTHOR, UNKNOWN_CONTACT, authorship, git_config

TASK = "eval_awareness"  # its control set has a license of its own: the effective one is both


@pytest.fixture
def git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A global git config of our own, no system config, and a folder that is no checkout."""
    assert shutil.which("git"), "these tests need git"
    config = tmp_path / "gitconfig"
    config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "work").mkdir()
    return config


def test_author_and_contact_come_from_git_config(git_home: Path, tmp_path: Path) -> None:
    git_home.write_text("[user]\n\tname = Ada Researcher\n\temail = ada@example.org\n")
    spec = TaskCatalog.default().spec(TASK)
    who = authorship(spec, near=tmp_path / "work" / "not-yet-made")
    assert (who.author, who.contact) == ("Ada Researcher", "ada@example.org")
    assert who.license == f"{spec.license} AND {spec.control.license}"  # type: ignore[union-attr]
    said = "\n".join(who.guessed)
    assert "author taken from git config user.name: Ada Researcher; give --author" in said
    assert "contact taken from git config user.email: ada@example.org; give --contact" in said
    assert f"license taken from task {TASK}'s data license: {who.license}" in said
    assert "probebench maintainers" not in said + who.author


def test_no_git_config_gives_a_placeholder_that_says_what_to_do(git_home: Path,
                                                                 tmp_path: Path) -> None:
    who = authorship(TaskCatalog.default().spec(TASK), near=tmp_path / "work")
    assert (who.author, who.contact) == (UNKNOWN_AUTHOR, UNKNOWN_CONTACT)
    assert "--author" in who.author and "--contact" in who.contact
    assert any("no git config user.name found" in g for g in who.guessed)


def test_without_git_at_all(git_home: Path, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    git_home.write_text("[user]\n\tname = Ada Researcher\n")
    empty = tmp_path / "no-binaries"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert git_config("user.name", cwd=tmp_path) is None
    assert authorship(TaskCatalog.default().spec(TASK)).author == UNKNOWN_AUTHOR


def test_given_values_win_and_nothing_is_guessed(git_home: Path) -> None:
    git_home.write_text("[user]\n\tname = Ada Researcher\n\temail = ada@example.org\n")
    who = authorship(TaskCatalog.default().spec(TASK), author="B. Other",
                     contact="https://example.org/b", license="MIT")
    assert (who.author, who.contact, who.license, who.guessed) == (
        "B. Other", "https://example.org/b", "MIT", ())


def test_a_checkouts_own_config_counts_and_values_are_one_line(git_home: Path,
                                                              tmp_path: Path) -> None:
    git_home.write_text("[user]\n\tname = Global Name\n")
    checkout = tmp_path / "work" / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "config", "user.name", "Line one\nline two"],
                   check=True)
    assert git_config("user.name", cwd=checkout) == "Line one"
    assert authorship(TaskCatalog.default().spec(TASK),
                      near=checkout / "probe").author == "Line one"
    assert git_config("user.name", cwd=tmp_path / "work") == "Global Name"
