"""Artifacts where researchers keep them (issue 17, part 4): the hub's and GitHub's URL
forms, pinned to a revision, fetched with huggingface_hub or plain git, offline from
the caches. Real downloads: a hub on the loopback fills a real hub cache through
huggingface_hub's own code; a real git repository stands in for github.com through
``PROBEBENCH_GITHUB_BASE``. Only the artifact's folder is ever downloaded (budgets and
git's isolation from the host: test_fetch_budget.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.intake.check import check_entry
from probebench.sources.resolve import registry_artifact_problem, resolve_artifact
from probebench.sources.urls import ACCEPTED_FORMS, parse_artifact_ref
from probebench.tasks.catalog import TaskCatalog
from tests.fake_hub import FakeHub, add_folder, serve

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "registry" / "artifacts"
MINILM = "blimp-det-noun-minilm-l6-l4-v1"  # the artifact fetched in every test
SIBLING = "blimp-det-noun-smollm2-135m-l15-v1"  # beside it, never to be downloaded
ENTRY = REPO / "registry" / "probes" / "probebench" / f"{MINILM}.yaml"
TASK = "blimp_determiner_noun_agreement_1"
C = "0123abcd" * 5


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _no_links(folder: Path) -> bool:
    return not any(p.is_symlink() for p in folder.rglob("*"))


# --- the forms -------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "expected"), [
    (f"hf://lab/probes@{C}/a/b", ("hub", "model", "lab/probes", C, "a/b")),
    ("hf://lab/probes@main", ("hub", "model", "lab/probes", "main", "")),
    (f"hf://datasets/lab/data@{C}/x", ("hub", "dataset", "lab/data", C, "x")),
    (f"https://huggingface.co/lab/probes/tree/{C}/a/b/", ("hub", "model", "lab/probes", C,
                                                          "a/b")),
    ("https://huggingface.co/datasets/lab/data/tree/v1.0",
     ("hub", "dataset", "lab/data", "v1.0", "")),
    (f"https://github.com/lab/.github/tree/{C}/p", ("github", None, "lab/.github", C, "p")),
    ("registry/artifacts/x", ("path", None, None, None, "")),
    ("file:///tmp/x", ("file", None, None, None, "")),
])
def test_each_form_parses_to_one_typed_value(url: str, expected: tuple[Any, ...]) -> None:
    ref = parse_artifact_ref(url)
    assert (ref.kind, ref.repo_type, ref.repo_id, ref.revision, ref.subfolder) == expected
    assert ref.pinned == (ref.revision == C)
    if ref.remote:  # written back at a commit, in the form it came in
        again = parse_artifact_ref(ref.at("f" * 40))
        assert (again.kind, again.repo_type, again.repo_id, again.revision,
                again.subfolder) == (*expected[:3], "f" * 40, expected[4])
        assert again.url.startswith(url.split("/")[0])


@pytest.mark.parametrize(("url", "says"), [
    ("hf://lab/probes/verb", "hf:// URLs pin a revision"),
    ("https://huggingface.co/lab/probes", "pin a revision: https://huggingface.co/ORG/REPO/"
                                          "tree/<commit>"),
    (f"https://huggingface.co/lab/probes/blob/{C}/meta.yaml", "/blob/ names one file"),
    ("https://github.com/lab/probes", "pin a revision: https://github.com/ORG/REPO/tree/"),
    (f"https://github.com/lab/probes/tree/{C}/a/../b", "the folder holds '..'"),
    (f"hf://lab/probes@{C}/a//b", "the subfolder holds '(empty)'"),
    ("hf://lab/probes@--upload-pack=x/a", "is not a commit, branch or tag name"),
    (f"https://github.com/lab/probes/tree/{C}/a?x=1", "query strings"),
    ("hf://spaces/lab/app@main", "a Space is an app"),
    ("https://example.org/x", "only repository paths, file://, hf://"),
    ("file://relative/x", "absolute path"),
])
def test_a_bad_url_says_what_was_found_and_what_is_accepted(url: str, says: str) -> None:
    with pytest.raises(InputError) as err:
        parse_artifact_ref(url)
    assert says in str(err.value) and repr(url) in str(err.value)
    assert all(form in str(err.value) for form in ACCEPTED_FORMS)


@pytest.mark.parametrize("url", [
    f"hf://lab/probes@{C}/a", f"hf://datasets/lab/data@{C}", f"https://huggingface.co/lab/"
    f"probes/tree/{C}/a", f"https://huggingface.co/datasets/lab/data/tree/{C}/a/b",
    f"https://github.com/lab/probes/tree/{C}/a", "registry/artifacts/verb"])
def test_the_registry_takes_every_form_at_a_commit(url: str) -> None:
    assert registry_artifact_problem(url) is None


@pytest.mark.parametrize("url", [
    "https://huggingface.co/lab/probes/tree/main/a", "hf://datasets/lab/data@v1/a",
    "https://github.com/lab/probes/tree/main/a", f"https://github.com/lab/probes/tree/"
    f"{C[:12]}/a"])
def test_the_registry_refuses_a_revision_that_can_move(url: str) -> None:
    problem = registry_artifact_problem(url)
    assert problem is not None and "not a commit" in problem
    assert "https://github.com/ORG/REPO/tree/COMMIT[/PATH], with COMMIT the 40-hex" in problem


# --- the hub ---------------------------------------------------------------------------

def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A model and a dataset repository on a loopback hub, each with the artifact and a
    sibling folder; ``probebench validate`` fetches the artifact from each online, which
    fills the hub cache through huggingface_hub's own code."""
    root = tmp_path_factory.mktemp("hub")
    fake = FakeHub()
    model_files = {"README.md": b"# probes\n"}
    add_folder(model_files, ARTIFACTS / MINILM, "probes/blimp")
    add_folder(model_files, ARTIFACTS / SIBLING, "probes/other")
    data_files: dict[str, bytes] = {}
    add_folder(data_files, ARTIFACTS / MINILM, "artifacts/blimp")
    add_folder(data_files, ARTIFACTS / SIBLING, "artifacts/other")
    world: dict[str, Any] = {
        "cache": root / "hub", "fake": fake,
        "model": fake.add("model", "lab/probes", model_files),
        "dataset": fake.add("dataset", "lab/probe-data", data_files)}
    env = {"HF_HUB_OFFLINE": "0", "HF_HUB_CACHE": str(world["cache"]),
           "PROBEBENCH_ARTIFACT_CACHE": str(root / "artifacts"),
           "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    with serve(fake):
        env["HF_ENDPOINT"] = fake.url
        world["model_run"] = _run("-m", "probebench", "validate", "--quiet",
                                  "https://huggingface.co/lab/probes/tree/main/probes/blimp",
                                  env=env)
        world["model_downloads"] = fake.downloads()
        fake.requests.clear()
        world["dataset_run"] = _run(
            "-m", "probebench", "validate", "--quiet",
            f"hf://datasets/lab/probe-data@{world['dataset']}/artifacts/blimp", env=env)
        world["dataset_downloads"] = fake.downloads()
    yield world


@pytest.fixture
def offline(hub: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hub cache the ``hub`` fixture filled, offline, and an empty artifact cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub["cache"]))
    monkeypatch.setenv("PROBEBENCH_ARTIFACT_CACHE", str(tmp_path / "artifacts"))
    return tmp_path / "artifacts"


