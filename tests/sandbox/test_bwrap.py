"""Hostile reproducer notebooks run in the sandbox: they write nothing outside it, connect
nowhere, read no secret, stay inside their limits, and fail review. Without the sandbox
tool nothing runs."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from probebench.cli import main
from probebench.intake.reproduce import reproduce_entry
from probebench.intake.review import review_entry
from probebench.sandbox.bwrap import (
    SandboxLimits,
    SandboxUnavailableError,
    sandbox_containment,
    sandbox_tool,
)
from probebench.tasks.catalog import TaskCatalog
from tests.intake.test_review import ENTRY_ID, _setup

REPO = Path(__file__).resolve().parents[2]


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
    # one process past the memory limit: the cgroup's OOM killer ends it, or (rlimits)
    # its address-space limit refuses the allocation; either way the limit is named
    _setup(tmp_path / "mem", notebook="x = bytearray(2 * 1024**3)")
    run = reproduce_entry(ENTRY_ID, tmp_path / "mem" / "registry", tmp_path / "mem",
                          timeout=60, limits=SandboxLimits(memory_bytes=1024**3))
    assert not run.ran and "limit of 1 GiB" in (run.error or ""), run.error


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


SECRET = "s3cr3t-token-value-7f1c"
#: a hostile notebook's first part: everything it can read of every process it can see
DUMP_PROC = """\
import json, os
found = set()
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    for name in ('environ', 'cmdline'):
        try:
            raw = open(f'/proc/{pid}/{name}', 'rb').read()
        except OSError as exc:
            found.add(f'{pid}/{name}: {type(exc).__name__}')
            continue
        found.update(p.decode('utf-8', 'replace') for p in raw.split(b'\\0') if p)
    for name in ('cwd', 'root', 'exe'):
        try:
            found.add(os.readlink(f'/proc/{pid}/{name}'))
        except OSError as exc:
            found.add(f'{pid}/{name}: {type(exc).__name__}')
found.update(open('/proc/self/mountinfo').read().split())
# what an attacker wants first: anything that looks like a credential
found = sorted(found, key=lambda s: (not any(w in s.upper() for w in
                                            ('SECRET', 'TOKEN', 'KEY', 'PASS')), s))
print(found)
"""
#: how the dump leaves, one reporting channel each
CHANNELS = {
    "metrics": "print('PROBEBENCH_METRICS', json.dumps({k: {'auroc': 0.5} for k in found "
               "if '=' in k}))",
    "exception": "raise RuntimeError(' | '.join(found))",
    "output": "import signal\nos.write(2, (' | '.join(found) + '\\n').encode())\n"
              "os.kill(os.getppid(), signal.SIGKILL)",
}


@pytest.fixture
def caller_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A secret in the caller's environment, a working folder and a HOME of its own:
    none may be visible in the sandbox."""
    cwd = tmp_path / "caller-cwd-9e2b"
    home = tmp_path / "caller-home-41d7"
    cwd.mkdir()
    home.mkdir()
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("PROBEBENCH_TEST_SECRET", SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    return [SECRET, cwd.name, home.name]


@pytest.mark.parametrize("mechanism", ["cgroup", "rlimits"])
def test_no_process_in_the_sandbox_shows_the_callers_environment(
        tmp_path: Path, caller_secrets: list[str], mechanism: str) -> None:
    """Every /proc/*/environ and /proc/*/cmdline the notebook can read (bubblewrap's own,
    its /proc/1, included), every cwd, root and exe link, and the mount table: no
    secret of the caller's, no path of its working folder or HOME, no host scratch path."""
    try:
        sandbox_containment(mechanism)
    except SandboxUnavailableError as exc:
        if mechanism == "rlimits":
            raise
        pytest.skip(f"no cgroup here: {exc}")
    root = tmp_path / "repo"
    _setup(root, notebook=DUMP_PROC + "print('PROBEBENCH_METRICS', json.dumps({'dump': "
           "{k: 0 for k in found}}))")
    run = reproduce_entry(ENTRY_ID, root / "registry", root, timeout=60,
                          limits=SandboxLimits(mechanism=mechanism))
    seen = list(run.metrics["dump"])
    # it did read the outside of its own processes: bubblewrap's environment and command
    assert "PATH=/usr/local/bin:/usr/bin:/bin" in seen and "--args" in seen, seen
    for secret in [*caller_secrets, "probebench-sandbox-", str(root)]:
        assert not [s for s in seen if secret in s], secret
    assert not [s for s in seen if "GITHUB_TOKEN" in s or "PROBEBENCH_TEST_SECRET" in s]


def test_the_callers_secret_reaches_no_reporting_channel(
        tmp_path: Path, caller_secrets: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The dump leaves through PROBEBENCH_METRICS task names, an exception, and raw
    output followed by killing the runner: `review`'s printout, its Markdown (the PR
    comment) and JSON, and `registry reproduce`'s report hold none of the caller's."""
    for channel, code in CHANNELS.items():
        root = tmp_path / channel
        _setup(root, notebook=DUMP_PROC + code)
        where = ["--registry", str(root / "registry"), "--repo", str(root), "--timeout", "60"]
        md, js, report = root / "comment.md", root / "review.json", root / "reproduced.json"
        assert main(["review", ENTRY_ID, *where, "--markdown", str(md),
                     "--json-out", str(js)]) == 1
        main(["registry", "reproduce", ENTRY_ID, *where, "--out", str(report)])
        printed = capsys.readouterr()
        texts = {"stdout": printed.out, "stderr": printed.err, "markdown": md.read_text(),
                 "json": js.read_text(), "report": report.read_text()}
        # the channel did carry the dump out (so the test can fail)
        notebook = json.loads(js.read_text())["items"][1]["detail"]
        assert {"metrics": "names task 'PATH=", "exception": "RuntimeError: ",
                "output": "the sandboxed runner reported nothing"}[channel] in notebook, \
            notebook
        for name, text in texts.items():
            for secret in caller_secrets:
                assert secret not in text, (channel, name, secret)
