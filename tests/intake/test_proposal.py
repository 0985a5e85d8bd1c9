"""Task proposals: the confinement rule on real git repositories, ``registry check-task``
on proposals written here (a small SentEval TSV), and one good and one bad proposal
through the workflows on a simulated GitHub (``tests/actions_sim.py``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.hashing import sha256_file
from probebench.intake.confine import (
    MAX_PROPOSAL_FILE_BYTES,
    confinement_problems,
    pr_kind,
    proposed_task,
    read_changes_file,
)
from probebench.intake.proposal import check_proposal
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import get_format
from probebench.tasks.hygiene import canonical_test_sha256
from probebench.tasks.spec import TaskSpec
from tests.actions_sim import (
    REPO,
    JobResult,
    Simulator,
    git,
    load_workflow,
    upstream_simulator,
)

TASK = "tense_past_present"
FOLDER = f"tasks/proposed/{TASK}"
DATA = f"data/{TASK}/sentences.tsv"
#: SentEval: partition, label, sentence; lines 1-4 train, 5-6 val, 7-10 test
LINES = [
    ("tr", "past", "The dog barked at the mailman."),
    ("tr", "present", "The dog barks at the mailman."),
    ("tr", "past", "She walked to the station."),
    ("tr", "present", "She walks to the station."),
    ("va", "past", "They played chess all night."),
    ("va", "present", "They play chess all night."),
    ("te", "past", "He cooked dinner for his friends."),
    ("te", "present", "He cooks dinner for his friends."),
    ("te", "past", "We painted the fence green."),
    ("te", "present", "We paint the fence green."),
]


def write_proposal(folder: Path, lines: list[tuple[str, str, str]] = LINES, /,
                   **fields: object) -> Path:
    """A task proposal as its author makes it: the TSV, then tasks.yaml with the hashes
    probebench computes (``fields`` override the entry's fields afterwards)."""
    data = folder / DATA
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("".join("\t".join(line) + "\n" for line in lines), encoding="utf-8")
    spec: dict[str, object] = {
        "id": TASK, "title": "Past or present tense", "format": "senteval", "version": 1,
        "description": "Simple past against simple present, written by hand.",
        "files": {"data": DATA}, "files_sha256": {DATA: sha256_file(data, memo=False)},
        "labels": {1: "past tense", 0: "present tense"}, "slices": ["class"],
        "license": "CC-BY-4.0", "source": "written by hand for the probebench tests",
        "options": {"positive_class": "past"}, "test_sha256": "0" * 64}
    try:
        loaded = get_format("senteval").load(TaskSpec.model_validate(spec), folder)
        spec["test_sha256"] = canonical_test_sha256(loaded.test)
    except InputError:  # data the reader refuses: the check must say so
        pass
    spec.update(fields)
    (folder / "tasks.yaml").write_text(yaml.safe_dump(
        {"version": 1, "tasks": [{k: v for k, v in spec.items() if v is not None}]},
        sort_keys=False))
    (folder / "README.md").write_text("# Past or present tense\n\nA data card.\n")
    return folder


# --- the confinement rule -------------------------------------------------------------

def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    base = ("registry/probes/org/old-m-l1-v1.yaml", "probebench/catalog/tasks.yaml",
            "probebench/catalog/data/blimp/passive_1.jsonl", ".github/workflows/ci.yml",
            "tasks/proposed/older_task/tasks.yaml")
    for rel in base:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("base\n")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    _git(tmp_path, "checkout", "-qb", "pr")
    return tmp_path


def _commit(repo: Path, *paths: str, text: str = "pr change\n") -> None:
    for rel in paths:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "pr")


def _confine(repo: Path, *extra: str) -> int:
    return main(["registry", "--repo", str(repo), "confine", "--base", "main", *extra])


