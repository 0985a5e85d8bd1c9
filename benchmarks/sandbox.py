"""What the reproducer sandbox costs: a notebook run in bubblewrap (`probebench registry
reproduce`) against the same notebook run in-process with nbclient (the baseline, how
review ran notebooks before the sandbox). Best of 3 each.

Cases: a one-cell notebook (the fixed cost: kernel start, namespaces, binds) and one
that imports probebench and torch (what a reproducer's first cell pays).

    python benchmarks/sandbox.py
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
from tests.notebooks import run_notebook
from tests.test_review import ENTRY_ID, _setup

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


def main() -> None:
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
