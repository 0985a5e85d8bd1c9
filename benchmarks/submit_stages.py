"""Where a ``probebench submit`` spends its time, cold and warm, beside the minimal work.

Each row is a whole process (``probebench ...`` in a subprocess: interpreter start,
imports and model loading included), on an activation cache that starts empty:

1. **minimal work** (the baseline): ``probebench extract --no-cache`` of every distinct
   prompt the submission's outputs need at the entry's site, extracted once: the
   union of the task's test, train and validation prompts;
2. **cold submit**: ``probebench submit`` of the reference verb-grammar MLP on
   ``verb_grammar`` (the registry's eval-awareness guard, no transfer targets, 1,000
   bootstrap resamples), nothing cached; the task's baselines at the entry's site are
   the registry's published record (``timing.baselines_published``);
3. **cold submit, baselines computed**: the same with ``--compute-baselines`` on another
   empty cache, as for a site whose baselines nobody has published yet (the random-init
   control and the surprisal pass run);
4. **warm submit**: the cold one again, everything cached;
5. **``--limit 20``**, cold then warm, for the MLP and for a linear reference entry.

The stage table reads each submission.json's ``timing.stages``: wall seconds, forward
passes and tokens per stage. Every warm run must give the cold run's submission.json
outside timing and provenance (checked).

    python benchmarks/submit_stages.py            # about 12 minutes on 2 cores
    python benchmarks/submit_stages.py --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MLP = ROOT / "registry" / "artifacts" / "verb-grammar-mlp-smollm2-135m-l20-v1"
LINEAR = ROOT / "registry" / "artifacts" / "verb-grammar-smollm2-135m-l20-v1"
TASK = "verb_grammar"
#: the must-show bounds: cold submit / minimal work, warm submit, a warm --limit 20
COLD_RATIO, WARM_SECONDS, LIMIT_SECONDS = 2.0, 15.0, 20.0


def cli() -> list[str]:
    return [sys.executable, "-m", "probebench"]


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(args[2:])} failed:\n{done.stderr[-2000:]}")
    return seconds


def union_prompts(out: Path) -> tuple[int, str]:
    """Every distinct prompt of the task's test, train and validation splits, as the
    JSONL ``probebench extract`` reads; (count, site)."""
    from probebench.artifact.meta import read_meta
    from probebench.evaluation.protocol import labelled_prompts, train_val_items
    from probebench.tasks.catalog import TaskCatalog

    meta = read_meta(MLP / "meta.yaml")
    data = TaskCatalog.default().load(TASK)
    train, val, _ = train_val_items(data)
    prompts = [p for item in data.test for p in item.prompts]
    prompts += labelled_prompts(train) + labelled_prompts(val)
    seen: dict[tuple[str, str], Any] = {}
    for p in prompts:
        seen.setdefault((p.text, json.dumps(p.spans, sort_keys=True)), p)
    with out.open("w", encoding="utf-8") as handle:
        for i, p in enumerate(seen.values()):
            handle.write(json.dumps({"id": f"p{i}", "text": p.text,
                                     "spans": {k: list(v) for k, v in p.spans.items()}})
                         + "\n")
    return len(seen), f"{meta.layer}:{meta.position}"


def submit(artifact: Path, out: Path, env: dict[str, str], device: str,
           limit: int | None = None, *extra: str) -> tuple[float, dict[str, Any]]:
    args = [*cli(), "submit", str(artifact), "--tasks", TASK, "--out", str(out),
            "--quiet", "--device", device, *extra]
    if limit is not None:
        args += ["--limit", str(limit)]
    seconds = timed(args, env)
    return seconds, json.loads(out.read_text("utf-8"))


def compared(result: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in result.items() if k not in ("timing", "run")},
                      sort_keys=True)


def stage_table(cold: dict[str, Any], computed: dict[str, Any], warm: dict[str, Any]) -> str:
    c, k, w = (r["timing"]["stages"] for r in (cold, computed, warm))
    lines = ["| stage | cold s | cold passes | cold tokens | cold, baselines computed s | "
             "passes | tokens | warm s | warm passes |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in dict.fromkeys([*k, *c, *w]):
        a, m, b = c.get(name, {}), k.get(name, {}), w.get(name, {})
        lines.append(f"| {name} | {a.get('seconds', 0):.1f} | {a.get('passes', 0)} | "
                     f"{a.get('tokens', 0):,} | {m.get('seconds', 0):.1f} | "
                     f"{m.get('passes', 0)} | {m.get('tokens', 0):,} | "
                     f"{b.get('seconds', 0):.1f} | {b.get('passes', 0)} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pb-stages-") as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(tmp / "cache")}
        n, site = union_prompts(tmp / "union.jsonl")
        extract_s = timed([*cli(), "extract", "--input", str(tmp / "union.jsonl"), "--site",
                           site, "--out", str(tmp / "union.safetensors"), "--no-cache",
                           "--quiet", "--device", args.device], env)
        cold_s, cold = submit(MLP, tmp / "cold.json", env, args.device)
        env2 = {**env, "PROBEBENCH_ACTIVATION_CACHE": str(tmp / "cache-computed")}
        computed_s, computed = submit(MLP, tmp / "computed.json", env2, args.device, None,
                                      "--compute-baselines")
        warm_s, warm = submit(MLP, tmp / "warm.json", env, args.device)
        limits = {}
        for name, artifact in (("mlp", MLP), ("linear", LINEAR)):
            first, _ = submit(artifact, tmp / f"{name}-l1.json", env, args.device, 20)
            again, _ = submit(artifact, tmp / f"{name}-l2.json", env, args.device, 20)
            limits[name] = (first, again)
    same = compared(cold) == compared(warm)
    print(f"device: {args.device}; task {TASK}; entry {MLP.name} at {site}\n")
    print("| process | seconds | ratio to the minimal work | bound |")
    print("| --- | ---: | ---: | --- |")
    print(f"| extract --no-cache, {n:,} distinct prompts (minimal work) | {extract_s:.1f} | "
          "1.00 | |")
    ok_cold = cold_s <= COLD_RATIO * extract_s
    print(f"| submit, cold | {cold_s:.1f} | {cold_s / extract_s:.2f} | "
          f"<= {COLD_RATIO:g}x: {'yes' if ok_cold else 'NO'} |")
    published = cold["timing"].get("baselines_published", {})
    print(f"| submit, cold, baselines computed (--compute-baselines) | {computed_s:.1f} | "
          f"{computed_s / extract_s:.2f} | |")
    ok_warm = warm_s <= WARM_SECONDS
    print(f"| submit, warm | {warm_s:.1f} | {warm_s / extract_s:.2f} | "
          f"<= {WARM_SECONDS:g} s: {'yes' if ok_warm else 'NO'} |")
    ok_limit = True
    for name, (first, again) in limits.items():
        ok = again <= LIMIT_SECONDS
        ok_limit &= ok
        print(f"| submit --limit 20 ({name}), cold | {first:.1f} | {first / extract_s:.2f} | |")
        print(f"| submit --limit 20 ({name}), warm | {again:.1f} | {again / extract_s:.2f} | "
              f"<= {LIMIT_SECONDS:g} s: {'yes' if ok else 'NO'} |")
    print("\nstages of the full submit (submission.json's timing.stages):\n")
    print(stage_table(cold, computed, warm))
    print(f"\nthe cold submit's baselines: {published or 'computed (none published)'}")
    print(f"warm submission.json equals the cold one outside timing and run: {same}")
    print("the computed baselines' submission.json equals the cold one outside timing and "
          f"run: {compared(cold) == compared(computed)}")
    return 0 if same and ok_cold and ok_warm and ok_limit else 1


if __name__ == "__main__":
    sys.exit(main())
