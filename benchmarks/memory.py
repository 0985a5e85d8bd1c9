"""Peak memory (resident set size) of extraction and of ``probebench submit``, each in a
fresh process, beside the bound "2x the model's float32 weights + activations held".

Rows, each a whole process (``python -m probebench ...``: interpreter, torch, the model):

1. **extract**: ``probebench extract --no-cache`` of ``--n`` sentences (default 10,000) at
   one site (default ``15:last_token``). Only pooled vectors are kept (n x hidden floats),
   never whole layers.
2. **submit, cold**: ``probebench submit`` of the reference verb-grammar MLP on
   ``verb_grammar``, on an empty activation cache (the model cache is warm); the task's
   baselines are the registry's published record.
3. **submit, cold, baselines computed**: the same with ``--compute-baselines`` on another
   empty cache, so the random-init control, the surprisal pass and the model's own
   answer run (and again with ``--batch-tokens N`` for each ``--batch-tokens`` given).
4. **floor**: a process that imports what a submit imports (torch, transformers' model
   code, scikit-learn, probebench's evaluation), loads the model and runs one 1-token
   forward, so that every weight has been read: the least any submit can hold, before a
   batch's working memory or any result.
5. with ``--larger SIZE`` (``smollm2-360m``, ``smollm2-1.7b``): a randomly initialised
   model of that published config (float32, the embedded tokenizer), a linear probe
   trained on ``verb_grammar`` at its middle layer (``probebench train``), and the
   computed-baselines submit of that probe: the bound for a model whose weights
   outweigh the process's fixed footprint.

Peak RSS is ``ru_maxrss`` of the process as ``os.wait4`` reports it: the largest resident
set the process (or any child it waited for) reached, in the kernel's own accounting.
The submits take ``--limit`` items (default 100) to stay short: the peak is set by one
batch (``BATCH_TOKENS`` tokens) and by what is held, not by the number of items, and a
few hundred prompts already fill a batch; ``--limit 0`` runs the whole task.

"Activations held" is what the run keeps as float32: extract, n x hidden; submit, the
distinct prompts' pooled vectors at the entry's site, once per model that reads them
(the model and, with computed baselines, its random-init control).

    python benchmarks/memory.py [--n 10000] [--site 15:last_token] [--limit 100]
                                [--batch-tokens 1024 ...] [--larger smollm2-360m]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import sentences  # noqa: E402

MODEL = "smollm2-135m"
MLP = ROOT / "registry" / "artifacts" / "verb-grammar-mlp-smollm2-135m-l20-v1"
TASK = "verb_grammar"
GB = 1024**3


def peak_rss(args: list[str], env: dict[str, str]) -> tuple[int, float]:
    """(peak RSS in bytes, wall seconds) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{' '.join(args[3:])} failed:\n{err.decode()[-2000:]}")
    return usage.ru_maxrss * 1024, seconds


FLOOR = """
import sklearn.linear_model, sklearn.neural_network, sklearn.preprocessing
import torch
import sys
import probebench.evaluation.submit
from probebench.models.loading import load_model, release_memory
lm = load_model(sys.argv[1], device=sys.argv[2], progress=False)
with torch.inference_mode():
    lm.model(**lm.tokenizer("Hello", return_tensors="pt").to(lm.device))
release_memory()
"""


def model_figures(folder: Path | None = None) -> tuple[int, int]:
    """(float32 bytes of the model's weights, its hidden size), read from its folder
    (the embedded model's when None)."""
    from safetensors import safe_open

    from probebench.models.loading import resolve_model

    if folder is None:
        folder = Path(resolve_model(MODEL, device="cpu", progress=False).path)
    n = 0
    for file in folder.glob("*.safetensors"):
        with safe_open(str(file), "pt") as handle:
            for name in handle.keys():  # noqa: SIM118 (safe_open is no mapping)
                n += _numel(handle.get_slice(name).get_shape())
    config = json.loads((folder / "config.json").read_text("utf-8"))
    return 4 * n, int(config["hidden_size"])


def _numel(shape: list[int]) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


def submit_prompts(limit: int) -> int:
    """Distinct prompts a submit of ``MLP`` on ``TASK`` extracts at its site (test, train
    and validation; the first ``limit`` items of each when ``limit``)."""
    from probebench.evaluation.protocol import labelled_prompts, train_val_items
    from probebench.tasks.catalog import TaskCatalog

    data = TaskCatalog.default().load(TASK)
    train, val, _ = train_val_items(data)
    test = list(data.test)
    if limit:
        test, train, val = test[:limit], train[:limit], val[:limit]
    prompts = [p.text for item in test for p in item.prompts]
    prompts += [p.text for p in labelled_prompts(train) + labelled_prompts(val)]
    return len(set(prompts))


