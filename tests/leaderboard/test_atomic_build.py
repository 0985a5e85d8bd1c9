"""A killed ``leaderboard build`` leaves the previous leaderboard whole, and the next build
succeeds (probebench.leaderboard.swap).

Each kill is a real SIGKILL: a subprocess runs ``probebench leaderboard build`` through a
small wrapper script that replaces one function, at the point to kill, with
``os.kill(os.getpid(), signal.SIGKILL)``. Every file of the leaderboard is hashed before
and after."""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from probebench.leaderboard import swap
from probebench.leaderboard.build import build_leaderboard
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry

RESAMPLES = 20  #: as the wrapper passes

WRAPPER = """\
import os
import signal
import sys

import probebench.leaderboard.build as build
import probebench.leaderboard.mirror as mirror
import probebench.leaderboard.swap as swap
from probebench.cli import main


def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


point, registry, out = sys.argv[1:]
if point == "pages":  # the index, family and entry pages are written by then
    build._write_task_pages = die
elif point == "mirror":  # after the mirror's first file is stored under registry/blobs
    copy = mirror._Writer.copy

    def copy_then_die(self, src, dest):
        if self.files:
            die()
        return copy(self, src, dest)

    mirror._Writer.copy = copy_then_die
elif point == "renames":  # a file system without RENAME_EXCHANGE: between its two renames
    swap._exchange = lambda a, b: False
    swap._move_in = die
elif point == "exchanged":  # after the exchange, before the old leaderboard is deleted
    swap._discard = die
else:
    raise SystemExit(f"unknown kill point {point}")
sys.exit(main(["leaderboard", "build", "--registry", registry, "--out", out,
               "--resamples", "20"]))
"""


