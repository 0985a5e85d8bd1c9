"""How far reduced precision moves the headline metrics: the figures behind the
precision policy's tolerances (``probebench.evaluation.precision.TOLERANCE``).

    python benchmarks/precision.py [--dtype bfloat16] [--device auto] [--entries ID ...]

Re-evaluates reference entries of the registry (every live entry by default, or the
ones named) with the model in ``--dtype`` and compares each task's headline metrics
with the entry's stored float32 result. Nothing is stored. Prints, per (entry, task),
the difference of every metric, the largest change of any probability and how many
decisions (probability >= 0.5) flipped; then the largest difference per metric over
all of them next to the tolerance in force, and whether every result was accepted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from probebench.evaluation.precision import REFERENCE_DTYPE, TOLERANCE, precision_gaps
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.registry.entry import entries_with_status
    from probebench.registry.guards import RegistryGuards
    from probebench.registry.store import latest_of, read_history, result_path
    from probebench.runs.evaluate import evaluate_entry
    from probebench.tasks.catalog import TaskCatalog

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--entries", nargs="*", default=None, metavar="ID")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()

    registry = ROOT / "registry"
    catalog = TaskCatalog.default()
    ids = args.entries or [e.id for _, e in entries_with_status(registry, "live")]
    session = Session(catalog, SubmitOptions(
        device=args.device, dtype=args.dtype, bootstrap=args.bootstrap, cache=False,
        progress=False, guards=RegistryGuards(registry, ROOT, catalog=catalog)))
    metrics = list(TOLERANCE)
    worst = dict.fromkeys(metrics, 0.0)
    accepted = True
    print(f"{args.dtype} against the stored {REFERENCE_DTYPE} results "
          f"(device {args.device}, {args.bootstrap} bootstrap resamples)\n")
    header = ["entry", "task", *metrics, "max |dp|", "flipped", "s"]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for entry_id in ids:
        start = time.perf_counter()
        done = evaluate_entry(entry_id, registry, ROOT, session, store=False)
        seconds = time.perf_counter() - start
        for task in done.submission.tasks:
            reference = latest_of(read_history(result_path(registry, entry_id, task.id)),
                                  REFERENCE_DTYPE)
            if reference is None:
                continue
            gaps = precision_gaps(reference.result, task)
            for name, gap in gaps.items():
                worst[name] = max(worst[name], gap)
                accepted &= gap <= TOLERANCE[name]
            old = np.array(reference.result.predictions.probs)
            new = np.array(task.predictions.probs)
            flipped = int(((old >= 0.5) != (new >= 0.5)).sum())
            cells = [f"{gaps[m]:.4f}" if m in gaps else "n/a" for m in metrics]
            print(" | ".join([entry_id.split("/")[-1], task.id, *cells,
                              f"{np.abs(new - old).max():.4f}", f"{flipped}/{len(new)}",
                              f"{seconds:.0f}"]), flush=True)
    print("\nlargest difference per metric, and the tolerance in force:")
    for name in metrics:
        print(f"  {name:<16} {worst[name]:.4f}   tolerance {TOLERANCE[name]}")
    print("every result accepted" if accepted else "SOME RESULT IS BEYOND A TOLERANCE")
    return 0 if accepted else 1


if __name__ == "__main__":
    raise SystemExit(main())
