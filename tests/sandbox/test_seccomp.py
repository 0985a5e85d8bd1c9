"""The sandbox's system-call filter: its bytes decode to the intended program (run here by a
small classic-BPF interpreter of the test's own, against syscall numbers written out from
the kernel's tables), bubblewrap loads it, and inside the real sandbox a process can no
longer ptrace PID 1, read its memory with process_vm_readv or /proc/1/mem, nor make any
other refused call, while ordinary Python (numpy) still runs. Where the filter cannot be
built or loaded, nothing runs."""

from __future__ import annotations

import json
import os
import platform
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from probebench.intake.reproduce import reproduce_entry
from probebench.sandbox.bwrap import (
    BWRAP_ENV,
    SandboxLimits,
    SandboxUnavailableError,
    _filter_loads,
    _system_args,
    python_roots,
    run_sandboxed,
    sandbox_tool,
)
from probebench.sandbox.seccomp import filter_file, filter_program
from tests.intake.test_review import ENTRY_ID, _setup

# <linux/seccomp.h> and <linux/audit.h>
RET_ALLOW, RET_KILL_PROCESS, RET_EPERM = 0x7FFF0000, 0x80000000, 0x00050000 | 1
ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003, "arm": 0x40000028,
        "riscv64": 0xC00000F3}
#: (x86_64: arch/x86/entry/syscalls/syscall_64.tbl, aarch64: include/uapi/asm-generic/unistd.h)
REFUSED = {
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "pidfd_getfd": (438, 438), "perf_event_open": (298, 241),
    "userfaultfd": (323, 282), "bpf": (321, 280), "keyctl": (250, 219),
    "add_key": (248, 217), "request_key": (249, 218), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "unshare": (272, 97),
    "setns": (308, 268),
}
#: calls every Python process makes, which must stay open
ORDINARY = {
    "read": (0, 63), "write": (1, 64), "openat": (257, 56), "mmap": (9, 222),
    "clone": (56, 220), "clone3": (435, 435), "execve": (59, 221), "wait4": (61, 260),
    "exit_group": (231, 94), "futex": (202, 98), "getpid": (39, 172), "kill": (62, 129),
    "pidfd_open": (434, 434), "prctl": (157, 167), "epoll_pwait": (281, 22),
}
X32_PTRACE = 0x40000000 | 521  # arch/x86/entry/syscalls/syscall_64.tbl, x32 column


def run_bpf(program: bytes, nr: int, arch: int) -> int:
    """What ``program`` returns for a call: a classic-BPF interpreter for the four
    instructions a seccomp filter of this kind may use, over ``struct seccomp_data``."""
    data = struct.pack("=II", nr & 0xFFFFFFFF, arch) + bytes(8 + 6 * 8)
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("=HBBI", program, pc * 8)
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            assert k in (0, 4), k  # nr or arch, nothing else of seccomp_data
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += jt if acc == k else jf
        elif code == 0x35:  # BPF_JMP | BPF_JGE | BPF_K
            pc += jt if acc >= k else jf
        elif code == 0x06:  # BPF_RET | BPF_K
            return int(k)
        else:
            raise AssertionError(f"instruction {pc - 1}: unexpected opcode {code:#x}")


def test_the_filter_decodes_to_the_intended_program() -> None:
    program = filter_program("x86_64")
    assert len(program) % 8 == 0 and 0 < len(program) // 8 <= 4096
    assert filter_program("aarch64") == program == filter_program("arm64")
    for column, arch in enumerate(("x86_64", "aarch64")):
        refused = {numbers[column] for numbers in REFUSED.values()}
        for name, numbers in {**REFUSED, **ORDINARY}.items():
            want = RET_EPERM if name in REFUSED else RET_ALLOW
            assert run_bpf(program, numbers[column], ARCH[arch]) == want, (arch, name)
        # every number up to 1023: refused exactly where the table says
        answers = {nr: run_bpf(program, nr, ARCH[arch]) for nr in range(1024)}
        assert {nr for nr, ret in answers.items() if ret == RET_EPERM} == refused, arch
        assert {ret for nr, ret in answers.items() if nr not in refused} == {RET_ALLOW}
    # another ABI's numbers mean other calls: the process ends
    assert run_bpf(program, X32_PTRACE, ARCH["x86_64"]) == RET_KILL_PROCESS
    assert run_bpf(program, 0x40000000, ARCH["x86_64"]) == RET_KILL_PROCESS  # x32 read
    assert run_bpf(program, X32_PTRACE, ARCH["aarch64"]) == RET_ALLOW  # no such bit there
    for arch in ("i386", "arm", "riscv64"):
        for nr in (0, 26, 117):  # read; ptrace on i386 and arm; ptrace on aarch64
            assert run_bpf(program, nr, ARCH[arch]) == RET_KILL_PROCESS, (arch, nr)


