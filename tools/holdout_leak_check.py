"""Maintainers' check that no sealed holdout's plaintext is anywhere it must not be.

    python tools/holdout_leak_check.py --key ../secrets/holdout.key [--wheel]

Decrypts every current sealed generation in memory (the key only from --key or
$PROBEBENCH_HOLDOUT_KEY), then searches every file git tracks and, with --wheel, every
member of a freshly built wheel for each prompt text (and each distinctive line of one).
Prints counts only, never a text; exits 1 when anything is found.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def tracked_files(repo: Path) -> list[tuple[str, bytes]]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=repo, check=True,
                           capture_output=True, text=True).stdout.split("\0")
    return [(n, (repo / n).read_bytes()) for n in names if n and (repo / n).is_file()]


def wheel_files(repo: Path) -> list[tuple[str, bytes]]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "--no-build-isolation", "-q", "-w", tmp, str(repo)], check=True)
        (wheel,) = Path(tmp).glob("probebench-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            return [(f"{wheel.name}:{n}", archive.read(n)) for n in archive.namelist()]


def main() -> int:
    from probebench.tasks.catalog import TaskCatalog
    from probebench.tasks.fresh_items import public_items
    from probebench.tasks.sealed import current_generation, hidden_texts, leaks, read_key, unseal

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--key", type=Path, default=None, metavar="FILE")
    parser.add_argument("--wheel", action="store_true", help="also search a built wheel")
    args = parser.parse_args()
    key = read_key(args.key)
    assert key is not None
    catalog = TaskCatalog.for_repo(ROOT)
    public = public_items(catalog)
    hidden: set[str] = set()
    tasks = [t for t in catalog.ids if current_generation(catalog, t) is not None]
    for task_id in tasks:
        hidden |= hidden_texts(unseal(catalog, task_id, key).items, public)
    files = tracked_files(ROOT) + (wheel_files(ROOT) if args.wheel else [])
    found = leaks(hidden, files)
    print(f"{len(tasks)} sealed generations, {len(hidden)} texts, {len(files)} files "
          f"searched{' (tracked files and the wheel)' if args.wheel else ''}: "
          f"{len(found)} found")
    for name, _ in found:
        print(f"  FOUND in {name}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