def test_a_task_proposal_is_confined_and_classified(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(repo / FOLDER)
    _commit(repo, f"{FOLDER}/training/my-train.txt")
    out = tmp_path / "github_output"
    assert _confine(repo, "--github-output", str(out)) == 0
    assert f"confined to one task proposal: {FOLDER}/" in capsys.readouterr().out
    assert out.read_text() == "kind=task\n"


def test_a_probe_submission_is_classified_as_one(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a new org (org/ has entries on the base branch and no owners: closed)
    _commit(repo, "registry/probes/neworg/new-m-l2-v1.yaml", "registry/artifacts/new/meta.yaml")
    out = tmp_path / "github_output"
    assert _confine(repo, "--github-output", str(out), "--author", "t") == 0
    assert out.read_text() == "kind=probe\n"
    assert "confined to one entry" in capsys.readouterr().out


@pytest.mark.parametrize(("extra", "message"), [
    # registered tasks are immutable, and the catalog is the maintainers'
    ("probebench/catalog/tasks.yaml", "probebench/catalog/tasks.yaml: outside the proposal's "
                                      "folder"),
    ("probebench/catalog/data/blimp/passive_1.jsonl", "passive_1.jsonl: outside the "
                                                      "proposal's folder"),
    # a proposal already on the base branch
    ("tasks/proposed/older_task/tasks.yaml", "tasks/proposed/older_task/tasks.yaml: changed, "
                                            "not added"),
    # a second task
    ("tasks/proposed/second_task/tasks.yaml", "adds exactly one task, one folder "
                                             "tasks/proposed/<task id>/; this one adds 2"),
    # anything else
    ("README.md", "README.md: outside the proposal's folder"),
    (".github/workflows/ci.yml", ".github/workflows/ci.yml: outside the proposal's folder"),
    (f"{FOLDER}/notes/extra.txt", f"{FOLDER}/notes/extra.txt: not part of a proposal"),
    (f"{FOLDER}/data/other_task/x.tsv", "not part of a proposal"),
    ("tasks/proposed/Bad-Id/tasks.yaml", "(a proposal folder is tasks/proposed/<task id>/"),
    # both kinds in one pull request
    ("registry/probes/org/new-m-l2-v1.yaml", "a probe pull request's file in a task proposal; "
                                             "a pull request proposes a probe or a task, never "
                                             "both"),
])
def test_a_task_proposal_touching_anything_else_is_refused(
        repo: Path, extra: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(repo / FOLDER)
    _commit(repo, extra)
    assert _confine(repo) == 1
    out = capsys.readouterr().out
    assert message in out, out
    assert "the task proposal is refused" in out


def test_deleting_links_and_oversized_files_are_refused(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(repo / FOLDER)
    (repo / FOLDER / "training").mkdir()
    (repo / FOLDER / "training/secrets").symlink_to("/etc/passwd")
    big = repo / FOLDER / f"data/{TASK}/big.tsv"
    big.write_bytes(b"x" * (MAX_PROPOSAL_FILE_BYTES + 1))
    _git(repo, "rm", "-q", "tasks/proposed/older_task/tasks.yaml")
    _commit(repo)
    assert _confine(repo) == 1
    out = capsys.readouterr().out
    assert f"{FOLDER}/training/secrets: a symbolic link; a task proposal adds regular " \
           "files only" in out
    assert f"{FOLDER}/data/{TASK}/big.tsv: {MAX_PROPOSAL_FILE_BYTES + 1} bytes, over the " \
           "limit" in out
    assert "tasks/proposed/older_task/tasks.yaml: deleted (or moved away)" in out


def test_a_probe_pr_that_edits_the_catalog_is_refused_as_one_or_the_other(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _commit(repo, "registry/probes/org/new-m-l2-v1.yaml", "probebench/catalog/tasks.yaml")
    md = tmp_path / "comment.md"
    assert _confine(repo, "--markdown", str(md)) == 1
    out = capsys.readouterr().out
    assert "probebench/catalog/tasks.yaml: outside one entry's YAML" in out
    assert "a new task is proposed under tasks/proposed/<task id>/: a pull request " \
           "proposes a probe or a task, never both" in out
    assert "## probebench: probe pull request refused" in md.read_text()
    assert "never both" in md.read_text()


def test_a_proposal_without_its_task_file_is_refused() -> None:
    problems = confinement_problems([f"{FOLDER}/{DATA}"])  # as modified: refused too
    assert pr_kind([f"{FOLDER}/{DATA}"]) == "task"
    assert any("changed, not added" in p for p in problems)
    from probebench.intake.confine import ChangedPath

    problems = confinement_problems([ChangedPath("A", f"{FOLDER}/{DATA}")])
    assert problems == [f"{FOLDER}/tasks.yaml: missing; it holds the proposed task's entry"]
    # the catalog's own tasks file is no proposal's
    assert pr_kind(["probebench/catalog/tasks.yaml"]) == "probe"


def test_github_file_lists_use_the_same_rule(tmp_path: Path) -> None:
    good = tmp_path / "good.tsv"
    good.write_text(f"added\t{FOLDER}/tasks.yaml\t\nadded\t{FOLDER}/{DATA}\t\n")
    found = read_changes_file(good)
    assert confinement_problems(found) == [] and proposed_task(found) == TASK
    edit = tmp_path / "edit.tsv"
    edit.write_text(f"added\t{FOLDER}/tasks.yaml\t\nmodified\tprobebench/catalog/tasks.yaml\t\n")
    assert "probebench/catalog/tasks.yaml: outside the proposal's folder" in " ".join(
        confinement_problems(read_changes_file(edit)))


# --- check-task -----------------------------------------------------------------------

def _check_task(folder: Path, capsys: pytest.CaptureFixture[str], *extra: str
                ) -> tuple[int, str]:
    code = main(["registry", "check-task", str(folder), "--quiet", *extra])
    return code, capsys.readouterr().out


@pytest.fixture
def proposal(tmp_path: Path) -> Path:
    return tmp_path / FOLDER


def test_a_good_proposal_passes(proposal: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(proposal)
    (proposal / "training").mkdir()
    (proposal / "training/mine.tsv").write_text("tr\tpast\tThe cat slept on the mat.\n")
    md = tmp_path / "comment.md"
    code, out = _check_task(proposal, capsys, "--markdown", str(md))
    assert code == 0, out
    assert out.count("  PASS  ") == 7 and "FAIL" not in out
    assert "items: train 4, val 2, test 4" in out
    assert "4 test prompt(s) against 1 line(s) of 1 training file(s): none occurs" in out
    comment = md.read_text()
    assert "**task proposal: needs a maintainer's review.**" in comment
    assert "All checks pass: the proposal waits for a maintainer's review." in comment
    assert comment.count("- [x]") == 7


def test_tasks_add_makes_a_proposal_that_passes(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The author's way: the data in the folder, `tasks add --to` the folder."""
    data = proposal / DATA
    data.parent.mkdir(parents=True)
    data.write_text("".join("\t".join(line) + "\n" for line in LINES))
    assert main(["tasks", "add", str(data), "--to", str(proposal), "--id", TASK,
                 "--format", "senteval", "--option", "positive_class=past",
                 "--license", "CC-BY-4.0", "--source", "written by hand"]) == 0
    capsys.readouterr()
    code, out = _check_task(proposal, capsys)
    assert code == 0, out


def test_personal_data_is_named_by_file_and_line(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [*LINES]
    lines[8] = ("te", "past", "We mailed ada.lovelace@example.org about the fence.")
    lines[2] = ("tr", "past", "She called +44 20 7946 0958 from the station.")
    write_proposal(proposal, lines)
    code, out = _check_task(proposal, capsys)
    assert code == 1
    data = f"{proposal.as_posix()}/{DATA}"
    assert f"{data}:9: e-mail address (ada…rg) in the test prompt" in out
    assert f"{data}:3: phone number (+44…58) in the train prompt" in out
    assert "FAIL  no personal data in any prompt: 2 problem(s)" in out
    assert "PASS  every pinned hash recomputed and matching" in out


def test_personal_data_the_old_scan_missed_is_refused(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kinds a proposal carried past `registry check-task` before the scan read numbers
    with phonenumbers and python-stdnum: a bare German mobile, a dotted DNI, a
    fullwidth-at e-mail and an address in lower case."""
    lines = [*LINES]
    lines[3] = ("tr", "present", "She calls 0170 4455667 from the station.")
    lines[6] = ("te", "past", "He cooked dinner for Ana, DNI 47.382.915-V.")
    lines[8] = ("te", "past", "We painted the fence for ana.ruiz＠example.org.")
    lines[9] = ("te", "present", "We paint the fence at 9 riverside terrace.")
    write_proposal(proposal, lines)
    code, out = _check_task(proposal, capsys)
    assert code == 1
    data = f"{proposal.as_posix()}/{DATA}"
    assert f"{data}:4: phone number (017…67) in the train prompt" in out
    assert f"{data}:7: national id (47.…-V) in the test prompt" in out
    assert f"{data}:9: e-mail address (ana…rg) in the test prompt" in out
    assert f"{data}:10: street address (9 r…ce) in the test prompt" in out
    assert "FAIL  no personal data in any prompt: 4 problem(s)" in out


def test_a_test_prompt_that_occurs_in_train_is_named(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [*LINES, ("te", "past", "The dog barked at the mailman.")]  # = line 1, train
    write_proposal(proposal, lines)
    code, out = _check_task(proposal, capsys)
    assert code == 1
    # the format's reader or the split check refuses it; either names both lines
    assert f"{DATA}:11" in out and f"{DATA}:1" in out and "train" in out


def test_a_near_duplicate_across_splits_is_named(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Case and whitespace are folded: the reader's exact comparison lets it through."""
    lines = [*LINES, ("te", "present", "she  walks to the STATION.")]  # ~ line 4, train
    write_proposal(proposal, lines)
    code, out = _check_task(proposal, capsys)
    assert code == 1
    assert "FAIL  train, val, test and holdouts share no prompt text: 1 problem(s)" in out
    assert f"{DATA}:11" in out and f"{DATA}:4" in out
    assert "occurs in the test (" in out and "train (train-4) splits" in out


def test_leakage_into_the_declared_training_data_is_named(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(proposal)
    (proposal / "training").mkdir()
    (proposal / "training/corpus.jsonl").write_text(
        '{"text": "Nothing to see here."}\n'
        '{"text": "we paint the fence   green.", "label": 0}\n')  # test line 10, folded
    (proposal / "training/plain.txt").write_text("He cooked dinner for his friends.\n")
    code, out = _check_task(proposal, capsys)
    assert code == 1
    assert f"{proposal.as_posix()}/training/corpus.jsonl:2: holds the test prompt" in out
    assert f"({proposal.as_posix()}/{DATA}:10)" in out
    assert f"{proposal.as_posix()}/training/plain.txt:1: holds the test prompt" in out
    assert "FAIL  no test prompt in the author's declared training data: 2 problem(s)" in out


@pytest.mark.parametrize(("fields", "message"), [
    ({"license": "closed"}, "field 'license' is 'closed' (closed)"),
    ({"license": "Apache 2"}, "field 'license' is 'Apache 2' (unknown)"),
    ({"source": "  "}, "field 'source' is empty"),
])
def test_license_and_source_are_required(proposal: Path, fields: dict[str, object],
                                         message: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(proposal, **fields)
    code, out = _check_task(proposal, capsys)
    assert code == 1
    assert f"{proposal.as_posix()}/tasks.yaml: {message}" in out
    assert "FAIL  provenance (source) given and license accepted" in out


def test_a_missing_source_fails_the_schema(proposal: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(proposal, source=None)  # the key left out
    code, out = _check_task(proposal, capsys)
    assert code == 1
    assert "tasks.yaml: field 'tasks.0.source': Field required" in out
    assert "SKIP  every pinned hash recomputed and matching: the schema check failed" in out


def test_format_defaults_stay_in_the_catalog(proposal: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The task moves into the catalog alone: defaults of its own file would be lost."""
    write_proposal(proposal)
    text = (proposal / "tasks.yaml").read_text()
    (proposal / "tasks.yaml").write_text(
        "format_defaults:\n  senteval:\n    slices: [class]\n" + text)
    code, out = _check_task(proposal, capsys)
    assert code == 1
    assert (f"{proposal.as_posix()}/tasks.yaml: 'format_defaults' belongs to the catalog"
            in out)


def test_a_wrong_hash_is_named(proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(proposal)
    with (proposal / DATA).open("a") as handle:
        handle.write("te\tpresent\tThey walk home.\n")  # after the hashes were taken
    code, out = _check_task(proposal, capsys)
    assert code == 1
    actual = sha256_file(proposal / DATA, memo=False)
    assert f"{proposal.as_posix()}/{DATA}: sha256 is {actual}, tasks.yaml pins " in out
    assert "tasks.yaml: the canonical test set hashes to" in out


def test_a_registered_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tasks/proposed/blimp_passive_1"
    write_proposal(folder)
    text = (folder / "tasks.yaml").read_text().replace(TASK, "blimp_passive_1")
    (folder / "tasks.yaml").write_text(text)
    shutil.move(folder / "data" / TASK, folder / "data/blimp_passive_1")
    code, out = _check_task(folder, capsys)
    assert code == 1
    assert "task 'blimp_passive_1' is registered already" in out
    assert "propose a new version as a new task id (e.g. blimp_passive_1_v2)" in out


def test_links_and_stray_files_in_the_folder_fail(
        proposal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_proposal(proposal)
    (proposal / f"data/{TASK}/extra.tsv").symlink_to("/etc/passwd")
    (proposal / "notes.txt").write_text("hello\n")
    code, out = _check_task(proposal, capsys)
    assert code == 1
    assert f"{proposal.as_posix()}/data/{TASK}/extra.tsv: a symbolic link" in out
    assert f"{proposal.as_posix()}/notes.txt: not part of a proposal" in out


def test_the_comment_escapes_the_proposers_text(proposal: Path) -> None:
    write_proposal(proposal, source="<img src=x> @maintainers [link](http://x) `code`",
                   license="Proprietary")
    report = check_proposal(proposal, catalog=TaskCatalog.default(), label=FOLDER)
    comment = report.markdown()
    assert not report.passed
    assert "@maintainers" not in comment.replace("\\@maintainers", "")
    assert "<img" not in comment.replace("\\<img", "")
    assert "1 check(s) fail." in comment and "- [ ] **provenance" in comment


# --- the workflows, on a simulated GitHub ---------------------------------------------

@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> Simulator:
    """Upstream: this working tree's tracked files (uncommitted edits included)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return upstream_simulator(tmp_path_factory.mktemp("github"),
                              list(filter(None, out.split("\0"))))


def _run_pr(sim: Simulator, number: int, fork: Path, branch: str) -> dict[str, JobResult]:
    """Every job of validate-pr GitHub would run (needs and if: honoured), then
    comment.yml."""
    sim.open_pr(number, fork, branch)
    run = f"pr-{number}"
    doc = load_workflow("validate-pr.yml")
    done: dict[str, JobResult] = {}
    for job in doc["jobs"]:
        if sim.should_run(doc, job, done):
            done[job] = sim.run_job("validate-pr.yml", job, run_name=run, pull_request=number)
    done["comment"] = sim.run_job("comment.yml", "comment", run_name=run)
    return done


def _fork_with_proposal(sim: Simulator, branch: str) -> Path:
    fork = sim.root / "forks" / branch
    git(sim.root, "clone", "-q", str(sim.upstream), str(fork))
    git(fork, "checkout", "-q", "-b", branch)
    write_proposal(fork / FOLDER)
    return fork


def test_a_good_task_proposal_waits_for_a_maintainer(github: Simulator) -> None:
    fork = _fork_with_proposal(github, "propose")
    git(fork, "add", "-A")
    git(fork, "commit", "-qm", f"Propose {TASK}")
    before = github.main_sha()
    done = _run_pr(github, 41, fork, "propose")
    assert done["confine"].ok and done["confine"].outputs == {"kind": "task"}
    assert "reproduce" not in done and "evaluate" not in done  # the probe jobs: skipped
    assert done["proposal"].ok, done["proposal"].output
    assert done["comment"].ok, done["comment"].output
    comment = github.comment(41)
    assert "task proposal: needs a maintainer's review" in comment
    assert "All checks pass: the proposal waits for a maintainer's review." in comment
    assert comment.count("- [x]") == 6 and "- (skipped)" in comment  # no training data
    assert github.labels(41) == ["task proposal"]
    assert github.main_sha() == before  # never merged by a workflow


def test_a_proposal_that_edits_the_catalog_is_refused_at_confine(github: Simulator) -> None:
    fork = _fork_with_proposal(github, "propose-and-edit")
    with (fork / "probebench/catalog/tasks.yaml").open("a") as handle:
        handle.write("# a friendlier catalog\n")
    git(fork, "add", "-A")
    git(fork, "commit", "-qm", "a proposal and a catalog edit")
    before = github.main_sha()
    done = _run_pr(github, 42, fork, "propose-and-edit")
    assert not done["confine"].ok
    assert set(done) == {"confine", "comment"}
    comment = github.comment(42)
    assert "## probebench: task proposal refused" in comment
    assert "probebench/catalog/tasks.yaml: outside the proposal's folder" in comment
    assert github.labels(42) == [] and github.main_sha() == before
