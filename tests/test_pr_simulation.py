"""A local run of the pull-request path: a git repository with a base registry and a PR
branch, driven by the same commands (and the same shell) the workflow runs."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from tests.test_review import ENTRY_ID, _setup

REPO = Path(__file__).resolve().parents[1]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _confine_script() -> str:
    doc = yaml.safe_load((REPO / ".github/workflows/validate-pr.yml").read_text())
    (step,) = [s for s in doc["jobs"]["confine"]["steps"] if "run" in s]
    return str(step["run"])


@pytest.fixture
def pr(tmp_path: Path) -> tuple[Path, str]:
    """Base: tasks and data; PR branch: one entry and its artifact."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _setup(repo)  # writes tasks.yaml, data/, the artifact and the entry
    staged = repo / "registry"
    held = tmp_path / "held"
    shutil.move(str(staged), held)
    (repo / "probebench").mkdir()
    (repo / "probebench" / "__init__.py").write_text("# the package\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-qb", "pr")
    shutil.move(str(held), staged)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "add an entry")
    return repo, base


def _run_confine(repo: Path, base: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", _confine_script()], cwd=repo,
                          env={**os.environ, "BASE_SHA": base}, capture_output=True, text=True)


def test_the_pr_path_produces_the_checklist(pr: tuple[Path, str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = pr
    assert _run_confine(repo, base).returncode == 0
    assert main(["registry", "--repo", str(repo), "confine", "--base", base]) == 0
    assert main(["registry", "--registry", str(repo / "registry"), "--repo", str(repo),
                 "check", "--changed", "--base", base]) == 0
    comment = repo / "out" / "comment.md"
    assert main(["review", ENTRY_ID, "--registry", str(repo / "registry"), "--repo",
                 str(repo), "--markdown", str(comment)]) == 0
    text = comment.read_text()
    assert text.count("- [x]") == 6 and "All checks pass." in text


@pytest.mark.parametrize("extra", [".github/workflows/ci.yml", "probebench/__init__.py"])
def test_a_pr_that_edits_more_is_refused(pr: tuple[Path, str], extra: str) -> None:
    repo, base = pr
    (repo / extra).parent.mkdir(parents=True, exist_ok=True)
    (repo / extra).write_text("edited by the PR\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "sneaky")
    result = _run_confine(repo, base)
    assert result.returncode == 1
    assert extra in result.stdout
    assert main(["registry", "--repo", str(repo), "confine", "--base", base]) == 1


class _Payload:
    def __init__(self, canary: Path) -> None:
        self.canary = canary

    def __reduce__(self) -> tuple[object, ...]:
        return (os.system, (f"touch {self.canary}",))


def test_a_malicious_artifact_is_rejected_before_evaluation(
        pr: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = pr
    canary = tmp_path / "CANARY"
    folder = repo / "registry/artifacts/passive"
    for name in ("probe.joblib", "scaler.joblib"):
        (folder / name).write_bytes(pickle.dumps(_Payload(canary)))
    from probebench.artifact import manifest, scan
    entry = repo / "registry/probes/testorg/passive-smollm2-135m-l15-v1.yaml"
    data = yaml.safe_load(entry.read_text())
    data["artifact_sha256"] = manifest(scan(folder)).sha256
    entry.write_text(yaml.safe_dump(data, sort_keys=False))
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "payload")
    assert _run_confine(repo, base).returncode == 0  # confined: the payload is in the artifact
    assert main(["registry", "--registry", str(repo / "registry"), "--repo", str(repo),
                 "check", "--changed", "--base", base]) == 1
    out = capsys.readouterr().out
    assert "refused global 'posix.system'" in out
    assert main(["submit", str(folder), "--tasks", "blimp_passive_1", "--quiet", "--out",
                 str(tmp_path / "s.json")]) == 1
    assert "invalid artifact, nothing was run" in capsys.readouterr().err
    assert not canary.exists() and not (tmp_path / "s.json").exists()
