"""Leaderboard build at scale: a synthetic registry of N entries (default 10,000) with
results of a real stored result's size; 90% of the artifacts are hosted on the Hugging Face
Hub (``--hosted``, as most of a real registry's will be: the mirror links them, copies
nothing), the others are folders in the repository, which the mirror stores.

    python benchmarks/leaderboard_scale.py [--entries 10000] [--changed 10] [--resamples 200]

Prints each figure beside its bound, with the ratio value / bound (below 1: within it):
the build's CPU seconds per entry (<= 0.05), its peak RSS (<= 2 GB), the site's size
(<= 1 GB; artifacts hosted elsewhere are not in it), the largest entry page with the data
it loads (its rank script, its generated files: <= 100 KB), the largest family and task
page with its data script (<= 1 MB each), the registry.json parse (CPU time, the best of
three, and memory, bounded by ``parse_index``'s documented 0.15 ms and 20 KB per entry;
its wall time is printed beside it), and an incremental build
after ``--changed`` entries' results are rewritten: the entry pages it rendered (bound: the
changed ones) and its CPU time against the full build's.

``--stages`` measures instead the peak resident memory of each build stage (select, score,
rank, render: the Linux high-water mark, reset before each stage) on the same synthetic
registry, with each stage's growth per entry: run it at N = 1,000, 2,000 and 4,000 and the
per-entry figures should stay flat (the rank bootstrap once grew with entries squared).

After the bounds, a table of what the site's bytes are, part by part (per entry), with the
stored results beside their size as the repository's files (the baseline: the site stores
them compact, ``probebench.leaderboard.files.compact_json``; ratio = site / repository).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probebench.leaderboard.build import (
    INDEX_ROWS,
    BuildOptions,
    build_leaderboard,
    page_name,
    rank_entries,
    rank_shard,
    render_site,
    score_entries,
    select_entries,
)
from probebench.leaderboard.files import slug
from probebench.leaderboard.probescore import DEFAULT_SPEC, load_probescore_spec
from probebench.leaderboard.ranks import RANK_RESAMPLES
from probebench.registry.mirror import INDEX_FILE, parse_index
from probebench.registry.store import result_path
from probebench.tasks.catalog import TaskCatalog
from tests.registry_fixture import synthetic_registry

#: the bounds the site is held to
CPU_PER_ENTRY_S = 0.05
RSS_BYTES = 2e9
SITE_BYTES = 1e9
PAGE_BYTES = 100_000
LIST_PAGE_BYTES = 1e6
#: parse_index's documented cost: 15 s and 1.9 GiB for 100,000 entries
PARSE_S_PER_ENTRY = 15 / 100_000
PARSE_BYTES_PER_ENTRY = 20_000
#: a synthetic result of a real stored result's size: 150 items, three records (~100 KB)
N_ITEMS, HISTORY = 150, 3
#: the share of artifacts hosted on the hub (linked by the mirror, not copied)
HOSTED = 0.9


def _site_size(site: Path) -> tuple[int, int]:
    sizes = [p.stat().st_size for p in site.rglob("*") if p.is_file()]
    return sum(sizes), len(sizes)


def _build(registry: Path, site: Path, resamples: int) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, entry pages rendered) of one build."""
    cpu, wall = time.process_time(), time.perf_counter()
    summary = build_leaderboard(registry, site, catalog=TaskCatalog.default(),
                                n_resamples=resamples)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"  built {summary.entries} entries: {summary.rendered} entry pages rendered, "
          f"{summary.reused} reused")
    return cpu, wall, summary.rendered