def test_no_filter_for_another_machine_means_no_run(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailableError, match=r"describes x86_64, aarch64 only, and "
                       r"this machine is riscv64.*the submitted code was not run"):
        filter_program("riscv64")
    canary = tmp_path / "RAN-UNFILTERED"
    monkeypatch.setattr(platform, "machine", lambda: "ppc64le")
    with pytest.raises(SandboxUnavailableError, match="this machine is ppc64le"):
        run_sandboxed(["/bin/sh", "-c", f"touch {canary}"], scratch=tmp_path / "scratch")
    assert not canary.exists()


def test_a_filter_the_kernel_refuses_is_named() -> None:
    """A program that jumps past its end: the kernel refuses it (EINVAL), bubblewrap stops,
    and the sandbox says why instead of running unfiltered."""
    bad = struct.pack("=HBBI", 0x15, 5, 5, 0)  # JEQ, both branches beyond the end
    with pytest.raises(SandboxUnavailableError,
                       match=r"cannot load the sandbox's system-call filter .*EINVAL.*"
                             r"the submitted code was not run"):
        _filter_loads(sandbox_tool(), bad)


#: every refused call, with arguments that do not give EPERM without a filter; prints
#: {name: errno name or "ok"} and numpy's answer
PROBE = """\
import ctypes, errno, json, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = json.loads(sys.argv[1])
def call(name, *args):
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(NUMBERS[name]), *[ctypes.c_long(a) for a in args])
    return "ok" if ret >= 0 else errno.errorcode[ctypes.get_errno()]
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
here = ctypes.create_string_buffer(b"x" * 64)
there = ctypes.create_string_buffer(64)
pid1_start = int(open("/proc/1/maps").readline().split("-")[0], 16)
def vm(name, pid, remote):
    local = IoVec(ctypes.addressof(there), 64)
    far = IoVec(remote, 64)
    return call(name, pid, ctypes.addressof(local), 1, ctypes.addressof(far), 1, 0)
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
found = {
    "ptrace seize 1": call("ptrace", 0x4206, 1, 0, 0),
    "ptrace attach 1": call("ptrace", 16, 1, 0, 0),
    "ptrace attach own child": call("ptrace", 16, child, 0, 0),
    "process_vm_readv 1": vm("process_vm_readv", 1, pid1_start),
    "process_vm_readv self": vm("process_vm_readv", os.getpid(), ctypes.addressof(here)),
    "process_vm_writev self": vm("process_vm_writev", os.getpid(), ctypes.addressof(here)),
    "kcmp": call("kcmp", os.getpid(), os.getpid(), 99, 0, 0),
    "pidfd_getfd": call("pidfd_getfd", -1, 0, 0),
    "perf_event_open": call("perf_event_open", 0, 0, -1, -1, 0),
    "keyctl": call("keyctl", -1, 0, 0, 0, 0),
    "add_key": call("add_key", 0, 0, 0, 0, 0),
    "request_key": call("request_key", 0, 0, 0, 0),
    "io_uring_setup": call("io_uring_setup", 0, 0),
    "io_uring_enter": call("io_uring_enter", -1, 0, 0, 0, 0, 0),
    "io_uring_register": call("io_uring_register", -1, 0, 0, 0),
    "unshare": call("unshare", 0x7FFFFFFF),
    "setns": call("setns", -1, 0),
    "userfaultfd": call("userfaultfd", 0),
    "bpf": call("bpf", -1, 0, 0),
}
for path, mode in (("/proc/1/mem", "rb"), ("/proc/1/mem", "r+b"), ("/proc/1/task/1/mem", "rb")):
    try:
        with open(path, mode) as fh:
            fh.seek(pid1_start)
            fh.read(16)
        found[f"open {path} {mode}"] = "ok"
    except OSError as exc:
        found[f"open {path} {mode}"] = errno.errorcode[exc.errno]
os.kill(child, 9)
os.waitpid(child, 0)
seccomp = {pid: [line.split()[1] for line in open(f"/proc/{pid}/status")
                 if line.startswith("Seccomp:")][0] for pid in ("1", "self")}
import numpy
print(json.dumps({"found": found, "seccomp": seccomp, "numpy": int(numpy.arange(100).sum())}))
"""
#: without the filter each of these gives something other than EPERM on any host (bpf,
#: userfaultfd, perf_event_open and io_uring_setup may answer EPERM on their own, by a
#: host's sysctl)
UNFILTERED_NOT_EPERM = ("ptrace seize 1", "ptrace attach own child", "process_vm_readv 1",
                        "process_vm_readv self", "process_vm_writev self", "kcmp",
                        "pidfd_getfd", "keyctl", "add_key", "request_key", "io_uring_enter",
                        "io_uring_register", "unshare", "setns", "open /proc/1/mem rb")


