"""The PR confinement step on a real temporary git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.registry.confine import confinement_problems


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for rel in ("registry/probes/org/old-m-l1-v1.yaml", "probebench/cli.py", "tasks.yaml",
                ".github/workflows/ci.yml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("base\n")
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
    return main(["registry", "--repo", str(repo), "confine", "--base", "main"])


def test_one_entry_and_its_artifact_pass(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", "registry/artifacts/new/meta.yaml",
         "registry/artifacts/new/probe.safetensors")
    assert _run(repo) == 0
    assert "confined to one entry" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [".github/workflows/ci.yml", "probebench/cli.py",
                                   "tasks.yaml", "tests/test_x.py", "pyproject.toml"])
def test_touching_anything_else_is_refused(repo: Path, extra: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _add(repo, "registry/probes/org/new-m-l2-v1.yaml", extra)
    assert _run(repo) == 1
    assert f"REFUSED  {extra}: outside one entry's YAML" in capsys.readouterr().out


def test_two_entries_or_two_artifacts_are_refused() -> None:
    assert "exactly one entry" in " ".join(confinement_problems(
        ["registry/probes/a/x-m-l1-v1.yaml", "registry/probes/a/y-m-l1-v1.yaml"]))
    assert "at most one artifact folder" in " ".join(confinement_problems(
        ["registry/probes/a/x-m-l1-v1.yaml", "registry/artifacts/x/a",
         "registry/artifacts/y/b"]))
    assert confinement_problems(["registry/probes/a/x-m-l1-v1.yaml"]) == []
