"""Run a stranger's code (a reproducer notebook) where it can do no harm.

The isolation is bubblewrap (``bwrap``, Debian package ``bubblewrap``), a real
kernel-namespace sandbox, never a Python-level guard. Inside it the code sees:

- a private network namespace with only a loopback device: no route anywhere, not even
  to the host's own ``localhost``;
- nothing of the caller's environment, anywhere: bubblewrap itself starts with an
  environment of one minimal ``PATH`` (it is the sandbox's ``/proc/1``, readable from
  inside, so ``--clearenv`` alone would still show the caller's variables there), and the
  code gets only PATH, HOME, locale and the offline switches;
- no host path of the caller's in a command line: bubblewrap's arguments (binds,
  variables) arrive through a file descriptor (``--args``), its working folder is ``/``,
  and the submitted folder's copy arrives as a tar stream, never as a mount. Bind mounts
  show their source folder in ``/proc/self/mountinfo`` (the kernel's doing): the Python
  installation keeps its own path (it is bound where it lives), an editable probebench
  appears at ``/opt/probebench`` and the converted models under ``/tmp/home``;
- read-only: the Python installation (interpreter, standard library, site-packages), the
  probebench package itself and the converted models; nothing else of the host's files,
  the repository included;
- writable, and memory: a size-capped tmpfs ``/scratch`` holding a copy of the submitted
  folder, and a size-capped tmpfs ``/tmp``;
- private PID, IPC, UTS and user namespaces (no nested user namespace), and no
  capabilities; the whole process tree dies with the sandbox;
- a system-call filter (``seccomp.py``, ``--seccomp``) over every process of the sandbox,
  bubblewrap's PID 1 included: ``ptrace``, ``process_vm_readv``/``writev`` and a few more
  calls that reach into another process or widen the kernel's surface fail with ``EPERM``.
  A process's memory is also a file, ``/proc/<pid>/mem``: PID 1's (bubblewrap's, same
  uid and dumpable) is masked with a read-only ``/dev/null``, and the notebook runner makes
  itself non-dumpable.

Limits (``limits.py``), over the whole process tree where this machine allows it: memory
(``/tmp`` and ``/scratch`` included), processes and threads, the largest file and the wall
clock, each clamped to the caller's own hard limits and named when a run hits it. A cgroup
(v2, else v1) where one can be made (the kernel counts); else ``RLIMIT_NPROC`` and
``RLIMIT_AS`` per process and a watchdog over the tree's memory, root dropping to an
unprivileged uid of its own so that ``RLIMIT_NPROC`` applies (converted models that uid
cannot read are left out, and the report says so). The output kept is the last 64 KiB.
Not covered: CPU time beyond the wall clock, and the kernel's attack surface beyond the
calls the filter refuses. Where ``bwrap`` is missing or cannot create namespaces, the
filter cannot be built (a machine other than x86_64 and aarch64) or loaded (a kernel
without seccomp filters), or no mechanism can bound the processes,
:class:`SandboxUnavailableError` is raised: nothing is ever run without the sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import resource
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO

from probebench.paths import models_dir
from probebench.sandbox.cgroups import Cgroup
from probebench.sandbox.limits import (
    Containment,
    LimitsInForce,
    SandboxLimits,
    SandboxUnavailableError,
    containment,
    in_force,
    sandbox_uid,
    size_text,
)
from probebench.sandbox.seccomp import filter_file, filter_program
from probebench.sandbox.watch import TreeWatch, descendants, kill_tree

BWRAP = "bwrap"
#: where the writable scratch copy appears inside the sandbox
SCRATCH = "/scratch"
TMP = "/tmp"
#: the sandbox's HOME (inside its /tmp)
INNER_HOME = "/tmp/home"
#: where an editable (source checkout) probebench appears inside the sandbox
PACKAGE_MOUNT = "/opt/probebench"
#: the uid and gid the code sees when root dropped to an unprivileged one
INNER_UID = 65534
#: bubblewrap's own environment: nothing of the caller's
BWRAP_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
#: the output kept: the last this many bytes
OUTPUT_BYTES = 65536
#: host files a Python process needs that are not secrets (no /etc/shadow, no ssh keys)
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives",
        "/etc/mime.types")
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; on Ubuntu "
                 "24.04 also allow unprivileged user namespaces: sysctl -w "
                 "kernel.apparmor_restrict_unprivileged_userns=0)")


@dataclass(frozen=True)
class SandboxResult:
    returncode: int
    timed_out: bool
    output: str                  #: stdout and stderr together, the last 64 KiB
    limits: LimitsInForce        #: what the run got, and how it was enforced
    #: each limit that ended or refused something, named (memory, processes)
    limits_hit: tuple[str, ...] = ()
    peak_memory_bytes: int | None = None
    peak_processes: int | None = None


@cache
def sandbox_tool() -> str:
    """The path of a working ``bwrap``; raises :class:`SandboxUnavailableError` otherwise."""
    path = shutil.which(BWRAP)
    if path is None:
        raise SandboxUnavailableError(f"{BWRAP} not found on PATH: {_INSTALL_HINT}; the submitted "
                                 "code was not run")
    probe = subprocess.run([path, "--unshare-all", "--die-with-parent", *_system_args(),
                            "--proc", "/proc", "--dev", "/dev", "true"], env=BWRAP_ENV,
                           cwd="/", capture_output=True, text=True, timeout=60, check=False)
    if probe.returncode != 0:
        raise SandboxUnavailableError(f"{path} cannot create namespaces here "
                                 f"({probe.stderr.strip() or probe.returncode}): "
                                 f"{_INSTALL_HINT}; the submitted code was not run")
    return path


def sandbox_filter() -> bytes:
    """The sandbox's system-call filter (``seccomp.py``), checked to load here: raises
    :class:`SandboxUnavailableError` where it cannot be built or bubblewrap cannot load it."""
    program = filter_program()
    _filter_loads(sandbox_tool(), program)
    return program


@cache
def _filter_loads(tool: str, program: bytes) -> None:
    fd = filter_file(program)
    try:
        probe = subprocess.run([tool, "--unshare-all", "--die-with-parent", *_system_args(),
                                "--proc", "/proc", "--dev", "/dev", "--seccomp", str(fd),
                                "true"], env=BWRAP_ENV, cwd="/", capture_output=True,
                               text=True, timeout=60, check=False, pass_fds=(fd,))
    finally:
        os.close(fd)
    if probe.returncode != 0:
        said = " ".join(probe.stderr.split())[:600]  # PID 1 and its child may both say it
        raise SandboxUnavailableError(
            f"{tool} cannot load the sandbox's system-call filter "
            f"({said or f'exit status {probe.returncode}'}): the kernel "
            "needs seccomp filters (CONFIG_SECCOMP_FILTER) and bubblewrap its --seccomp "
            "option; without the filter a notebook could read other processes' memory, so "
            "the submitted code was not run")


def _system_args() -> list[str]:
    args = []
    for name in _SYSTEM:
        p = Path(name)
        if p.is_symlink():  # merged /usr: /bin -> usr/bin
            args += ["--symlink", str(p.readlink()), name]
        elif p.is_dir():
            args += ["--ro-bind", name, name]
    return args


def python_roots() -> list[Path]:
    """The folders the running Python needs, read-only: the interpreter's prefixes and
    its library folders (the probebench package is bound on its own, see
    :func:`package_location`)."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent,
             Path(os.path.realpath(sys.executable)).parent}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        roots.add(Path(sysconfig.get_paths()[key]))
    resolved = {Path(os.path.realpath(r)) for r in roots if r.exists()} | {
        r for r in roots if r.exists()}
    # drop folders inside another bound folder
    ordered = sorted(resolved, key=lambda p: len(p.parts))
    keep: list[Path] = []
    for root in ordered:
        if not any(root.is_relative_to(k) for k in keep) and str(root) not in _SYSTEM and \
                not any(root.is_relative_to(s) for s in _SYSTEM):
            keep.append(root)
    return keep


