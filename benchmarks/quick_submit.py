"""``probebench submit --limit 30`` of the reference MLP, every stage against ``--quick``.

Each run is a whole process (``probebench submit`` in a subprocess: interpreter start,
imports and model loading included) on its own empty activation cache (cold), with the
registry's guard and published baselines as a user gets them:

1. **full**: ``submit --limit 30`` (every stage: activations, the distribution-shift pass,
   the surprisal baseline, the random-init control, the task baselines, selectivity,
   latency, and the generalisation block);
2. **quick**: ``submit --limit 30 --quick`` (the activations stage only: test AUROC with
   its CI, ECE, slices and the published baselines where they apply).

The table reads each submission.json's ``timing.stages`` (wall seconds and the process's
CPU seconds per stage, forward passes), then each process's wall and CPU seconds
(``resource.getrusage`` of the child). The baseline the ratios are against is the quick
run's **activations stage** (wall seconds): the target is quick process / activations
stage <= 3x. The quick run must give the full run's AUROC (checked).

    python benchmarks/quick_submit.py            # a few minutes on 2 cores
    python benchmarks/quick_submit.py --limit 10 --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MLP = ROOT / "registry" / "artifacts" / "verb-grammar-mlp-smollm2-135m-l20-v1"
TASK = "verb_grammar"
#: quick process wall seconds over the quick run's activations stage
TARGET = 3.0


def run(out: Path, cache: Path, device: str, limit: int, *extra: str
        ) -> tuple[float, float, dict[str, Any]]:
    """One cold ``probebench submit``: (wall s, CPU s of the child, submission.json)."""
    args = [sys.executable, "-m", "probebench", "submit", str(MLP), "--tasks", TASK,
            "--limit", str(limit), "--out", str(out), "--report", str(out.with_suffix(".md")),
            "--quiet", "--device", device, *extra]
    env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(args[2:])} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out.read_text("utf-8"))


def table(full: dict[str, Any], quick: dict[str, Any], base: float) -> str:
    f, q = full["timing"]["stages"], quick["timing"]["stages"]
    lines = ["| stage | full s | full CPU s | full passes | quick s | quick CPU s | "
             "quick passes | full s / baseline |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def cell(stage: dict[str, Any], key: str) -> str:
        value = stage.get(key)
        return "-" if value is None else f"{value:.1f}"

    for name in dict.fromkeys([*f, *q]):
        a, b = f.get(name, {}), q.get(name, {})
        lines.append(f"| {name} | {cell(a, 'seconds')} | {cell(a, 'cpu_seconds')} | "
                     f"{a.get('passes', 0)} | {cell(b, 'seconds')} | "
                     f"{cell(b, 'cpu_seconds')} | {b.get('passes', 0)} | "
                     f"{a.get('seconds', 0.0) / base:.2f}x |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--limit", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-quick-") as tmp_name:
        tmp = Path(tmp_name)
        full_wall, full_cpu, full = run(tmp / "full.json", tmp / "cache-full", args.device,
                                        args.limit)
        quick_wall, quick_cpu, quick = run(tmp / "quick.json", tmp / "cache-quick",
                                           args.device, args.limit, "--quick")
    same = [t["auroc"] for t in full["tasks"]] == [t["auroc"] for t in quick["tasks"]]
    base = quick["timing"]["stages"]["activations"]["seconds"]
    print(f"submit --limit {args.limit} of {MLP.name} on {TASK}, cold, device "
          f"{args.device}; baseline: the quick run's activations stage, {base:.1f} s\n")
    print(table(full, quick, base))
    print()
    print("| run | process wall s | process CPU s | wall / baseline |")
    print("| --- | ---: | ---: | ---: |")
    for name, wall, cpu in (("full", full_wall, full_cpu), ("quick", quick_wall, quick_cpu)):
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {wall / base:.2f}x |")
    ratio = quick_wall / base
    print(f"\nquick / activations stage: {ratio:.2f}x (target <= {TARGET:.0f}x: "
          f"{'met' if ratio <= TARGET else 'NOT met'}); quick / full wall: "
          f"{quick_wall / full_wall:.2f}; same AUROC: {same}")
    print(f"skipped in the quick run: {', '.join(quick['stages_skipped'])}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
