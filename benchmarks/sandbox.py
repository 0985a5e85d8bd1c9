"""What the reproducer sandbox costs: a notebook run in bubblewrap (`probebench registry
reproduce`) against the same notebook run in-process with nbclient (the baseline, how
review ran notebooks before the sandbox). Best of 3 each.

Cases: a one-cell notebook (the fixed cost: kernel start, namespaces, binds) and one
that imports probebench and torch (what a reproducer's first cell pays).

Then the hostile notebooks of tests/sandbox/test_limits.py (a fork bomb, a /scratch
filler, a /tmp filler, a memory hog over four processes) under each mechanism this machine
offers (cgroup, rlimits), each run under the tests' outer guard: the named error, the
seconds, the sandbox's own peaks, and the host's free memory (MemAvailable) and process
count before, at worst during, and after.

    python benchmarks/sandbox.py [--hostile-only]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probebench.intake.reproduce import reproduce_entry
from probebench.sandbox.bwrap import SandboxUnavailableError, sandbox_containment
from tests.intake.test_review import ENTRY_ID, _setup
from tests.notebooks import run_notebook
from tests.sandbox.test_limits import FORK_BOMB, MEMORY_HOG, MIB, SCRATCH_FILLER, TMP_FILLER
from tests.sandbox_guard import GIB, guarded

CASES = {
    "print one line": "print('PROBEBENCH_METRICS {}')",
    "import probebench, torch": "import probebench, torch\nprint('PROBEBENCH_METRICS {}')",
}


def best_of(fn: Callable[[], object], n: int = 3) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


HOSTILE = {
    "fork bomb, 64 processes": (FORK_BOMB, {"processes": 64}),
    "/scratch filler, 128 MiB": (SCRATCH_FILLER, {"memory_bytes": GIB,
                                                  "scratch_bytes": 128 * MIB,
                                                  "tmp_bytes": 128 * MIB,
                                                  "file_bytes": 64 * MIB}),
    "/tmp filler, 256 MiB": (TMP_FILLER, {"memory_bytes": GIB, "tmp_bytes": 256 * MIB,
                                          "file_bytes": 64 * MIB}),
    "4 x 500 MiB, 1.5 GiB": (MEMORY_HOG, {"memory_bytes": 1536 * MIB}),
}


def hostile() -> None:
    print(f"{'mechanism':<9} {'case':<26} {'s':>5} {'peak MiB':>8} {'peak n':>6} "
          f"{'host free MiB before/min/after':>31} {'host procs before/max/after':>28}  error")
    for mechanism in ("cgroup", "rlimits"):
        try:
            sandbox_containment(mechanism)
        except SandboxUnavailableError as exc:
            print(f"{mechanism:<9} not available here: {exc}")
            continue
        for name, (code, limits) in HOSTILE.items():
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                _setup(root, notebook=code)
                start = time.perf_counter()
                result = guarded(root, {"wall_seconds": 40, "mechanism": mechanism, **limits},
                                 timeout=30)
                took = time.perf_counter() - start
            run = result["run"]
            free = "/".join(str(result[k]["mem_available"] // MIB)
                            for k in ("before", "during", "after"))
            procs = "/".join(str(result[k]["processes"]) for k in ("before", "during", "after"))
            print(f"{mechanism:<9} {name:<26} {took:>5.1f} "
                  f"{(run['peak_memory_bytes'] or 0) // MIB:>8} {run['peak_processes'] or 0:>6} "
                  f"{free:>31} {procs:>28}  {(run['error'] or '')[:110]}")


def main() -> None:
    if "--hostile-only" not in sys.argv:
        timing()
    hostile()


def timing() -> None:
    rows = []
    for name, code in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _setup(root, notebook=code)
            folder = root / "registry/artifacts/passive"
            base = best_of(partial(run_notebook, folder / "train.ipynb", timeout=120,
                                   cwd=folder))
            boxed = best_of(partial(reproduce_entry, ENTRY_ID, root / "registry", root,
                                    timeout=120))
        rows.append((name, base, boxed))
    print(f"{'notebook':<26} {'nbclient in-process':>20} {'bubblewrap sandbox':>19} "
          f"{'ratio':>6}")
    for name, base, boxed in rows:
        print(f"{name:<26} {base:>19.2f}s {boxed:>18.2f}s {boxed / base:>5.2f}x")


if __name__ == "__main__":
    main()