def package_location() -> tuple[Path, str | None]:
    """The probebench package's folder, and where the sandbox sees it when it lies
    outside the Python installation (an editable install: only the package, never the
    checkout around it, appears there, at :data:`PACKAGE_MOUNT`); None when it is inside
    the installation and so already bound."""
    package = Path(__file__).resolve().parents[1]
    system = [Path(s) for s in _SYSTEM]
    if any(package.is_relative_to(r) for r in [*python_roots(), *system]):
        return package, None
    return package, f"{PACKAGE_MOUNT}/probebench"


def sandbox_script(name: str) -> list[str]:
    """The command that runs ``probebench/sandbox/<name>.py`` inside the sandbox: the
    same interpreter, isolated (``-I``: nothing of the working folder is importable),
    the script by its inner path (it imports nothing of probebench)."""
    package, inner = package_location()
    return [sys.executable, "-I", f"{inner or package}/sandbox/{name}.py"]


@dataclass(frozen=True)
class _Bind:
    source: Path
    dest: str


def _readable_by_anyone(path: Path) -> bool:
    """Every folder under ``path`` searchable and every file readable by any uid."""
    try:
        for name_, _, files in os.walk(path):
            folder = Path(name_)
            if stat.S_IMODE(folder.stat().st_mode) & 0o005 != 0o005:
                return False
            if any(not (folder / name).stat().st_mode & stat.S_IROTH for name in files):
                return False
    except OSError:
        return False
    return True


