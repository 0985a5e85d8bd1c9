"""Orgs have owners: a probe pull request under an org its author does not own is refused,
by ``registry confine`` and by ``registry check --changed``, run the way the workflows run
them. The commands and the names of their environment variables are taken from
``validate-pr.yml`` and ``comment.yml`` themselves; the event's values (base, head, the
author's login) come from a real git repository in ``tmp_path``."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.intake.check import check_registry
from probebench.intake.confine import OWNERS_PATH, parse_owners
from probebench.tasks.catalog import TaskCatalog
from tests.actions_sim import REPO, load_workflow
from tests.artifacts import entry_numbers, make_artifact
from tests.catalogs import copy_catalog

OWNERS = parse_owners((REPO / OWNERS_PATH).read_text("utf-8"))
#: a maintainer's login, in another case than owners.yaml's (GitHub ignores case)
MAINTAINER = sorted(OWNERS.orgs["probebench"])[0].upper()
STRANGER = "mallory"
ENTRY_ID = "probebench/official-smollm2-135m-l15-v1"
ENTRY = f"registry/probes/{ENTRY_ID}.yaml"
ARTIFACT = "registry/artifacts/official"
#: the ownership rule reads paths, never the files: placeholders stand in for entries
PLACEHOLDER = "placeholder\n"
#: the expression GitHub fills with the pull request's author
LOGIN_EXPR = "${{ github.event.pull_request.user.login }}"
_EXPR = re.compile(r"^\$\{\{\s*github\.event\.pull_request\.([a-z_.]+)\s*\}\}$")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _repo(root: Path, base: dict[str, str], pr: dict[str, str]) -> Path:
    """A base commit on ``main`` (this repository's owners file, and ``base``), and a pull
    request's commit on ``pr`` (``pr``), checked out."""
    _write(root, {OWNERS_PATH: (REPO / OWNERS_PATH).read_text("utf-8"), **base})
    _git(root, "init", "-q", "-b", "main")
    (root / ".git/info/exclude").write_text("/tasks.yaml\n/data/\n/out/\n/incoming/\n"
                                            "/refused/\n/github_output\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _git(root, "checkout", "-qb", "pr")
    _write(root, pr)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "pr")
    return root


def _entry_pr(root: Path) -> Path:
    """A stranger's pull request as the audit found it: an entry under ``probebench/``
    with its own, valid artifact (everything but the org passes the check)."""
    copy_catalog(root)
    folder, *_ = make_artifact(root / ARTIFACT)
    from probebench.artifact import manifest, scan

    entry = {
        "id": ENTRY_ID, "name": "Official verb probe", "short_name": "official",
        "author": "Not The Maintainers", "org": "probebench", "category": "grammar",
        "probe_type": "linear", "model": "smollm2-135m", "layer": 15,
        "position": "last_token", "artifact_url": ARTIFACT,
        "artifact_sha256": manifest(scan(folder)).sha256,
        "reproducer_notebook": f"{ARTIFACT}/train.ipynb", "license": "Apache-2.0",
        "release": "2026-11-01", **entry_numbers(folder), "tagline": "Reads verb tense",
        "description": "A probe.", "status": "pending_review", "tasks": ["verb_grammar"],
        "evalaware_imputation_acknowledged": True}
    reference = "registry/probes/probebench/verb-grammar-smollm2-135m-l15-v1.yaml"
    return _repo(root, {reference: (REPO / reference).read_text("utf-8")},
                 {ENTRY: yaml.safe_dump(entry, sort_keys=False)})


# --- the workflows' own commands -------------------------------------------------------
def _step(workflow: str, job: str, runs: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = load_workflow(workflow)["jobs"][job]["steps"]
    (step,) = [s for s in steps if runs in str(s.get("run", ""))]
    return step


def _confine_step() -> dict[str, Any]:
    return _step("validate-pr.yml", "confine", "registry confine")


def _evaluate_step() -> dict[str, Any]:
    return _step("validate-pr.yml", "evaluate", "registry check --changed")


def _author_var(step: dict[str, Any]) -> str:
    """The step's env variable that GitHub fills with the pull request's author."""
    (name,) = [k for k, v in step["env"].items() if v == LOGIN_EXPR]
    return str(name)


def _event(repo: Path, author: str) -> dict[str, str]:
    return {"base.sha": _git(repo, "rev-parse", "main"), "head.sha": _git(repo, "rev-parse",
                                                                          "HEAD"),
            "number": "7", "user.login": author}


def _run_step(step: dict[str, Any], repo: Path, event: dict[str, str],
              monkeypatch: pytest.MonkeyPatch, *, only: str | None = None,
              until: str | None = None) -> list[int]:
    """The step's ``probebench`` lines in the repository root, each argument as bash
    passes it (``"$NAME"`` from the step's ``env:``, filled from ``event`` as GitHub does),
    stopping at the first failure (``bash -e``) or after the line holding ``until``;
    ``only``: just the lines holding it. Its ``mkdir -p`` lines run too."""
    env = {}
    for name, value in step["env"].items():
        m = _EXPR.match(str(value))
        assert m, f"{name}: {value}"
        env[name] = event[m.group(1)]
    env["GITHUB_OUTPUT"] = str(repo / "github_output")
    (repo / "github_output").touch()  # the runner creates it for every step
    monkeypatch.chdir(repo)
    codes = []
    for line in str(step["run"]).splitlines():
        words = shlex.split(line)
        if words[:2] == ["mkdir", "-p"]:
            for folder in words[2:]:
                (repo / folder).mkdir(parents=True, exist_ok=True)
        if not words or words[0] != "probebench" or (only and only not in line):
            continue
        argv = []
        for word in words[1:]:
            if word.startswith("$"):
                word = env[word[1:]]  # a KeyError: the step uses a variable it never sets
            assert "$" not in word, line
            argv.append(word)
        codes.append(main(argv))
        if codes[-1] != 0 or (until and until in line):
            break
    return codes


def test_the_workflows_pass_the_author_through_env() -> None:
    """Every confine and check --changed of a pull request gets ``--author``, from
    ``github.event.pull_request.user.login`` through ``env:`` (never interpolated into the
    script); comment.yml asks the API for it."""
    for step in (_confine_step(), _evaluate_step()):
        var = _author_var(step)
        lines = [line for line in str(step["run"]).splitlines()
                 if "registry confine" in line or "registry check" in line]
        assert lines and all(f'--author "${var}"' in line for line in lines), lines
        assert "${{" not in step["run"]
    comment = _step("comment.yml", "comment", "confine --changes-file")
    assert 'author=$(gh pr view "$number" --repo "$REPO" --json author --jq .author.login)' \
        in comment["run"]
    assert '--author "$author"' in comment["run"] and "${{" not in comment["run"]


def test_a_stranger_cannot_publish_under_probebench(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The audit's pull request, by an account that does not own ``probebench``: refused
    by the confine job's own step, and again by the evaluate job's confine and check."""
    repo = _entry_pr(tmp_path)
    event = _event(repo, STRANGER)
    refusal = (f"{ENTRY}: org 'probebench' belongs to {MAINTAINER.lower()} "
               f"({OWNERS_PATH}); {STRANGER} may not add or change its entries")
    assert _run_step(_confine_step(), repo, event, monkeypatch) == [1]
    out = capsys.readouterr().out
    assert f"REFUSED  {refusal}" in out and "owners as on the base branch, merge base" in out
    assert refusal in (repo / "refused/comment.md").read_text()  # the comment it posts
    assert "kind=" not in (repo / "github_output").read_text()  # no job runs after it
    assert not (repo / "incoming/entry").exists()
    # the evaluate job: its confine line refuses, and its check --changed line on its own
    step = _evaluate_step()
    assert _run_step(step, repo, event, monkeypatch) == [1]
    assert refusal in capsys.readouterr().out
    assert _run_step(step, repo, event, monkeypatch, only="registry check") == [1]
    out = capsys.readouterr().out
    assert f"FAIL  {ENTRY_ID}" in out and refusal in out and "0 of 1 entries pass" in out
    assert refusal in (repo / "out/comment.md").read_text()


def test_the_owners_own_pull_request_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    repo = _entry_pr(tmp_path)
    event = _event(repo, MAINTAINER)
    assert _run_step(_confine_step(), repo, event, monkeypatch) == [0]
    assert (repo / "github_output").read_text() == "kind=probe\n"
    assert (repo / "incoming/entry").read_text() == f"{ENTRY_ID}\n"
    assert _run_step(_evaluate_step(), repo, event, monkeypatch,
                     until="registry check") == [0, 0]
    out = capsys.readouterr().out
    assert f"ok    {ENTRY_ID}" in out and "1 of 1 entries pass" in out


def test_a_missing_author_is_an_error_not_a_skipped_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, {}, {ENTRY: PLACEHOLDER})  # the rule needs the path alone
    missing = f"{ENTRY}: the pull request's author is missing: give --author LOGIN"
    # an empty login, as the workflow would pass one
    assert _run_step(_confine_step(), repo, _event(repo, ""), monkeypatch) == [1]
    assert missing in capsys.readouterr().out
    assert _run_step(_evaluate_step(), repo, _event(repo, ""), monkeypatch,
                     only="registry check") == [1]
    assert missing in capsys.readouterr().out
    # no --author at all, on the command line and in the library
    assert main(["registry", "confine", "--base", "main"]) == 1
    assert missing in capsys.readouterr().out
    (result,) = check_registry(repo / "registry", repo, catalog=TaskCatalog.for_repo(repo),
                               changed_since="main")
    assert any(missing in p for p in result.problems)
    # a value that is no GitHub login is refused, not compared
    assert main(["registry", "confine", "--base", "main", "--author", "evil user"]) == 1
    assert "--author \"evil user\": not a GitHub login" in capsys.readouterr().out


def _confine(repo: Path, author: str) -> int:
    return main(["registry", "--repo", str(repo), "confine", "--base", "main", "--quiet",
                 "--author", author])


def test_editing_the_owners_file_is_refused_and_never_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pull request that lists its author as an owner of ``probebench``: the owners file
    is a maintainers' path, and the rule reads the base branch's copy."""
    owners = (REPO / OWNERS_PATH).read_text("utf-8").replace(
        "probebench: [", f"probebench: [{STRANGER}, ")
    assert STRANGER in parse_owners(owners).orgs["probebench"]
    repo = _repo(tmp_path, {"registry/probes/probebench/ref-m-l1-v1.yaml": PLACEHOLDER},
                 {OWNERS_PATH: owners, ENTRY: PLACEHOLDER})
    assert _confine(repo, STRANGER) == 1
    out = capsys.readouterr().out
    assert f"REFUSED  {OWNERS_PATH}: outside one entry's YAML" in out
    assert "who may publish under an org is the maintainers' to change" in out
    assert f"REFUSED  {ENTRY}: org 'probebench' belongs to" in out
    # the owners file alone (no entry) is refused too
    _git(repo, "rm", "-q", "--cached", ENTRY)
    _git(repo, "commit", "-qm", "only the owners file")
    assert _confine(repo, STRANGER) == 1
    assert f"REFUSED  {OWNERS_PATH}: outside one entry's YAML" in capsys.readouterr().out


def test_new_orgs_are_open_and_an_unlisted_org_with_entries_is_closed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, {"registry/probes/orphan/old-m-l1-v1.yaml": PLACEHOLDER,
                            "registry/probes/probebench/ref-m-l1-v1.yaml": PLACEHOLDER},
                 {"registry/probes/neworg/first-m-l1-v1.yaml": PLACEHOLDER})
    assert "orphan" not in OWNERS.orgs and "neworg" not in OWNERS.orgs
    assert _confine(repo, STRANGER) == 0  # a new org: its first submitter's
    _git(repo, "checkout", "-qb", "orphan", "main")
    _write(repo, {"registry/probes/orphan/new-m-l1-v1.yaml": PLACEHOLDER})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "an entry for an org nobody owns")
    capsys.readouterr()
    assert _confine(repo, STRANGER) == 1
    assert ("org 'orphan' has entries on the base branch, merge base "
            in capsys.readouterr().out)
    # changing a maintainers' entry on the base branch: its org's owners only
    _git(repo, "checkout", "-qb", "edit", "main")
    _write(repo, {"registry/probes/probebench/ref-m-l1-v1.yaml": "edited\n"})
    _git(repo, "commit", "-qam", "edits a reference entry")
    assert _confine(repo, STRANGER) == 1
    assert "org 'probebench' belongs to" in capsys.readouterr().out
    assert _confine(repo, MAINTAINER) == 0


def test_comment_yml_checks_the_api_file_list_against_mains_owners(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """comment.yml's confine line, as it runs: GitHub's file list, main's checkout in
    ``main/`` (its owners file and its orgs), the author from the API."""
    step = _step("comment.yml", "comment", "confine --changes-file")
    (line,) = [ln.strip() for ln in str(step["run"]).splitlines()
               if "registry --repo main confine" in ln]
    words = shlex.split(line.removeprefix("if ! ").removesuffix("; then"))
    _write(tmp_path / "main", {OWNERS_PATH: (REPO / OWNERS_PATH).read_text("utf-8"),
                               "registry/probes/probebench/ref-m-l1-v1.yaml": PLACEHOLDER,
                               "registry/probes/orphan/old-m-l1-v1.yaml": PLACEHOLDER})
    monkeypatch.chdir(tmp_path)

    def run(added: str, author: str) -> int:
        (tmp_path / "pr-files.tsv").write_text(f"added\t{added}\t\n")
        return main([author if w == "$author" else w for w in words[1:]])

    assert run(ENTRY, STRANGER) == 1
    assert f"{ENTRY}: org 'probebench' belongs to" in (tmp_path / "refused.md").read_text()
    assert run("registry/probes/orphan/x-m-l1-v1.yaml", STRANGER) == 1
    assert "org 'orphan' has entries on the checkout" in (tmp_path / "refused.md").read_text()
    assert run(ENTRY, MAINTAINER) == 0
    assert run("registry/probes/neworg/x-m-l1-v1.yaml", STRANGER) == 0
    assert run(ENTRY, "") == 1
    assert "author is missing" in (tmp_path / "refused.md").read_text()
    capsys.readouterr()


def test_every_org_with_entries_has_owners() -> None:
    """The maintained mapping covers the registry, and ``probebench`` is the maintainers'."""
    orgs = {p.name for p in (REPO / "registry/probes").iterdir()
            if p.is_dir() and any(p.glob("*.yaml"))}
    assert orgs and orgs <= set(OWNERS.orgs), orgs - set(OWNERS.orgs)
    assert OWNERS.maintainers and OWNERS.orgs["probebench"] == OWNERS.maintainers


@pytest.mark.parametrize(("text", "message"), [
    ("reserved: [probebench]\norgs: {}\n", "unknown field(s) reserved; expected 'orgs'"),
    ("orgs: [probebench]\n", "field 'orgs': expected a mapping"),
    ("orgs:\n  Probe Bench: [ada]\n", "field 'orgs': 'Probe Bench' is not an org"),
    ("orgs:\n  lab: []\n", "field 'orgs.lab': expected a non-empty list"),
    ("orgs:\n  lab: [ada, 'mal lory']\n", "field 'orgs.lab': 'mal lory' is not a GitHub login"),
    ("orgs: {}\nmaintainers: ada\n", "field 'maintainers': expected a non-empty list"),
    ("- ada\n", "expected a mapping with 'orgs'"),
])
def test_a_malformed_owners_file_is_named(text: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(f"registry/owners.yaml: {message}")):
        parse_owners(text)


def test_a_malformed_owners_file_on_the_base_branch_stops_confine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, {}, {ENTRY: PLACEHOLDER})
    _git(repo, "checkout", "-q", "main")
    (repo / OWNERS_PATH).write_text("orgs:\n  probebench: maintainers\n")
    _git(repo, "commit", "-qam", "a broken owners file")
    _git(repo, "checkout", "-q", "pr")
    _git(repo, "rebase", "-q", "main")
    assert _confine(repo, MAINTAINER) == 2
    err = capsys.readouterr().err
    assert "error: registry/owners.yaml on the base branch, merge base" in err
    assert "field 'orgs.probebench': expected a non-empty list" in err
