"""A cold ``probebench submit`` of a reference truth probe against one extraction pass.

Each row is a whole process (``probebench ...`` in a subprocess: interpreter start,
imports and model loading included), on an activation cache that starts empty:

1. **minimal work** (the baseline): ``probebench extract --no-cache`` of the prompts the
   submission's own outputs need at the entry's site, extracted once: the task's test
   prompts plus its control set where it declares one;
2. **cold submit**: ``probebench submit`` of the reference entry on its task (the
   registry's eval-awareness guard and published baselines, 1,000 bootstrap resamples),
   nothing cached; its ``generalisation`` stage (the sibling tasks' passes) is reported
   apart and left out of the ratio, as the sibling tasks' prompts are not the task's;
3. **sibling prompts**: ``probebench extract --no-cache`` of every sibling task's test
   prompts, the minimal work of the generalisation stage.

The bound: the cold submit without its sibling passes within ``COLD_RATIO`` times the
minimal work.

    python benchmarks/truth_submit.py                # about 5 minutes on 2 cores
    python benchmarks/truth_submit.py --entry truth-facts-smollm2-135m-l21-v1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.submit_stages import cli, timed  # noqa: E402

DEFAULT_ENTRY = "truth-cities-smollm2-135m-l21-v1"
COLD_RATIO = 2.0


def write_prompts(prompts: list[Any], out: Path) -> int:
    """The distinct prompts as the JSONL ``probebench extract`` reads (a chat exchange
    with its turns, so the model reads it through its template)."""
    seen: dict[str, Any] = {}
    for p in prompts:
        seen.setdefault(json.dumps(p.canonical(), sort_keys=True), p)
    with out.open("w", encoding="utf-8") as handle:
        for i, p in enumerate(seen.values()):
            handle.write(json.dumps({"id": f"p{i}", "text": p.text,
                                     "spans": {k: list(v) for k, v in p.spans.items()}})
                         + "\n")
    return len(seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entry", default=DEFAULT_ENTRY,
                        help=f"a reference entry of the truth family (default: {DEFAULT_ENTRY})")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = parser.parse_args()

    from probebench.artifact.meta import read_meta
    from probebench.tasks.catalog import TaskCatalog

    artifact = ROOT / "registry" / "artifacts" / args.entry
    meta = read_meta(artifact / "meta.yaml")
    catalog = TaskCatalog.default()
    (task,) = meta.reported_metrics
    spec = catalog.spec(task)
    own = [p for item in catalog.load(task).test for p in item.prompts]
    if spec.control is not None:
        own += catalog.load_control(task)
    siblings = [t for t in catalog.specs if t != task
                and catalog.spec(t).family_key == spec.family_key]
    sibling_prompts = [p for t in siblings for item in catalog.load(t).test
                       for p in item.prompts]
    if any(p.messages is not None for p in own + sibling_prompts):
        raise SystemExit("chat tasks: `probebench extract` reads plain prompts; measure "
                         "a truth entry")
    site = f"{meta.layer}:{meta.position}"
    with tempfile.TemporaryDirectory(prefix="pb-truth-") as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(tmp / "cache")}
        n_own = write_prompts(own, tmp / "own.jsonl")
        n_sib = write_prompts(sibling_prompts, tmp / "siblings.jsonl")
        extract = [*cli(), "extract", "--site", site, "--no-cache", "--quiet", "--device",
                   args.device, "--model", meta.model]
        own_s = timed([*extract, "--input", str(tmp / "own.jsonl"), "--out",
                       str(tmp / "own.safetensors")], env)
        sib_s = timed([*extract, "--input", str(tmp / "siblings.jsonl"), "--out",
                       str(tmp / "siblings.safetensors")], env)
        out = tmp / "submission.json"
        cold_s = timed([*cli(), "submit", str(artifact), "--tasks", task, "--out", str(out),
                        "--quiet", "--device", args.device], env)
        stages = json.loads(out.read_text("utf-8"))["timing"]["stages"]
    gen_s = float(stages.get("generalisation", {}).get("seconds", 0.0))
    without = cold_s - gen_s
    print(f"device: {args.device}; entry {args.entry} on {task} at {site}; "
          f"{len(siblings)} sibling tasks\n")
    print("| process | seconds | ratio to its minimal work | bound |")
    print("| --- | ---: | ---: | --- |")
    print(f"| extract --no-cache: {n_own} test and control prompts (minimal work) | "
          f"{own_s:.1f} | 1.00 | |")
    print(f"| cold submit, sibling passes left out | {without:.1f} | {without / own_s:.2f} | "
          f"<= {COLD_RATIO:g}: {'ok' if without / own_s <= COLD_RATIO else 'MISSED'} |")
    print(f"| extract --no-cache: {n_sib} sibling test prompts | {sib_s:.1f} | 1.00 | |")
    print(f"| the submit's generalisation stage | {gen_s:.1f} | {gen_s / sib_s:.2f} | "
          "reported |")
    print(f"| cold submit, whole | {cold_s:.1f} | | |")
    print("\n| stage | seconds | passes | tokens |\n| --- | ---: | ---: | ---: |")
    for name, stage in stages.items():
        print(f"| {name} | {stage.get('seconds', 0):.1f} | {stage.get('passes', 0)} | "
              f"{stage.get('tokens', 0):,} |")
    return 0 if without / own_s <= COLD_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