def hashes(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by its relative path, with its SHA-256."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def beside(out: Path) -> list[str]:
    """The names build bookkeeping left next to ``out`` (the lock file stays by design)."""
    return sorted(p.name for p in out.parent.iterdir()
                  if p.name.startswith(f".{out.name}.") and p.name != f".{out.name}.lock")


@pytest.fixture(scope="module")
def old_board(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(registry, old leaderboard): one entry with an artifact folder, so the registry
    mirror stores blobs; the leaderboard built by a clean build, then the entry's tagline
    revised, so that every later build differs from the old one."""
    root = tmp_path_factory.mktemp("atomic")
    registry = root / "registry"
    synthetic_registry(registry, 1)
    artifact = root / "artifacts" / "p0"
    artifact.mkdir(parents=True)
    (artifact / "weights.json").write_text('{"coef": [0.5, -0.25]}', "utf-8")
    (artifact / "README.md").write_text("# A synthetic probe\n", "utf-8")
    build_leaderboard(registry, root / "old", catalog=TaskCatalog.default(),
                      n_resamples=RESAMPLES)
    entry = next((registry / "probes").rglob("*.yaml"))
    text = entry.read_text("utf-8")
    assert "tagline: Synthetic probe 0" in text
    entry.write_text(text.replace("tagline: Synthetic probe 0",
                                  "tagline: Synthetic probe 0, revised"), "utf-8")
    return registry, root / "old"


@pytest.fixture(scope="module")
def new_hashes(old_board: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory,
               ) -> dict[str, str]:
    """The files of a clean build of the revised registry (the slow tests' reference)."""
    out = tmp_path_factory.mktemp("new") / "board"
    build_leaderboard(old_board[0], out, catalog=TaskCatalog.default(), n_resamples=RESAMPLES)
    return hashes(out)


def kill_build(point: str, registry: Path, out: Path, tmp_path: Path) -> None:
    """Run ``leaderboard build`` into ``out`` in a subprocess killed at ``point``."""
    wrapper = tmp_path / "killed_build.py"
    wrapper.write_text(WRAPPER, "utf-8")
    run = subprocess.run([sys.executable, str(wrapper), point, str(registry), str(out)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode == -signal.SIGKILL, (run.returncode, run.stdout, run.stderr)


def old_in_place(old_board: tuple[Path, Path], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "board"
    shutil.copytree(old_board[1], out)
    before = hashes(out)
    assert before == hashes(old_board[1]) and len(before) > 10
    return out, before


def next_build_succeeds(registry: Path, out: Path, before: dict[str, str],
                        expected: dict[str, str]) -> None:
    """The next build replaces the old leaderboard with ``expected`` (what a whole build
    of the revised registry makes) and cleans up what the killed one left."""
    build_leaderboard(registry, out, catalog=TaskCatalog.default(), n_resamples=RESAMPLES)
    assert hashes(out) == expected != before
    assert beside(out) == []


def test_a_build_killed_between_the_renames_leaves_the_old_leaderboard(
        old_board: tuple[Path, Path], tmp_path: Path) -> None:
    """Where the file system has no RENAME_EXCHANGE, a kill between the two renames leaves
    ``out`` missing and the old leaderboard whole in ``.board.previous``; ``recover`` (what
    a reader and the next build do) puts it back, byte for byte."""
    out, before = old_in_place(old_board, tmp_path)
    kill_build("renames", old_board[0], out, tmp_path)
    assert not out.exists()
    assert hashes(swap.previous_path(out)) == before
    # the killed build's own leaderboard was whole, but it is never read: the old one
    # comes back, and the next build (in this process) makes the same files again
    built = hashes(swap.building_path(out))
    assert "registry.json" in built and built != before
    assert swap.recover(out) is True
    assert hashes(out) == before
    assert swap.recover(out) is False
    next_build_succeeds(old_board[0], out, before, built)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["pages", "mirror"])
def test_a_build_killed_while_writing_leaves_the_old_leaderboard(
        old_board: tuple[Path, Path], new_hashes: dict[str, str], tmp_path: Path,
        point: str) -> None:
    """Killed while rendering pages or while writing the registry mirror: ``out`` is
    untouched, the partial build sits in ``.board.building``, and the next build
    deletes it."""
    out, before = old_in_place(old_board, tmp_path)
    kill_build(point, old_board[0], out, tmp_path)
    assert hashes(out) == before
    assert beside(out) == [".board.building"]
    partial = hashes(swap.building_path(out))
    assert "index.html" in partial and "registry.json" not in partial
    blobs = [p for p in partial if p.startswith("registry/blobs/")]
    if point == "pages":
        assert not any(p.startswith("tasks/") for p in partial) and blobs == []
    else:
        assert any(p.startswith("tasks/") for p in partial) and len(blobs) == 1
    next_build_succeeds(old_board[0], out, before, new_hashes)


@pytest.mark.slow
def test_a_build_killed_after_the_exchange_leaves_the_new_leaderboard(
        old_board: tuple[Path, Path], new_hashes: dict[str, str], tmp_path: Path) -> None:
    """Killed after renameat2 exchanged the folders, before the old one is deleted: ``out``
    is the new leaderboard, whole, and the old one waits in ``.board.building``."""
    out, before = old_in_place(old_board, tmp_path)
    kill_build("exchanged", old_board[0], out, tmp_path)
    assert hashes(out) == new_hashes
    assert hashes(swap.building_path(out)) == before
    next_build_succeeds(old_board[0], out, before, new_hashes)


# --- the swap alone, on small folders ---------------------------------------------------

def folder(path: Path, **files: str) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text, "utf-8")
    return path


def contents(path: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(path.iterdir())}


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "fallback"])
def test_swap_in_replaces_the_old_folder_whole(tmp_path: Path, exchange: bool,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = folder(tmp_path / "board", **{"index.html": "old", "old.html": "gone"})
    built = folder(swap.building_path(out), **{"index.html": "new"})
    if exchange:
        assert swap._renameat2() is not None, "this Linux C library has renameat2"
    else:  # a file system that refuses RENAME_EXCHANGE
        monkeypatch.setattr(swap, "_exchange", lambda a, b: False)
    swap.swap_in(built, out)
    assert contents(out) == {"index.html": "new"}
    assert beside(out) == []


def test_a_first_build_and_a_stale_previous(tmp_path: Path) -> None:
    """No old leaderboard: the built one is renamed in. An old one left in
    ``.previous`` beside a whole ``out`` is deleted."""
    out = tmp_path / "board"
    swap.swap_in(folder(swap.building_path(out), a="1"), out)
    assert contents(out) == {"a": "1"}
    folder(swap.previous_path(out), a="0")
    swap.swap_in(folder(swap.building_path(out), a="2"), out)
    assert contents(out) == {"a": "2"} and beside(out) == []


def test_a_file_in_the_way_is_named(tmp_path: Path) -> None:
    out = tmp_path / "board"
    out.write_text("not a leaderboard", "utf-8")
    built = folder(swap.building_path(out), a="1")
    with pytest.raises(swap.LeaderboardSwapError, match=r"board: expected a leaderboard "
                       r"folder \(or nothing\) to replace, found a file"):
        swap.swap_in(built, out)
    assert out.read_text("utf-8") == "not a leaderboard" and beside(out) == []


def test_recover_waits_for_a_running_build(tmp_path: Path) -> None:
    """A reader that finds ``out`` missing waits for the lock: a build holding it may be
    between its renames, and puts ``out`` back itself."""
    out = tmp_path / "board"
    folder(swap.previous_path(out), a="old")
    restored: list[bool] = []
    with swap.hold_lock(out):
        reader = threading.Thread(target=lambda: restored.append(swap.recover(out)))
        reader.start()
        reader.join(0.3)
        assert reader.is_alive() and not out.exists()
        folder(out, a="new")  # the build finishes: its leaderboard is in place
        swap._discard(swap.previous_path(out))
    reader.join(10)
    assert restored == [False] and contents(out) == {"a": "new"}
