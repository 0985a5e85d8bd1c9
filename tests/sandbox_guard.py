"""An outer guard for the hostile-notebook tests: each runs ``reproduce_entry`` in a
process of its own with hard resource limits and a timeout, so that a sandbox that stops
holding cannot take the test run (or the CI machine) down with it.

``python -m tests.sandbox_guard ROOT LIMITS_JSON TIMEOUT`` runs the entry of
``tests.intake.test_review`` set up in ROOT and prints one JSON object: the
:class:`ReproducerRun`, and the host's free memory (``MemAvailable``) and process count
before, at worst during, and after the run.

The guard's hard limits (:data:`GUARD_LIMITS`) hold for a non-root user and for the
unprivileged uid root's sandbox drops to; root itself is exempt from ``RLIMIT_NPROC``, so
for root the guard also runs in a cgroup of its own (v1 or v2, made here with plain file
writes, independent of probebench's) with :data:`GUARD_PROCESSES` and
:data:`GUARD_MEMORY`, where one can be made.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GIB = 1024**3
#: the guard's own hard limits (inherited by the sandbox, which clamps to them)
GUARD_LIMITS = {resource.RLIMIT_AS: 12 * GIB, resource.RLIMIT_FSIZE: 2 * GIB,
                resource.RLIMIT_NPROC: 4096, resource.RLIMIT_CORE: 0}
GUARD_PROCESSES = 2048
GUARD_MEMORY = 8 * GIB


def _own_cgroup(controller: str) -> Path | None:
    """This process's cgroup folder for ``controller`` (``""``: the v2 one)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if (controller in names.split(",")) if controller else not names:
            mount = Path("/sys/fs/cgroup") / (controller or "unified")
            for base in (mount, Path("/sys/fs/cgroup")):
                where = base / path.lstrip("/")
                if (where / "cgroup.procs").exists() and (
                        controller or (where / "pids.max").exists() or path == "/"):
                    return where
    return None


def guard_cgroups(name: str) -> list[tuple[Path, dict[str, str]]]:
    """Folders (to make) and limits of the guard's own cgroups, where root can make them."""
    if os.getuid() != 0:
        return []
    memory, pids = _own_cgroup("memory"), _own_cgroup("pids")
    if memory is not None and pids is not None:  # v1
        return [(memory / name, {"memory.limit_in_bytes": str(GUARD_MEMORY)}),
                (pids / name, {"pids.max": str(GUARD_PROCESSES)})]
    unified = _own_cgroup("")
    if unified is not None and {"memory", "pids"} <= set(
            (unified / "cgroup.subtree_control").read_text().split()):
        return [(unified / name, {"memory.max": str(GUARD_MEMORY),
                                  "pids.max": str(GUARD_PROCESSES)})]
    return []


def host_figures() -> dict[str, int]:
    """The host's ``MemAvailable`` (bytes) and its number of processes."""
    available = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            available = int(line.split()[1]) * 1024
    processes = sum(1 for p in Path("/proc").iterdir() if p.name.isdigit())
    return {"mem_available": available, "processes": processes}


class _Worst(threading.Thread):
    """The host's least free memory and most processes while the sandbox runs."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.worst = host_figures()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            now = host_figures()
            self.worst = {"mem_available": min(now["mem_available"],
                                               self.worst["mem_available"]),
                          "processes": max(now["processes"], self.worst["processes"])}


def main(argv: list[str]) -> int:
    from probebench.intake.reproduce import reproduce_entry
    from probebench.sandbox.bwrap import SandboxLimits
    from tests.intake.test_review import ENTRY_ID

    root, limits, timeout = Path(argv[0]), json.loads(argv[1]), int(argv[2])
    before = host_figures()
    worst = _Worst()
    worst.start()
    run = reproduce_entry(ENTRY_ID, root / "registry", root, timeout=timeout,
                          limits=SandboxLimits(**limits))
    worst.stop.set()
    worst.join()
    time.sleep(0.2)  # the kernel tears the namespaces down
    print(json.dumps({"run": run.model_dump(mode="json"), "before": before,
                      "during": worst.worst, "after": host_figures()}))
    return 0


def guarded(root: Path, limits: dict[str, Any], *, timeout: int = 60,
            guard_seconds: float = 90, address_space: int | None = None) -> dict[str, Any]:
    """Run ROOT's notebook under the guard; fails (never hangs) past ``guard_seconds``.
    ``address_space``: the guard's hard ``RLIMIT_AS`` instead of 12 GiB."""
    hard = {**GUARD_LIMITS, **({resource.RLIMIT_AS: address_space} if address_space else {})}
    groups = guard_cgroups(f"probebench-test-guard-{os.getpid()}-{time.monotonic_ns()}")
    for folder, settings in groups:
        folder.mkdir()
        for name, value in settings.items():
            (folder / name).write_text(value)

    def enter() -> None:  # in the guard, before it executes Python
        for folder, _ in groups:
            (folder / "cgroup.procs").write_text(str(os.getpid()))
        for which, value in hard.items():
            limit = resource.getrlimit(which)[1]
            value = value if limit == resource.RLIM_INFINITY else min(value, limit)
            resource.setrlimit(which, (value, value))

    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.sandbox_guard", str(root), json.dumps(limits),
             str(timeout)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True, preexec_fn=enter)
        try:
            out, err = proc.communicate(timeout=guard_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AssertionError(f"the guard killed a sandbox run after {guard_seconds} s") \
                from None
    finally:
        for folder, _ in groups:
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)
    assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