def _size_parts(site: Path, registry: Path) -> list[tuple[str, int, int | None]]:
    """What the site's bytes are: (part, bytes, the same files as the repository's bytes
    where they differ: the stored results, which the site stores compact)."""
    index = json.loads((site / INDEX_FILE).read_bytes())
    results = {f"registry/results/{e['id']}/{t}.json" for e in index["entries"]
               for t in e["results"]}
    result_blobs = {index["files"][p]["sha256"] for p in results}
    stored = sum(index["files"][p]["size"] for p in results)
    as_repo = sum(result_path(registry, p.split("/", 2)[2].rpartition("/")[0],
                              p.rpartition("/")[2].removesuffix(".json")).stat().st_size
                  for p in results)
    blobs = [p for p in (site / "registry" / "blobs").iterdir() if p.is_file()]
    other_blobs = sum(p.stat().st_size for p in blobs if p.name not in result_blobs)
    pages = sum(p.stat().st_size for p in (site / "entries").glob("*.html"))
    lists = sum(p.stat().st_size for d in ("families", "tasks") for p in (site / d).iterdir())
    downloads = sum((site / n).stat().st_size for n in ("leaderboard.json", "leaderboard.csv"))
    whole = _site_size(site)[0]
    parts: list[tuple[str, int, int | None]] = [
        ("stored results (blobs)", stored, as_repo),
        ("other blobs (artifacts, entries' YAML, ...)", other_blobs, None),
        ("entry pages", pages, None), ("family and task pages with data", lists, None),
        ("leaderboard.json and .csv", downloads, None),
        ("registry.json", (site / INDEX_FILE).stat().st_size, None)]
    parts.append(("everything else", whole - sum(b for _, b, _ in parts), None))
    return parts


def _with_data(site: Path, page: Path) -> int:
    """A family or task page's bytes with its entry-list data script."""
    data = page.with_name(page.name.removesuffix(".html") + ".data.js")
    return page.stat().st_size + (data.stat().st_size if data.is_file() else 0)


def _row(name: str, value: float, unit: str, bound: float | None) -> str:
    ratio = f"{value / bound:8.3f}" if bound else f"{'':>8}"
    shown = f"{bound:g} {unit}" if bound else ""
    return f"{name:<44} {value:>12.4g} {unit:<6} {shown:>14} {ratio}"


