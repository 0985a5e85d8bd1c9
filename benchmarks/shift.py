"""The distribution-shift pass: the verb-grammar test prompts (268) read after the fixed
690-token context, SmolLM2 at 20:token_avg, no activation cache.

Baseline: batches sized by the prompts' own tokens only (up to 64 rows, as before the
prefix counted against the budget), emulated with a budget that leaves room for 64
prefixed rows. probebench now counts the shared prefix in every row's length, so a
4,096-token budget holds about 5 prefixed rows. Peak RSS is measured in a fresh
process per run.

    python benchmarks/shift.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN = """
import resource, sys, time
from probebench.evaluation.session import CONTEXT_FILE
from probebench.models import Site, load_model
from probebench.models.activations import run_extraction
from probebench.tasks.catalog import TaskCatalog

lm = load_model("smollm2-135m", progress=False)
prompts = [p for item in TaskCatalog.default().load("verb_grammar").test for p in item.prompts]
start = time.perf_counter()
run_extraction(lm, prompts, [Site(20, "token_avg")], prefix=CONTEXT_FILE.read_text(),
               batch_tokens=int(sys.argv[1]), progress=False)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(batch_tokens: int) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", RUN, str(batch_tokens)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]) / 1024 / 1024


def main() -> None:
    rows = [("prompt tokens only, 64 rows (baseline)", 4096 + 64 * 730),
            ("prefix counted, budget 4,096 (probebench)", 4096)]
    results = [(name, *measure(budget)) for name, budget in rows]
    base = results[0][1]
    print(f"{'batching':<44} {'wall':>7} {'speed-up':>9} {'peak RSS':>9}")
    for name, wall, rss in results:
        print(f"{name:<44} {wall:>6.1f}s {base / wall:>8.2f}x {rss:>7.2f} GB")


if __name__ == "__main__":
    main()