def _model_binds(drop_uid: bool) -> tuple[list[_Bind], list[str]]:
    """The converted models, read-only where probebench looks inside; for an unprivileged
    uid only the model folders it can read (and a note naming the others)."""
    models = models_dir()
    dest = f"{INNER_HOME}/.cache/probebench/models"
    if not models.is_dir():
        return [], []
    if not drop_uid:
        return [_Bind(models, dest)], []
    binds, unreadable = [], []
    for folder in sorted(p for p in models.iterdir() if p.is_dir()):
        if _readable_by_anyone(folder):
            binds.append(_Bind(folder, f"{dest}/{folder.name}"))
        else:
            unreadable.append(folder.name)
    note = [f"Converted models left out, not readable by the sandbox's unprivileged uid: "
            f"{', '.join(unreadable)} (make them readable: chmod -R o+rX {models})"] \
        if unreadable else []
    return binds, note


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    inner_home = INNER_HOME
    base = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": inner_home, "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
        "PROBEBENCH_HOME": f"{inner_home}/.cache/probebench",
        "PROBEBENCH_ACTIVATION_CACHE": "/tmp/activations", "MPLCONFIGDIR": "/tmp/mpl",
        "IPYTHONDIR": "/tmp/ipython", "JUPYTER_RUNTIME_DIR": "/tmp/jupyter/runtime",
        "JUPYTER_DATA_DIR": "/tmp/jupyter/data", "JUPYTER_CONFIG_DIR": "/tmp/jupyter/config",
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    if package_location()[1] is not None:  # the kernel imports probebench from there
        base["PYTHONPATH"] = PACKAGE_MOUNT
    return {**base, **(env or {})}


def _bwrap_args(binds: Sequence[_Bind], limits: LimitsInForce, env: dict[str, str],
                drop_uid: bool, stage: str | None, seccomp_fd: int) -> list[str]:
    """bubblewrap's options, in order (given through ``--args``, never on its command
    line). With ``stage``, each bind's source is ``stage/<index>``, where the child
    (still root) mounted it for the unprivileged uid that cannot reach the original."""
    args = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--hostname", "sandbox", "--cap-drop", "ALL",
            "--seccomp", str(seccomp_fd)]
    if drop_uid:
        args += ["--uid", str(INNER_UID), "--gid", str(INNER_UID)]
    args += _symlink_args()
    # the empty /tmp and /scratch first, then the binds: a virtual environment or checkout
    # that lives under /tmp stays visible (a later mount shadows an earlier one)
    args += ["--proc", "/proc", *_PID1_MASKS, "--dev", "/dev",
             "--size", str(limits.tmp_bytes), "--tmpfs", TMP,
             "--size", str(limits.scratch_bytes), "--tmpfs", SCRATCH]
    for index, bind in enumerate(binds):
        source = f"{stage}/{index}" if stage else str(bind.source)
        args += ["--ro-bind", source, bind.dest]
    args += ["--remount-ro", "/"]  # the sandbox's own root too: only /tmp and /scratch write
    args += ["--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--chdir", "/"]


#: bubblewrap's memory, as a file: bubblewrap sets the mounts up as the sandbox's PID 1,
#: which it stays, dumpable and of the sandbox's uid, so these are its own (the filter
#: refuses ptrace and process_vm_readv, the other ways in)
_PID1_MASKS = ("--ro-bind", "/dev/null", "/proc/1/mem",
               "--ro-bind", "/dev/null", "/proc/1/task/1/mem")


