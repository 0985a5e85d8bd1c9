"""Rerun the causal test of reference entries with more random control directions than
the stored records use, and say whether their verdicts hold (maintainers' tool).

    python tools/causal_controls.py --controls 100 \
        --only honesty-instructed-smollm2-135m-l21-v1 \
        --only honesty-instructed-massmean-smollm2-135m-l21-v1

The stored ``_causal.json`` records (``registry evaluate --causal``) hold 16 controls, so
a control percentile of 100 says only that the probe's direction beat 16 random ones (a
random direction comes out on top one time in 17). This reruns ``causal_test`` with the
records' seed, alphas and items and ``--controls N``: the first 16 controls are the
records' own (the control directions are drawn one after another from the seed), which
the tool checks against the stored record, and the rest extend them. Nothing is stored;
the table is printed (markdown) for METHODOLOGY's paragraph on the causal column.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: how close a rerun's first controls must be to the stored ones (``CAUSAL_TOLERANCE``)
TOLERANCE = 1e-4


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from probebench.causal.effect import causal_test
    from probebench.models.loading import load_model
    from probebench.probe import load_probe
    from probebench.registry.store import latest_causal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--controls", type=int, default=100,
                        help="random control directions per entry (default: 100)")
    parser.add_argument("--only", action="append", required=True, metavar="ENTRY",
                        help="a reference entry's name, as under registry/artifacts/ "
                             "(repeat for several)")
    args = parser.parse_args(argv)
    print("| entry | task | effect [95% CI] | controls | largest control | control "
          "percentile | controls at or above the effect | first stored controls agree | "
          "seconds |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |")
    lm = None
    for entry in args.only:
        probe = load_probe(ROOT / "registry" / "artifacts" / entry)
        task = next(iter(probe.meta.reported_metrics))
        stored_blocks = latest_causal(ROOT / "registry", f"probebench/{entry}")
        if task not in stored_blocks:
            raise SystemExit(f"probebench/{entry}: no stored causal test on {task} "
                             "(tools/build_reference.py --causal-only stores one)")
        stored = stored_blocks[task]
        if lm is None or lm.identity.name != probe.model:
            lm = load_model(probe.model, device="cpu", progress=False)
        start = time.perf_counter()
        result = causal_test(probe, task=task, lm=lm, n_controls=args.controls,
                             seed=stored.seed, max_items=int(stored.items["max_items"]),
                             alphas=[float(a) for a in stored.alphas])
        seconds = time.perf_counter() - start
        controls = np.asarray(result.controls)
        old = np.asarray(stored.controls, dtype=float)
        k = min(len(old), len(controls))
        agree = bool(np.allclose(controls[:k], old[:k], rtol=0, atol=TOLERANCE))
        assert result.effect is not None and result.ci is not None
        above = int(np.sum(controls >= result.effect))
        print(f"| `{entry}` | {task} | {result.effect:.4f} [{result.ci[0]:.4f}, "
              f"{result.ci[1]:.4f}] | {len(controls)} | {controls.max():.4f} | "
              f"{result.control_percentile:.1f} | {above} | "
              f"{'yes' if agree else 'NO'} ({k}, max diff "
              f"{np.abs(controls[:k] - old[:k]).max():.1e}) | {seconds:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
