"""``probebench models list|prepare`` and ``probebench extract``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from probebench.cli.common import add_device, add_model, add_no_cache, add_quiet, raw, runtime
from probebench.errors import SiteError

EXAMPLES_EXTRACT = """\
input: a JSONL file, one object per line:
  {"id": "q1", "text": "Q: Is it raining? A: yes", "spans": {"question": [0, 17]}}
  "text" is required; "id" is optional (unique); "spans" are half-open character
  ranges [start, end) used by end_question (question), mid_think/end_think (think)
  and end_answer (answer).

sites: LAYER:POSITION, repeatable. Layer 0 is the embeddings output, layer N (the
  model's layer count) the last hidden state, as in Hugging Face output_hidden_states.
  Positions: last_token, token_avg, end_question, mid_think, end_think, end_answer,
  attention_weighted.

example:
  probebench extract --model smollm2-135m --site 15:last_token --site 30:token_avg \\
      --input examples/sentences.jsonl --out acts.safetensors
"""


def cmd_models_list(args: argparse.Namespace) -> int:
    from probebench.models.embedded import list_models

    print(f"{'alias':<14} {'layers':>6} {'hidden':>6}  {'status':<26} description")
    for m in list_models():
        default = " (default)" if m.default else ""
        print(f"{m.alias:<14} {m.num_layers:>6} {m.hidden_size:>6}  {m.status:<26} "
              f"{m.description}{default}")
    print("\nAny Hugging Face model folder or hub id with safetensors weights also works "
          "(hub ids honour HF_HUB_OFFLINE=1).")
    return 0


def cmd_models_prepare(args: argparse.Namespace) -> int:
    from probebench.models.builtin import BUILTIN_MODELS
    from probebench.models.loading import resolve_model

    for name in args.names or list(BUILTIN_MODELS):
        start = time.perf_counter()
        resolved = resolve_model(name, device="cpu", progress=not args.quiet,
                                 verbose=args.verbose)
        ident = resolved.identity
        print(f"{name}: ready in {time.perf_counter() - start:.1f}s at {resolved.path} "
              f"({ident.num_layers} layers, hidden {ident.hidden_size}, "
              f"weights sha256 {ident.weights_sha256[:12]})")
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    from probebench.prompts import read_prompts_jsonl
    from probebench.sites import Site

    sites = [Site.parse(s) for s in args.site]
    prompts = read_prompts_jsonl(args.input)
    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise SiteError(f"--out {out}: is a folder; give a file name")

    import numpy as np

    from probebench.models.activations import extract
    from probebench.models.output import write_activations

    start = time.perf_counter()
    result = extract(args.model, prompts, sites, cache=not args.no_cache, **runtime(args),
                     progress=not args.quiet)
    elapsed = time.perf_counter() - start
    write_activations(out, result, prompts)
    ident = result.model.identity
    print(f"model {ident.name} ({ident.model_type}, {ident.num_layers} layers, hidden "
          f"{ident.hidden_size}, {ident.dtype} on {result.model.device}); "
          f"{len(prompts)} prompts in {elapsed:.2f}s")
    print(f"{'site':<24} {'shape':>12} {'mean':>9} {'std':>9} {'mean L2 norm':>13}  source")
    for site, arr in result.arrays.items():
        norms = np.linalg.norm(arr.astype(np.float64), axis=1)
        shape = f"{arr.shape[0]}x{arr.shape[1]}"
        source = "cache" if site in result.cached else "model"
        print(f"{site!s:<24} {shape:>12} {arr.mean():>9.4f} {arr.std():>9.4f} "
              f"{norms.mean():>13.3f}  {source}")
    print(f"wrote {out}")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = commands.add_parser("models", help="list or prepare the models probebench knows")
    models_sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    models_sub.add_parser("list", help="the built-in models and whether they are ready") \
        .set_defaults(func=cmd_models_list)
    prepare = models_sub.add_parser(
        "prepare", help="convert/hash models once so later runs start fast",
        description="Convert the embedded GGUF model into a cached Hugging Face folder "
                    "(~20 s, once) and hash the weights of the named models. A conversion "
                    "says so in one line; transformers' own progress bars and warnings "
                    "show with --verbose.")
    prepare.add_argument("names", nargs="*", metavar="MODEL",
                         help="aliases, folders or hub ids (default: every built-in model)")
    add_quiet(prepare, "no progress output (not even the conversion's line)")
    prepare.add_argument("--verbose", action="store_true",
                         help="also show transformers' own progress bars and warnings "
                              "(the GGUF conversion's, the weight loading's)")
    prepare.set_defaults(func=cmd_models_prepare)

    ext = commands.add_parser(
        "extract", help="write pooled hidden states of prompts to a safetensors file",
        **raw("Extract pooled hidden states at one or more sites for every prompt of a "
              "JSONL file, through the activation cache.", EXAMPLES_EXTRACT))
    add_model(ext)
    ext.add_argument("--site", action="append", required=True, metavar="LAYER:POSITION",
                     help="where to read, e.g. 15:last_token; repeat for several sites")
    ext.add_argument("--input", required=True, type=Path, help="prompts, JSONL")
    ext.add_argument("--out", required=True, type=Path, help="output .safetensors file")
    add_device(ext)
    add_no_cache(ext)
    add_quiet(ext, "no progress bars")
    ext.set_defaults(func=cmd_extract)