def _memory() -> tuple[float, float]:
    """(resident, peak resident since the last ``_reset_peak``) in bytes (Linux)."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            found[line.split(":")[0]] = float(line.split()[1]) * 1e3  # kB, as ru_maxrss
    return found["VmRSS"], found["VmHWM"]


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS


def _stages(registry: Path, site: Path, n: int, resamples: int) -> None:
    """Each build stage's peak resident memory, and its growth per entry."""
    opts = BuildOptions(registry, TaskCatalog.default(), load_probescore_spec(DEFAULT_SPEC),
                        resamples, 0, None, INDEX_ROWS)
    print(f"\n{'stage':<10} {'CPU s':>8} {'RSS before':>11} {'peak':>9} {'after':>9} "
          f"{'peak - before':>14} {'per entry':>10}")
    held: dict[str, Any] = {}
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("select", lambda: select_entries(registry, opts.catalog)),
        ("score", lambda: score_entries(registry, held["select"], opts.spec)),
        ("rank", lambda: rank_entries(held["select"], held["score"], opts.spec,
                                      n_resamples=resamples, seed=0)),
        ("render", lambda: render_site(site, opts, held["select"], held["score"],
                                       held["rank"]))]
    highest = 0.0
    for name, step in steps:
        _reset_peak()  # (the kernel's getrusage maximum is reset with it)
        before = _memory()[0]
        cpu = time.process_time()
        held[name] = step()
        cpu = time.process_time() - cpu
        after, peak = _memory()
        highest = max(highest, peak)
        print(f"{name:<10} {cpu:>8.1f} {before / 1e6:>8.0f} MB {peak / 1e6:>6.0f} MB "
              f"{after / 1e6:>6.0f} MB {(peak - before) / 1e6:>11.0f} MB "
              f"{(peak - before) / n / 1e3:>7.1f} KB")
    print(f"\npeak RSS of the build (the largest stage peak): {highest / 1e6:.0f} MB "
          f"({n} entries, {resamples} rank resamples)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=RANK_RESAMPLES)
    parser.add_argument("--hosted", type=float, default=HOSTED,
                        help="share of the artifacts on the hub (default: %(default)s)")
    parser.add_argument("--stages", action="store_true",
                        help="measure each build stage's peak memory instead")
    args = parser.parse_args()
    n = args.entries
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        ids = synthetic_registry(root / "registry", n, artifacts=True, n_items=N_ITEMS,
                                 history=HISTORY, hosted_share=args.hosted)
        print(f"synthetic registry of {n} entries in {time.perf_counter() - start:.0f} s")
        if args.stages:
            _stages(root / "registry", root / "stages", n, args.resamples)
            return
        site = root / "site"
        cpu, wall, _ = _build(root / "registry", site, args.resamples)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1e3
        size, n_files = _site_size(site)
        parts = _size_parts(site, root / "registry")
        pages = []
        for i in ids:
            page = site / page_name(i)
            if page.is_file():
                own = site / "files" / slug(i)
                generated = sum(p.stat().st_size for p in own.rglob("*") if p.is_file())
                pages.append((page.stat().st_size + (site / rank_shard(i)).stat().st_size
                              + generated, page.name))
        largest = max(pages)
        family = max((_with_data(site, p), p.name) for p in (site / "families").glob("*.html"))
        task = max((_with_data(site, p), p.name) for p in (site / "tasks").glob("*.html"))
        # the changed entries' results are rewritten (other values: another seed)
        changed = max(1, min(args.changed, n))
        synthetic_registry(root / "registry", changed, seed=99, artifacts=True,
                           n_items=N_ITEMS, history=HISTORY, hosted_share=args.hosted)
        cpu2, _, rendered = _build(root / "registry", site, args.resamples)
        data = (site / INDEX_FILE).read_bytes()
        index = parse_index(data, str(site / INDEX_FILE))
        parse_cpu, parse = [], []  # the best of three (the CPU is shared under load)
        for _ in range(3):
            cpu0, wall0 = time.process_time(), time.perf_counter()
            parse_index(data, str(site / INDEX_FILE))
            parse_cpu.append(time.process_time() - cpu0)
            parse.append(time.perf_counter() - wall0)
        tracemalloc.start()
        parse_index(data, str(site / INDEX_FILE))
        parse_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    linked = sum(e.artifact_url is not None for e in index.entries)
    print(f"\n{'measure':<44} {'value':>12} {'unit':<6} {'bound':>14} {'ratio':>8}")
    print(_row("build CPU", cpu, "s", None))
    print(_row("build CPU per entry", cpu / n, "s", CPU_PER_ENTRY_S))
    print(_row("build wall", wall, "s", None))
    print(_row("peak RSS (whole process)", rss / 1e6, "MB", RSS_BYTES / 1e6))
    print(_row("site size (hosted artifacts not in it)", size / 1e6, "MB", SITE_BYTES / 1e6))
    print(_row("site files", n_files, "", None))
    print(_row("site size per entry", size / n / 1e3, "KB", None))
    print(_row(f"largest entry page + data ({largest[1][:14]}…)", largest[0] / 1e3, "KB",
               PAGE_BYTES / 1e3))
    print(_row(f"largest family page + data ({family[1][:12]}…)", family[0] / 1e6, "MB",
               LIST_PAGE_BYTES / 1e6))
    print(_row(f"largest task page + data ({task[1][:14]}…)", task[0] / 1e6, "MB",
               LIST_PAGE_BYTES / 1e6))
    print(_row(f"incremental: entry pages rendered ({changed} changed)", rendered, "",
               changed))
    print(_row("incremental build CPU (bound: full build)", cpu2, "s", cpu))
    print(_row(f"registry.json ({len(index.entries)} entries, {linked} linked)",
               len(data) / 1e6, "MB", None))
    print(_row("registry.json parse, CPU", min(parse_cpu), "s", PARSE_S_PER_ENTRY * n))
    print(_row("registry.json parse, wall", min(parse), "s", None))
    print(_row("registry.json parse, peak allocated", parse_bytes / 1e6, "MB",
               PARSE_BYTES_PER_ENTRY * n / 1e6))
    print(f"\n{'site part':<44} {'MB':>9} {'per entry':>10} {'as the repository':>18} "
          f"{'ratio':>6}")
    for name, part, before in parts:
        shown = f"{before / 1e6:>15.1f} MB {part / before:>6.3f}" if before else ""
        print(f"{name:<44} {part / 1e6:>9.1f} {part / n / 1e3:>7.1f} KB {shown}")
    print(f"\n{n} entries ({args.hosted:.0%} of the artifacts on the hub, linked, not "
          f"copied), {args.resamples} rank resamples, results of {N_ITEMS} items x "
          f"{HISTORY} records; ratio = value / bound")


if __name__ == "__main__":
    main()
