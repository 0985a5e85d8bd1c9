"""Hostile reproducer notebooks against the sandbox's limits over its whole process tree: a
fork bomb, a /scratch filler, a /tmp filler and a memory hog spread over processes each
end with an error that names the limit, within that limit, under every mechanism this
machine offers (a cgroup, and the rlimits fallback, root included); a caller with a lower
hard limit of its own gets a clamped, stated limit, never a traceback.

Every hostile run goes through ``tests.sandbox_guard``: a process of its own with hard
limits (and, for root, a cgroup of its own) and a timeout, so that a sandbox that stops
holding fails the test instead of taking the machine down.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from probebench.sandbox.bwrap import SandboxUnavailableError, sandbox_containment
from tests.intake.test_review import ENTRY_ID, TASK, _setup, metrics_code
from tests.sandbox_guard import GIB, guarded

REPO = Path(__file__).resolve().parents[2]
MIB = 1024**2

FORK_BOMB = """\
import os, time
def spawn():
    while True:
        if os.fork() == 0:  # every child forks too
            try:
                spawn()
            finally:
                time.sleep(30)
                os._exit(0)
spawn()
"""
SCRATCH_FILLER = """\
for i in range(10):  # ten 60 MiB files, each under the 64 MiB file limit
    with open(f"/scratch/fill-{i}", "wb") as fh:
        fh.write(b"x" * (60 * 2**20))
"""
TMP_FILLER = """\
i = 0
while True:  # 32 MiB files, each under the file limit, until /tmp is full
    with open(f"/tmp/fill-{i}", "wb") as fh:
        fh.write(b"x" * (32 * 2**20))
    i += 1
"""
MEMORY_HOG = """\
import os, time
children = []
for _ in range(4):  # 4 x 500 MiB, each under the per-process limit, 2 GiB together
    pid = os.fork()
    if pid == 0:
        block = b"x" * (500 * 2**20)
        time.sleep(3)
        os._exit(0)
    children.append(pid)
for pid in children:
    _, status = os.waitpid(pid, 0)
    if status:
        raise RuntimeError(f"child {pid} ended with status {status}")
