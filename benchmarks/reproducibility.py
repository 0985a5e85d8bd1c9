"""The spread of every stored number across thread counts, batch budgets, caches and kernels.

    python benchmarks/reproducibility.py [--artifact DIR --task ID]

Runs ``probebench submit`` of one reference probe under each condition below (each in
its own process, so the thread count is set before torch starts) and compares every
number of submission.json outside the timing and run blocks with the baseline run
(1 thread, the default 4,096-token budget, cold cache). Prints, per condition, whether
the file is byte-identical, the largest absolute difference of any number, and how many
numbers differ at all. The figures behind METHODOLOGY.md's reproducibility contract.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONDITIONS = [  # name, threads, batch tokens, cache, environment
    ("baseline: 1 thread, 4096 tokens, cold", 1, 4096, False, {}),
    ("2 threads", 2, 4096, False, {}),
    ("4 threads", 4, 4096, False, {}),
    ("batch budget 1024 tokens", 1, 1024, False, {}),
    ("batch budget 16384 tokens", 1, 16384, False, {}),
    ("cache written (cold)", 1, 4096, True, {}),
    ("cache read (warm)", 1, 4096, True, {}),
    ("second run, same settings", 1, 4096, False, {}),
    # another kernel set, as another CPU of the same name runs (on an AVX2-only host the
    # same kernels as the baseline: identical there)
    ("AVX2 kernels (ATEN_CPU_CAPABILITY=avx2)", 1, 4096, False,
     {"ATEN_CPU_CAPABILITY": "avx2"}),
]


def leaves(doc: Any, path: str = "") -> dict[str, float]:
    if isinstance(doc, dict):
        return {k: v for key, val in doc.items() for k, v in leaves(val, f"{path}.{key}").items()}
    if isinstance(doc, list):
        return {k: v for i, val in enumerate(doc) for k, v in leaves(val, f"{path}[{i}]").items()}
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        return {path: float(doc)}
    return {}


def run(artifact: Path, task: str, out: Path, threads: int, tokens: int, cache: bool,
        home: Path, extra: dict[str, str]) -> dict[str, Any]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           **extra}
    if cache:
        env["PROBEBENCH_ACTIVATION_CACHE"] = str(home)
    cmd = [sys.executable, "-m", "probebench", "submit", str(artifact), "--tasks", task,
           "--out", str(out), "--report", str(out.with_suffix(".md")), "--quiet",
           "--batch-tokens", str(tokens), "--repo", str(ROOT)]
    if not cache:
        cmd.append("--no-cache")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    doc: dict[str, Any] = json.loads(out.read_text())
    doc.pop("timing", None)
    doc.pop("run", None)
    return doc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--artifact", type=Path, default=ROOT / "registry/artifacts/"
                        "verb-grammar-mlp-smollm2-135m-l20-v1")
    parser.add_argument("--task", default="verb_grammar")
    args = parser.parse_args()
    print(f"{args.artifact.name} on {args.task}, against the first condition below")
    print("| condition | identical | max abs difference | numbers that differ |")
    print("| --- | --- | ---: | ---: |", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        base: tuple[str, dict[str, float]] | None = None
        for i, (name, threads, tokens, cache, extra) in enumerate(CONDITIONS):
            doc = run(args.artifact, args.task, Path(tmp) / f"{i}.json", threads, tokens,
                      cache, Path(tmp) / "cache", extra)
            text = json.dumps(doc, sort_keys=True)
            if base is None:
                base = (text, leaves(doc))
                row = (name, "-", "-", f"({len(base[1])} numbers)")
            else:
                a, b = base[1], leaves(doc)
                diffs = [abs(a[k] - b[k]) for k in a if k in b and a[k] != b[k]]
                row = (name, "yes" if text == base[0] else "no",
                       f"{max(diffs):.2e}" if diffs else "0", str(len(diffs)))
            # one row per condition as it finishes: a long run stopped early keeps its rows
            print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
