"""The sandbox's system-call filter: the calls that reach into another process, and a few
kernel interfaces no notebook needs, fail with ``EPERM``.

``--cap-drop ALL`` and ``no_new_privs`` leave a process every call its uid may make, and
every process in the sandbox has the same uid, bubblewrap's own (the sandbox's PID 1)
included: without a filter the notebook can ``ptrace`` PID 1 and read or write its memory.
bubblewrap loads this filter (``bwrap --seccomp FD``) into PID 1 and into the command,
after its own setup and before the command starts, so every process of the sandbox
runs under it. Calls that need a capability (``mount``, module loading, ``reboot``, new
namespaces of any kind but a user namespace, which ``--disable-userns`` refuses) already
fail for want of one; the filter takes the calls an unprivileged process can still make.

Refused, each with ``EPERM`` (training or evaluating a probe uses none: CPython, numpy,
torch, ipykernel and ZeroMQ make none of these calls, torch's profiler's optional
hardware counters aside):

- ``ptrace``: attaching to another process of the same uid (PID 1, a sibling) to read
  and write its memory and registers; a notebook needs no debugger.
- ``process_vm_readv``, ``process_vm_writev``: another process's memory, no attaching.
- ``pidfd_getfd``: copying another process's open file descriptor.
- ``kcmp``: comparing two processes' kernel objects, an ordering of kernel pointers
  that helps an exploit.
- ``perf_event_open``: hardware counters and tracepoints, side channels and a large
  kernel surface.
- ``userfaultfd``: stalling the kernel on a page fault, the usual way to win a kernel race.
- ``bpf``: loading programs into the kernel (unprivileged BPF, where a host allows it).
- ``keyctl``, ``add_key``, ``request_key``: the kernel keyrings, not fully namespaced
  (Docker's default profile refuses them for that reason).
- ``io_uring_setup``, ``io_uring_enter``, ``io_uring_register``: a second way into much
  of the kernel and the source of many of its exploits (Docker refuses it too).
- ``unshare``, ``setns``: making or entering namespaces; they fail already for want of
  capabilities, and are refused here by name.

``clone`` and ``clone3`` stay open (every thread and process needs them); their namespace
flags are refused by ``--disable-userns`` and the missing capabilities. ``/proc/<pid>/mem``
is a file, not a call: ``bwrap.py`` masks PID 1's, and the runner's is closed by making
it non-dumpable.

Each architecture is checked by ``seccomp_data.arch``: x86_64 and aarch64 have their own
numbers; a call of any other ABI (i386 through ``int 0x80`` on an x86_64 kernel, x32 calls,
whose number has bit 30 set under the x86_64 arch, and 32-bit ARM) ends the process
(``SECCOMP_RET_KILL_PROCESS``), as libseccomp does for an ABI its filter does not name:
its numbers mean other calls. On another machine (ppc64le, riscv64, a 32-bit Python)
:func:`filter_program` raises :class:`SandboxUnavailableError`, and nothing is run.

Why a classic BPF program assembled here with ``struct``, not a binding to libseccomp
(pyseccomp, a ctypes wrapper): the program is some forty instructions of four kinds,
decoded and run by a test; a binding adds a runtime dependency on the system's
``libseccomp.so.2``, which pip cannot install and Debian's ``bubblewrap`` package does not
pull in. This module needs the standard library only, on every Python probebench
supports, and no compiler.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

from probebench.sandbox.limits import SandboxUnavailableError

#: ``struct seccomp_data``: ``int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]``
NR_OFFSET = 0
ARCH_OFFSET = 4
#: ``<linux/audit.h>``: EM_X86_64 and EM_AARCH64, with the 64-bit and little-endian bits
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
#: on x86_64, the x32 ABI's calls carry this bit in their number
X32_SYSCALL_BIT = 0x40000000
#: classic BPF: ``BPF_LD|BPF_W|BPF_ABS``, ``BPF_JMP|BPF_JEQ|BPF_K``, ``BPF_JMP|BPF_JGE|BPF_K``,
#: ``BPF_RET|BPF_K``
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
#: what a refused call returns
RET_EPERM = SECCOMP_RET_ERRNO | errno.EPERM
#: ``struct sock_filter``: ``__u16 code; __u8 jt; __u8 jf; __u32 k``, in the machine's order
INSTRUCTION = struct.Struct("=HBBI")


@dataclass(frozen=True)
class Arch:
    name: str
    audit: int                 #: ``seccomp_data.arch``
    machines: tuple[str, ...]  #: what ``platform.machine()`` says on it
    column: int                #: its number's index in :data:`REFUSED`
    x32_bit: bool = False      #: calls with :data:`X32_SYSCALL_BIT` are another ABI


ARCHES = (Arch("x86_64", AUDIT_ARCH_X86_64, ("x86_64", "amd64"), 0, x32_bit=True),
          Arch("aarch64", AUDIT_ARCH_AARCH64, ("aarch64", "arm64"), 1))

#: each refused call: (x86_64 number from ``arch/x86/entry/syscalls/syscall_64.tbl``,
#: aarch64 number from ``include/uapi/asm-generic/unistd.h``)
REFUSED: dict[str, tuple[int, int]] = {
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438),
    "kcmp": (312, 272),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "bpf": (321, 280),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "unshare": (272, 97),
    "setns": (308, 268),
}


@dataclass(frozen=True)
class _Op:
    code: int
    k: int
    jt: str | None = None  #: the label jumped to when true; None: the next instruction
    jf: str | None = None  #: the label jumped to when false


def host_arch(machine: str | None = None) -> Arch:
    """The architecture the filter describes for ``machine`` (default: this one); raises
    :class:`SandboxUnavailableError` for any other."""
    found = machine if machine is not None else platform.machine()
    pointer_bits = struct.calcsize("P") * 8
    for arch in ARCHES:
        if found.lower() in arch.machines and (machine is not None or pointer_bits == 64):
            return arch
    known = ", ".join(a.name for a in ARCHES)
    raise SandboxUnavailableError(
        f"the sandbox's system-call filter describes {known} only, and this machine is "
        f"{found} ({pointer_bits}-bit Python): without the filter a notebook could read "
        "other processes' memory, so the submitted code was not run")


def _ops() -> list[_Op | str]:
    """The program with symbolic jumps; a string is the label of the next instruction."""
    ops: list[_Op | str] = [_Op(LD_W_ABS, ARCH_OFFSET)]
    for arch in ARCHES:
        ops += [_Op(JEQ_K, arch.audit, jf=f"not-{arch.name}"), _Op(LD_W_ABS, NR_OFFSET)]
        if arch.x32_bit:
            ops.append(_Op(JGE_K, X32_SYSCALL_BIT, jt="kill"))
        ops += [_Op(JEQ_K, nr, jt="refuse")
                for nr in sorted({numbers[arch.column] for numbers in REFUSED.values()})]
        ops += [_Op(RET_K, SECCOMP_RET_ALLOW), f"not-{arch.name}"]
    return [*ops, "kill", _Op(RET_K, SECCOMP_RET_KILL_PROCESS), "refuse", _Op(RET_K, RET_EPERM)]


def _assemble(ops: list[_Op | str]) -> bytes:
    labels: dict[str, int] = {}
    program: list[_Op] = []
    for op in ops:
        if isinstance(op, str):
            labels[op] = len(program)
        else:
            program.append(op)

    def offset(here: int, label: str | None) -> int:
        if label is None:
            return 0
        jump = labels[label] - here - 1
        if not 0 <= jump <= 255:  # classic BPF jumps forward, at most 255 instructions
            raise ValueError(f"jump to {label} from {here} is {jump} instructions")
        return jump

    return b"".join(INSTRUCTION.pack(op.code, offset(i, op.jt), offset(i, op.jf), op.k)
                    for i, op in enumerate(program))


def filter_program(machine: str | None = None) -> bytes:
    """The filter as bubblewrap reads it: ``struct sock_filter`` records, 8 bytes each.
    Raises :class:`SandboxUnavailableError` on a machine it does not describe."""
    host_arch(machine)
    return _assemble(_ops())


def filter_file(program: bytes) -> int:
    """An unnamed memory file holding ``program``, read from its start (for
    ``bwrap --seccomp FD``); the caller closes it."""
    fd = os.memfd_create("bwrap-seccomp")
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


__all__ = ["ARCHES", "AUDIT_ARCH_AARCH64", "AUDIT_ARCH_X86_64", "REFUSED", "RET_EPERM",
           "SECCOMP_RET_ALLOW", "SECCOMP_RET_KILL_PROCESS", "X32_SYSCALL_BIT", "Arch",
           "filter_file", "filter_program", "host_arch"]
