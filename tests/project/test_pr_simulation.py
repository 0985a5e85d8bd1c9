"""The pull-request lifecycle end to end, on a simulated GitHub: an upstream bare
repository holding this working tree, a fork, pull requests, and the workflows' own
``run:`` steps executed verbatim by ``tests/actions_sim.py``.

A good PR goes confine -> sandboxed reproducer -> check, evaluate, review -> comment ->
merge -> publish (evaluate, results, live, bot PR) -> leaderboard. Five bad PRs are each
refused at the right step with a message that names the problem, and none changes
upstream main."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

import pytest
import yaml

from probebench.artifact import manifest, scan
from probebench.registry.entry import read_entry
from probebench.registry.store import latest_results
from probebench.train.notebooks import eval_notebook, write_notebook
from tests.actions_sim import (
    REPO,
    JobResult,
    Simulator,
    git,
    install_lines,
    load_workflow,
    upstream_simulator,
)
from tests.artifacts import entry_numbers, make_artifact
from tests.registry_keys import KEYS_ENV, make_key

ENTRY_ID = "simorg/passive-smollm2-135m-l15-v1"
ENTRY_FILE = "registry/probes/simorg/passive-smollm2-135m-l15-v1.yaml"
#: a reproducer for PRs refused before review: the sandbox runs it in a second
QUICK = "print('PROBEBENCH_METRICS {}')"
ARTIFACT = "registry/artifacts/passive-smollm2-135m-l15-v1"
TASK = "blimp_passive_1"
PR_JOBS = ("confine", "reproduce", "evaluate")
# the jobs' probebench processes share the module's activation cache (the sandbox has its own)
pytestmark = pytest.mark.usefixtures("share_module_cache")


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.fail("the simulation copies the repository's tracked files: run the tests "
                    "from a git checkout")
    return [p for p in out.split("\0") if p]


@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> Simulator:
    """Upstream: this working tree's tracked files (uncommitted edits included), with a
    throwaway holdout key as the repository's PROBEBENCH_HOLDOUT_KEY secret."""
    sim = upstream_simulator(tmp_path_factory.mktemp("github"), _tracked_files())
    sim.context["secrets.PROBEBENCH_HOLDOUT_KEY"] = secrets.token_hex(32)
    signer = make_key(sim.root / "registry-keys")
    sim.context["secrets.PROBEBENCH_REGISTRY_SIGNING_KEY"] = signer.private_pem().decode()
    return sim


def _trusting(github: Simulator) -> dict[str, str]:
    """The environment of a machine that trusts the simulation's registry key (the real
    maintainers' key is no test's)."""
    return {KEYS_ENV: str(github.root / "registry-keys" / "registry.pub"),
            "PROBEBENCH_MIRROR_CACHE": str(github.root / "runner-mirrors")}


def _fork(sim: Simulator, name: str) -> Path:
    fork = sim.root / "forks" / name
    git(sim.root, "clone", "-q", str(sim.upstream), str(fork))
    git(fork, "checkout", "-q", "-b", name)
    return fork


def _add_probe_pr(fork: Path, *, notebook_code: str | None = None,
                    entry: dict[str, object] | None = None) -> None:
    """One entry and its artifact, as a submitter writes them."""
    folder = fork / ARTIFACT
    make_artifact(folder, meta={"license": "CC-BY-4.0"})
    if notebook_code is None:
        write_notebook(eval_notebook(tasks=[TASK], seed=0, bootstrap=1000, artifact="."),
                       folder / "eval.ipynb")
    else:
        nb = json.loads((folder / "train.ipynb").read_text())
        nb["cells"][0]["source"] = [notebook_code]
        nb["metadata"] = {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                         "language": "python"}}
        (folder / "eval.ipynb").write_text(json.dumps(nb))
    data = {
        "id": ENTRY_ID, "name": "Passive voice probe", "short_name": "passive-sim",
        "author": "Sim Ulated", "org": "simorg", "category": "grammar",
        "probe_type": "linear", "model": "smollm2-135m", "layer": 15,
        "position": "last_token", "artifact_url": ARTIFACT,
        "artifact_sha256": manifest(scan(folder)).sha256, "reproducer_notebook": "eval.ipynb",
        "license": "CC-BY-4.0", "release": "2026-11-20", **entry_numbers(folder),
        "tagline": "passive voice, simulated", "description": "A simulated probe.",
        "status": "pending_review", "tasks": [TASK],
        "evalaware_imputation_acknowledged": True, **(entry or {})}
    (fork / ENTRY_FILE).parent.mkdir(parents=True, exist_ok=True)
    (fork / ENTRY_FILE).write_text(yaml.safe_dump({k: v for k, v in data.items()
                                                  if v is not None}, sort_keys=False))


