"""Extraction throughput against the obvious loop, on the embedded model.

Baseline ("obvious loop"): prompts in input order, batches of 16 padded to the longest,
``model(**batch, output_hidden_states=True)`` on the full causal LM (every layer and the
LM head), then the site's vector picked from ``hidden_states``.

probebench: ``probebench.models.extract`` with the cache off (length-sorted batches
under a token budget, forward stopped after the site's layer, no LM head).

The matmul-rate target converts the machine's float32 GEMM rate into tokens/s with
2 x (non-embedding parameters of the blocks run) FLOPs per token.

    python benchmarks/extraction.py            # 512 sentences, layers 8, 15, 30
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import matmul_gflops, sentences
from probebench.models.activations import BATCH_TOKENS


def baseline(lm: Any, texts: list[str], layers: list[int]) -> float:
    import torch

    tok = lm.tokenizer
    start = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(texts), 16):
            enc = tok(texts[i:i + 16], return_tensors="pt", padding=True)
            out = lm.model(**enc, output_hidden_states=True)
            last = enc["attention_mask"].sum(1) - 1
            for layer in layers:
                out.hidden_states[layer][torch.arange(len(last)), last].numpy()
    return time.perf_counter() - start


def ours(lm: Any, texts: list[str], layers: list[int], batch_tokens: int) -> float:
    from probebench.models import Site, extract

    start = time.perf_counter()
    extract(lm, texts, [Site(layer, "last_token") for layer in layers], cache=False,
            progress=False, batch_tokens=batch_tokens)
    return time.perf_counter() - start


def warm_load_seconds() -> tuple[float, float, float]:
    """Converted SmolLM2 in a fresh process: (import torch, import transformers' modeling
    code, load_model). The imports are paid once per process whatever the model; the
    load itself reads the float32 safetensors and the tokenizer."""
    code = ("import time; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
            "import transformers.models.llama.modeling_llama, "
            "transformers.models.auto.modeling_auto; t2 = time.perf_counter(); "
            "from probebench.models import load_model; "
            "load_model('smollm2-135m', device='cpu', progress=False); "
            "t3 = time.perf_counter(); print(t1 - t0, t2 - t1, t3 - t2)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=512, help="sentences (default 512)")
    parser.add_argument("--repeats", type=int, default=2, help="best of N runs (default 2)")
    parser.add_argument("--batch-tokens", type=int, default=BATCH_TOKENS)
    args = parser.parse_args()

    import torch

    from probebench.models import load_model

    lm = load_model("smollm2-135m", device="cpu", progress=False)
    texts = sentences(args.n)
    n_tokens = sum(len(x) for x in lm.tokenizer(texts)["input_ids"])
    per_block = [sum(p.numel() for p in block.parameters()) for block in lm.layers]
    gflops = matmul_gflops()
    ours(lm, texts[:32], [2], args.batch_tokens)  # warm-up
    base = min(baseline(lm, texts, [8, 15, 30]) for _ in range(args.repeats))

    print(f"SmolLM2-135M float32, {args.n} sentences, {n_tokens} tokens "
          f"({n_tokens / args.n:.1f}/sentence), torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; matmul rate {gflops:.0f} GFLOP/s")
    print("baseline: batch 16, pad to longest, output_hidden_states=True, full model "
          "(one pass serves all three layers)")
    header = (f"{'site':<16} {'baseline tok/s':>15} {'probebench tok/s':>17} {'speed-up':>9} "
              f"{'matmul target tok/s':>20} {'% of matmul rate':>17}")
    print(header)
    print("-" * len(header))
    for layer in (8, 15, 30):
        t = min(ours(lm, texts, [layer], args.batch_tokens) for _ in range(args.repeats))
        params = sum(per_block[:layer])
        target = 0.7 * gflops * 1e9 / (2 * params)
        rate = n_tokens / t
        print(f"{f'{layer}:last_token':<16} {n_tokens / base:>15.0f} {rate:>17.0f} "
              f"{base / t:>8.2f}x {target:>20.0f} "
              f"{100 * rate * 2 * params / (gflops * 1e9):>16.0f}%")
    t = min(ours(lm, texts, [8, 15, 30], args.batch_tokens) for _ in range(args.repeats))
    print(f"{'8+15+30 at once':<16} {n_tokens / base:>15.0f} {n_tokens / t:>17.0f} "
          f"{base / t:>8.2f}x")
    t_torch, t_hf, t_load = warm_load_seconds()
    print(f"warm load of the converted model in a fresh process: import torch {t_torch:.2f}s, "
          f"import transformers modeling {t_hf:.2f}s, load_model {t_load:.2f}s "
          f"(target < 3 s), process total {t_torch + t_hf + t_load:.2f}s")


if __name__ == "__main__":
    main()
