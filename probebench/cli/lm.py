"""``probebench score-lm``: a language model's own accuracy on registered tasks."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from probebench.cli.common import (
    add_bootstrap,
    add_device,
    add_quiet,
    add_seed,
    add_workspace_options,
    csv_list,
    raw,
    workspace,
)
from probebench.evaluation.lm_scores import SPLITS, LMScores, default_formats, scored_formats

DESCRIPTION = """\
Score a causal language model by itself on registered tasks, as each data set's authors
score a model, with a 95% item-bootstrap CI per task and the macro mean over tasks. It
is the model's own baseline: what its next-token probabilities already know, before any
probe reads its hidden states. No activation is extracted and nothing is cached."""


def _epilog() -> str:
    lines = ["protocols (by task format):"]
    for fmt, scoring in scored_formats().items():
        wrapped = textwrap.wrap(scoring.definition, width=70)
        lines.append(f"  {fmt:<10} " + f"\n  {'':<10} ".join(wrapped))
    lines += [
        "",
        "start token: BLiMP and verb prompts are read after the model's BOS token, else its",
        "  EOS token (lm-evaluation-harness's rule), so the first word is scored too; a",
        "  chat-turn marker (a token of the chat template, SmolLM2-Instruct's <|im_start|>)",
        "  gives way to the document separator the model was pre-trained with",
        "  (<|endoftext|>). The output says which token was used; --start-token names one.",
        "",
        "examples:",
        "  probebench score-lm smollm2-135m",
        "  probebench score-lm smollm2-135m --tasks syntaxgym_number_prep,blimp_transitive \\",
        "      --split all --json-out lm.json",
    ]
    return "\n".join(lines)


def _table(result: LMScores) -> str:
    ident = result.model
    used = result.start_token if result.start_token is not None else "none (no BOS protocol)"
    rows = [f"model {ident.name} ({ident.model_type}, {ident.dtype}); split {result.split}; "
            f"seed {result.seed}; {result.n_resamples} bootstrap resamples; start token "
            f"{used}",
            f"{'task':<48} {'format':<10} {'items':>6}  accuracy [95% CI]"]
    for t in result.tasks:
        acc = t.accuracy
        if acc.value is None:
            shown = "n/a (no scorable item)"
        else:
            low = "n/a" if acc.ci_low is None else f"{acc.ci_low:.3f}"
            high = "n/a" if acc.ci_high is None else f"{acc.ci_high:.3f}"
            shown = f"{acc.value:.3f} [{low}, {high}]"
        rows.append(f"{t.task:<48} {t.format:<10} {t.n_items:>6}  {shown}")
    macro = result.macro_mean
    rows.append(f"macro mean over {len(result.tasks)} task(s): "
                + ("n/a" if macro is None else f"{macro:.3f}"))
    return "\n".join(rows)


def cmd_score_lm(args: argparse.Namespace) -> int:
    from probebench.evaluation.lm_scores import score_lm
    from probebench.hashing import atomic_write_bytes

    catalog = workspace(args).catalog
    result = score_lm(args.model, csv_list(args.tasks) or None, catalog=catalog,
                      split=args.split, seed=args.seed, n_resamples=args.bootstrap,
                      start_token=args.start_token, device=args.device, dtype=args.dtype,
                      progress=not args.quiet)
    print(_table(result))
    if args.json_out:
        doc = json.dumps(result.to_json(), indent=2) + "\n"
        atomic_write_bytes(Path(args.json_out), doc.encode("utf-8"))
        print(f"wrote {args.json_out}", file=sys.stderr)
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "score-lm", help="a model's own accuracy on BLiMP/SyntaxGym tasks (its baseline)",
        **raw(DESCRIPTION, _epilog()))
    parser.add_argument("model", metavar="MODEL",
                        help="a causal LM: built-in alias (smollm2-135m), Hugging Face folder "
                             "or hub id; encoders such as minilm-l6 are refused")
    parser.add_argument("--tasks", action="append", metavar="IDS",
                        help="comma-separated task ids, repeatable (default: every registered "
                             f"{' and '.join(default_formats())} task; verb_grammar on "
                             "request)")
    parser.add_argument("--split", choices=SPLITS, default="test",
                        help="test: the registered test split; all: every item of the task's "
                             "files, comparable with published full-suite numbers "
                             "(default: %(default)s)")
    parser.add_argument("--start-token", default=None, metavar="TOKEN",
                        help="the token BLiMP and verb prompts are read after, e.g. "
                             "'<|im_start|>' (default: the model's document start: its "
                             "BOS, else EOS, a chat-turn marker giving way to the "
                             "pre-training document separator)")
    parser.add_argument("--json-out", default=None, metavar="FILE",
                        help="also write the results, versions, seed and task hashes as JSON")
    add_seed(parser)
    add_bootstrap(parser)
    add_device(parser, batching=False)
    add_quiet(parser, "no progress bars")
    add_workspace_options(parser)
    parser.set_defaults(func=cmd_score_lm)
