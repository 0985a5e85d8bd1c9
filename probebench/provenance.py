"""Where and when a number was measured: the run facts stored with every result.

They are kept apart from the deterministic part of a result (like timings): two runs of
the same inputs agree on the numbers, never on the clock.
"""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

#: set by a workflow that installs probebench from a checkout git cannot see afterwards
COMMIT_ENV = "PROBEBENCH_COMMIT"


def utc_now() -> str:
    """The current UTC time, to the second, ISO 8601 with a ``Z``."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@cache
def probebench_commit() -> str | None:
    """The git commit of the running probebench code: ``$PROBEBENCH_COMMIT`` when set,
    else ``git rev-parse HEAD`` of the source tree the package was imported from (with
    ``+dirty`` when its files differ from that commit); None for an installed wheel."""
    given = os.environ.get(COMMIT_ENV, "").strip()
    if given:
        return given
    here = Path(__file__).resolve().parent
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, text=True,
                             capture_output=True, check=True, timeout=10).stdout.strip()
        if not top or not (Path(top) / "pyproject.toml").is_file():
            return None
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, text=True,
                                capture_output=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", str(here)], cwd=here,
                               text=True, capture_output=True, check=True,
                               timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


@cache
def cpu_name() -> str:
    """The CPU model as the kernel names it (``platform.processor()`` elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text("utf-8", "replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_kernels() -> str:
    """The vector instruction set torch's CPU kernels dispatch to (``AVX512``, ``AVX2``,
    ``DEFAULT``, ...; ``$ATEN_CPU_CAPABILITY`` lowers it). Two CPUs of one name may
    differ here (an AMD EPYC of the Zen 3 generation runs AVX2 kernels, of Zen 4 AVX512
    ones), and the kernels round differently: float32 numbers move by float rounding
    between them (``probebench.evaluation.reproducibility``)."""
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def hardware(device: str) -> str:
    """The hardware that ran the model: the GPU's name for CUDA, else the CPU's, with the
    logical cores this process may use and the kernels torch runs on them
    (``cpu_kernels``)."""
    if device.startswith("cuda"):
        import torch

        index = torch.device(device).index or 0
        return f"{torch.cuda.get_device_name(index)} (CUDA {torch.version.cuda})"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count()
    return f"{cpu_name()} ({cores} cores, {cpu_kernels()} kernels)"


__all__ = ["COMMIT_ENV", "cpu_kernels", "cpu_name", "hardware", "probebench_commit", "utc_now"]
