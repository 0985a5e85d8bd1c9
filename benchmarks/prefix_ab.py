"""The shared prefix of the distribution-shift pass, this tree against an earlier commit's
``run_extraction`` (default 93e649d: a deep copy of the prefix's whole 30-block cache,
repeated for every row of every batch), in one process, alternating, on the same loaded
SmolLM2 (``20:token_avg``, the verb-grammar test prompts after the fixed 690-token
context, no cache). Where this tree reads the prefix through shared prefix attention
(``probebench.models.prefix_attention``) the two differ by float rounding: the table
says whether they give the same bits and whether they agree within the float32 contract
(``atol=1e-4``, ``rtol=1e-4``). ``benchmarks/shift.py`` times the shared path against the
plain one and against the activations stage.

    python benchmarks/prefix_ab.py            # 134 prompts and 8 prompts, 3 rounds
    python benchmarks/prefix_ab.py --rev HEAD~5
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _module_at(rev: str) -> Any:
    """``probebench.models.activations`` as it was at ``rev`` (imported beside today's)."""
    source = subprocess.run(["git", "show", f"{rev}:probebench/models/activations.py"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "activations_then.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("probebench.models.activations_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    import numpy as np

    from probebench.evaluation.session import CONTEXT_FILE
    from probebench.models import Site, load_model
    from probebench.models import activations as now
    from probebench.tasks.catalog import TaskCatalog

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="93e649d")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    then = _module_at(args.rev)
    lm = load_model("smollm2-135m", progress=False)
    prompts = [p for item in TaskCatalog.default().load("verb_grammar").test
               for p in item.prompts]
    prefix = CONTEXT_FILE.read_text("utf-8")
    site = Site(20, "token_avg")
    print(f"{'prompts':>8} {args.rev + ' (median)':>18} {'this tree (median)':>19} "
          f"{'speed-up':>9} {'same bits':>10} {'within':>7}")
    for n in (134, 8):
        times: dict[str, list[float]] = {"then": [], "now": []}
        out: dict[str, Any] = {}
        for _ in range(args.rounds):
            for name, module in (("now", now), ("then", then)):
                start = time.perf_counter()
                out[name] = module.run_extraction(lm, prompts[:n], [site], prefix=prefix,
                                                  progress=False)[site]
                times[name].append(time.perf_counter() - start)
        a, b = statistics.median(times["then"]), statistics.median(times["now"])
        same = bool(np.array_equal(out["then"], out["now"]))
        close = bool(np.allclose(out["now"], out["then"], atol=1e-4, rtol=1e-4))
        print(f"{n:>8} {a:>17.2f}s {b:>18.2f}s {a / b:>8.2f}x {same!s:>10} {close!s:>7}")


if __name__ == "__main__":
    main()
