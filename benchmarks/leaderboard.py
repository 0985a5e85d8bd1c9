"""Leaderboard build time on a registry of synthetic entries (default 200).

    python benchmarks/leaderboard.py [--entries 200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probebench.leaderboard.build import build_leaderboard
from probebench.leaderboard.ranks import RANK_RESAMPLES
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        synthetic_registry(root / "registry", args.entries)
        start = time.perf_counter()
        summary = build_leaderboard(root / "registry", root / "site",
                             catalog=TaskCatalog.default())
        elapsed = time.perf_counter() - start
        pages = len(list((root / "site").rglob("*.html")))
    print(f"{'entries':>8} {'pages':>6} {'build seconds':>14}  target")
    print(f"{summary.entries:>8} {pages:>6} {elapsed:>14.2f}  < 10 s "
          f"({RANK_RESAMPLES} rank resamples, 2 tasks, 120 prompts each)")


if __name__ == "__main__":
    main()
