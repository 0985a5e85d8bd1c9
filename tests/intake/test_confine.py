"""The PR confinement step on a real temporary git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.intake.confine import confinement_problems


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo,
                   check=True, capture_output=True)


#: files of the base branch the fixture's repository holds (placeholders of real files,
#: besides the one existing entry)
BASE_FILES = ("registry/probes/org/old-m-l1-v1.yaml", "probebench/cli/__init__.py",
              "probebench/catalog/tasks.yaml", ".github/workflows/ci.yml")
REPO = Path(__file__).resolve().parents[2]
#: the pull requests' author, owner of the base entry's org (tests/intake/test_org_owners.py)
AUTHOR = "t"


def test_the_fixture_mirrors_the_real_layout() -> None:
    """A rule tested on files the repository no longer has tests nothing."""
    missing = [rel for rel in BASE_FILES[1:] if not (REPO / rel).is_file()]
    assert missing == []


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for rel in BASE_FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("base\n")
    # the base entry's org has an owner: the pull requests below are theirs
    (tmp_path / "registry/owners.yaml").write_text(f"orgs:\n  org: [{AUTHOR}]\n")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    _git(tmp_path, "checkout", "-qb", "pr")
    return tmp_path


def _add(repo: Path, *paths: str) -> None:
    for rel in paths:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("pr change\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "pr")


def _run(repo: Path) -> int:
    return main(["registry", "--repo", str(repo), "confine", "--base", "main",
                 "--author", AUTHOR])


def test_one_entry_and_its_artifact_pass(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", "registry/artifacts/new/meta.yaml",
         "registry/artifacts/new/probe.safetensors")
    assert _run(repo) == 0
    assert "confined to one entry" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [".github/workflows/ci.yml", "probebench/cli/__init__.py",
                                   "probebench/catalog/tasks.yaml", "tests/test_x.py",
                                   "pyproject.toml"])
def test_touching_anything_else_is_refused(repo: Path, extra: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", extra)
    assert _run(repo) == 1
    assert f"REFUSED  {extra}: outside one entry's YAML" in capsys.readouterr().out


def _move(repo: Path, src: str, dest: str) -> None:
    (repo / dest).parent.mkdir(parents=True, exist_ok=True)
    _git(repo, "mv", src, dest)
    _git(repo, "commit", "-qm", "move")


@pytest.mark.parametrize("src", ["registry/probes/org/old-m-l1-v1.yaml",
                                 "probebench/catalog/tasks.yaml",
                                 ".github/workflows/ci.yml", "probebench/cli/__init__.py"])
def test_moving_a_file_into_the_artifact_folder_is_refused(
        repo: Path, src: str, capsys: pytest.CaptureFixture[str]) -> None:
    """git lists a rename under its destination only; confine sees both ends."""
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml")
    _move(repo, src, "registry/artifacts/new/" + Path(src).name)
    assert _run(repo) == 1
    assert f"REFUSED  {src}: deleted (or moved away)" in capsys.readouterr().out


def test_deleting_or_nesting_entries_is_refused(repo: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _git(repo, "rm", "-q", "registry/probes/org/old-m-l1-v1.yaml")
    _git(repo, "commit", "-qm", "delete")
    assert _run(repo) == 1
    assert "deleted (or moved away)" in capsys.readouterr().out
    problems = confinement_problems(["registry/probes/org/team/x-m-l1-v1.yaml"])
    assert "one folder deep" in problems[0]
    assert "exactly one entry" in problems[1]


def test_confine_writes_the_submitted_entry(repo: Path, tmp_path: Path) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", "registry/artifacts/new/meta.yaml")
    out = tmp_path / "entry"
    assert main(["registry", "--repo", str(repo), "confine", "--base", "main",
                 "--entry-file", str(out), "--author", AUTHOR]) == 0
    assert out.read_text() == "org/new-m-l2-v1\n"


def test_odd_file_names_cannot_hide(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", 'tasks "x"\n.yaml')
    assert _run(repo) == 1
    # printed quoted (JSON escapes): the newline cannot start a line of its own
    assert '"tasks \\"x\\"\\n.yaml": outside one entry' in capsys.readouterr().out


def test_check_changed_from_the_repo_root_names_a_broken_entry(
        repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Exactly as the workflow runs it: in the repository root, default flags."""
    (repo / "probebench/catalog/tasks.yaml").unlink()  # a placeholder; the packaged tasks serve
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml")  # "pr change": not an entry at all
    monkeypatch.chdir(repo)
    assert main(["registry", "check", "--changed", "--base", "main"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "registry/probes/org/new-m-l2-v1.yaml" in out
    assert "0 of 1 entries pass" in out
    monkeypatch.chdir(repo / "registry")  # and from below it
    assert main(["registry", "check", "--changed", "--base", "main"]) == 1


def test_links_submodules_and_type_changes_are_refused(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml")
    link = repo / "registry/artifacts/new/secrets"
    link.parent.mkdir(parents=True)
    link.symlink_to("/etc")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "a link")
    assert _run(repo) == 1
    assert "registry/artifacts/new/secrets: a symbolic link" in capsys.readouterr().out


def test_github_file_lists_use_the_same_rule(tmp_path: Path) -> None:
    from probebench.intake.confine import read_changes_file

    good = tmp_path / "good.tsv"
    good.write_text("added\tregistry/probes/org/new-m-l2-v1.yaml\t\n"
                    "added\tregistry/artifacts/new/meta.yaml\t\n")
    assert confinement_problems(read_changes_file(good)) == []
    moved = tmp_path / "moved.tsv"
    moved.write_text("added\tregistry/probes/org/new-m-l2-v1.yaml\t\n"
                     "renamed\tregistry/artifacts/new/tasks.yaml\tprobebench/catalog/tasks.yaml\n")
    assert "probebench/catalog/tasks.yaml: deleted (or moved away)" in " ".join(
        confinement_problems(read_changes_file(moved)))
    bad = tmp_path / "bad.tsv"
    bad.write_text("exploded\tx\t\n")
    with pytest.raises(Exception, match=r"bad\.tsv:1: unknown status 'exploded'"):
        read_changes_file(bad)


def test_two_entries_or_two_artifacts_are_refused() -> None:
    assert "exactly one entry" in " ".join(confinement_problems(
        ["registry/probes/a/x-m-l1-v1.yaml", "registry/probes/a/y-m-l1-v1.yaml"]))
    assert "at most one artifact folder" in " ".join(confinement_problems(
        ["registry/probes/a/x-m-l1-v1.yaml", "registry/artifacts/x/a",
         "registry/artifacts/y/b"]))
    assert confinement_problems(["registry/probes/a/x-m-l1-v1.yaml"]) == []


def test_non_ascii_file_names_are_fine(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", "registry/artifacts/new/café.md")
    assert _run(repo) == 0
    assert '"registry/artifacts/new/caf\\u00e9.md"' in capsys.readouterr().out


def test_a_published_artifact_cannot_be_rewritten(repo: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Editing another entry's artifact and adding a new entry that points at it is
    refused: only folders no base-branch entry references may change."""
    base_entry = repo / "registry/probes/org/old-m-l1-v1.yaml"
    base_entry.write_text("id: org/old-m-l1-v1\nartifact_url: registry/artifacts/old/\n")
    (repo / "registry/artifacts/old").mkdir(parents=True)
    (repo / "registry/artifacts/old/meta.yaml").write_text("published\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "published")
    _git(repo, "branch", "-f", "main")
    _add(repo, "registry/probes/mallory/new-m-l2-v1.yaml",
         "registry/artifacts/old/meta.yaml")
    assert _run(repo) == 1
    out = capsys.readouterr().out
    assert ("REFUSED  registry/artifacts/old/: the artifact of org/old-m-l1-v1 on the base "
            "branch; a published artifact never changes") in out
    assert "confined to one entry" not in out
    # a new folder for the same change is what the rule asks for
    _git(repo, "reset", "-q", "--hard", "main")
    _add(repo, "registry/probes/mallory/new-m-l2-v1.yaml", "registry/artifacts/new/meta.yaml")
    assert _run(repo) == 0


def test_a_trailing_newline_does_not_pass_for_a_plain_path() -> None:
    """Patterns are anchored at the very end (``\\Z``): ``$`` also matches before a
    final newline, which would let ``x.yaml\\n`` pass for the entry ``x.yaml``."""
    from probebench.intake.confine import confinement_problems, entry_id_of
    from probebench.leaderboard.files import linkable

    assert entry_id_of("registry/probes/org/new-m-l2-v1.yaml") == "org/new-m-l2-v1"
    assert entry_id_of("registry/probes/org/new-m-l2-v1.yaml\n") is None
    assert confinement_problems(["registry/probes/org/new-m-l2-v1.yaml\n"])
    assert linkable("artifact/README.md") and not linkable("artifact/README.md\n")
