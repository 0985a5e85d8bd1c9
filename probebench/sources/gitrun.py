"""git, kept apart from the host it runs on.

A fetched repository is a stranger's, and the host's git configuration was written for
the host's own repositories: a filter it defines (``filter.<name>.smudge``), a hook folder
(``core.hooksPath``) or git-lfs's filter would run on a stranger's checkout. So every git
command here runs

- with an environment of its own: an empty ``HOME``, ``GIT_CONFIG_NOSYSTEM=1``,
  ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_ATTR_NOSYSTEM=1``, ``GIT_LFS_SKIP_SMUDGE=1``, no
  terminal prompt, and none of the caller's ``GIT_*`` variables (only ``PATH``,
  ``TMPDIR``, proxies and CA files pass);
- with ``-c`` settings that name no hooks, no attributes file, empty LFS filter
  commands, no automatic gc or maintenance, and every fetched pack kept whole;
- with ``GIT_ALLOW_PROTOCOL`` set to the protocols the caller names (``https`` for
  github.com): git refuses every other transport, redirects and submodules included.

Reads (trees, object sizes, the checkout) go through a *view*: a repository without a
remote that borrows the cache's objects (``objects/info/alternates``), so a missing
object is an error there, never a download, and whose ``info/attributes`` turns every
filter and conversion off (``NO_ATTRIBUTES``): a file's bytes are its blob's bytes.
Fetches are the only commands that use the network, under a byte budget: git's incoming
pack is watched and the fetch is stopped once it grows past it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from probebench.errors import InputError

#: seconds one git command may take
GIT_TIMEOUT = 300
#: seconds between two looks at a fetch's incoming pack
_WATCH_EVERY = 0.02
#: the caller's environment variables git still sees: where programs are, temporary
#: files, proxies and CA bundles (everything else, every GIT_* above all, is left out)
PASSED_ENV = ("PATH", "TMPDIR", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
              "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "SSL_CERT_FILE",
              "SSL_CERT_DIR")
#: given on every command line, above any repository's own configuration
CONFIG = (
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.symlinks=false",
    "filter.lfs.process=",
    "filter.lfs.smudge=",
    "filter.lfs.clean=",
    "filter.lfs.required=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "fetch.recurseSubmodules=false",
    "submodule.recurse=false",
    "credential.helper=",
    # index-pack, never unpack-objects: a fetch's bytes land in one file to watch
    "fetch.unpackLimit=1",
    "transfer.unpackLimit=1",
)
#: the view's info/attributes, above every .gitattributes a repository holds
NO_ATTRIBUTES = ("* -filter -text -eol -ident -working-tree-encoding -diff -merge "
                 "-export-ignore -export-subst\n")


def git_env(home: Path, protocols: tuple[str, ...]) -> dict[str, str]:
    """The whole environment of a git command (see module docstring)."""
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_LFS_SKIP_SMUDGE": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_LAZY_FETCH": "1",  # git 2.44 and newer; the view makes sure of it before
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_ALLOW_PROTOCOL": ":".join(protocols),
        "LC_ALL": "C",
        "LANG": "C",
    })
    return env


class IsolatedGit:
    """git on one cache repository (``gitdir``) for the length of a ``with`` block: its
    own empty HOME and view live in a private temporary folder, removed afterwards.
    ``url`` names the artifact in errors; ``protocols`` are the transports git may use."""

    def __init__(self, gitdir: Path, url: str, protocols: tuple[str, ...]) -> None:
        self.gitdir = gitdir
        self.url = url
        self.protocols = protocols
        self._scratch: Path | None = None

    def __enter__(self) -> IsolatedGit:
        self._scratch = Path(tempfile.mkdtemp(prefix="probebench-git-"))
        (self._scratch / "home").mkdir()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    @property
    def scratch(self) -> Path:
        assert self._scratch is not None, "use IsolatedGit in a with block"
        return self._scratch

    def _command(self, gitdir: Path, args: tuple[str, ...]) -> list[str]:
        config = [part for setting in CONFIG for part in ("-c", setting)]
        return ["git", *config, f"--git-dir={gitdir}", *args]

    def _env(self, extra: dict[str, str] | None) -> dict[str, str]:
        return {**git_env(self.scratch / "home", self.protocols), **(extra or {})}

    def run(self, *args: str, view: bool = False, stdin: str | None = None,
            check: bool = True, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``git ARGS`` (never a shell) on the cache repository, or on the view."""
        gitdir = self.view() if view else self.gitdir
        try:
            done = subprocess.run(self._command(gitdir, args), input=stdin,
                                  capture_output=True, text=True, env=self._env(env),
                                  cwd=cwd or self.scratch, timeout=GIT_TIMEOUT, check=False)
        except FileNotFoundError:
            raise InputError(f"artifact {self.url!r}: git is needed for github.com "
                             "artifacts and is not installed") from None
        except subprocess.TimeoutExpired:
            raise InputError(f"artifact {self.url!r}: git {args[0]} took more than "
                             f"{GIT_TIMEOUT} s") from None
        if check and done.returncode != 0:
            raise self._failed(args[0], done.stderr, done.returncode)
        return done

    def _failed(self, command: str, stderr: str, code: int) -> InputError:
        lines = [ln for ln in stderr.splitlines() if ln.strip()
                 and not ln.startswith(("warning:", "hint:"))]
        last = lines[-1] if lines else str(code)
        if "unknown option" in stderr:
            last += " (probebench needs git 2.36 or newer)"
        return InputError(f"artifact {self.url!r}: git {command} failed: {last}")

    def init(self, remote: str) -> None:
        """Create the cache repository (bare, from no template: no sample hooks)."""
        self.gitdir.parent.mkdir(parents=True, exist_ok=True)
        self.run("init", "--quiet", "--bare", "--template=")
        self.run("remote", "add", "origin", remote)

    def view(self) -> Path:
        """The read-only view of the cache's objects (see module docstring)."""
        view = self.scratch / "view.git"
        if not (view / "HEAD").is_file():
            done = subprocess.run(self._command(view, ("init", "--quiet", "--bare",
                                                       "--template=")),
                                  capture_output=True, text=True, env=self._env(None),
                                  cwd=self.scratch, timeout=GIT_TIMEOUT, check=False)
            if done.returncode != 0:
                raise self._failed("init", done.stderr, done.returncode)
            (view / "objects" / "info").mkdir(parents=True, exist_ok=True)
            objects = (self.gitdir / "objects").resolve()
            (view / "objects" / "info" / "alternates").write_text(f"{objects}\n")
            (view / "info").mkdir(exist_ok=True)
            (view / "info" / "attributes").write_text(NO_ATTRIBUTES)
        return view

    def fetch(self, *args: str, max_bytes: int, what: str, updates_refs: bool) -> None:
        """``git fetch ARGS`` from origin, stopped and refused once the pack it receives
        passes ``max_bytes``. What it had received is removed: all of it, or when the
        fetch ``updates_refs`` and finished, only what it left unfinished (a ref it wrote
        names what the pack holds)."""
        packs = self.gitdir / "objects" / "pack"
        before = set(packs.iterdir()) if packs.is_dir() else set()
        locks = set(self.gitdir.glob("*.lock"))
        stderr_path = self.scratch / "fetch.stderr"
        command = self._command(self.gitdir, ("fetch", "--quiet", "--no-tags",
                                              "--no-write-fetch-head",
                                              "--recurse-submodules=no", *args))
        with stderr_path.open("w") as stderr:
            try:
                proc = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=stderr,
                                        env=self._env(None), cwd=self.scratch,
                                        start_new_session=True)
            except FileNotFoundError:
                raise InputError(f"artifact {self.url!r}: git is needed for github.com "
                                 "artifacts and is not installed") from None
            received, stopped = self._watch(proc, packs, before, max_bytes)
        if stopped == "timeout":
            self._remove_new(packs, before, locks, stopped=True, updates_refs=updates_refs)
            raise InputError(f"artifact {self.url!r}: git fetch took more than "
                             f"{GIT_TIMEOUT} s")
        if received > max_bytes:
            self._remove_new(packs, before, locks, stopped=bool(stopped),
                             updates_refs=updates_refs)
            raise InputError(f"artifact {self.url!r}: git received more than "
                             f"{max_bytes / 2**20:.1f} MiB for {what}, more than the "
                             "artifact may hold: stopped and refused before checkout "
                             "(limit MAX_TOTAL_BYTES)")
        if proc.returncode != 0:
            raise self._failed("fetch", stderr_path.read_text(errors="replace"),
                               proc.returncode)

    def _watch(self, proc: subprocess.Popen[bytes], packs: Path, before: set[Path],
               max_bytes: int) -> tuple[int, str]:
        """Wait for ``proc``; (bytes received, "" or why it was stopped)."""
        deadline = time.monotonic() + GIT_TIMEOUT
        while True:
            try:
                proc.wait(timeout=_WATCH_EVERY)
                return _received(packs, before), ""
            except subprocess.TimeoutExpired:
                pass
            received = _received(packs, before)
            timed_out = time.monotonic() > deadline
            if received > max_bytes or timed_out:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return received, "timeout" if timed_out else "budget"

    def _remove_new(self, packs: Path, before: set[Path], locks: set[Path], *,
                    stopped: bool, updates_refs: bool) -> None:
        """Remove what a refused fetch brought: its unfinished files, and its finished
        packs unless a ref it wrote may name them; a fetch that was stopped leaves its
        lock files too (one that finished removed its own)."""
        keep_finished = updates_refs and not stopped
        if packs.is_dir():
            for path in set(packs.iterdir()) - before:
                if path.name.startswith("tmp_") or not keep_finished:
                    path.unlink(missing_ok=True)
        if stopped:
            for path in set(self.gitdir.glob("*.lock")) - locks:
                path.unlink(missing_ok=True)


def _received(packs: Path, before: set[Path]) -> int:
    """Bytes of the pack files (finished or still arriving) that were not in ``before``."""
    total = 0
    try:
        entries = list(packs.iterdir())
    except FileNotFoundError:
        return 0
    for path in entries:
        if path in before or not (path.name.startswith("tmp_pack_")
                                  or path.name.endswith(".pack")):
            continue
        try:
            total += path.stat().st_size
        except FileNotFoundError:  # renamed from tmp_pack_ to pack- while listed
            continue
    return total