def _symlink_args() -> list[str]:
    return [a for name in _SYSTEM if Path(name).is_symlink()
            for a in ("--symlink", str(Path(name).readlink()), name)]


def _binds(readonly: Sequence[Path], drop_uid: bool) -> tuple[list[_Bind], list[str]]:
    binds = [_Bind(Path(n), n) for n in _SYSTEM
             if not Path(n).is_symlink() and Path(n).is_dir()]
    binds += [_Bind(Path(p), p) for p in _ETC if Path(p).exists()]
    binds += [_Bind(r, str(r)) for r in python_roots()]
    package, inner = package_location()
    if inner is not None:
        binds.append(_Bind(package, inner))
    binds += [_Bind(Path(r), str(r)) for r in readonly]
    models, notes = _model_binds(drop_uid)
    return binds + models, notes


def _copy_size(folder: Path) -> int:
    """Bytes the copy of ``folder`` takes in a tmpfs (whole pages, a page per folder)."""
    page = 4096
    total = 0
    for path in [folder, *folder.rglob("*")]:
        size = path.lstat().st_size if path.is_file() else 0
        total += -(-size // page) * page + page
    return total


def _pack(folder: Path) -> IO[bytes]:
    """An uncompressed tar of ``folder``'s contents in an unnamed temporary file."""
    fh = tempfile.TemporaryFile()  # noqa: SIM115 (the caller closes it)
    with tarfile.open(fileobj=fh, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name)
    fh.seek(0)
    return fh


def _args_file(args: Sequence[str]) -> int:
    fd = os.memfd_create("bwrap-args")
    os.write(fd, b"".join(a.encode() + b"\0" for a in args))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_libc = ctypes.CDLL(None, use_errno=True)
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18
_CLONE_NEWNS = 0x00020000


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    if _libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                   flags, data.encode() if data else None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def _stage_binds(stage: str, binds: Sequence[_Bind]) -> None:
    """In the child, still root: a private mount namespace in which ``stage/<index>`` is
    each bind's source, a path the unprivileged uid can reach (bubblewrap resolves a
    bind's source with the caller's rights, and e.g. a Python under /root is out of an
    unprivileged uid's reach). The host's own mounts are untouched."""
    if _libc.unshare(_CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE, None)
    _mount("tmpfs", stage, "tmpfs", 0, "mode=0755,size=1m")
    for index, bind in enumerate(binds):
        point = f"{stage}/{index}"
        if bind.source.is_dir():
            os.mkdir(point)  # noqa: PTH102 (the child between fork and exec: plain calls)
        else:
            os.close(os.open(point, os.O_CREAT | os.O_WRONLY, 0o644))
        _mount(str(bind.source), point, None, _MS_BIND | _MS_REC, None)


def _tasks_of_uid(uid: int) -> int:
    """Processes and threads the host has for ``uid`` (what ``RLIMIT_NPROC`` counts)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += sum(1 for _ in Path(f"/proc/{entry.name}/task").iterdir())
    return count


def _nproc_value(force: LimitsInForce, drop_uid: bool) -> int:
    """``RLIMIT_NPROC`` counts every process of a uid on the host: a fresh uid's count is
    the sandbox's alone; the caller's own uid starts from what it already has."""
    value = force.processes if drop_uid else force.processes + _tasks_of_uid(os.getuid())
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


@cache
def _unprivileged_bwrap(tool: str) -> None:
    """Raise :class:`SandboxUnavailableError` where bubblewrap cannot run as an
    unprivileged uid (e.g. AppArmor restricting unprivileged user namespaces)."""
    uid = sandbox_uid()

    def drop() -> None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    probe = subprocess.run([tool, "--unshare-all", "--die-with-parent", *_system_args(),
                            "--proc", "/proc", "--dev", "/dev", "true"], env=BWRAP_ENV,
                           cwd="/", capture_output=True, text=True, timeout=60, check=False,
                           preexec_fn=drop)
    if probe.returncode != 0:
        raise SandboxUnavailableError(
            "no cgroup can be made here, and bubblewrap cannot run as an unprivileged uid "
            f"({probe.stderr.strip() or probe.returncode}), so nothing would bound the "
            "sandbox's processes: allow unprivileged user namespaces (" + _INSTALL_HINT +
            ") or run where a cgroup with the memory and pids controllers can be made; the "
            "submitted code was not run")


class _Tail(threading.Thread):
    """Read a pipe to its end, keeping only the last :data:`OUTPUT_BYTES` (a notebook may
    print without end; the host keeps a bounded tail)."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True, name="sandbox-output")
        self.stream = stream
        self.kept = bytearray()

    def run(self) -> None:
        while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
            self.kept += chunk
            if len(self.kept) > 2 * OUTPUT_BYTES:
                del self.kept[:-OUTPUT_BYTES]

    def text(self) -> str:
        return bytes(self.kept[-OUTPUT_BYTES:]).decode("utf-8", "replace")


def _child_setup(cgroup: Cgroup | None, rlimits: list[tuple[int, int]], uid: int | None,
                 stage: str | None, binds: Sequence[_Bind], err_fd: int) -> Callable[[], None]:
    def setup() -> None:  # in the child before it executes bubblewrap
        step = "joining the cgroup"
        try:
            if cgroup is not None:
                cgroup.enter()
            step = "setting the resource limits"
            for which, value in rlimits:
                resource.setrlimit(which, (value, value))
            if stage is not None:
                step = "mounting the read-only folders for the unprivileged uid"
                _stage_binds(stage, binds)
            if uid is not None:
                step = f"dropping to uid {uid}"
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
        except BaseException as exc:
            os.write(err_fd, f"{step}: {exc}".encode()[:1000])
            raise
    return setup


def sandbox_containment(mechanism: str = "auto") -> Containment:
    """The mechanism that would hold a run's limits here (``cgroup v2``, ``cgroup v1`` or
    ``rlimits``, see ``limits.py``), checked to work: raises
    :class:`SandboxUnavailableError` where ``bwrap`` is missing or nothing could bound the
    sandbox's processes."""
    tool = sandbox_tool()
    sandbox_filter()
    how = containment(mechanism)
    if how.drop_uid:
        _unprivileged_bwrap(tool)
    return how


def run_sandboxed(argv: Sequence[str], *, scratch: Path, cwd: str = SCRATCH,
                  env: dict[str, str] | None = None, readonly: Sequence[Path] = (),
                  limits: SandboxLimits | None = None,
                  pass_fds: Sequence[int] = ()) -> SandboxResult:
    """Run ``argv`` in the sandbox with a copy of ``scratch`` (a folder the caller made)
    writable at ``/scratch`` and ``cwd`` its working folder; what the command writes
    there stays in the sandbox (results leave through ``pass_fds``). Raises
    :class:`SandboxUnavailableError` rather than run anything unsandboxed or unbounded."""
    limits = limits or SandboxLimits()
    tool = sandbox_tool()
    program = sandbox_filter()
    how = sandbox_containment(limits.mechanism)
    drop_uid = how.drop_uid
    binds, notes = _binds(readonly, drop_uid)
    force = in_force(limits, how, _copy_size(scratch))
    if notes:
        force = dataclasses.replace(force, notes=(*force.notes, *notes))
    rlimits = [(resource.RLIMIT_FSIZE, force.file_bytes), (resource.RLIMIT_CORE, 0)]
    if force.address_space_bytes is not None:
        rlimits.append((resource.RLIMIT_AS, force.address_space_bytes))
    if how.kind == "rlimits":
        rlimits.append((resource.RLIMIT_NPROC, _nproc_value(force, drop_uid)))
    with contextlib.ExitStack() as stack:
        stage = stack.enter_context(tempfile.TemporaryDirectory(
            prefix="probebench-stage-")) if drop_uid else None
        if stage is not None:
            Path(stage).chmod(0o755)
            _reachable(stage)
        cgroup = None
        if how.kind.startswith("cgroup"):
            try:
                cgroup = Cgroup.create(int(how.kind[-1]), force.memory_bytes, force.processes)
            except OSError as exc:
                raise SandboxUnavailableError(f"the sandbox's cgroup could not be made "
                                              f"({exc}); the submitted code was not run") \
                    from None
            stack.callback(cgroup.remove)
        tar = stack.enter_context(_pack(scratch))
        seccomp_fd = filter_file(program)
        stack.callback(os.close, seccomp_fd)
        args_fd = _args_file(_bwrap_args(binds, force, _environment(env), drop_uid, stage,
                                         seccomp_fd))
        stack.callback(os.close, args_fd)
        err_r, err_w = os.pipe()
        stack.callback(os.close, err_r)
        command = [tool, "--args", str(args_fd), "--", *sandbox_script("launcher"),
                   str(tar.fileno()), SCRATCH, cwd, "--", *argv]
        setup = _child_setup(cgroup, rlimits, sandbox_uid() if drop_uid else None, stage,
                             binds, err_w)
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True, env=BWRAP_ENV, cwd="/",
                preexec_fn=setup, pass_fds=(args_fd, seccomp_fd, tar.fileno(), *pass_fds))
        except subprocess.SubprocessError:
            os.close(err_w)
            why = os.read(err_r, 2000).decode("utf-8", "replace") or "unknown"
            raise SandboxUnavailableError(f"the sandbox could not start ({why}); the "
                                          "submitted code was not run") from None
        os.close(err_w)
        return _wait(proc, force, cgroup)
    raise AssertionError("not reached")  # pragma: no cover (for mypy)


