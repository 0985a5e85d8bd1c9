"""The watchdog over a sandbox's process tree where no cgroup can be made (``rlimits``).

Every :data:`INTERVAL` seconds it adds up the proportional set size (PSS, shared pages
split between the processes that share them; RSS where PSS cannot be read) of every
process under bubblewrap, plus what ``/tmp`` and ``/scratch`` (tmpfs, memory) hold, and
kills the whole tree once the sum passes the memory limit. It also keeps the peaks, so
that a report can say how close a run came. Best effort by design: a tree can grow
between two looks (each process is also held by ``RLIMIT_AS``); a cgroup is exact.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

INTERVAL = 0.1
_PAGE = os.sysconf("SC_PAGE_SIZE")


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (children, orphans re-parented to the
    sandbox's own init included, since that init is below ``root`` too)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def memory_of(pid: int) -> int:
    """Bytes ``pid`` holds: its PSS, else its RSS, else 0 (gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def tasks_of(pid: int) -> int:
    try:
        return sum(1 for _ in Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0


def tmpfs_used(pids: Sequence[int], mounts: Mapping[str, int]) -> int | None:
    """Bytes held by the tmpfs ``mounts`` (mount -> its size) as the first of ``pids``
    that can be read sees them; a mount of another size is not (yet) the sandbox's and
    holds nothing of it. None where no process can be read."""
    for pid in pids:
        total = 0
        try:
            for mount, size in mounts.items():
                st = os.statvfs(f"/proc/{pid}/root{mount}")
                if abs(st.f_blocks * st.f_frsize - size) <= _PAGE:
                    total += (st.f_blocks - st.f_bfree) * st.f_frsize
        except OSError:
            continue
        return total
    return None


class TreeWatch(threading.Thread):
    """Watch the tree under ``root`` until :meth:`stop`; kill it once its processes and
    its tmpfs ``mounts`` (mount -> size) hold more than ``memory_bytes``."""

    def __init__(self, root: int, memory_bytes: int, *, mounts: Mapping[str, int]) -> None:
        super().__init__(daemon=True, name="sandbox-watch")
        self.root = root
        self.memory_bytes = memory_bytes
        self.mounts = dict(mounts)
        self._tmpfs = 0  # the last count that could be read
        self.peak_memory_bytes = 0
        self.peak_processes = 0
        self.exceeded: int | None = None   #: the sum that passed the limit
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.look()
            self._halt.wait(INTERVAL)

    def look(self) -> None:
        pids = descendants(self.root)
        held = sum(memory_of(p) for p in pids)
        tasks = sum(tasks_of(p) for p in pids)
        tmpfs = tmpfs_used([p for p in pids if p != self.root], self.mounts)
        if tmpfs is not None:
            self._tmpfs = tmpfs
        held += self._tmpfs
        self.peak_memory_bytes = max(self.peak_memory_bytes, held)
        self.peak_processes = max(self.peak_processes, tasks)
        if held > self.memory_bytes and self.exceeded is None:
            self.exceeded = held
            kill_tree(self.root, pids)

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=5)


def kill_tree(root: int, pids: Sequence[int] = ()) -> None:
    """SIGKILL ``root``'s process group and every process of ``pids``."""
    with contextlib.suppress(OSError):
        os.killpg(root, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


__all__ = ["TreeWatch", "descendants", "kill_tree", "memory_of", "tmpfs_used"]