def _commit(fork: Path, message: str) -> None:
    git(fork, "add", "-A")
    git(fork, "commit", "-qm", message)


def _run_pr(sim: Simulator, number: int, fork: Path, branch: str,
            extra_env: dict[str, str] | None = None) -> dict[str, JobResult]:
    """validate-pr's jobs in order (a job runs when the jobs it needs succeeded), then
    comment.yml."""
    sim.open_pr(number, fork, branch)
    run = f"pr-{number}"
    done: dict[str, JobResult] = {}
    wf = load_workflow("validate-pr.yml")
    for job in PR_JOBS:
        needs = wf["jobs"][job].get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        if all(n in done and done[n].ok for n in needs):
            done[job] = sim.run_job("validate-pr.yml", job, run_name=run, pull_request=number,
                                    extra_env=extra_env)
    done["comment"] = sim.run_job("comment.yml", "comment", run_name=run)
    return done


def _refused(sim: Simulator, number: int, fork: Path, branch: str, failing_job: str,
             message: str) -> str:
    before = sim.main_sha()
    done = _run_pr(sim, number, fork, branch)
    job = done[failing_job]
    assert not job.ok, job.output
    for later in PR_JOBS[PR_JOBS.index(failing_job) + 1:]:
        assert later not in done, f"{later} ran after {failing_job} failed"
    comment = sim.comment(number)
    assert message in comment, comment
    assert done["comment"].ok, done["comment"].output
    assert sim.main_sha() == before  # nothing reached upstream main
    return comment


def test_install_steps_only_install() -> None:
    for name in ("validate-pr.yml", "publish.yml", "leaderboard.yml", "reeval.yml"):
        for job in load_workflow(name)["jobs"].values():
            for step in job.get("steps", []):
                if str(step.get("name", "")).startswith("Install"):
                    assert install_lines(step) == [], (name, step["name"])


def test_a_pr_that_touches_a_workflow_is_refused_at_confine(github: Simulator) -> None:
    fork = _fork(github, "touch-workflow")
    _add_probe_pr(fork)
    with (fork / ".github/workflows/ci.yml").open("a") as fh:
        fh.write("# harmless-looking edit\n")
    _commit(fork, "entry and a workflow edit")
    comment = _refused(github, 11, fork, "touch-workflow", "confine",
                       ".github/workflows/ci.yml: outside one entry's YAML")
    assert "probe pull request refused" in comment


def test_a_pr_that_disables_the_gate_in_its_own_workflow_gets_no_pass(
        github: Simulator) -> None:
    """A pull_request run uses the PR's own copy of validate-pr.yml: this PR replaces the
    confine command with `true`. Its jobs then pass, but comment.yml (main's code) checks
    the PR's files again and posts the refusal, never the PR's checklist."""
    fork = _fork(github, "skip-gate")
    _add_probe_pr(fork)
    wf = fork / ".github/workflows/validate-pr.yml"
    text = wf.read_text()
    gate = ('probebench registry confine --base "$BASE_SHA" --entry-file incoming/entry '
            '--markdown refused/comment.md')
    assert gate in text
    wf.write_text(text.replace(gate, "true; echo org/x > incoming/entry"))
    _commit(fork, "entry, and a gate that always passes")
    before = github.main_sha()
    done = _run_pr(github, 16, fork, "skip-gate")
    assert done["confine"].ok  # the PR's own gate let it through
    comment = github.comment(16)
    assert "probe pull request refused" in comment
    assert ".github/workflows/validate-pr.yml: outside one entry's YAML" in comment
    assert "All checks pass" not in comment
    assert github.main_sha() == before