def larger_row(size: str, tmp: Path, limit: int, device: str
               ) -> tuple[str, int, float, int, int]:
    """Row 5: build a random ``size`` model, train a linear probe on ``TASK`` at its middle
    layer, and measure the computed-baselines submit of that probe."""
    from benchmarks.extraction_gpu import CONFIGS, build_model
    from probebench.models.loading import resolve_model

    tokenizer = Path(resolve_model(MODEL, device="cpu", progress=False).path)
    folder = build_model(size, tokenizer, tmp / size, dtype="float32")
    weights, hidden = model_figures(folder)
    site = f"{int(CONFIGS[size]['num_hidden_layers']) // 2}:last_token"
    env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(tmp / f"cache-{size}")}
    cli = [sys.executable, "-m", "probebench"]
    artifact = tmp / f"{size}-probe"
    subprocess.run([*cli, "train", "--task", TASK, "--model", str(folder), "--site", site,
                    "--out", str(artifact), "--quiet", "--bootstrap", "100", "--author",
                    "benchmark", "--contact", "benchmark@example.org", "--device", device],
                   env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    env["PROBEBENCH_ACTIVATION_CACHE"] = str(tmp / f"cache-{size}-submit")
    limited = ["--limit", str(limit)] if limit else []
    rss, secs = peak_rss([*cli, "submit", str(artifact), "--tasks", TASK, "--out",
                          str(tmp / f"{size}.json"), "--quiet", "--device", device,
                          "--compute-baselines", *limited], env)
    label = (f"submit, cold, baselines computed (a linear probe at {site} of a random "
             f"{size}, float32 {weights / GB:.2f} GB, {TASK}")
    label += f", --limit {limit})" if limit else ", every item)"
    return label, rss, secs, 2 * submit_prompts(limit) * hidden * 4, weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--site", default="15:last_token")
    parser.add_argument("--limit", type=int, default=100,
                        help="items per task of the submits (0: every item)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--batch-tokens", type=int, action="append", default=[],
                        help="also run the computed-baselines submit with this many padded "
                             "tokens per batch (repeatable)")
    parser.add_argument("--larger", choices=("smollm2-360m", "smollm2-1.7b"),
                        help="also train and submit a probe on a randomly initialised "
                             "model of this size (see row 5 above)")
    args = parser.parse_args()
    weights, hidden = model_figures()
    cli = [sys.executable, "-m", "probebench"]
    rows: list[tuple[str, int, float, int, int]] = []
    with tempfile.TemporaryDirectory(prefix="pb-memory-") as tmp_name:
        tmp = Path(tmp_name)
        inp = tmp / "in.jsonl"
        with inp.open("w") as handle:
            for i, text in enumerate(sentences(args.n, seed=1)):
                handle.write(json.dumps({"id": f"s{i}", "text": text}) + "\n")
        env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(tmp / "cache")}
        rss, secs = peak_rss([*cli, "extract", "--model", MODEL, "--site", args.site,
                              "--input", str(inp), "--out", str(tmp / "out.safetensors"),
                              "--no-cache", "--quiet", "--device", args.device], env)
        rows.append((f"extract --no-cache, {args.n:,} sentences at {args.site}", rss, secs,
                     args.n * hidden * 4, weights))
        held = submit_prompts(args.limit) * hidden * 4
        limit = ["--limit", str(args.limit)] if args.limit else []
        runs = [("submit, cold", [], 1, "cache-cold"),
                ("submit, cold, baselines computed", ["--compute-baselines"], 2,
                 "cache-computed")]
        runs += [(f"submit, cold, baselines computed, --batch-tokens {n}",
                  ["--compute-baselines", "--batch-tokens", str(n)], 2, f"cache-bt{n}")
                 for n in args.batch_tokens]
        for name, extra, models, cache in runs:
            env = {**os.environ, "PROBEBENCH_ACTIVATION_CACHE": str(tmp / cache)}
            rss, secs = peak_rss([*cli, "submit", str(MLP), "--tasks", TASK, "--out",
                                  str(tmp / f"{cache}.json"), "--quiet", "--device",
                                  args.device, *limit, *extra], env)
            label = f"{name} ({MLP.name}, {TASK}"
            label += f", --limit {args.limit})" if args.limit else ", every item)"
            rows.append((label, rss, secs, models * held, weights))
        rss, secs = peak_rss([sys.executable, "-c", FLOOR, MODEL, args.device], env)
        rows.append(("floor: a submit's imports + the model, every weight read", rss, secs, 0,
                     weights))
        if args.larger:
            rows.append(larger_row(args.larger, tmp, args.limit, args.device))
    base = rows[0][1]
    print(f"model {MODEL}: float32 weights {weights / GB:.2f} GB (the bound of each row is "
          f"its own model's); device {args.device}\n")
    print("| process | peak RSS GB | ratio to extract | x weights | activations held GB | "
          "bound GB (2x weights + held) | within | wall s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for label, rss, secs, held_bytes, row_weights in rows:
        bound = 2 * row_weights + held_bytes
        print(f"| {label} | {rss / GB:.2f} | {rss / base:.2f} | {rss / row_weights:.1f} | "
              f"{held_bytes / GB:.3f} | {bound / GB:.2f} | "
              f"{'yes' if rss <= bound else 'NO'} | {secs:.0f} |")


if __name__ == "__main__":
    main()
