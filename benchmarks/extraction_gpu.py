"""GPU extraction throughput: tokens/s against the obvious loop, and the share of the
GPU's bf16 dense peak.

    python benchmarks/extraction_gpu.py [--sizes smollm2-135m llama-1b] [--n 4096]
                                        [--tokenizer DIR] [--device cuda]

For each model size a randomly initialised model is built from its published config
(throughput does not depend on trained weights; the embedded weights are not needed)
and saved with the embedded SmolLM2's tokenizer. Both contenders read the middle layer
at ``last_token`` of ``--n`` sentences of about 17 tokens, in bfloat16:

* the obvious loop: batches of 64 prompts in file order, padded by the tokenizer, a full
  forward pass with ``output_hidden_states=True``, the row picked on the GPU, copied out;
* ``probebench.models.extract``: length-sorted batches under the budget sized from the
  device, stopped after the layer needed, pooled on the device, one copy per site.

FLOPs per token are ``2 x`` the parameters of the blocks run (embeddings and LM head
excluded) plus the attention scores; the share of peak divides the achieved FLOP/s by
the device's bf16 dense peak (H100/H200 SXM: 989 TFLOP/s). Without a CUDA device the
benchmark says so and exits 0; ``--device cpu`` runs the same code on the CPU (tiny
``--n``) as a smoke test, with no peak share.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: published configs of the sizes benchmarked (Llama architecture throughout)
CONFIGS: dict[str, dict[str, Any]] = {
    "smollm2-135m": {"hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30,
                     "num_attention_heads": 9, "num_key_value_heads": 3},
    "smollm2-360m": {"hidden_size": 960, "intermediate_size": 2560, "num_hidden_layers": 32,
                     "num_attention_heads": 15, "num_key_value_heads": 5},
    "smollm2-1.7b": {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
                     "num_attention_heads": 32, "num_key_value_heads": 32},
    "llama-1b": {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
                 "num_attention_heads": 32, "num_key_value_heads": 8},
    "llama-8b": {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                 "num_attention_heads": 32, "num_key_value_heads": 8},
}
#: bf16 dense peak FLOP/s by device name fragment
PEAKS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L40S": 362e12, "A10G": 70e12}
SUBJECTS = ["The cat", "My neighbours", "A tired old teacher", "The children", "She"]
VERBS = ["walks to the station every morning", "were reading quietly in the garden",
         "has finished the long report before lunch", "will visit her brother next week"]


def sentences(n: int) -> list[str]:
    return [f"{SUBJECTS[i % 5]} {VERBS[(i // 5) % 4]} ({i})." for i in range(n)]


def build_model(size: str, tokenizer: Path, folder: Path, dtype: str = "bfloat16") -> Path:
    import shutil

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=49152, max_position_embeddings=2048,
                         tie_word_embeddings=True, **CONFIGS[size])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model: Any = LlamaForCausalLM(config)
        model = model.to(getattr(torch, dtype))
    model.config.architectures = ["LlamaForCausalLM"]
    model.save_pretrained(folder, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (tokenizer / name).is_file():
            shutil.copy(tokenizer / name, folder / name)
    return folder


def block_flops_per_token(size: str, layers: int, tokens: float) -> float:
    c = CONFIGS[size]
    h, f = int(c["hidden_size"]), int(c["intermediate_size"])
    kv = h * int(c["num_key_value_heads"]) // int(c["num_attention_heads"])
    params = 2 * h * h + 2 * h * kv + 3 * h * f  # q, o, k, v and the gated MLP
    return float(layers * (2 * params + 4 * h * tokens))  # + scores and values


def obvious_loop(folder: Path, texts: list[str], layer: int, device: str) -> float:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    tok.pad_token = tok.pad_token or tok.eos_token
    tok.padding_side = "right"
    model: Any = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16)
    model = model.to(device)
    model.eval()
    out = []
    sync(device)
    start = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(texts), 64):
            enc = tok(texts[i:i + 64], return_tensors="pt", padding=True).to(device)
            hidden = model(**enc, output_hidden_states=True).hidden_states[layer]
            last = enc["attention_mask"].sum(1) - 1
            out.append(hidden[torch.arange(hidden.shape[0], device=device), last].float().cpu())
    sync(device)
    return time.perf_counter() - start


def probebench_extract(folder: Path, texts: list[str], layer: int, device: str) -> float:
    from probebench.models import Site, extract, load_model

    lm = load_model(str(folder), device=device, dtype="bfloat16", progress=False)
    extract(lm, texts[:64], [Site(layer, "last_token")], cache=False, progress=False)
    sync(device)
    start = time.perf_counter()
    extract(lm, texts, [Site(layer, "last_token")], cache=False, progress=False)
    sync(device)
    return time.perf_counter() - start


def sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["smollm2-135m", "llama-1b"],
                        choices=list(CONFIGS))
    parser.add_argument("--n", type=int, default=4096, help="sentences")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--tokenizer", type=Path, default=None,
                        help="folder with SmolLM2's tokenizer.json (default: the embedded "
                             "model's converted folder)")
    args = parser.parse_args()
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("extraction_gpu: no CUDA device here; skipped (run it where a GPU is, or with "
              "--device cpu --n 256 as a smoke test)")
        return 0
    tokenizer = args.tokenizer
    if tokenizer is None:
        from probebench.models.loading import resolve_model

        tokenizer = resolve_model("smollm2-135m", device="cpu", progress=False).path
    texts = sentences(args.n)
    name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    peak = next((v for k, v in PEAKS.items() if k in name), None)
    print(f"{args.n} sentences, middle layer at last_token, bfloat16, on {name}\n")
    print("| model | contender | tokens/s | vs loop | share of bf16 peak |")
    print("| --- | --- | ---: | ---: | ---: |")
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
            folder = build_model(size, tokenizer, Path(tmp))
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(folder)
            lengths = [len(x) for x in tok(texts)["input_ids"]]
            n_tokens = sum(lengths)
            layer = CONFIGS[size]["num_hidden_layers"] // 2
            flops = block_flops_per_token(size, layer, sum(lengths) / len(lengths) / 2)
            loop = obvious_loop(folder, texts, layer, args.device)
            ours = probebench_extract(folder, texts, layer, args.device)
            # the loop runs every layer: its useful work is the same as ours
            for contender, seconds in (("obvious loop (batch 64)", loop),
                                       ("probebench extract", ours)):
                rate = n_tokens / seconds
                share = f"{rate * flops / peak:.1%}" if peak else "n/a"
                print(f"| {size} | {contender} | {rate:,.0f} | {loop / seconds:.2f}x | "
                      f"{share} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
