"""Run a stranger's code (a reproducer notebook) where it can do no harm.

The isolation is bubblewrap (``bwrap``, Debian package ``bubblewrap``), a real
kernel-namespace sandbox, never a Python-level guard. Inside it the code sees:

- a private network namespace with only a loopback device: no route anywhere, not even
  to the host's own ``localhost``;
- no environment from the caller: ``--clearenv``, then only PATH, HOME, locale and the
  offline switches (no token or secret can leak in);
- read-only: the Python installation (interpreter, standard library, site-packages), the
  probebench package itself and the converted models; nothing else of the host's files,
  the repository included;
- writable: a scratch *copy* of the submitted folder, and an empty ``/tmp``;
- private PID, IPC, UTS and user namespaces (no nested user namespace), and no
  capabilities; the whole process tree dies with the sandbox.

Limits: a wall-clock limit (the process group is killed), an address-space limit per
process (``RLIMIT_AS``), a largest-file limit (``RLIMIT_FSIZE``), a 2 GiB ``/tmp`` and, for
a non-root user, a process count (``RLIMIT_NPROC``). Not covered: a memory cgroup over
the whole tree (containers rarely allow one) and a seccomp filter. Where ``bwrap`` is missing
or cannot create namespaces, :class:`SandboxUnavailableError` is raised: nothing is ever run
without the sandbox.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from probebench.errors import ProbebenchError
from probebench.paths import models_dir

BWRAP = "bwrap"
#: where the writable scratch copy appears inside the sandbox
SCRATCH = "/scratch"
#: the sandbox's /tmp is memory: this much at most
TMP_BYTES = 2 * 1024**3
#: processes (threads included) the sandbox's user may have, host-wide
MAX_PROCESSES = 4096
#: host files a Python process needs that are not secrets (no /etc/shadow, no ssh keys)
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives",
        "/etc/mime.types")
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; on Ubuntu "
                 "24.04 also allow unprivileged user namespaces: sysctl -w "
                 "kernel.apparmor_restrict_unprivileged_userns=0)")


class SandboxUnavailableError(ProbebenchError):
    """The sandbox tool is missing or cannot isolate on this machine."""


@dataclass(frozen=True)
class SandboxLimits:
    """What sandboxed code may use."""

    wall_seconds: float = 1800.0
    memory_bytes: int = 8 * 1024**3
    file_bytes: int = 1024**3


@dataclass(frozen=True)
class SandboxResult:
    returncode: int
    timed_out: bool
    output: str          #: stdout and stderr together, truncated to the last 64 KiB


@cache
def sandbox_tool() -> str:
    """The path of a working ``bwrap``; raises :class:`SandboxUnavailableError` otherwise."""
    path = shutil.which(BWRAP)
    if path is None:
        raise SandboxUnavailableError(f"{BWRAP} not found on PATH: {_INSTALL_HINT}; the submitted "
                                 "code was not run")
    probe = subprocess.run([path, "--unshare-all", "--die-with-parent", *_system_binds(),
                            "--proc", "/proc", "--dev", "/dev", "true"],
                           capture_output=True, text=True, timeout=60, check=False)
    if probe.returncode != 0:
        raise SandboxUnavailableError(f"{path} cannot create namespaces here "
                                 f"({probe.stderr.strip() or probe.returncode}): "
                                 f"{_INSTALL_HINT}; the submitted code was not run")
    return path


def _system_binds() -> list[str]:
    args = []
    for name in _SYSTEM:
        p = Path(name)
        if p.is_symlink():  # merged /usr: /bin -> usr/bin
            args += ["--symlink", str(p.readlink()), name]
        elif p.is_dir():
            args += ["--ro-bind", name, name]
    return args


def python_roots() -> list[Path]:
    """The folders the running Python and probebench need, read-only: the interpreter's
    prefixes, its library folders and the probebench package (an editable install's
    source folder holds only the package, bound alone: never the repository)."""
    package = Path(__file__).resolve().parents[1]  # probebench/
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent,
             Path(os.path.realpath(sys.executable)).parent, package}
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


def bwrap_command(argv: Sequence[str], *, scratch: Path, cwd: str = SCRATCH,
                  env: dict[str, str] | None = None,
                  readonly: Sequence[Path] = ()) -> list[str]:
    """The full ``bwrap`` command line that runs ``argv`` in the sandbox."""
    cmd = [sandbox_tool(), "--unshare-all", "--unshare-user", "--disable-userns",
           "--die-with-parent", "--new-session", "--hostname", "sandbox", "--cap-drop", "ALL",
           *_system_binds()]
    for p in _ETC:
        cmd += ["--ro-bind-try", p, p]
    # the empty /tmp first, then the Python roots: a virtual environment or checkout that
    # lives under /tmp stays visible (a later mount shadows an earlier one)
    cmd += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for root in [*python_roots(), *readonly]:
        cmd += ["--ro-bind", str(root), str(root)]
    cmd += ["--bind", str(scratch), SCRATCH]
    models = models_dir()
    inner_home = "/tmp/home"
    if models.is_dir():  # converted embedded models, read-only, where probebench looks
        cmd += ["--dir", f"{inner_home}/.cache/probebench",
                "--ro-bind", str(models), f"{inner_home}/.cache/probebench/models"]
    cmd += ["--remount-ro", "/"]  # the sandbox's own root too: only /tmp and /scratch write
    base_env = {
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
    cmd += ["--clearenv"]
    for key, value in {**base_env, **(env or {})}.items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", cwd, "--", *argv]
    return cmd


def run_sandboxed(argv: Sequence[str], *, scratch: Path, cwd: str = SCRATCH,
                  env: dict[str, str] | None = None, readonly: Sequence[Path] = (),
                  limits: SandboxLimits | None = None,
                  pass_fds: Sequence[int] = ()) -> SandboxResult:
    """Run ``argv`` in the sandbox with ``scratch`` (a folder the caller made and may
    discard) writable at ``/scratch``. Raises :class:`SandboxUnavailableError` rather than
    run anything unsandboxed."""
    limits = limits or SandboxLimits()
    cmd = bwrap_command(argv, scratch=scratch, cwd=cwd, env=env, readonly=readonly)

    def _limit() -> None:  # runs in the child before exec: bwrap and everything below it
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if os.getuid() != 0:  # root is exempt from RLIMIT_NPROC: it would mean nothing
            resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))

    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_limit, pass_fds=tuple(pass_fds))
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    text = out.decode("utf-8", "replace")[-65536:]
    return SandboxResult(proc.returncode, timed_out, text)


__all__ = ["SCRATCH", "SandboxLimits", "SandboxResult", "SandboxUnavailableError", "bwrap_command",
           "python_roots", "run_sandboxed", "sandbox_tool"]
