"""The GitHub Actions workflows, linted for real and checked against the registry's rules.

- ``zizmor --offline`` (static security analysis of Actions) reports nothing; any
  suppression is an inline ``# zizmor: ignore[...]`` with a justification on its line.
- ``check-jsonschema --builtin-schema vendor.github-workflows`` (GitHub's workflow
  schema) accepts every file.
- The structural rules below state what the registry relies on: pinned actions, no
  expressions inside ``run:``, least privilege, ``pull_request_target`` forbidden, the
  submitter's notebook in a job of its own with no token.

actionlint cannot be installed on this project's machines (no wheel; its build downloads
a binary), so zizmor and the schema check replace it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.actions_sim import WORKFLOWS, install_lines, load_workflow

FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = Path(sys.executable).parent
#: (workflow, job) -> the write permissions it may hold, and why
WRITES = {("comment.yml", "comment"): {"pull-requests"},  # post the checklist
          ("publish.yml", "publish"): {"contents", "pull-requests"},  # bot branch and PR
          ("leaderboard.yml", "deploy"): {"pages", "id-token"},  # GitHub Pages
          ("release.yml", "publish"): {"id-token"}}  # PyPI trusted publishing (OIDC)


def _on(doc: dict[Any, Any]) -> dict[str, Any]:
    on = doc[True] if True in doc else doc["on"]  # YAML reads the key `on` as True
    assert isinstance(on, dict)
    return on


def _steps(doc: dict[Any, Any]) -> list[dict[str, Any]]:
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


def test_the_workflows_exist() -> None:
    assert {p.name for p in FILES} == {"ci.yml", "validate-pr.yml", "comment.yml",
                                       "leaderboard.yml", "reeval.yml", "publish.yml",
                                       "release.yml"}


def test_zizmor_finds_nothing() -> None:
    proc = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress",
                           str(WORKFLOWS)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr


def test_zizmor_catches_a_dangerous_workflow(tmp_path: Path) -> None:
    """The linter is live: the rule the registry forbids most is reported."""
    bad = tmp_path / ".github" / "workflows"
    bad.mkdir(parents=True)
    (bad / "bad.yml").write_text(
        "name: bad\non: pull_request_target\npermissions: {}\njobs:\n  x:\n"
        "    runs-on: ubuntu-24.04\n    steps:\n      - run: echo \"${{ github.head_ref }}\"\n")
    proc = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    assert "dangerous-triggers" in proc.stdout and "template-injection" in proc.stdout


def test_github_workflow_schema_accepts_every_file() -> None:
    proc = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema",
                           "vendor.github-workflows", *map(str, FILES)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_suppressions_are_inline_and_justified(path: Path) -> None:
    for line in path.read_text().splitlines():
        if "zizmor:" in line:
            m = re.search(r"# zizmor: ignore\[[a-z-]+\] (.+)$", line)
            assert m and len(m.group(1).split()) >= 3, f"{path.name}: {line.strip()}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_actions_are_pinned_by_commit_sha(path: Path) -> None:
    for step in _steps(load_workflow(path.name)):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_expression_inside_run(path: Path) -> None:
    for step in _steps(load_workflow(path.name)):
        assert "${{" not in step.get("run", ""), f"{path.name}: pass values through env:"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_least_privilege_and_no_persisted_credentials(path: Path) -> None:
    doc = load_workflow(path.name)
    assert "pull_request_target" not in _on(doc)
    assert "permissions" in doc, "top-level permissions must be explicit"
    for name, job in doc["jobs"].items():
        perms = job.get("permissions", doc["permissions"])
        for perm, level in (perms or {}).items():
            assert level in ("read", "write", "none")
            if level == "write":
                assert perm in WRITES.get((path.name, name), set()), (path.name, name, perm)
    for step in _steps(doc):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


def test_pr_workflow_confines_first_and_sandboxes_the_notebook() -> None:
    doc = load_workflow("validate-pr.yml")
    assert _on(doc)["pull_request"]["paths"] == ["registry/**", "tasks/proposed/**"]
    assert doc["permissions"] == {}
    jobs = doc["jobs"]
    assert jobs["reproduce"]["needs"] == "confine"
    assert jobs["evaluate"]["needs"] == ["confine", "reproduce"]
    # confine routes the PR: probe jobs for a submission, the proposal job for a task
    assert jobs["confine"]["outputs"] == {"kind": "${{ steps.confine.outputs.kind }}"}
    for job in ("reproduce", "evaluate"):
        assert jobs[job]["if"] == "needs.confine.outputs.kind == 'probe'"
    assert jobs["proposal"]["needs"] == "confine"
    assert jobs["proposal"]["if"] == "needs.confine.outputs.kind == 'task'"
    assert jobs["proposal"]["permissions"] == {"contents": "read"}
    proposal = " ".join(str(s.get("run", "")) for s in jobs["proposal"]["steps"])
    assert "registry check-task --changed" in proposal and "merge" not in proposal
    # the submitter's code: no token, no checkout, a GitHub-hosted runner, bubblewrap
    reproduce = jobs["reproduce"]
    assert reproduce["permissions"] == {} and reproduce["runs-on"] == "ubuntu-24.04"
    uses = [str(s.get("uses", "")) for s in reproduce["steps"]]
    assert not any(u.startswith("actions/checkout@") for u in uses)
    runs = " ".join(str(s.get("run", "")) for s in reproduce["steps"])
    assert "bubblewrap" in runs and "registry --repo incoming/repo reproduce" in runs
    # the evaluating job never executes the notebook: it judges the report
    evaluate = " ".join(str(s.get("run", "")) for s in jobs["evaluate"]["steps"])
    assert "--reproduced reproduced/reproduced.json" in evaluate
    assert "registry check --changed" in evaluate and "registry confine" in evaluate
    # probebench comes from the base commit in every job that reads the pull request,
    # and pip runs isolated (-I): no module of the PR's checkout can shadow it
    for job in ("confine", "evaluate", "proposal"):
        install = next(s for s in jobs[job]["steps"] if s.get("name", "").startswith("Install"))
        assert '"$RUNNER_TEMP/base" "$BASE_SHA"' in install["run"]
        assert "pip install ." not in install["run"]
    # a PR may edit this very file: no PR job runs on a persistent (self-hosted) runner
    assert {job["runs-on"] for job in jobs.values()} == {"ubuntu-24.04"}


def test_comment_workflow_never_checks_out_pr_code() -> None:
    doc = load_workflow("comment.yml")
    checkouts = [s for s in _steps(doc) if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert [c["with"]["ref"] for c in checkouts] == [
        "${{ github.event.repository.default_branch }}"]
    run = " ".join(s.get("run", "") for s in _steps(doc))
    assert "[0-9a-f]{40}" in run and "RUN_HEAD_SHA" in run
    # the PR is looked up from the run's head commit, never read from the uploaded files
    assert "gh pr list" in run and "headRefOid" in run and "pr/pr_number" not in run
    # the confinement rule again, on the API's file list, with main's code
    assert "pulls/$number/files" in run and "confine --changes-file" in run


def test_every_python_call_in_a_workflow_is_isolated() -> None:
    """`python -m` puts the working directory first on sys.path: in a PR checkout that
    would import the PR's files. Workflows call `python -I`."""
    for path in FILES:
        for step in _steps(load_workflow(path.name)):
            for line in str(step.get("run", "")).splitlines():
                if re.search(r"\bpython3?\s", line):
                    assert re.search(r"\bpython3? -I ", line), f"{path.name}: {line.strip()}"


