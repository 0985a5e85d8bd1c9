"""Budgets before bytes (hardening, third round, items 4 and 5): a remote artifact folder
is sized up from its source's own listing (git's trees and object sizes, the hub's file
metadata) and refused before its files are downloaded or checked out; git runs apart
from the host's configuration; the URL grammar takes no control characters and no
percent-encoding. Real git on real local repositories (``PROBEBENCH_GITHUB_BASE``), a
real hub on the loopback (``tests.fake_hub``); every refusal is measured on disk."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.intake.check import check_entry
from probebench.sources import budget as budget_module
from probebench.sources.budget import MAX_FILE_BYTES, MAX_FILES, FetchBudget
from probebench.sources.gitrun import IsolatedGit
from probebench.sources.resolve import fetch_artifact, registry_artifact_problem
from probebench.sources.urls import ACCEPTED_FORMS, parse_artifact_ref
from probebench.tasks.catalog import TaskCatalog
from tests.fake_hub import FakeHub, add_folder, serve

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "registry" / "artifacts"
MINILM = "blimp-det-noun-minilm-l6-l4-v1"
ENTRY = REPO / "registry" / "probes" / "probebench" / f"{MINILM}.yaml"
C = "0123abcd" * 5
MiB = 1 << 20


# --- the URL grammar -------------------------------------------------------------------

@pytest.mark.parametrize(("url", "says"), [
    ("https://github.com/lab/probes/tree/main%0A/artifacts/blimp",
     "percent-encoding is not part of an artifact URL ('%0A' would be '\\n')"),
    ("https://github.com/lab/probes/tree/%2e%2e/artifacts",
     "percent-encoding is not part of an artifact URL ('%2e%2e' would be '..')"),
    ("https://github.com/lab/probes/tree/%2E%2E",
     "percent-encoding is not part of an artifact URL ('%2E%2E' would be '..')"),
    ("hf://lab/probes@%2e%2e/verb", "('%2e%2e' would be '..')"),
    (f"https://github.com/lab/probes/tree/{C}/artifacts\n/blimp",
     "holds the control character '\\n'"),
    (f"https://github.com/lab/probes/tree/{C}/artifacts/blimp\n",
     "holds the control character '\\n'"),
    (f"hf://lab/probes@{C}\n", "holds the control character '\\n'"),
    ("hf://lab/probes@main\t/verb", "holds the control character '\\t'"),
    (f"hf://lab/probes@{C}/ve\x00rb", "holds the control character '\\x00'"),
    (f"https://huggingface.co/lab/probes/tree/{C}/a\x7f", "control character '\\x7f'"),
    ("https://github.com/lab/probes/tree/../artifacts", "revision '..' is not a commit"),
    ("https://github.com/lab/probes/tree/v1..2/a", "revision 'v1..2' is not a commit"),
    ("hf://lab/probes@.hidden/a", "revision '.hidden' is not a commit"),
    ("hf://lab/probes@main.lock/a", "revision 'main.lock' is not a commit"),
    (f"https://github.com/lab/probes/tree/{C}/v\u00e9rb", "holds 'v\u00e9rb', which is not"),
])
def test_the_grammar_refuses_control_characters_and_escapes(url: str, says: str) -> None:
    with pytest.raises(InputError) as err:
        parse_artifact_ref(url)
    assert says in str(err.value) and repr(url) in str(err.value)
    assert all(form in str(err.value) for form in ACCEPTED_FORMS)


@pytest.mark.parametrize("url", [
    f"hf://lab/probes@{C}\n/verb", f"hf://lab/probes@{C}/verb\n",
    f"https://github.com/lab/probes/tree/{C}/verb\n", "registry/artifacts/verb\n",
    f"hf://lab/probes@{C}/ver\u0430"])  # a Cyrillic a
def test_the_registry_rule_matches_the_whole_text(url: str) -> None:
    assert registry_artifact_problem(url) is not None


@pytest.mark.parametrize("url", [
    "https://github.com/lab/probes/tree/main%0A/artifacts/blimp",
    "https://github.com/lab/probes/tree/%2e%2e/artifacts/blimp",
    "https://github.com/lab/probes/tree/main/artifacts\n/blimp",
    "hf://lab/probes@ma\tin/blimp"])
def test_validate_refuses_a_bad_url_without_a_traceback(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", url]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"error: artifact {url!r}: ") and "Traceback" not in out + err
    assert "percent-encoding" in err or "control character" in err


# --- git: a local repository where github.com would be ---------------------------------

#: git as the tests run it to build repositories: none of this machine's configuration
CLEAN_GIT = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
             "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
             "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"]}


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, input=stdin, env=CLEAN_GIT, check=True,
                          capture_output=True).stdout.decode().strip()


def _add_folder(source: Path, name: str, files: dict[str, str]) -> str:
    """Commit ``artifacts/<name>`` holding ``files`` (name -> blob id) on main, with git's
    plumbing (a folder of many entries costs one tree); returns the commit."""
    entries = "".join(f"100644 blob {oid}\t{path}\n" for path, oid in sorted(files.items()))
    folder = _git(source, "mktree", stdin=entries.encode())
    artifacts = _git(source, "ls-tree", "HEAD:artifacts") + f"\n040000 tree {folder}\t{name}\n"
    artifacts_tree = _git(source, "mktree", stdin=artifacts.encode())
    root = [line for line in _git(source, "ls-tree", "HEAD").splitlines()
            if not line.endswith("\tartifacts")]
    root_tree = _git(source, "mktree",
                     stdin=("\n".join([*root, f"040000 tree {artifacts_tree}\tartifacts"])
                            + "\n").encode())
    commit = _git(source, "commit-tree", root_tree, "-p", "HEAD", "-m", name)
    _git(source, "update-ref", "refs/heads/main", commit)
    return commit


def _blob(source: Path, data: bytes) -> str:
    return _git(source, "hash-object", "-w", "--stdin", stdin=data)


def _bytes_under(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) \
        if folder.exists() else 0


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """lab/probes with the MiniLM artifact at artifacts/blimp; an empty artifact cache
    and an empty temporary folder (git's scratch space) to measure."""
    hosted = tmp_path / "github"
    source = hosted / "lab" / "probes"
    shutil.copytree(ARTIFACTS / MINILM, source / "artifacts" / "blimp")
    _git(source, "init", "-q", "-b", "main")
    _git(source, "config", "uploadpack.allowFilter", "true")  # as github.com allows
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "a probe")
    monkeypatch.setenv("PROBEBENCH_GITHUB_BASE", f"file://{hosted}/")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("PROBEBENCH_ARTIFACT_CACHE", str(tmp_path / "artifacts"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return {"source": source, "cache": tmp_path / "artifacts", "scratch": scratch,
            "gitdir": tmp_path / "artifacts" / "git" / "github.com" / "lab" / "probes.git"}


def _url(commit: str, name: str) -> str:
    return f"https://github.com/lab/probes/tree/{commit}/artifacts/{name}"


def _refused_before_checkout(github: dict[str, Any], written_at_most: int) -> int:
    """Assert the refusal left nothing but git's own (small) objects; returns the bytes
    written (the pack and git's metadata)."""
    cache, scratch = github["cache"], github["scratch"]
    assert not (cache / "github.com").exists() or not [
        p for p in (cache / "github.com").rglob("*") if p.is_file()]  # no file checked out
    assert not list(scratch.iterdir())  # git's scratch space is gone
    written = _bytes_under(cache)
    assert written <= written_at_most, written
    return written


def _packs(gitdir: Path) -> int:
    return sum(p.stat().st_size for p in (gitdir / "objects" / "pack").glob("*.pack"))


def _present(gitdir: Path, oid: str) -> bool:
    done = subprocess.run(["git", f"--git-dir={gitdir}", "cat-file", "-e", oid],
                          env={**CLEAN_GIT, "GIT_NO_LAZY_FETCH": "1"}, capture_output=True,
                          check=False)
    return done.returncode == 0


def test_a_small_pack_that_expands_past_the_budget_is_refused_before_checkout(
        github: dict[str, Any]) -> None:
    """Five names for one 3 MiB blob of zeros: a pack of a few KiB, 15 MiB checked out."""
    source = github["source"]
    zeros = _blob(source, bytes(3 * MiB))
    commit = _add_folder(source, "zeros", {f"part{i}.bin": zeros for i in range(5)}
                         | {"meta.yaml": _blob(source, b"name: zeros\n")})
    budget = FetchBudget(files=10, file_bytes=4 * MiB, total_bytes=8 * MiB)
    with pytest.raises(InputError) as err:
        fetch_artifact(parse_artifact_ref(_url(commit, "zeros")), budget)
    assert (f"https://github.com/lab/probes at commit {commit}, folder artifacts/zeros, "
            "holds 15.0 MiB in 6 files; artifacts are limited to 8.0 MiB in all: refused "
            "before checkout (limit MAX_TOTAL_BYTES)") in str(err.value)
    assert _present(github["gitdir"], zeros)  # its size was read from the object store
    pack = _packs(github["gitdir"])
    written = _refused_before_checkout(github, written_at_most=pack + 64 * 1024)
    print(f"pack {pack} bytes; {written} bytes written in all for 15 MiB refused")


def test_a_file_over_the_one_file_limit_is_never_downloaded(github: dict[str, Any]) -> None:
    source = github["source"]
    big = _blob(source, bytes(6 * MiB))
    commit = _add_folder(source, "big", {"probe.bin": big,
                                         "meta.yaml": _blob(source, b"name: big\n")})
    budget = FetchBudget(files=10, file_bytes=4 * MiB, total_bytes=8 * MiB)
    with pytest.raises(InputError, match=r"folder artifacts/big, holds probe\.bin \(over "
                                         r"4\.0 MiB\); a file may hold at most 4\.0 MiB: "
                                         r"refused before checkout \(limit MAX_FILE_BYTES\)"):
        fetch_artifact(parse_artifact_ref(_url(commit, "big")), budget)
    assert not _present(github["gitdir"], big)  # the blob filter left it on the server
    assert _present(github["gitdir"], _blob(source, b"name: big\n"))
    _refused_before_checkout(github, written_at_most=_packs(github["gitdir"]) + 64 * 1024)


def test_a_folder_over_the_file_count_is_refused_from_its_trees(
        github: dict[str, Any]) -> None:
    source = github["source"]
    one = _blob(source, b"x\n")
    commit = _add_folder(source, "many", {f"f{i:05}.txt": one for i in range(50)})
    budget = FetchBudget(files=20, file_bytes=MiB, total_bytes=MiB)
    with pytest.raises(InputError, match=r"folder artifacts/many, holds 50 files; a fetch "
                                         r"takes at most 20 .*refused before download"):
        fetch_artifact(parse_artifact_ref(_url(commit, "many")), budget)
    assert not _present(github["gitdir"], one)  # no blob of the folder was fetched
    _refused_before_checkout(github, written_at_most=_packs(github["gitdir"]) + 64 * 1024)


def test_a_pack_larger_than_the_budget_is_stopped(github: dict[str, Any]) -> None:
    """Files each within the one-file limit whose pack (they do not compress) is more than
    all files may hold: the fetch is stopped or refused, and what it brought removed."""
    source = github["source"]
    files = {f"noise{i}.bin": _blob(source, os.urandom(MiB)) for i in range(4)}
    commit = _add_folder(source, "noise", files)
    budget = FetchBudget(files=10, file_bytes=2 * MiB, total_bytes=2 * MiB)
    assert budget.download_bytes < 4 * MiB
    with pytest.raises(InputError, match=r"git received more than 3\.0 MiB for the folder "
                                         r"artifacts/noise of https://github\.com/lab/probes "
                                         r"at commit .*refused before checkout"):
        fetch_artifact(parse_artifact_ref(_url(commit, "noise")), budget)
    gitdir = github["gitdir"]
    assert not any(_present(gitdir, oid) for oid in files.values())
    assert not list((gitdir / "objects" / "pack").glob("tmp_*"))
    _refused_before_checkout(github, written_at_most=256 * 1024)


def test_the_artifact_limits_are_the_fetch_budget(github: dict[str, Any],
                                                  capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    """Through the CLI, with the artifact's own limits: 20,000 files (the issue's folder
    left 20,081 paths) and one file of 65 MiB of zeros (a pack of ~64 KiB)."""
    assert FetchBudget.default().files == MAX_FILES + 1
    source = github["source"]
    one = _blob(source, b"x\n")
    many = _add_folder(source, "many", {f"f{i:05}.txt": one for i in range(20_000)})
    assert main(["validate", _url(many, "many")]) == 2
    out, err = capsys.readouterr()
    assert "holds 20000 files; a fetch takes at most 101" in err
    assert err.startswith("error: artifact ") and "Traceback" not in out + err
    paths = list(github["cache"].rglob("*"))
    assert len(paths) < 40, len(paths)
    many_bytes = _bytes_under(github["cache"])
    big = _blob(source, bytes(MAX_FILE_BYTES + MiB))
    one_big = _add_folder(source, "big", {"probe.bin": big, "meta.yaml": one})
    assert main(["validate", _url(one_big, "big")]) == 2
    out, err = capsys.readouterr()
    assert "holds probe.bin (over 64.0 MiB); a file may hold at most 64.0 MiB: refused " \
           "before checkout (limit MAX_FILE_BYTES)" in err and "Traceback" not in out + err
    assert not _present(github["gitdir"], big)
    written = _refused_before_checkout(github, written_at_most=2 * MiB)
    print(f"{len(paths)} paths, {many_bytes} bytes after 20,000 files refused; "
          f"{written} bytes after the 65 MiB file too")


def test_registry_check_refuses_an_entry_over_the_budget(
        github: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As CI's evaluate job meets it: a pinned entry whose folder expands past the limit
    (monkeypatched small, so that the test stays fast) is a problem, found before
    checkout."""
    monkeypatch.setattr(budget_module, "MAX_TOTAL_BYTES", 4 * MiB)
    source = github["source"]
    zeros = _blob(source, bytes(3 * MiB))
    commit = _add_folder(source, "zeros", {f"part{i}.bin": zeros for i in range(3)})
    entry = yaml.safe_load(ENTRY.read_text())
    entry["artifact_url"] = _url(commit, "zeros")
    path = tmp_path / "registry" / "probes" / "probebench" / ENTRY.name
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(entry, sort_keys=False))
    result = check_entry(path, tmp_path / "registry", tmp_path, TaskCatalog.for_repo(REPO))
    (problem,) = result.problems
    assert "holds 9.0 MiB in 3 files; artifacts are limited to 4.1 MiB in all: refused " \
           "before checkout (limit MAX_TOTAL_BYTES)" in problem
    _refused_before_checkout(github, written_at_most=_packs(github["gitdir"]) + 64 * 1024)


# --- git apart from the host ------------------------------------------------------------

LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:" + b"ab" * 32 + b"\nsize 1073741824\n")


def _hostile_host(root: Path) -> tuple[dict[str, str], Path]:
    """A host's git configuration as a developer's or a CI runner's may be: a filter, a
    hook folder (with an fsmonitor hook), git-lfs's filter, in the global and system
    files and in the environment. Each writes a marker when it runs. Returns (the
    environment that points git at it, the markers' folder)."""
    markers = root / "markers"
    markers.mkdir(parents=True)
    hooks = root / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-index-change", "reference-transaction",
                 "pre-auto-gc", "post-merge", "fsmonitor"):
        script = hooks / hook
        script.write_text(f"#!/bin/sh\ntouch '{markers}/{hook}'\ncat >/dev/null\n")
        script.chmod(0o755)
    for name in ("filter", "system"):  # a filter that passes the bytes through
        script = root / f"{name}-filter"
        script.write_text(f"#!/bin/sh\ntouch '{markers}/{name}'\ncat\n")
        script.chmod(0o755)
    # git-lfs's own filter where it is installed (as on GitHub's runners), else a stand-in
    lfs = root / "lfs-filter"
    lfs.write_text(f"#!/bin/sh\ntouch '{markers}/lfs'\n"
                   "command -v git-lfs >/dev/null && exec git-lfs \"$@\"\ncat\n")
    lfs.chmod(0o755)
    process = f"\tprocess = {lfs} filter-process\n" if shutil.which("git-lfs") else ""
    home = root / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {hooks}/fsmonitor\n"
        f"[filter \"marker\"]\n\tsmudge = {root}/filter-filter\n"
        "\tclean = cat\n\trequired = true\n"
        f"[filter \"lfs\"]\n{process}"
        f"\tsmudge = {lfs} smudge -- %f\n\tclean = {lfs} clean -- %f\n\trequired = true\n")
    system = root / "system-gitconfig"
    system.write_text(f"[filter \"system\"]\n\tsmudge = {root}/system-filter\n")
    env = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_SYSTEM": str(system), "XDG_CONFIG_HOME": str(home / ".config"),
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath",
           "GIT_CONFIG_VALUE_0": str(hooks)}
    return env, markers


def test_no_host_filter_hook_or_lfs_runs(github: dict[str, Any], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    source = github["source"]
    folder = source / "artifacts" / "blimp"
    (folder / "weights.bin").write_bytes(LFS_POINTER)
    (folder / "notes.txt").write_text("$Id$\nplain\n")
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "files")
    # attributes committed after the files: their blobs are the bytes written above
    (folder / ".gitattributes").write_text(
        "README.md filter=marker\nmeta.yaml filter=system\n"
        "weights.bin filter=lfs diff=lfs merge=lfs -text\n"
        "notes.txt ident text eol=crlf working-tree-encoding=UTF-16\n")
    _git(source, "add", "artifacts/blimp/.gitattributes")
    _git(source, "commit", "-qm", "attributes")
    commit = _git(source, "rev-parse", "HEAD")
    env, markers = _hostile_host(tmp_path / "host")
    # the host as it is: plain git runs each of them (so the test below can fail)
    plain = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(["git", "clone", "-q", str(source), str(tmp_path / "plain")],
                          env={**plain, **env, "GIT_LFS_SKIP_SMUDGE": "1"}, check=False,
                          capture_output=True, text=True, timeout=120)
    ran = sorted(p.name for p in markers.iterdir())
    assert {"filter", "system", "lfs", "post-checkout"} <= set(ran), (ran, done.stderr)
    notes = (tmp_path / "plain" / "artifacts" / "blimp" / "notes.txt").read_bytes()
    assert notes.decode("utf-16").startswith("$Id: ")  # converted on checkout
    for marker in markers.iterdir():
        marker.unlink()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    monkeypatch.setenv("GIT_LFS_SKIP_SMUDGE", "0")
    fetched = fetch_artifact(parse_artifact_ref(_url(commit, "blimp")))
    assert sorted(p.name for p in markers.iterdir()) == []
    # a file's bytes are its blob's: no filter, LFS smudge, ident or eol conversion ran
    for path in folder.rglob("*"):
        if path.is_file():
            rel = path.relative_to(folder)
            assert (fetched.folder / rel).read_bytes() == path.read_bytes(), rel
    assert (fetched.folder / "weights.bin").read_bytes() == LFS_POINTER


def test_git_uses_only_the_protocol_of_its_base(github: dict[str, Any], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """https:// alone for github.com: a mirror given as file:// works only as that base,
    and a base of another protocol is refused by name."""
    commit = _git(github["source"], "rev-parse", "HEAD")
    monkeypatch.setenv("PROBEBENCH_GITHUB_BASE", "ssh://git@example.org/")
    with pytest.raises(InputError, match=re.escape(
            "PROBEBENCH_GITHUB_BASE='ssh://git@example.org/': expected a URL ending in '/' "
            "with one of the protocols https, http, file")):
        fetch_artifact(parse_artifact_ref(_url(commit, "blimp")))
    # the caller's git environment rewrites github.com to file://: the rewrite is not
    # seen, git goes to github.com (here to a proxy that answers nothing)
    monkeypatch.delenv("PROBEBENCH_GITHUB_BASE")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0",
                       f"url.file://{github['source'].parents[1]}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://github.com/")
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")  # the network is not reached
    with pytest.raises(InputError, match=re.escape(
            "git fetch failed: fatal: unable to access 'https://github.com/lab/probes/'")):
        fetch_artifact(parse_artifact_ref(_url(commit, "blimp")))
    # and git itself refuses a transport it was not given
    with IsolatedGit(tmp_path / "only-https.git", "u", ("https",)) as git:
        git.init(f"file://{github['source']}")
        with pytest.raises(InputError, match="transport 'file' not allowed"):
            git.fetch("origin", "+main:refs/x", max_bytes=MiB, what="x", updates_refs=True)


# --- the hub: file metadata before any download ----------------------------------------

def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """lab/probes on a loopback hub: a folder whose one file's metadata says 1 GiB (an
    LFS file; its bytes here are few), one of 150 files, one of 5 x 60 MiB, and the
    MiniLM artifact; ``probebench validate`` is run on each."""
    root = tmp_path_factory.mktemp("hub")
    fake = FakeHub()
    files: dict[str, bytes] = {}
    add_folder(files, ARTIFACTS / MINILM, "probes/fine")
    add_folder(files, ARTIFACTS / MINILM, "probes/huge")
    files.update({f"probes/many/f{i:03}.txt": b"x\n" for i in range(150)})
    files.update({f"probes/total/part{i}.bin": b"0" for i in range(5)})
    sizes = {"probes/huge/probe.safetensors": 1 << 30,
             **{f"probes/total/part{i}.bin": 60 * MiB for i in range(5)}}
    commit = fake.add("model", "lab/probes", files, sizes)
    runs: dict[str, Any] = {}
    with serve(fake):
        for name in ("huge", "many", "total", "fine"):  # each with caches of its own
            env = {"HF_HUB_OFFLINE": "0", "HF_HUB_CACHE": str(root / name / "hub"),
                   "PROBEBENCH_ARTIFACT_CACHE": str(root / name / "artifacts"),
                   "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_ENDPOINT": fake.url}
            fake.requests.clear()
            run = _run("-m", "probebench", "validate", "--quiet",
                       f"hf://lab/probes@{commit}/probes/{name}", env=env)
            runs[name] = (run, list(fake.requests))
    yield {"runs": runs, "commit": commit, "root": root}


@pytest.mark.parametrize(("name", "says"), [
    ("huge", "folder probes/huge, holds probe.safetensors (1024.0 MiB); a file may hold at "
             "most 64.0 MiB: refused before download (limit MAX_FILE_BYTES)"),
    ("many", "folder probes/many, holds more than 101 files; a fetch takes at most 101 (an "
             "artifact holds at most 100 files and its manifest); refused before download "
             "(limit MAX_FILES)"),
    ("total", "folder probes/total, holds 300.0 MiB in 5 files; artifacts are limited to "
              "256.1 MiB in all: refused before download (limit MAX_TOTAL_BYTES)"),
])
def test_the_hub_refuses_from_file_metadata_before_downloading(
        hub: dict[str, Any], name: str, says: str) -> None:
    run, requests = hub["runs"][name]
    assert run.returncode == 2, run.stdout + run.stderr
    assert says in run.stderr and "Traceback" not in run.stdout + run.stderr
    assert not [r for r in requests if "/resolve/" in r]  # no file asked for, not even HEAD
    assert f"GET /api/models/lab/probes/tree/{hub['commit']}/probes/{name}" in requests
    assert _bytes_under(hub["root"] / name / "artifacts") == 0
    assert _bytes_under(hub["root"] / name / "hub") == 0


def test_the_hub_fetches_a_folder_within_the_budget(hub: dict[str, Any]) -> None:
    run, requests = hub["runs"]["fine"]
    assert run.returncode == 0, run.stdout + run.stderr
    got = sorted(r.split("/resolve/", 1)[1].split("/", 1)[1] for r in requests
                 if r.startswith("GET ") and "/resolve/" in r)
    assert got == sorted(f"probes/fine/{p.relative_to(ARTIFACTS / MINILM).as_posix()}"
                         for p in (ARTIFACTS / MINILM).rglob("*") if p.is_file())


def test_a_hub_cache_folder_over_the_budget_is_not_copied(
        hub: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline, the hub cache is all there is: its folder is sized up before it is copied
    into the artifact cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub["root"] / "fine" / "hub"))
    monkeypatch.setenv("PROBEBENCH_ARTIFACT_CACHE", str(tmp_path / "artifacts"))
    ref = parse_artifact_ref(f"hf://lab/probes@{hub['commit']}/probes/fine")
    with pytest.raises(InputError, match=r"folder probes/fine in the hub cache, holds 8 "
                                         r"files; a fetch takes at most 3 .*refused before "
                                         r"copying \(limit MAX_FILES\)"):
        fetch_artifact(ref, FetchBudget(files=3, file_bytes=MiB, total_bytes=MiB))
    with pytest.raises(InputError, match=r"holds \d+ bytes in 8 files; artifacts are "
                                         r"limited to 1024 bytes in all: refused before "
                                         r"copying \(limit MAX_TOTAL_BYTES\)"):
        fetch_artifact(ref, FetchBudget(files=10, file_bytes=MiB, total_bytes=1024))
    assert _bytes_under(tmp_path / "artifacts") == 0
    fetched = fetch_artifact(ref)  # within the artifact's own limits
    assert fetched.how == "hub cache (offline)" and (fetched.folder / "meta.yaml").is_file()
