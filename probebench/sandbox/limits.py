"""What the sandbox may use, how that is enforced here, and the limits actually in force.

:class:`SandboxLimits` is what a caller asks for. :func:`containment` says which mechanism
holds the limits over the sandbox's *whole process tree* on this machine, the first that
works of:

- ``cgroup v2``: a child cgroup with the ``memory`` and ``pids`` controllers (where the
  unified hierarchy offers them to a child of this process's own cgroup);
- ``cgroup v1``: a child cgroup in the ``memory`` and in the ``pids`` hierarchy (for root
  on machines where those controllers are v1 hierarchies);
- ``rlimits``: per-process limits from the kernel (``RLIMIT_AS``, ``RLIMIT_NPROC``)
  and a watchdog over the tree's memory. ``RLIMIT_NPROC`` means nothing to root (the
  kernel exempts uid 0, even one mapped only inside a user namespace), so root starts
  bubblewrap as an unused unprivileged uid of its own for each run.

:func:`in_force` clamps each limit to the caller's own hard limits (a process may never
raise one) and says so in :attr:`LimitsInForce.notes`.
"""

from __future__ import annotations

import os
import resource
import secrets
from dataclasses import dataclass
from functools import cache

from probebench.errors import ProbebenchError

GIB = 1024**3
MIB = 1024**2
#: unprivileged host uids root picks from for a run (not in systemd's container range,
#: 0x00080000-0x6fffffff, nor a login's); one per run, so that ``RLIMIT_NPROC`` counts
#: that run's processes alone
SANDBOX_UID_BASE = 0x70000000
SANDBOX_UID_SPAN = 0x10000
MECHANISMS = ("auto", "cgroup", "rlimits")


class SandboxUnavailableError(ProbebenchError):
    """The sandbox tool is missing or cannot isolate on this machine."""


@dataclass(frozen=True)
class SandboxLimits:
    """What sandboxed code may use, all of it together."""

    #: seconds for the whole run; the sandbox is killed after
    wall_seconds: float = 1800.0
    #: memory of the whole process tree, its ``/tmp`` and ``/scratch`` (memory too) included
    memory_bytes: int = 8 * GIB
    #: the largest file one process may write
    file_bytes: int = GIB
    #: processes and threads at once, the whole tree
    processes: int = 1024
    #: the size of ``/tmp``; None: a quarter of ``memory_bytes``
    tmp_bytes: int | None = None
    #: room in ``/scratch`` beyond the submitted folder's copy; None: a quarter of
    #: ``memory_bytes``
    scratch_bytes: int | None = None
    #: ``auto`` (the first of cgroup v2, cgroup v1, rlimits that works), ``cgroup`` or
    #: ``rlimits``
    mechanism: str = "auto"


@dataclass(frozen=True)
class Containment:
    """How the limits hold over the whole process tree on this machine."""

    kind: str            #: ``cgroup v2``, ``cgroup v1`` or ``rlimits``
    detail: str          #: one sentence for reports
    drop_uid: bool       #: root starts bubblewrap as an unprivileged uid of its own

    def __str__(self) -> str:
        return f"{self.kind} ({self.detail})"


@cache
def containment(mechanism: str = "auto") -> Containment:
    """The mechanism that holds the sandbox's limits here (cached): ``cgroup v2``,
    ``cgroup v1``, else ``rlimits``. ``mechanism="cgroup"`` raises
    :class:`SandboxUnavailableError` where no cgroup can be made; ``"rlimits"`` skips the
    cgroups."""
    from probebench.sandbox import cgroups

    if mechanism not in MECHANISMS:
        raise SandboxUnavailableError(f"sandbox mechanism {mechanism!r}: expected one of "
                                      f"{', '.join(MECHANISMS)}")
    tried: list[str] = []
    if mechanism != "rlimits":
        for version in (2, 1):
            base, why = cgroups.usable(version)
            if base is not None:
                return Containment(f"cgroup v{version}", "memory and processes counted over "
                                   "the whole process tree by the kernel, /tmp and /scratch "
                                   "included", drop_uid=False)
            tried.append(f"cgroup v{version}: {why}")
        if mechanism == "cgroup":
            raise SandboxUnavailableError("no cgroup with the memory and pids controllers can "
                                          "be made here (" + "; ".join(tried) + ")")
    if os.getuid() == 0:
        return Containment("rlimits", "root runs the sandbox as an unprivileged uid of its "
                           "own, so that RLIMIT_NPROC applies; RLIMIT_AS per process and a "
                           "watchdog over the tree's memory", drop_uid=True)
    return Containment("rlimits", "RLIMIT_NPROC for this user, RLIMIT_AS per process and a "
                       "watchdog over the tree's memory", drop_uid=False)


def sandbox_uid() -> int:
    """A fresh unprivileged host uid (and gid) for one run started by root."""
    return SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_SPAN)