def test_a_pr_that_touches_tasks_or_a_test_set_is_refused_at_confine(
        github: Simulator) -> None:
    fork = _fork(github, "touch-tasks")
    _add_probe_pr(fork)
    data = fork / "probebench/catalog/data/blimp/passive_1.jsonl"
    data.write_text(data.read_text().replace("was", "were", 1))
    with (fork / "probebench/catalog/tasks.yaml").open("a") as fh:
        fh.write("# edited\n")
    _commit(fork, "entry and a friendlier test set")
    comment = _refused(github, 12, fork, "touch-tasks", "confine",
                       "probebench/catalog/data/blimp/passive_1.jsonl: outside one entry")
    assert "probebench/catalog/tasks.yaml: outside" in comment


def test_a_pr_that_breaks_the_entry_schema_is_refused_at_check(github: Simulator) -> None:
    fork = _fork(github, "bad-schema")
    _add_probe_pr(fork, notebook_code=QUICK, entry={"layer": "fifteen"})
    _commit(fork, "entry with a bad layer")
    comment = _refused(github, 13, fork, "bad-schema", "evaluate",
                       "the entry check failed")
    assert "field 'layer'" in comment and "0 of 1 entries pass" in comment


def test_a_pr_whose_artifact_hash_mismatches_is_refused_at_check(github: Simulator) -> None:
    fork = _fork(github, "bad-hash")
    _add_probe_pr(fork, notebook_code=QUICK, entry={"artifact_sha256": "ab" * 32})
    _commit(fork, "entry with a wrong hash")
    comment = _refused(github, 14, fork, "bad-hash", "evaluate", "the entry check failed")
    assert "differs from the expected" in comment and ENTRY_ID in comment


def test_a_pr_with_a_hostile_notebook_is_refused_at_review(
        github: Simulator, tmp_path: Path, listener: tuple[int, list[object]]) -> None:
    """The notebook tries the network, the environment and the disk, in that order, then
    reports what it got as its error: every attempt fails, and review fails."""
    port, accepted = listener
    canary = tmp_path / "CANARY"
    fork = _fork(github, "hostile")
    code = ("import os, socket, json\n"
            "got = {}\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "    got['net'] = 'connected'\n"
            "except OSError as exc:\n"
            "    got['net'] = type(exc).__name__\n"
            "got['token'] = os.environ.get('GH_TOKEN', 'absent')\n"
            "got['secret'] = os.environ.get('SIM_SECRET', 'absent')\n"
            "try:\n"
            f"    open({str(canary)!r}, 'w').write(json.dumps(dict(os.environ)))\n"
            "    got['disk'] = 'written'\n"
            "except OSError as exc:\n"
            "    got['disk'] = type(exc).__name__\n"
            "raise SystemExit('HOSTILE ' + json.dumps(got, sort_keys=True))\n")
    _add_probe_pr(fork, notebook_code=code)
    _commit(fork, "entry with a notebook that phones home")
    secret = "sim-secret-value-5d1e"
    github.context["github.token"] = "ghs_simulated_token_never_real"
    before = github.main_sha()
    done = _run_pr(github, 15, fork, "hostile", extra_env={"SIM_SECRET": secret,
                                                          "GH_TOKEN": "ghs_runner_token"})
    assert not done["evaluate"].ok, done["evaluate"].output
    comment = github.comment(15)
    assert "1 check(s) fail." in comment
    assert "- [ ] **reproducer notebook runs in the sandbox" in comment
    # the notebook's own account (Markdown-escaped in the comment), from the report
    report = json.loads((github.artifacts / "pr-15/reproduced/reproduced.json").read_text())
    assert 'HOSTILE {"disk": "FileNotFoundError", "net": "ConnectionRefusedError", ' \
           '"secret": "absent", "token": "absent"}' in report["error"]
    assert accepted == [] and not canary.exists()
    assert secret not in comment and "ghs_runner_token" not in comment
    assert github.main_sha() == before