def _reachable(folder: str) -> None:
    """Every folder above ``folder`` searchable by any uid (the stage must be reachable
    for the unprivileged uid)."""
    for parent in Path(folder).parents:
        if stat.S_IMODE(parent.stat().st_mode) & 0o001 == 0:
            raise SandboxUnavailableError(
                f"{parent} is not searchable by other users, so the sandbox's unprivileged "
                f"uid cannot reach {folder}: set TMPDIR to a folder such as /tmp")


def _wait(proc: subprocess.Popen[bytes], force: LimitsInForce,
          cgroup: Cgroup | None) -> SandboxResult:
    assert proc.stdout is not None
    tail = _Tail(proc.stdout)
    tail.start()
    watch = None
    if cgroup is None:
        watch = TreeWatch(proc.pid, force.memory_bytes,
                          mounts={TMP: force.tmp_bytes, SCRATCH: force.scratch_bytes})
        watch.start()
    timed_out = False
    try:
        proc.wait(timeout=force.wall_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if proc.returncode is None:  # a timeout (or an interruption): the whole tree dies
            if cgroup is not None:
                cgroup.kill()
            kill_tree(proc.pid, descendants(proc.pid))
            proc.wait()
        if watch is not None:
            watch.stop()
        if cgroup is not None:  # bubblewrap's end took its PID namespace along; make sure
            cgroup.kill()
        tail.join(timeout=5)
    hit: list[str] = []
    peak_memory = peak_processes = None
    if cgroup is not None:
        usage = cgroup.usage()
        peak_memory, peak_processes = usage.peak_memory_bytes, usage.peak_processes
        if usage.oom_kills:
            hit.append(f"the sandbox's memory limit of {size_text(force.memory_bytes)} for its "
                       f"whole process tree ({force.mechanism.kind}) was reached: the kernel "
                       f"ended {usage.oom_kills} process(es)")
        if usage.refused_forks:
            hit.append(f"the sandbox's limit of {force.processes} processes and threads "
                       f"({force.mechanism.kind}) was reached: {usage.refused_forks} new "
                       "process(es) refused")
    if watch is not None:
        peak_memory, peak_processes = watch.peak_memory_bytes, watch.peak_processes
        if watch.exceeded is not None:
            hit.append(f"the sandbox's memory limit of {size_text(force.memory_bytes)} for its "
                       f"whole process tree (rlimits watchdog) was passed "
                       f"({size_text(watch.exceeded)} held): the sandbox was ended")
        if watch.peak_processes >= force.processes:
            hit.append(f"the sandbox's limit of {force.processes} processes and threads "
                       "(RLIMIT_NPROC) was reached")
    return SandboxResult(proc.returncode, timed_out, tail.text(), force, tuple(hit),
                         peak_memory, peak_processes)


__all__ = ["INNER_UID", "PACKAGE_MOUNT", "SCRATCH", "TMP", "Containment", "LimitsInForce",
           "SandboxLimits", "SandboxResult", "SandboxUnavailableError", "containment",
           "package_location", "python_roots", "run_sandboxed", "sandbox_containment",
           "sandbox_filter", "sandbox_script", "sandbox_tool"]