def test_validate_fetches_only_the_artifact_folder_from_the_hub(hub: dict[str, Any]) -> None:
    commit = hub["model"]
    run = hub["model_run"]
    assert run.returncode == 0, run.stdout + run.stderr
    url = "https://huggingface.co/lab/probes/tree/main/probes/blimp"
    assert f"{url}: valid" in run.stdout
    # a branch is allowed here, and the commit it is now is said, pinned for an entry
    assert f"{url}: 'main' is commit {commit} (via hub)" in run.stderr
    assert ("a registry entry pins it: https://huggingface.co/lab/probes/tree/"
            f"{commit}/probes/blimp") in run.stderr
    wanted = {f"probes/blimp/{name}" for name in _files(ARTIFACTS / MINILM)}
    assert sorted(hub["model_downloads"]) == sorted(wanted)
    run = hub["dataset_run"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"commit {hub['dataset']} (via hub)" in run.stderr and "pins it" not in run.stderr
    assert sorted(hub["dataset_downloads"]) == sorted(
        f"artifacts/blimp/{name}" for name in _files(ARTIFACTS / MINILM))


def test_the_hub_cache_is_huggingface_hubs_own(hub: dict[str, Any]) -> None:
    from huggingface_hub import scan_cache_dir, snapshot_download

    info = scan_cache_dir(hub["cache"])
    assert not info.warnings
    repos = {(r.repo_type, r.repo_id): r for r in info.repos}
    assert set(repos) == {("model", "lab/probes"), ("dataset", "lab/probe-data")}
    for (repo_type, repo_id), repo in repos.items():
        (revision,) = repo.revisions
        commit = hub["model" if repo_type == "model" else "dataset"]
        assert revision.commit_hash == commit
        # the branch the model was asked by is recorded, as huggingface_hub does
        assert revision.refs == ({"main"} if repo_type == "model" else set())
        prefix = "probes/blimp" if repo_type == "model" else "artifacts/blimp"
        assert sorted(f.file_path.relative_to(revision.snapshot_path).as_posix()
                      for f in revision.files) == sorted(
            f"{prefix}/{name}" for name in _files(ARTIFACTS / MINILM))
        folder = snapshot_download(repo_id, repo_type=repo_type, revision=commit,
                                   cache_dir=hub["cache"], local_files_only=True,
                                   allow_patterns=[f"{prefix}/**"])
        assert Path(folder) == revision.snapshot_path


@pytest.mark.parametrize("form", [
    "hf://lab/probes@{model}/probes/blimp",
    "hf://lab/probes@main/probes/blimp",
    "https://huggingface.co/lab/probes/tree/{model}/probes/blimp",
    "https://huggingface.co/lab/probes/tree/main/probes/blimp/",
    "hf://datasets/lab/probe-data@{dataset}/artifacts/blimp",
    "https://huggingface.co/datasets/lab/probe-data/tree/{dataset}/artifacts/blimp",
])
def test_every_hub_form_resolves_offline_from_the_cache(hub: dict[str, Any], offline: Path,
                                                        form: str) -> None:
    url = form.format(**hub)
    folder, how = resolve_artifact(url, REPO)
    commit = hub["dataset" if "datasets" in url else "model"]
    assert how == f"hub cache (offline), commit {commit}"
    assert folder.is_relative_to(offline) and folder.name == "blimp"
    # the artifact's files, as regular files, and nothing from the folder beside it
    assert _files(folder) == _files(ARTIFACTS / MINILM) and _no_links(folder)
    assert resolve_artifact(url, REPO) == (folder, how)  # landed once, found again


def test_offline_without_the_folder_in_the_cache_is_a_clear_error(
        hub: dict[str, Any], offline: Path) -> None:
    for url in (f"hf://lab/probes@{hub['model']}/probes/other",  # never downloaded
                f"hf://lab/nothing@{hub['model']}/probes/blimp",
                "hf://datasets/lab/probe-data@main/artifacts/blimp"):  # asked by commit
        with pytest.raises(InputError, match=r"not in the local Hugging Face cache .*"
                                             r"\(HF_HUB_OFFLINE is set\)"):
            resolve_artifact(url, REPO)
    assert not offline.exists()


def test_a_hub_cache_link_that_leaves_the_blobs_is_refused(
        hub: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "hub"
    shutil.copytree(hub["cache"], cache, symlinks=True)
    outside = tmp_path / "outside.md"
    outside.write_text("not from the hub\n")
    link = (cache / "models--lab--probes" / "snapshots" / hub["model"] / "probes" / "blimp"
            / "README.md")
    link.unlink()
    link.symlink_to(outside)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("PROBEBENCH_ARTIFACT_CACHE", str(tmp_path / "artifacts"))
    with pytest.raises(InputError, match=r"README\.md in the hub cache links to .*outside\.md, "
                                         r"outside the repository's blobs"):
        resolve_artifact(f"hf://lab/probes@{hub['model']}/probes/blimp", REPO)


def test_validate_takes_a_hub_url_offline(hub: dict[str, Any], offline: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    url = f"https://huggingface.co/datasets/lab/probe-data/tree/{hub['dataset']}/artifacts/blimp"
    assert main(["validate", "--quiet", url]) == 0
    out, err = capsys.readouterr()
    assert f"{url}: valid" in out and "PASS  bundle_hash" in out
    assert f"commit {hub['dataset']} (via hub cache (offline))" in err


def test_a_registry_entry_on_the_hub(hub: dict[str, Any], offline: Path,
                                     tmp_path: Path) -> None:
    url = f"hf://datasets/lab/probe-data@{hub['dataset']}/artifacts/blimp"
    path, root = _entry_at(tmp_path, url)
    result = check_entry(path, root, tmp_path, TaskCatalog.for_repo(REPO))
    assert result.problems == []
    assert f"artifact found via hub cache (offline), commit {hub['dataset']}" in result.notes
    path, root = _entry_at(tmp_path, "hf://lab/probes@main/probes/blimp")
    (problem,) = check_entry(path, root, tmp_path, TaskCatalog.for_repo(REPO)).problems
    assert "found the revision 'main', not a commit" in problem


def _entry_at(root: Path, url: str) -> tuple[Path, Path]:
    """The registered entry of the MiniLM artifact, its artifact_url set to ``url``."""
    entry = yaml.safe_load(ENTRY.read_text())
    entry["artifact_url"] = url
    path = root / "registry" / "probes" / "probebench" / ENTRY.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(entry, sort_keys=False))
    return path, root / "registry"


# --- GitHub ----------------------------------------------------------------------------

def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A real repository lab/probes with the artifact and a sibling folder;
    ``PROBEBENCH_GITHUB_BASE`` sends https://github.com/ to it (and lets git use file://,
    which it refuses otherwise)."""
    hosted = tmp_path / "github"
    source = hosted / "lab" / "probes"
    shutil.copytree(ARTIFACTS / MINILM, source / "artifacts" / "blimp")
    shutil.copytree(ARTIFACTS / SIBLING, source / "artifacts" / "other")
    _git(source, "init", "-q", "-b", "main")
    _git(source, "config", "uploadpack.allowFilter", "true")  # as github.com allows
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "two probes")
    monkeypatch.setenv("PROBEBENCH_GITHUB_BASE", f"file://{hosted}/")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("PROBEBENCH_ARTIFACT_CACHE", str(tmp_path / "artifacts"))
    return {"source": source, "commit": _git(source, "rev-parse", "HEAD"),
            "cache": tmp_path / "artifacts",
            "gitdir": tmp_path / "artifacts" / "git" / "github.com" / "lab" / "probes.git"}


def test_a_github_folder_at_a_commit(github: dict[str, Any],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    commit = github["commit"]
    url = f"https://github.com/lab/probes/tree/{commit}/artifacts/blimp"
    folder, how = resolve_artifact(url, REPO)
    assert how == f"git, commit {commit}"
    assert folder.is_relative_to(github["cache"]) and folder.name == "blimp"
    assert _files(folder) == _files(ARTIFACTS / MINILM) and _no_links(folder)
    # only the folder's files were fetched: the sibling's blobs are still missing
    listing = _git(github["source"], f"--git-dir={github['gitdir']}", "rev-list",
                   "--objects", "--missing=print", commit)
    missing = {line[1:] for line in listing.splitlines() if line.startswith("?")}
    tree = [line.split()[2:] for line in _git(github["source"], "ls-tree", "-r",
                                               commit).splitlines()]
    ours = {oid for oid, path in tree if path.startswith("artifacts/blimp/")}
    theirs = {oid for oid, path in tree if path.startswith("artifacts/other/")}
    assert missing == theirs - ours and len(missing) >= 5  # (one notebook is the same)
    branch = "https://github.com/lab/probes/tree/main/artifacts/blimp"
    assert resolve_artifact(branch, REPO) == (folder, f"git cache, commit {commit}")
    # offline: the folders that landed (a branch as it was last fetched), nothing else
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_artifact(url, REPO) == (folder, f"git cache (offline), commit {commit}")
    assert resolve_artifact(branch, REPO) == (folder, f"git cache (offline), commit {commit}")
    with pytest.raises(InputError, match=r"not in probebench's artifact cache"):
        resolve_artifact(branch.replace("main", "dev"), REPO)
    with pytest.raises(InputError, match=r"not in probebench's artifact cache .*HF_HUB_OFFLINE"):
        resolve_artifact(url.replace("artifacts/blimp", "artifacts/other"), REPO)


def test_github_refuses_what_is_not_a_plain_folder_at_the_commit(
        github: dict[str, Any]) -> None:
    source = github["source"]
    bad = source / "artifacts" / "linked"
    shutil.copytree(ARTIFACTS / MINILM, bad)
    (bad / "README.md").unlink()
    (bad / "README.md").symlink_to("../../../../secret.md")
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "a link")
    commit = _git(source, "rev-parse", "HEAD")
    base = f"https://github.com/lab/probes/tree/{commit}"
    with pytest.raises(InputError, match=r"artifacts/linked/README\.md is a symlink in "
                                         r"https://github\.com/lab/probes at commit"):
        resolve_artifact(f"{base}/artifacts/linked", REPO)
    with pytest.raises(InputError, match="has no folder artifacts/missing"):
        resolve_artifact(f"{base}/artifacts/missing", REPO)
    with pytest.raises(InputError, match=r"has no folder artifacts/blimp/meta.yaml \(it is "
                                         "a file\\)"):
        resolve_artifact(f"{base}/artifacts/blimp/meta.yaml", REPO)
    with pytest.raises(InputError, match="git fetch failed"):
        resolve_artifact("https://github.com/lab/probes/tree/" + "0" * 40 + "/x", REPO)
    with pytest.raises(InputError, match="git fetch failed"):
        resolve_artifact(f"https://github.com/lab/elsewhere/tree/{commit}/x", REPO)
    # nothing half-fetched was left where a later run would take it for complete
    assert not list((github["cache"] / "github.com").rglob("README.md"))


def test_a_registry_entry_on_github(github: dict[str, Any], tmp_path: Path) -> None:
    url = f"https://github.com/lab/probes/tree/{github['commit']}/artifacts/blimp"
    path, root = _entry_at(tmp_path, url)
    result = check_entry(path, root, tmp_path, TaskCatalog.for_repo(REPO))
    assert result.problems == []
    assert f"artifact found via git, commit {github['commit']}" in result.notes


def test_submit_takes_a_github_branch(github: dict[str, Any], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    url = "https://github.com/lab/probes/tree/main/artifacts/blimp"
    out = tmp_path / "submission.json"
    assert main(["submit", url, "--tasks", TASK, "--limit", "6", "--bootstrap", "50",
                 "--latency-prompts", "2",
                 "--no-guard", "--out", str(out), "--report", str(tmp_path / "REPORT.md"),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    commit = github["commit"]
    assert f"{url}: 'main' is commit {commit} (via git)" in err
    assert f"a registry entry pins it: {url.replace('main', commit)}" in err
    result = json.loads(out.read_text())
    entry = yaml.safe_load(ENTRY.read_text())
    assert result["probe"]["id"] == "blimp"
    assert result["probe"]["bundle_sha256"] == entry["artifact_sha256"]
    assert [t["id"] for t in result["tasks"]] == [TASK]