def test_impersonating_the_maintainers_org_is_refused_at_confine(github: Simulator) -> None:
    """An entry under probebench/ by an account that does not own it (owners.yaml): the
    confine job refuses it, before any notebook runs."""
    fork = _fork(github, "impersonate")
    _add_probe_pr(fork, notebook_code=QUICK)
    entry = fork / ENTRY_FILE
    text = entry.read_text().replace("simorg/", "probebench/").replace("org: simorg",
                                                                     "org: probebench")
    (fork / "registry/probes/probebench/passive-smollm2-135m-l15-v1.yaml").write_text(text)
    entry.unlink()
    _commit(fork, "an entry under the maintainers' org")
    comment = _refused(github, 17, fork, "impersonate", "confine",
                       "registry/probes/probebench/passive-smollm2-135m-l15-v1.yaml: org "
                       "'probebench' belongs to probebench-maintainers (registry/owners.yaml); "
                       "sim-author may not add or change its entries")
    assert "probe pull request refused" in comment


def test_taking_over_a_reference_id_is_refused_at_check(github: Simulator) -> None:
    """A stranger's file claiming a reference entry's id: the id must match the path."""
    fork = _fork(github, "takeover")
    _add_probe_pr(fork, notebook_code=QUICK,
                    entry={"id": "probebench/verb-grammar-smollm2-135m-l15-v1"})
    _commit(fork, "an entry with someone else's id")
    comment = _refused(github, 18, fork, "takeover", "evaluate", "the entry check failed")
    assert "belongs in probes/probebench/verb-grammar-smollm2-135m-l15-v1.yaml" in comment


def test_moving_a_competitors_results_into_the_artifact_is_refused(github: Simulator) -> None:
    fork = _fork(github, "rename")
    _add_probe_pr(fork)
    victim = "registry/results/probebench/verb-grammar-smollm2-135m-l15-v1/verb_grammar.json"
    git(fork, "mv", victim, f"{ARTIFACT}/verb_grammar.json")
    _commit(fork, "entry, and a competitor's results moved away")
    comment = _refused(github, 19, fork, "rename", "confine",
                       f"{victim}: deleted (or moved away)")
    assert "probe pull request refused" in comment


def test_a_comment_for_another_pr_is_not_posted(github: Simulator) -> None:
    """A run's uploaded files name PR 32 (a rival's) and carry a forged pass: the comment
    job ignores the number, finds the run's own PR from its head commit, checks that PR's
    files again and posts the refusal there; PR 32 gets nothing."""
    rival = _fork(github, "rival")
    _add_probe_pr(rival)
    _commit(rival, "a rival's entry")
    github.open_pr(32, rival, "rival")
    fork = _fork(github, "forger")
    _add_probe_pr(fork)
    (fork / "README.md").write_text("edited\n")  # refused at confine: a quick run
    _commit(fork, "entry and a forged comment")
    github.open_pr(31, fork, "forger")
    github.run_job("validate-pr.yml", "confine", run_name="pr-31", pull_request=31)
    uploaded = github.artifacts / "pr-31" / "pr-refused"
    (uploaded / "pr_number").write_text("32\n")
    (uploaded / "comment.md").write_text("## probebench review\n\nAll checks pass.\n")
    done = github.run_job("comment.yml", "comment", run_name="pr-31")
    assert done.ok, done.output
    assert github.comment(32) == ""
    assert "probe pull request refused" in github.comment(31)
    assert "README.md: outside one entry" in github.comment(31)