def test_reeval_is_planned_run_as_a_dynamic_matrix_and_merged() -> None:
    """plan -> one job per plan group (GPU runner label when configured) -> merge, the
    flow `tests/runs/test_reeval.py` runs locally on three groups."""
    jobs = load_workflow("reeval.yml")["jobs"]
    plan_run = " ".join(str(s.get("run", "")) for s in jobs["plan"]["steps"])
    assert "probebench reeval plan" in plan_run and "--github-output" in plan_run
    assert jobs["plan"]["outputs"]["matrix"] == "${{ steps.plan.outputs.matrix }}"
    run = jobs["run"]
    assert run["needs"] == "plan" and run["runs-on"] == "${{ matrix.runs_on }}"
    assert run["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    run_cmds = " ".join(str(s.get("run", "")) for s in run["steps"])
    assert 'probebench reeval run --plan plan.json --group "$GROUP"' in run_cmds
    assert any("actions/cache@" in str(s.get("uses", "")) for s in run["steps"])
    merge = jobs["merge"]
    assert set(merge["needs"]) == {"plan", "run"}
    merge_cmds = " ".join(str(s.get("run", "")) for s in merge["steps"])
    assert "probebench reeval merge --plan" in merge_cmds
    assert "git diff -- registry/probes > reeval/entry-changes.patch" in merge_cmds


def test_the_hub_token_reaches_only_the_trusted_workflows() -> None:
    """Gated models need HF_TOKEN; a pull request's jobs (validate-pr, comment) and the
    CI never see it."""
    holders = {p.name for p in FILES if "secrets.HF_TOKEN" in p.read_text()}
    assert holders == {"reeval.yml", "publish.yml"}
    jobs = load_workflow("reeval.yml")["jobs"]
    for name, job in jobs.items():
        for step in job.get("steps", []):
            if "HF_TOKEN" in (step.get("env") or {}):
                assert name == "run" and str(step["run"]).startswith("probebench reeval run")


def test_the_holdout_key_reaches_only_the_steps_that_evaluate_on_main() -> None:
    """The maintainers' holdout key opens the sealed holdouts: only publish's evaluating
    step and reeval's run step get it; no pull-request workflow, CI or leaderboard build."""
    holders = {p.name for p in FILES if "secrets.PROBEBENCH_HOLDOUT_KEY" in p.read_text()}
    assert holders == {"reeval.yml", "publish.yml"}
    seen = []
    for path in FILES:
        for name, job in load_workflow(path.name)["jobs"].items():
            assert "PROBEBENCH_HOLDOUT_KEY" not in (job.get("env") or {})
            for step in job.get("steps", []):
                if "PROBEBENCH_HOLDOUT_KEY" in (step.get("env") or {}):
                    seen.append((path.name, name, str(step["run"]).strip().splitlines()[-1]))
    assert sorted(seen) == [
        ("publish.yml", "publish", "probebench registry publish --quiet | tee publish.txt"),
        ("reeval.yml", "run", 'probebench reeval run --plan plan.json --group "$GROUP" '
                              '--out "reeval-$GROUP" --quiet')]
    for name in ("validate-pr.yml", "comment.yml", "ci.yml", "leaderboard.yml"):
        assert "HOLDOUT" not in (WORKFLOWS / name).read_text()


def test_the_registry_signing_key_reaches_only_the_signing_step() -> None:
    """The index is signed in leaderboard.yml's build job (push to main, the weekly
    schedule, a manual run; never a pull request), the key on stdin of one step."""
    holders = {p.name for p in FILES
               if "secrets.PROBEBENCH_REGISTRY_SIGNING_KEY" in p.read_text()}
    assert holders == {"leaderboard.yml"}
    doc = load_workflow("leaderboard.yml")
    assert set(_on(doc)) == {"push", "schedule", "workflow_dispatch"}
    assert _on(doc)["push"] == {"branches": ["main"]}
    holding = [(name, str(step.get("run", ""))) for name, job in doc["jobs"].items()
               for step in job.get("steps", [])
               if "REGISTRY_SIGNING_KEY" in (step.get("env") or {})]
    assert len(holding) == 1 and holding[0][0] == "build"
    assert "probebench registry sign leaderboard --key -" in holding[0][1]
    assert "REGISTRY_SIGNING_KEY" not in str(doc.get("env", {}))
    steps = [str(s.get("run", "")) for s in doc["jobs"]["build"]["steps"]]
    signed = next(i for i, r in enumerate(steps) if "registry sign" in r)
    assert any("registry list --registry leaderboard" in r for r in steps[signed + 1:])


#: pypa/gh-action-pypi-publish v1.13.0, the head of its release/v1 line
PYPI_PUBLISH = "pypa/gh-action-pypi-publish@ed0c53931b1dc9bd32cbe73a98c7f6766f8a527e"


def run_step(workflow: str, job: str, name: str, cwd: Path, **env: str
             ) -> subprocess.CompletedProcess[str]:
    """Run one ``run:`` step as GitHub does (bash -eo pipefail), with this venv's python
    first on PATH (what setup-python gives the workflow)."""
    (step,) = [s for s in load_workflow(workflow)["jobs"][job]["steps"]
               if s.get("name") == name]
    full = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                           step["run"]], cwd=cwd, env=full, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_release_workflow_checks_the_tag_and_publishes_by_trusted_publishing() -> None:
    text = (WORKFLOWS / "release.yml").read_text()
    doc = load_workflow("release.yml")
    assert _on(doc) == {"push": {"tags": ["v*"]}}
    assert doc["permissions"] == {} and set(doc["jobs"]) == {"build", "publish"}
    build, publish = doc["jobs"]["build"], doc["jobs"]["publish"]
    assert build["permissions"] == {"contents": "read"}
    # in order: install the pinned tools, refuse a wrong tag, build, check, hand over
    steps = build["steps"]
    names = [s.get("name") for s in steps]
    assert names[2:6] == ["Install the build tools", "Refuse a tag that is not the package version",
                          "Build the sdist and the wheel (the wheel from the sdist)",
                          "Check the distributions"]
    assert install_lines(steps[2]) == []
    assert re.search(r'"build==[\d.]+" "twine==[\d.]+"', steps[2]["run"])
    assert steps[3]["env"] == {"TAG": "${{ github.ref_name }}"}
    assert steps[4]["run"].strip() == "python -I -m build --outdir dist ."
    check = steps[5]["run"]
    assert "python -I -m twine check --strict dist/*" in check
    assert "probebench/registry/trusted_keys.json" in check and "tests|secrets" in check
    assert steps[6]["uses"].startswith("actions/upload-artifact@")
    assert steps[6]["with"]["name"] == "dist"
    # publish: the one job with a token (an OIDC token), in the `pypi` environment; it runs
    # no code of the repository, only the download and the pinned publishing action
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert [s["uses"].split("@")[0] for s in publish["steps"]] == [
        "actions/download-artifact", "pypa/gh-action-pypi-publish"]
    assert publish["steps"][0]["with"] == {"name": "dist", "path": "dist/"}
    assert publish["steps"][1]["uses"] == PYPI_PUBLISH
    assert publish["steps"][1]["with"] == {"packages-dir": "dist/"}  # no user, no password
    assert not any("run" in s for s in publish["steps"])
    for word in ("secrets.", "password", "api-token", "TOKEN"):
        assert word not in text, word


def test_the_release_refuses_a_tag_that_is_not_the_package_version() -> None:
    repo = WORKFLOWS.parents[1]
    version = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]
    step = "Refuse a tag that is not the package version"
    good = run_step("release.yml", "build", step, repo, TAG=f"v{version}")
    assert good.returncode == 0, good.stdout + good.stderr
    assert f"is the package version {version}" in good.stdout
    for tag in (version, f"v{version}.1", f"v{version}-rc1", "v"):
        bad = run_step("release.yml", "build", step, repo, TAG=tag)
        assert bad.returncode == 1, (tag, bad.stdout, bad.stderr)
        assert (f"::error file=pyproject.toml::tag {tag} is not the package version: "
                f"expected v{version}") in bad.stdout
