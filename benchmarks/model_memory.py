"""Peak memory of extraction per model size and precision.

    python benchmarks/model_memory.py [--sizes smollm2-135m smollm2-360m smollm2-1.7b]
                                      [--dtypes float32 bfloat16] [--n 1000]

For each size a randomly initialised model is built from its published config (memory
does not depend on trained weights) and saved, in the precision measured, with the
embedded SmolLM2's tokenizer. Then ``probebench extract`` reads ``--n`` sentences at the
middle layer in a child process, on the CPU, or on CUDA with ``--device cuda``. The
table gives the weights' size, the child's peak resident set size (the Python runtime,
torch, the model and the outputs), and on CUDA the peak GPU memory torch allocated.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import sentences  # noqa: E402
from benchmarks.extraction_gpu import CONFIGS, build_model  # noqa: E402

CHILD = """
import json, resource, sys
import torch
from probebench.models import Site, extract
texts = [json.loads(line)["text"] for line in open(sys.argv[1])]
result = extract(sys.argv[2], texts, [Site(int(sys.argv[3]), "last_token")], cache=False,
                 device=sys.argv[4], dtype=sys.argv[5], progress=False)
gpu = torch.cuda.max_memory_allocated() if sys.argv[4] == "cuda" else 0
print("PEAK", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, gpu)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+",
                        default=["smollm2-135m", "smollm2-360m", "smollm2-1.7b"],
                        choices=list(CONFIGS))
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    from probebench.models.batching import weight_count
    from probebench.models.loading import resolve_model

    tokenizer = resolve_model("smollm2-135m", device="cpu", progress=False).path
    print(f"{args.n} sentences at the middle layer, last_token, on {args.device}\n")
    print("| model | parameters | dtype | weights | peak RSS | peak GPU | wall s |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(prefix="model-memory-") as tmp:
        inp = Path(tmp) / "in.jsonl"
        inp.write_text("".join(json.dumps({"text": t}) + "\n"
                               for t in sentences(args.n, seed=1)))
        for size in args.sizes:
            for dtype in args.dtypes:
                folder = build_model(size, tokenizer, Path(tmp) / f"{size}-{dtype}", dtype)
                params = weight_count(folder)
                weights = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
                layer = CONFIGS[size]["num_hidden_layers"] // 2
                start = time.perf_counter()
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, str(inp), str(folder), str(layer),
                     args.device, dtype], capture_output=True, text=True, check=True)
                wall = time.perf_counter() - start
                line = next(x for x in proc.stdout.splitlines() if x.startswith("PEAK"))
                rss_kb, gpu = (int(v) for v in line.split()[1:])
                gpu_cell = f"{gpu / 2**30:.2f} GB" if gpu else "n/a"
                print(f"| {size} | {params / 1e6:,.0f}M | {dtype} | {weights / 2**30:.2f} GB "
                      f"| {rss_kb / 2**20:.2f} GB | {gpu_cell} | {wall:.0f} |", flush=True)
                for path in folder.iterdir():
                    path.unlink()
                folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