def test_a_good_pr_goes_live(github: Simulator) -> None:
    fork = _fork(github, "good")
    _add_probe_pr(fork)
    _commit(fork, "Add simorg/passive-smollm2-135m-l15-v1")
    done = _run_pr(github, 1, fork, "good")
    for job in (*PR_JOBS, "comment"):
        assert done[job].ok, done[job].output
    comment = github.comment(1)
    assert "All checks pass." in comment and comment.count("- [x]") == 6
    # the holdout key: no pull-request job's step held it, nothing they printed,
    # commented or uploaded contains it
    key = github.context["secrets.PROBEBENCH_HOLDOUT_KEY"]
    assert not [s for s in github.sightings if s[3] == "secrets.PROBEBENCH_HOLDOUT_KEY"]
    assert all(key not in done[job].output for job in (*PR_JOBS, "comment"))
    assert key not in comment
    for path in (github.artifacts / "pr-1").rglob("*"):
        assert not path.is_file() or key.encode() not in path.read_bytes(), path
    assert "agree with probebench's re-evaluation" in comment
    reproduced = json.loads((github.artifacts / "pr-1/reproduced/reproduced.json").read_text())
    assert reproduced["ran"] and reproduced["metrics"][TASK]["auroc"] is not None
    # the PR may not bring results: they are made after the merge, by main's code
    before = github.main_sha()
    github.merge_pr(1)
    assert github.main_sha() != before
    publish = github.run_job("publish.yml", "publish", run_name="push-1", ref="main")
    assert publish.ok, publish.output
    # ... which the trusted publish job, and only its evaluating step, is given
    assert {s for s in github.sightings if s[3] == "secrets.PROBEBENCH_HOLDOUT_KEY"} == {
        ("publish.yml", "publish", "Evaluate merged entries and make them live",
         "secrets.PROBEBENCH_HOLDOUT_KEY")}
    assert key not in publish.output
    assert f"live     {ENTRY_ID}" in publish.output
    (bot_branch, body), = github.created_prs().items()
    assert bot_branch.startswith("probebench-bot_publish-") and ENTRY_ID in body
    github.merge_branch(bot_branch.replace("_", "/", 1))
    main = github.root / "main-after"
    git(github.root, "clone", "-q", str(github.upstream), str(main))
    assert read_entry(main / ENTRY_FILE).status == "live"
    record = latest_results(main / "registry", ENTRY_ID)[TASK]
    assert record.run is not None and record.run.probebench_commit
    assert record.result.test_sha256 and record.dtype == "float32"
    # a second push finds nothing pending
    again = github.run_job("publish.yml", "publish", run_name="push-2", ref="main")
    assert again.ok and "no entry is pending review" in again.output
    site = github.run_job("leaderboard.yml", "build", run_name="push-2-site", ref="main",
                          extra_env=_trusting(github))
    assert site.ok, site.output
    assert site.workspace is not None
    # the index was signed with the repository's secret, which only the signing step saw
    assert (site.workspace / "leaderboard/registry.json.sig").is_file()
    assert {s[:3] for s in github.sightings
            if s[3] == "secrets.PROBEBENCH_REGISTRY_SIGNING_KEY"} == {
        ("leaderboard.yml", "build", "Sign the registry index (the key reaches this step "
                                     "alone, on stdin)")}
    task_page = (site.workspace / f"leaderboard/tasks/{TASK}.html").read_text()
    ranked = task_page.split('id="task-ranking"')[1].split("</table>")[0]
    assert "passive-sim" in ranked
    page = (site.workspace / "leaderboard/entries/simorg__passive-smollm2-135m-l15-v1.html"
            ).read_text()
    assert f"Evaluated {record.run.evaluated_at} (UTC)" in page
