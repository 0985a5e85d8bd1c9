"""Re-evaluation cost against the number of live probes on one model.

    python benchmarks/reeval_scale.py [--probes 1 10 50] [--task ID]

Builds a scratch registry with N live entries on one task of the embedded SmolLM2, each
its own probe artifact at one of 20 sites (layers 30 down to 3 in steps of 3, so every N
reads the last layer; ``last_token`` and
``token_avg``), and times ``probebench reeval`` over it (activation cache off, so every
forward pass is paid). Per-(model, task) planning runs the model once and fans the
activations out to every probe, so the wall time should stay flat in N. The named
baseline is the one-pass-per-site plan issue 16 replaced (each site its own forward
pass), run on the same registry.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SITES = [(layer, position) for layer in range(30, 2, -3)
         for position in ("last_token", "token_avg")]


def build(root: Path, n: int, task: str) -> None:
    import yaml

    from probebench.artifact import manifest, scan
    from probebench.artifact.weights import sklearn_to_weights
    from probebench.registry.entry import entry_path
    from tests.artifacts import META, fit_probe, write_docs
    from tests.catalogs import copy_catalog

    copy_catalog(root)
    for k in range(n):
        layer, position = SITES[k % len(SITES)]
        folder = root / "registry/artifacts" / f"p{k}"
        probe, scaler, _ = fit_probe(seed=k)
        write_docs(folder, {**META, "layer": layer, "position": position})
        sklearn_to_weights(probe, scaler).save_native(folder)
        entry_id = f"bench/p{k}-smollm2-135m-l{layer}-v1"
        data = {"id": entry_id, "name": f"p{k}", "short_name": f"p{k}", "author": "B",
                "org": "bench", "category": "grammar", "probe_type": "linear",
                "model": "smollm2-135m", "layer": layer, "position": position,
                "artifact_url": f"registry/artifacts/p{k}",
                "artifact_sha256": manifest(scan(folder)).sha256,
                "reproducer_notebook": "train.ipynb", "license": "Apache-2.0",
                "release": "2026-11-01", "param_count": 577, "size_mb": 0.01,
                "tagline": "t", "description": "d", "status": "live", "tasks": [task]}
        path = entry_path(root / "registry", entry_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))


def one_pass_per_site(session: Any) -> None:
    """The replaced plan: each site of a unit costs its own forward pass."""
    whole = session.activations_at

    def per_site(model: str, key: str, prompts: Any, sites: Any,
                 prefix: str | None = None) -> Any:
        out = {}
        for site in sites:
            out.update(whole(model, key, prompts, [site], prefix))
        return out

    session.activations_at = per_site


def timed(root: Path, task: str, baseline: bool) -> tuple[float, int, int]:
    from probebench.evaluation.session import Session, SubmitOptions
    from probebench.runs.reeval import reeval
    from probebench.tasks.catalog import TaskCatalog

    catalog = TaskCatalog.for_repo(root)
    session = Session(catalog, SubmitOptions(cache=False, progress=False, bootstrap=200))
    session.lm("smollm2-135m")  # loading the model is not part of the comparison
    if baseline:
        one_pass_per_site(session)
    start = time.perf_counter()
    changes = reeval(root / "registry", root, root / "out", catalog=catalog, bootstrap=200,
                     session=session)
    assert not changes.failures, changes.failures
    return time.perf_counter() - start, changes.passes, len(changes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probes", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--task", default="blimp_determiner_noun_agreement_1")
    args = parser.parse_args()
    from probebench.tasks.catalog import TaskCatalog

    held = TaskCatalog.default().reeval_set(args.task)
    print(f"reeval of N live probes on {args.task} (holdout v{held.version}, "
          f"{len(held.data.test)} items), smollm2-135m on the CPU, cache off\n")
    print("| probes | sites | plan | forward passes | wall s | vs 1 probe |")
    print("| ---: | ---: | --- | ---: | ---: | ---: |")
    first: float | None = None
    for n in args.probes:
        scratch = Path(tempfile.mkdtemp(prefix="reeval-scale-"))
        try:
            build(scratch, n, args.task)
            sites = len({SITES[k % len(SITES)] for k in range(n)})
            runs = [("one pass per (model, task)", False)]
            if n > 1:
                runs.append(("baseline: one pass per site", True))
            for name, baseline in runs:
                seconds, passes, pairs = timed(scratch, args.task, baseline)
                assert pairs == n
                if first is None:
                    first = seconds
                print(f"| {n} | {sites} | {name} | {passes} | {seconds:.1f} | "
                      f"{seconds / first:.2f}x |", flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
