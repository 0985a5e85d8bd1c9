"""The causal test's cost, against one extraction pass over the same prompts.

Baseline ("extraction"): ``run_extraction`` of the probe's site over the task's test
prompts (the forward stopped after the site's layer; the cost of reading the probe once).

probebench: one (direction, alpha) evaluation of the causal test over the same items
(``SteeringRunner.log_probs``: the blocks from the site's layer on, the final norm, and
the LM head at the read positions only, on the cached lower layers); the lower pass
(run once); and the whole test of one reference probe with the defaults
(``causal_test``: 7 alphas, 16 controls, 200 items), timed once. Where the runner
splits the rows at the first steered position (``SPLIT_MODEL_TYPES``), the once-per-test
pass also runs the blocks above the site unsteered and keeps their keys and values.

    python benchmarks/causal.py                       # truth_cities reference probe
    python benchmarks/causal.py --items 64 --no-full  # the per-pass ratio alone

The per-pass ratio must be at most 1; the whole test's target is 10 minutes on 2 idle
cores. Times are wall-clock seconds; run it on an idle machine for figures to publish.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ARTIFACT = "registry/artifacts/truth-cities-smollm2-135m-l21-v1"


def _best(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from probebench.causal.effect import causal_test, oriented_direction
    from probebench.causal.readouts import build_plan, task_readout
    from probebench.causal.steer import SteeringRunner, hf_stack
    from probebench.models.activations import pad_id_of, run_extraction
    from probebench.models.loading import load_model
    from probebench.probe import load_probe
    from probebench.tasks.catalog import TaskCatalog

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact", default=ARTIFACT)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-full", action="store_true", help="skip the whole test")
    args = parser.parse_args(argv)

    probe = load_probe(Path(args.artifact))
    task = next(iter(probe.meta.reported_metrics))
    catalog = TaskCatalog.default()
    readout = task_readout(catalog.spec(task))
    assert readout is not None, f"task {task} declares no readout"
    lm = load_model(probe.model, device="cpu", progress=False)
    items = catalog.load(task).test[:args.items]
    plan = build_plan(lm, items, readout, probe.site)
    prompts = plan.prompts
    u = oriented_direction(probe)

    extraction = _best(lambda: run_extraction(lm, prompts, [probe.site], progress=False),
                       args.repeats)
    start = time.perf_counter()
    runner = SteeringRunner(hf_stack(lm, probe.site.layer), plan.rows, pad_id=pad_id_of(lm))
    lower = time.perf_counter() - start
    one_pass = _best(lambda: runner.log_probs(add=2.0 * u), args.repeats)
    rows = [("extraction pass (baseline)", extraction),
            ("lower pass (+ unsteered upper, kept), once", lower),
            ("one (direction, alpha) evaluation", one_pass)]
    if not args.no_full:
        start = time.perf_counter()
        result = causal_test(probe, lm=lm, max_items=args.items)
        rows.append((f"whole test, defaults ({int(result.cost['upper_passes'])} passes)",
                     time.perf_counter() - start))
    print(f"probe {probe.id} at {probe.site}, task {task}: {len(plan.units)} units, "
          f"{len(prompts)} prompts, torch threads {torch.get_num_threads()}")
    print(f"{'stage':<46} {'seconds':>9} {'x extraction':>13}")
    for name, seconds in rows:
        print(f"{name:<46} {seconds:>9.3f} {seconds / extraction:>13.3f}")
    ratio = one_pass / extraction
    print(f"per-pass ratio {ratio:.3f} ({'ok' if ratio <= 1 else 'ABOVE 1'}); "
          f"np {np.__version__}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
