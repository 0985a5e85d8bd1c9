"""The built wheel carries the task catalog: installed into a fresh virtual environment,
``probebench tasks list`` and ``tasks verify`` work from an empty folder.

Offline: the wheel is built without build isolation and installed without its
dependencies; the fresh environment borrows the already-installed dependencies through
a ``.pth`` line (whose folder's own ``.pth`` files, such as the editable install of the
source tree, are not processed), so the probebench it imports is the wheel's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_wheel_in_a_fresh_venv_lists_and_verifies_the_packaged_tasks(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "-q", "-w", dist, REPO, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("probebench-*.whl")

    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=tmp_path).stdout.strip())
    install = _run(sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                   "--target", site, wheel, cwd=tmp_path)
    assert install.returncode == 0, install.stderr
    (site / "zz-borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBEBENCH_")}
    env["PROBEBENCH_HOME"] = str(tmp_path / "home")
    where = _run(python, "-c", "import probebench; print(probebench.__file__)", cwd=empty,
                 env=env)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout  # not the source tree

    listed = _run(python, "-m", "probebench", "tasks", "list", cwd=empty, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "verb_grammar" in listed.stdout and "33 tasks" in listed.stdout
    assert "tasks: the packaged tasks (33)" in listed.stderr

    verified = _run(python, "-m", "probebench", "tasks", "verify", cwd=empty, env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "33 of 33 tasks match their registered hashes" in verified.stdout
    assert list(empty.iterdir()) == []  # nothing written where it ran
