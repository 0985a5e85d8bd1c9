"""A cgroup per sandbox run: the kernel counts the memory (``/tmp`` and ``/scratch`` are
tmpfs, charged to it too) and the processes of the whole tree, and ends it there.

Version 2 where the unified hierarchy lets a child of this process's own cgroup have the
``memory`` and ``pids`` controllers; version 1 where those controllers are hierarchies of
their own (as root on machines such as this project's). A child of the caller's own
cgroup, never a sibling: the caller's own limits keep holding over the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PREFIX = "probebench-sandbox-"
CONTROLLERS = ("memory", "pids")


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(fs type, mount point, root inside the fs, super options) of each cgroup mount."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        found.append((tail[0], fields[4], fields[3], set(tail[2].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """controller (``""`` for v2) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _inside(mount: str, root: str, path: str) -> Path | None:
    rel = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
    if rel.startswith(".."):
        return None
    return Path(mount) / (rel if rel != "." else "")


def bases(version: int) -> dict[str, Path]:
    """Where this process's own cgroup lives, per controller (``""`` for v2)."""
    own = _own_paths()
    found: dict[str, Path] = {}
    for fstype, mount, root, options in _mounts():
        if version == 2 and fstype == "cgroup2" and "" in own:
            where = _inside(mount, root, own[""])
            if where is not None:
                found[""] = where
        if version == 1 and fstype == "cgroup":
            for name in CONTROLLERS:
                if name in options and name in own:
                    where = _inside(mount, root, own[name])
                    if where is not None:
                        found[name] = where
    return found


def _write(path: Path, value: str) -> None:
    with path.open("w") as fh:
        fh.write(value)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class Usage:
    """What the kernel counted for one run."""

    peak_memory_bytes: int | None
    peak_processes: int | None
    oom_kills: int            #: processes the kernel's OOM killer ended at the memory limit
    refused_forks: int        #: forks (and threads) refused at the process limit


class Cgroup:
    """One run's cgroup: ``create`` in the parent, ``enter`` in the child before exec,
    ``usage``, ``kill`` and ``remove`` after."""

    def __init__(self, version: int, dirs: dict[str, Path]) -> None:
        self.version = version
        self.dirs = dirs

    @classmethod
    def create(cls, version: int, memory_bytes: int, processes: int) -> Cgroup:
        """A fresh cgroup with its limits set (raises ``OSError`` where that fails)."""
        homes = bases(version)
        wanted = [""] if version == 2 else list(CONTROLLERS)
        if any(name not in homes for name in wanted):
            raise OSError(f"no cgroup v{version} mount for {', '.join(wanted)}")
        name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        dirs: dict[str, Path] = {}
        group = cls(version, dirs)
        try:
            for key in wanted:
                home = homes[key]
                _remove_stale(home)
                if version == 2:
                    _enable_controllers(home)
                dirs[key] = home / name
                dirs[key].mkdir()
            group._set_limits(memory_bytes, processes)
        except OSError:
            group.remove()
            raise
        return group

    def _set_limits(self, memory_bytes: int, processes: int) -> None:
        if self.version == 2:
            d = self.dirs[""]
            _write(d / "memory.max", str(memory_bytes))
            if (d / "memory.swap.max").exists():
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(processes))
            return
        mem = self.dirs["memory"]
        _write(mem / "memory.limit_in_bytes", str(memory_bytes))
        if (mem / "memory.memsw.limit_in_bytes").exists():  # no swap beyond the limit
            _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
        _write(self.dirs["pids"] / "pids.max", str(processes))

    def enter(self) -> None:
        """Move the calling process in (the child, before it executes bubblewrap, so that
        every process of the sandbox is born inside)."""
        pid = str(os.getpid())
        for d in self.dirs.values():
            _write(d / "cgroup.procs", pid)

    def _procs_dir(self) -> Path | None:
        return self.dirs.get("") or self.dirs.get("pids") or self.dirs.get("memory")

    def pids(self) -> list[int]:
        d = self._procs_dir()
        return [int(p) for p in _read(d / "cgroup.procs").split()] if d else []

    def usage(self) -> Usage:
        if self.version == 2:
            d = self.dirs[""]
            return Usage(_number(_read(d / "memory.peak")), _number(_read(d / "pids.peak")),
                         _counter(_read(d / "memory.events"), "oom_kill"),
                         _counter(_read(d / "pids.events"), "max"))
        mem, pids = self.dirs.get("memory"), self.dirs.get("pids")
        return Usage(
            _number(_read(mem / "memory.max_usage_in_bytes")) if mem else None,
            _number(_read(pids / "pids.peak")) if pids else None,
            _counter(_read(mem / "memory.oom_control"), "oom_kill") if mem else 0,
            _counter(_read(pids / "pids.events"), "max") if pids else 0)

    def kill(self, wait: float = 5.0) -> bool:
        """SIGKILL every process inside until none is left (True) or ``wait`` runs out."""
        d = self._procs_dir()
        if d is None or not d.exists():
            return True
        if self.version == 2 and (d / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(d / "cgroup.kill", "1")
        deadline = time.monotonic() + wait
        while True:
            left = self.pids()
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self, wait: float = 2.0) -> None:
        """Remove the cgroup (its processes must be gone; a dying one is waited for)."""
        for d in list(self.dirs.values()):
            deadline = time.monotonic() + wait
            while d.exists():
                try:
                    d.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)


def _enable_controllers(home: Path) -> None:
    """Let children of ``home`` (v2) have memory and pids; the kernel refuses where
    ``home`` holds processes itself and is not the root (``OSError``)."""
    enabled = _read(home / "cgroup.subtree_control").split()
    missing = [c for c in CONTROLLERS if c not in enabled]
    if missing:
        offered = _read(home / "cgroup.controllers").split()
        if any(c not in offered for c in missing):
            raise OSError(f"{home} offers only {' '.join(offered) or 'no'} controllers, not "
                          f"{' and '.join(missing)}")
        _write(home / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))


def _remove_stale(home: Path) -> None:
    """Empty cgroups left by runs whose process is gone (killed before cleaning up)."""
    try:
        entries = list(home.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        pid = entry.name[len(PREFIX):].split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                entry.rmdir()


@cache
def usable(version: int) -> tuple[Path | None, str]:
    """Whether a cgroup of ``version`` with memory and pids limits can be made here: its
    parent folder (None when not) and why not."""
    homes = bases(version)
    if not homes:
        return None, "not mounted for this process"
    try:
        group = Cgroup.create(version, 64 * 1024**2, 8)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    group.remove()
    return next(iter(homes.values())), ""


__all__ = ["Cgroup", "Usage", "bases", "usable"]
