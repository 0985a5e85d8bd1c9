"""Leaderboard build at scale: a synthetic registry of N entries (default 10,000) with
results of a real stored result's size and an artifact folder each.

    python benchmarks/site_scale.py [--entries 10000] [--changed 10] [--resamples 200]

Prints, beside each bound: the build's CPU seconds (total and per entry), its peak RSS,
the site's total size and file count, the largest entry page, and a second, incremental
build after 10 entries changed (their results rewritten), with the entry pages it
rendered and reused. Ratios are against the bound (below 1: within it). The registry
mirror's parse of ``registry.json`` (``probebench.registry.mirror.parse_index``) is timed
too, with the memory it allocates (``tracemalloc``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probebench.leaderboard.build import build_leaderboard, page_name
from probebench.leaderboard.ranks import RANK_RESAMPLES
from probebench.registry.mirror import INDEX_FILE, parse_index
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry

#: the bounds the site is held to
CPU_PER_ENTRY_S = 0.05
SITE_BYTES = 1e9
PAGE_BYTES = 100_000
#: a synthetic result of a real stored result's size: 150 items, three records (~100 KB)
N_ITEMS, HISTORY = 150, 3


def _site_size(site: Path) -> tuple[int, int]:
    sizes = [p.stat().st_size for p in site.rglob("*") if p.is_file()]
    return sum(sizes), len(sizes)


def _build(registry: Path, site: Path, resamples: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one build."""
    cpu, wall = time.process_time(), time.perf_counter()
    summary = build_leaderboard(registry, site, catalog=TaskCatalog.default(),
                                n_resamples=resamples)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"  built {summary.entries} entries: {summary.rendered} entry pages rendered, "
          f"{summary.reused} reused")
    return cpu, wall


def _row(name: str, value: float, unit: str, bound: float | None) -> str:
    ratio = f"{value / bound:8.3f}" if bound else f"{'':>8}"
    shown = f"{bound:g} {unit}" if bound else ""
    return f"{name:<34} {value:>14.4g} {unit:<6} {shown:>14} {ratio}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=RANK_RESAMPLES)
    args = parser.parse_args()
    n = args.entries
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        ids = synthetic_registry(root / "registry", n, artifacts=True, n_items=N_ITEMS,
                                 history=HISTORY)
        print(f"synthetic registry of {n} entries in {time.perf_counter() - start:.0f} s")
        site = root / "site"
        cpu, wall = _build(root / "registry", site, args.resamples)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
        size, n_files = _site_size(site)
        pages = [(site / page_name(i)) for i in ids]
        largest = max((p.stat().st_size, p.name) for p in pages if p.is_file())
        # the changed entries' results are rewritten (other values: another seed)
        changed = max(1, min(args.changed, n))
        synthetic_registry(root / "registry", changed, seed=99, artifacts=True,
                           n_items=N_ITEMS, history=HISTORY)
        cpu2, _ = _build(root / "registry", site, args.resamples)
        data = (site / INDEX_FILE).read_bytes()
        tracemalloc.start()
        parse = time.perf_counter()
        index = parse_index(data, str(site / INDEX_FILE))
        parse = time.perf_counter() - parse
        parse_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    print(f"\n{'measure':<34} {'value':>14} {'unit':<6} {'bound':>14} {'ratio':>8}")
    print(_row("build CPU", cpu, "s", None))
    print(_row("build CPU per entry", cpu / n, "s", CPU_PER_ENTRY_S))
    print(_row("build wall", wall, "s", None))
    print(_row("peak RSS (whole process)", rss_mb, "MB", None))
    print(_row("site size", size / 1e6, "MB", SITE_BYTES / 1e6))
    print(_row("site files", n_files, "", None))
    print(_row("site size per entry", size / n / 1e3, "KB", None))
    print(_row(f"largest entry page ({largest[1][:20]}…)", largest[0] / 1e3, "KB",
               PAGE_BYTES / 1e3))
    print(_row(f"incremental build CPU ({changed} changed)", cpu2, "s", cpu))
    print(_row(f"registry.json ({len(index.entries)} entries)", len(data) / 1e6, "MB", None))
    print(_row("registry.json parse", parse, "s", None))
    print(_row("registry.json parse, peak allocated", parse_mb, "MB", None))
    print(f"\n{n} entries, {args.resamples} rank resamples, results of {N_ITEMS} items x "
          f"{HISTORY} records; ratio = value / bound (the incremental build's bound is the "
          "full build)")


if __name__ == "__main__":
    main()
