"""Executed *inside* the sandbox: run one notebook and report what it printed.

``python -I .../sandbox/notebook_runner.py NOTEBOOK --timeout S --result-fd FD`` (run by
path: it imports nothing of probebench) executes the notebook with nbclient and writes
one JSON object to file descriptor FD: ``{"ran": bool, "error": str | null, "lines": [...],
"space": {...}}`` with the ``PROBEBENCH_METRICS`` lines of its stream output (at most
:data:`MAX_LINES`, each cut at :data:`MAX_LINE_CHARS`) and, for each of the sandbox's
tmpfs mounts (:data:`SPACES`), ``[bytes used, size]`` once the notebook is done, so that
a full one can be named. The kernel never inherits FD (``close_fds``), and the runner
makes itself non-dumpable so the kernel cannot reach it through ``/proc/<pid>/fd``
either; parsing and judging happen outside the sandbox. (A notebook can print any
metrics it likes anyway: what it prints is compared with probebench's own
re-evaluation.)
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

METRICS_MARK = "PROBEBENCH_METRICS"
MAX_LINES = 64
MAX_LINE_CHARS = 16384
#: the sandbox's size-capped tmpfs mounts (``bwrap.TMP`` and ``bwrap.SCRATCH``)
SPACES = ("/tmp", "/scratch")


def metrics_lines(cells: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ``PROBEBENCH_METRICS`` lines of notebook cells' stream outputs."""
    found: list[str] = []
    for cell in cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") != "stream":
                continue
            for line in str(out.get("text", "")).splitlines():
                if line.startswith(METRICS_MARK) and len(found) < MAX_LINES:
                    found.append(line[:MAX_LINE_CHARS])
    return found


def space_used() -> dict[str, list[int]]:
    """``{mount: [bytes used, size]}`` for each of :data:`SPACES` that exists."""
    found: dict[str, list[int]] = {}
    for mount in SPACES:
        try:
            st = os.statvfs(mount)
        except OSError:
            continue
        found[mount] = [(st.f_blocks - st.f_bfree) * st.f_frsize, st.f_blocks * st.f_frsize]
    return found


def _not_dumpable() -> None:
    """``prctl(PR_SET_DUMPABLE, 0)``: processes without CAP_SYS_PTRACE (every process in
    the sandbox) can no longer open this one's ``/proc/<pid>/fd`` or ptrace it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE = 4
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def main(argv: list[str] | None = None) -> int:
    _not_dumpable()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=int, required=True)
    parser.add_argument("--result-fd", type=int, required=True)
    args = parser.parse_args(argv)
    report: dict[str, object] = {"ran": False, "error": None, "lines": [], "space": {}}
    try:
        import nbformat
        from nbclient import NotebookClient

        nb = nbformat.read(args.notebook, as_version=4)  # type: ignore[no-untyped-call]
        # the kernel's start counts against the notebook's own timeout, not nbclient's
        # fixed 60 s (a busy machine can take longer to import ipykernel)
        client = NotebookClient(nb, timeout=args.timeout, startup_timeout=args.timeout,
                                kernel_name="python3",
                                resources={"metadata": {"path": str(args.notebook.parent)}})
        try:
            client.execute()
            report["ran"] = True
        finally:
            report["lines"] = metrics_lines(nb.cells)
    except Exception as exc:  # nbclient raises CellExecutionError, timeouts, kernel deaths
        lines = str(exc).strip().splitlines()
        report["error"] = (lines[-1] if lines else type(exc).__name__)[:2000]
    report["space"] = space_used()
    with os.fdopen(args.result_fd, "w", encoding="utf-8") as fh:
        json.dump(report, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
