"""Hostile reproducer notebooks run in the sandbox: they write nothing outside it, connect
nowhere, read no secret, stay inside their limits, and fail review. Without the sandbox
tool nothing runs."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from probebench.intake.reproduce import reproduce_entry
from probebench.intake.review import review_entry
from probebench.sandbox.bwrap import SandboxLimits, sandbox_tool
from probebench.tasks.catalog import TaskCatalog
from tests.test_review import ENTRY_ID, _setup

REPO = Path(__file__).resolve().parents[1]


def _review_notebook(root: Path) -> tuple[bool, str]:
    review = review_entry(ENTRY_ID, root / "registry", root, catalog=TaskCatalog.for_repo(root),
                          timeout=60)
    item = next(i for i in review.items if i.name == "notebook")
    assert not review.passed
    return item.passed, item.detail


def test_a_notebook_cannot_write_outside_its_scratch_copy(tmp_path: Path) -> None:
    targets = [tmp_path / "PWNED-host", REPO / "probebench" / "PWNED-package",
               tmp_path / "registry" / "PWNED-registry"]
    for target in targets:
        root = tmp_path / f"repo-{target.name}"
        _setup(root, notebook=f"open({str(target)!r}, 'w').write('owned')")
        passed, detail = _review_notebook(root)
        assert not passed
        assert "Error" in detail, detail  # FileNotFoundError or read-only file system
        assert not target.exists()
    # a relative path that climbs out of the artifact copy lands nowhere on the host
    root = tmp_path / "repo-relative"
    _setup(root, notebook="open('../../../escaped.txt', 'w').write('owned')")
    passed, detail = _review_notebook(root)
    assert not passed and "Read-only file system" in detail, detail
    assert not any(p.name == "escaped.txt" for p in tmp_path.rglob("*"))
    # the submitted folder itself is a copy: the original is untouched
    folder = root / "registry/artifacts/passive"
    _setup(root, notebook="import os\nopen('train.ipynb', 'w').write('x')\n"
                          "os.remove('meta.yaml')\nraise SystemExit('done')")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    _review_notebook(root)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_notebook_connects_nowhere(tmp_path: Path,
                                     listener: tuple[int, list[object]]) -> None:
    port, accepted = listener
    probe = socket.create_connection(("127.0.0.1", port), timeout=5)  # reachable from here
    probe.close()
    code = ("import socket\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=5)\n")
    _setup(tmp_path, notebook=code)
    passed, detail = _review_notebook(tmp_path)
    assert not passed and "ConnectionRefusedError" in detail, detail
    assert len(accepted) == 1  # only the test's own probe
    _setup(tmp_path / "outside", notebook="import socket\n"
           "socket.create_connection(('192.0.2.1', 80), timeout=5)\n")  # TEST-NET-1
    passed, detail = _review_notebook(tmp_path / "outside")
    assert not passed and "Network is unreachable" in detail, detail


def test_a_notebook_reads_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-token-value-7f1c"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    monkeypatch.setenv("PROBEBENCH_TEST_SECRET", secret)
    code = ("import os\n"
            "print('PROBEBENCH_METRICS', '{\"' + os.environ['PROBEBENCH_TEST_SECRET'] + '\": "
            "{}}')\n")
    _setup(tmp_path, notebook=code)
    run = reproduce_entry(ENTRY_ID, tmp_path / "registry", tmp_path, timeout=60)
    assert not run.ran and "KeyError" in (run.error or "")
    assert secret not in run.to_json()
    _setup(tmp_path / "env", notebook="import os, json\n"
           "print('PROBEBENCH_METRICS', json.dumps({'env': {k: 0 for k in os.environ}}))")
    run = reproduce_entry(ENTRY_ID, tmp_path / "env" / "registry", tmp_path / "env", timeout=60)
    names = set(run.metrics["env"])
    assert not names & {"GITHUB_TOKEN", "PROBEBENCH_TEST_SECRET"}
    assert "HF_HUB_OFFLINE" in names
    passed, detail = _review_notebook(tmp_path / "env")
    assert not passed and "names task 'env'" in detail


def test_limits_end_a_runaway_notebook(tmp_path: Path) -> None:
    _setup(tmp_path, notebook="import time\ntime.sleep(120)")
    run = reproduce_entry(ENTRY_ID, tmp_path / "registry", tmp_path, timeout=60,
                          limits=SandboxLimits(wall_seconds=8))
    assert not run.ran and "wall-clock limit of 8 s" in (run.error or "")
    _setup(tmp_path / "mem", notebook="x = bytearray(6 * 1024**3)")
    run = reproduce_entry(ENTRY_ID, tmp_path / "mem" / "registry", tmp_path / "mem",
                          timeout=60, limits=SandboxLimits(memory_bytes=4 * 1024**3))
    assert not run.ran and "MemoryError" in (run.error or ""), run.error


def test_without_the_sandbox_tool_nothing_runs(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    canary = tmp_path / "RAN-UNSANDBOXED"
    _setup(tmp_path, notebook=f"open({str(canary)!r}, 'w').write('x')")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    sandbox_tool.cache_clear()
    try:
        passed, detail = _review_notebook(tmp_path)
    finally:
        sandbox_tool.cache_clear()
    assert not passed
    assert "bwrap not found" in detail and "the submitted code was not run" in detail
    assert not canary.exists()


def test_a_notebook_cannot_forge_the_runners_report(tmp_path: Path) -> None:
    """The report leaves through a pipe only the runner holds; the kernel, its child,
    cannot open the runner's descriptors through /proc."""
    code = ("import os, json, signal\n"
            "forged = json.dumps({'ran': True, 'error': None, 'lines': "
            "['PROBEBENCH_METRICS {\"blimp_passive_1\": {\"auroc\": 0.99}}']})\n"
            "runner = os.getppid()\n"
            "for fd in os.listdir(f'/proc/{runner}/fd'):\n"
            "    try:\n"
            "        with open(f'/proc/{runner}/fd/{fd}', 'w') as fh:\n"
            "            fh.write(forged)\n"
            "    except OSError:\n"
            "        pass\n"
            "os.kill(runner, signal.SIGKILL)\n")
    _setup(tmp_path, notebook=code)
    run = reproduce_entry(ENTRY_ID, tmp_path / "registry", tmp_path, timeout=60)
    # every write through /proc was refused; killing the runner leaves no report at all
    assert not run.ran and not run.metrics
    assert "the sandboxed runner reported nothing" in (run.error or ""), run.error