def _numbers() -> str:
    column = 0 if platform.machine() in ("x86_64", "amd64") else 1
    return json.dumps({name: numbers[column] for name, numbers in REFUSED.items()})


def _report(output: str) -> dict[str, object]:
    last = output.strip().splitlines()[-1]
    report: dict[str, object] = json.loads(last)
    return report


def _plain_bwrap(program: bytes | None) -> dict[str, object]:
    """:data:`PROBE` under bubblewrap with only the namespaces and the Python
    installation, and with ``program`` as its filter or none."""
    binds = [a for root in python_roots() for a in ("--ro-bind", str(root), str(root))]
    fds: tuple[int, ...] = ()
    args = [sandbox_tool(), "--unshare-all", "--die-with-parent", *_system_args(), *binds,
            "--proc", "/proc", "--dev", "/dev"]
    if program is not None:
        fds = (filter_file(program),)
        args += ["--seccomp", str(fds[0])]
    try:
        done = subprocess.run([*args, sys.executable, "-I", "-c", PROBE, _numbers()],
                              env=BWRAP_ENV, cwd="/", capture_output=True, text=True,
                              timeout=60, check=False, pass_fds=fds)
    finally:
        for fd in fds:
            os.close(fd)
    assert done.returncode == 0, done.stderr
    return _report(done.stdout)


def test_the_filter_is_what_refuses_the_calls() -> None:
    """The same probe under bubblewrap, without and with the filter: only the filter
    makes ptrace of PID 1 and process_vm_readv fail."""
    without = _plain_bwrap(None)
    found = without["found"]
    assert isinstance(found, dict)
    assert found["ptrace seize 1"] == "ok" and found["process_vm_readv 1"] == "ok", found
    assert [k for k in UNFILTERED_NOT_EPERM if found[k] == "EPERM"] == [], found
    assert without["seccomp"] == {"1": "0", "self": "0"}
    with_filter = _plain_bwrap(filter_program())
    found = with_filter["found"]
    assert isinstance(found, dict)
    assert {k: v for k, v in found.items() if not k.startswith("open ")} == {
        k: "EPERM" for k in found if not k.startswith("open ")}
    assert with_filter["seccomp"] == {"1": "2", "self": "2"}  # bubblewrap's PID 1 too
    assert with_filter["numpy"] == without["numpy"] == sum(range(100))


@pytest.mark.parametrize("mechanism", ["auto", "rlimits"])
def test_the_sandbox_refuses_ptrace_and_reading_other_memory(tmp_path: Path,
                                                             mechanism: str) -> None:
    """Through the launcher every sandboxed run takes (rlimits: root first drops to an
    unprivileged uid, the filter's descriptor crosses that too)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "probe.py").write_text(PROBE)
    result = run_sandboxed([sys.executable, "probe.py", _numbers()], scratch=scratch,
                           limits=SandboxLimits(mechanism=mechanism, wall_seconds=60))
    assert result.returncode == 0, result.output
    report = _report(result.output)
    found = report["found"]
    assert isinstance(found, dict)
    refused = {k: v for k, v in found.items() if not k.startswith("open ")}
    assert refused == dict.fromkeys(refused, "EPERM"), found
    # PID 1's memory as a file: masked, for reading and for writing
    assert {k: v for k, v in found.items() if k.startswith("open ")} == {
        "open /proc/1/mem rb": "EACCES", "open /proc/1/mem r+b": "EACCES",
        "open /proc/1/task/1/mem rb": "EACCES"}, found
    assert report["seccomp"] == {"1": "2", "self": "2"}
    assert report["numpy"] == sum(range(100))


@pytest.mark.slow
def test_a_notebook_cannot_ptrace_pid_1(tmp_path: Path) -> None:
    """A reproducer notebook, run as `registry reproduce` runs it, reports what it got."""
    code = (f"import sys\nsys.argv = ['probe', {_numbers()!r}]\n" + PROBE +
            "raise RuntimeError('probed ' + json.dumps(found, sort_keys=True))\n")
    _setup(tmp_path, notebook=code)
    run = reproduce_entry(ENTRY_ID, tmp_path / "registry", tmp_path, timeout=60,
                          limits=SandboxLimits(wall_seconds=120))
    assert not run.ran and "RuntimeError: probed " in (run.error or ""), run.error
    found = json.loads((run.error or "").split("probed ", 1)[1])
    assert found["ptrace seize 1"] == found["ptrace attach 1"] == "EPERM", found
    assert found["process_vm_readv 1"] == "EPERM" and found["open /proc/1/mem rb"] == "EACCES"