def size_text(n: float) -> str:
    """``512 MiB``, ``8 GiB``, ``1.5 GiB``."""
    if n >= GIB:
        return f"{n / GIB:.3g} GiB"
    return f"{n / MIB:.3g} MiB"


@dataclass(frozen=True)
class LimitsInForce:
    """The limits one run gets, after clamping."""

    mechanism: Containment
    wall_seconds: float
    memory_bytes: int                 #: the whole tree, /tmp and /scratch included
    address_space_bytes: int | None   #: RLIMIT_AS per process (None: unlimited)
    file_bytes: int
    processes: int                    #: the whole tree (cgroup) or this uid (rlimits)
    tmp_bytes: int
    scratch_bytes: int                #: the size of /scratch, the copy included
    #: limit -> the caller's own hard rlimit it was clamped to (``address_space_bytes``:
    #: ``RLIMIT_AS``, ...)
    clamped: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()       #: anything else a report should say

    def describe(self) -> str:
        """One paragraph for reports: the mechanism, each limit, and what was clamped to
        the caller's own hard limits."""
        why = dict(self.clamped)

        def said(name: str, text: str) -> str:
            return f"{text} (the caller's own hard {why[name]})" if name in why else text

        parts = [f"{self.mechanism.kind}: memory {size_text(self.memory_bytes)} for the whole "
                 f"process tree (/tmp and /scratch included)",
                 said("processes", f"{self.processes} processes and threads"),
                 f"/tmp {size_text(self.tmp_bytes)}", f"/scratch {size_text(self.scratch_bytes)}",
                 said("file_bytes", f"files up to {size_text(self.file_bytes)}"),
                 f"wall clock {self.wall_seconds:.0f} s"]
        if self.address_space_bytes is not None:
            parts.append(said("address_space_bytes", "address space "
                              f"{size_text(self.address_space_bytes)} per process"))
        return "; ".join(parts) + "".join(f". {n}" for n in self.notes)


def _hard(which: int) -> int | None:
    hard = resource.getrlimit(which)[1]
    return None if hard == resource.RLIM_INFINITY else hard


def in_force(limits: SandboxLimits, how: Containment, copy_bytes: int) -> LimitsInForce:
    """``limits`` for a run whose ``/scratch`` holds ``copy_bytes``, each clamped to the
    caller's own hard limits (a process can never raise its own; the clamp is recorded
    and :meth:`LimitsInForce.describe` says it); raises :class:`SandboxUnavailableError`
    for limits that cannot work at all."""
    if limits.memory_bytes < 64 * MIB or limits.processes < 8 or limits.wall_seconds <= 0:
        raise SandboxUnavailableError(
            f"sandbox limits too small to start anything: memory "
            f"{size_text(limits.memory_bytes)} (at least 64 MiB), {limits.processes} processes "
            f"(at least 8), wall clock {limits.wall_seconds} s")
    clamped: list[tuple[str, str]] = []
    memory = limits.memory_bytes
    tmp = limits.tmp_bytes if limits.tmp_bytes is not None else memory // 4
    room = limits.scratch_bytes if limits.scratch_bytes is not None else memory // 4
    scratch = copy_bytes + room
    if tmp + scratch >= memory:
        raise SandboxUnavailableError(
            f"/tmp ({size_text(tmp)}) and /scratch ({size_text(scratch)}, the copy included) "
            f"leave nothing of the sandbox's memory limit of {size_text(memory)}")
    # the cgroup counts real memory: no address-space limit of ours (virtual reservations,
    # e.g. a thread's malloc arena, would fail long before memory runs out)
    address_space = memory if how.kind == "rlimits" else None
    as_hard = _hard(resource.RLIMIT_AS)
    if as_hard is not None and (address_space is None or as_hard < address_space):
        clamped.append(("address_space_bytes", "RLIMIT_AS"))
        address_space = as_hard
    file_bytes = limits.file_bytes
    fsize_hard = _hard(resource.RLIMIT_FSIZE)
    if fsize_hard is not None and fsize_hard < file_bytes:
        clamped.append(("file_bytes", "RLIMIT_FSIZE"))
        file_bytes = fsize_hard
    processes = limits.processes
    nproc_hard = _hard(resource.RLIMIT_NPROC)
    if how.kind == "rlimits" and nproc_hard is not None and nproc_hard < processes:
        clamped.append(("processes", "RLIMIT_NPROC"))
        processes = nproc_hard
    return LimitsInForce(how, limits.wall_seconds, memory, address_space, file_bytes,
                         processes, tmp, scratch, tuple(clamped))


__all__ = ["MECHANISMS", "Containment", "LimitsInForce", "SandboxLimits",
           "SandboxUnavailableError", "containment", "in_force", "sandbox_uid", "size_text"]