"""


def _mechanisms() -> list[Any]:
    return [pytest.param("cgroup", id="cgroup"), pytest.param("rlimits", id="rlimits")]


@pytest.fixture(params=_mechanisms())
def mechanism(request: pytest.FixtureRequest) -> str:
    """Each mechanism this machine offers; the rlimits fallback works everywhere the
    sandbox does (as root too, by dropping to an unprivileged uid)."""
    name: str = request.param
    try:
        sandbox_containment(name)
    except SandboxUnavailableError as exc:
        if name == "rlimits":
            raise  # the fallback must work wherever the sandbox runs at all
        pytest.skip(f"no cgroup here: {exc}")
    return name


def _hostile(root: Path, code: str, limits: dict[str, Any]) -> dict[str, Any]:
    _setup(root, notebook=code)
    result = guarded(root, {"wall_seconds": 40, **limits}, timeout=30)
    run = result["run"]
    print(json.dumps({k: result[k] for k in ("before", "during", "after")}),
          run["sandbox"], run["peak_memory_bytes"], run["peak_processes"])
    assert not run["ran"], run
    assert "Traceback" not in (run["error"] or ""), run["error"]
    return result


def test_a_fork_bomb_ends_at_the_process_limit(tmp_path: Path, mechanism: str) -> None:
    result = _hostile(tmp_path, FORK_BOMB, {"processes": 64, "mechanism": mechanism})
    run = result["run"]
    assert "limit of 64 processes and threads" in run["error"], run["error"]
    assert "wall-clock" not in run["error"]  # ended by the limit, not by the clock
    assert run["peak_processes"] <= 64
    # the host's process count rose by the sandbox's at most (plus other work's noise)
    assert result["during"]["processes"] - result["before"]["processes"] < 64 + 100


def test_a_scratch_filler_ends_at_the_scratch_limit(tmp_path: Path, mechanism: str) -> None:
    run = _hostile(tmp_path, SCRATCH_FILLER,
                   {"memory_bytes": GIB, "scratch_bytes": 128 * MIB, "tmp_bytes": 128 * MIB,
                    "file_bytes": 64 * MIB, "mechanism": mechanism})["run"]
    assert "the sandbox's /scratch is full: its limit of 128 MiB" in run["error"], run["error"]
    assert "No space left on device" in run["error"]
    assert run["peak_memory_bytes"] <= GIB


def test_a_tmp_filler_ends_at_the_tmp_limit(tmp_path: Path, mechanism: str) -> None:
    run = _hostile(tmp_path, TMP_FILLER,
                   {"memory_bytes": GIB, "tmp_bytes": 256 * MIB, "file_bytes": 64 * MIB,
                    "mechanism": mechanism})["run"]
    assert "the sandbox's /tmp is full: its limit of 256 MiB" in run["error"], run["error"]
    # /tmp is memory: counted in the tree's memory, which stayed under its limit
    assert 256 * MIB <= run["peak_memory_bytes"] <= GIB


def test_a_memory_hog_over_processes_ends_at_the_memory_limit(tmp_path: Path,
                                                               mechanism: str) -> None:
    limit = 1536 * MIB
    result = _hostile(tmp_path, MEMORY_HOG, {"memory_bytes": limit, "mechanism": mechanism})
    run = result["run"]
    assert "the sandbox's memory limit of 1.5 GiB for its whole process tree" in run["error"], \
        run["error"]
    if mechanism == "cgroup":  # the kernel's count is exact
        assert run["peak_memory_bytes"] <= limit
    else:  # the watchdog looks ten times a second: a bounded overshoot
        assert run["peak_memory_bytes"] <= limit + GIB
    used = result["before"]["mem_available"] - result["during"]["mem_available"]
    assert used < limit + 2 * GIB  # the host's free memory (other work runs beside us)


def test_a_lower_hard_address_space_of_the_caller_is_kept_and_said(tmp_path: Path,
                                                                  mechanism: str) -> None:
    """The caller's hard RLIMIT_AS (3 GiB) is below the sandbox's 8 GiB: the run goes on
    within the caller's limit and the report says so (before: a raw SubprocessError
    traceback from preexec_fn)."""
    _setup(tmp_path, notebook=metrics_code({TASK: {"auroc": 0.5}}))
    run = guarded(tmp_path, {"mechanism": mechanism, "wall_seconds": 60}, timeout=30,
                  address_space=3 * GIB)["run"]
    assert run["ran"] and run["metrics"] == {TASK: {"auroc": 0.5}}, run
    assert "address space 3 GiB per process (the caller's own hard RLIMIT_AS)" in \
        run["sandbox"], run["sandbox"]


def _as_limit(value: int) -> Any:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (value, value))
    return limit


def test_registry_reproduce_under_a_lower_caller_cap(tmp_path: Path) -> None:
    """`probebench registry reproduce` started under a hard RLIMIT_AS of 3 GiB (as with
    `prlimit --as`): a clean run whose report names the clamp, no traceback."""
    _setup(tmp_path, notebook=metrics_code({TASK: {"auroc": 0.5}}))
    out = tmp_path / "reproduced.json"
    command = [sys.executable, "-m", "probebench", "registry", "reproduce", ENTRY_ID,
               "--registry", str(tmp_path / "registry"), "--repo", str(tmp_path),
               "--out", str(out), "--timeout", "30", "--time-limit", "60"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          preexec_fn=_as_limit(3 * GIB), check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{ENTRY_ID}: registry/artifacts/passive/train.ipynb ran" in done.stdout
    report = json.loads(out.read_text())
    said = "address space 3 GiB per process (the caller's own hard RLIMIT_AS)"
    assert said in report["sandbox"]
    assert said in done.stdout  # on the console too


def test_cgroup_limits_and_counters_of_both_versions(tmp_path: Path) -> None:
    """The files each version's limits go to and its counters come from (v1 runs for
    real above, where this machine offers it; v2 only where a host offers it, so its
    file names and formats are checked here on a folder laid out like one)."""
    from probebench.sandbox.cgroups import Cgroup, Usage

    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.swap.max").write_text("max\n")
    group = Cgroup(2, {"": v2})
    group._set_limits(512 * MIB, 64)
    assert (v2 / "memory.max").read_text() == str(512 * MIB)
    assert (v2 / "memory.swap.max").read_text() == "0"
    assert (v2 / "pids.max").read_text() == "64"
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    (v2 / "pids.events").write_text("max 45\n")
    (v2 / "memory.peak").write_text(f"{500 * MIB}\n")
    (v2 / "pids.peak").write_text("64\n")
    assert group.usage() == Usage(500 * MIB, 64, 1, 45)

    mem, pids = tmp_path / "memory", tmp_path / "pids"
    mem.mkdir()
    pids.mkdir()
    group = Cgroup(1, {"memory": mem, "pids": pids})
    group._set_limits(512 * MIB, 64)
    assert (mem / "memory.limit_in_bytes").read_text() == str(512 * MIB)
    assert (pids / "pids.max").read_text() == "64"
    (mem / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    (mem / "memory.max_usage_in_bytes").write_text(f"{511 * MIB}\n")
    (pids / "pids.events").write_text("max 0\n")
    assert group.usage() == Usage(511 * MIB, None, 2, 0)
