"""The ``probebench`` command line: thin commands over the library.

``main`` only registers the command groups (one module each) and reports errors; every
command calls public library functions. Heavy libraries are imported inside the command
functions, so ``--help`` and input errors answer at once. While a command runs, stdout
and stderr are ``safetext.VisibleWriter`` streams: whatever a printer prints (an entry's
name, a task's title, an error quoting a file), a control or bidi character reaches the
terminal as an escape (``\\x1b``, ``\\u202e``), never raw.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TextIO, cast

from probebench.cli import (
    artifacts,
    holdout,
    leaderboard,
    lm,
    models,
    reeval,
    registry,
    review,
    steering,
    submit,
    tasks,
    train,
)
from probebench.errors import ProbebenchError
from probebench.safetext import VisibleWriter
from probebench.version import __version__

GROUPS = (models, artifacts, tasks, holdout, train, submit, lm, registry, review, reeval,
          leaderboard, steering)

#: every command -> the public function (in ``probebench.__all__``, or a method of a
#: public class) that it calls: a script can do anything the CLI does. docs/api.md lists
#: this table, and tests/interfaces/test_api_coverage.py fails for a command without one.
API: dict[str, str] = {
    "models list": "list_models",
    "models prepare": "resolve_model",
    "extract": "extract",
    "validate": "validate",
    "hash": "bundle_manifest",
    "export": "export_native",
    "tasks list": "TaskCatalog.ids",
    "tasks show": "TaskCatalog.load",
    "tasks verify": "TaskCatalog.verify",
    "tasks hash": "TaskCatalog.current_hashes",
    "tasks add": "add_task",
    "tasks remove": "remove_task",
    "tasks check-verbs": "check_verbs",
    "tasks generate-verbs": "write_verb_splits",
    "holdout keygen": "write_holdout_key",
    "holdout seal": "seal_holdout",
    "holdout verify": "verify_holdouts",
    "holdout unseal": "unseal_holdouts_to",
    "holdout rotate": "rotate_holdout",
    "holdout reveal": "reveal_holdout",
    "train": "train",
    "sweep": "layer_sweep",
    "submit": "submit_many",
    "score-lm": "score_lm",
    "registry list": "registry_entries",
    "registry show": "show_entry",
    "registry download": "download_artifact",
    "registry sign": "sign_registry",
    "registry check": "check_registry",
    "registry confine": "confinement_problems",
    "registry check-task": "check_proposal",
    "registry evaluate": "evaluate_entry",
    "registry publish": "publish_pending",
    "registry reproduce": "reproduce_entry",
    "review": "review_entry",
    "reeval": "reeval",
    "reeval plan": "make_reeval_plan",
    "reeval run": "run_reeval_group",
    "reeval merge": "merge_reeval",
    "leaderboard build": "build_leaderboard",
    "steering-vector": "export_steering_vector",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="probebench",
        description="probebench: validate, re-evaluate and rank activation probes on "
                    "language models.",
        epilog="Run `probebench COMMAND --help` for a command's options. Commands that read "
               "tasks or the registry resolve them from --repo (default: the enclosing git "
               "checkout) and say which they used.")
    parser.add_argument("--version", action="version", version=f"probebench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # every printer prints text from strangers (entries, tasks, mirrors, error messages
    # quoting them): the streams themselves make control and bidi characters visible
    out, err = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, VisibleWriter(out))
    sys.stderr = cast(TextIO, VisibleWriter(err))
    try:
        logging.basicConfig(level=logging.WARNING, format="probebench: %(message)s")
        # huggingface_hub prints through a handler of its own; passed on to ours as well,
        # every one of its lines would be printed twice
        logging.getLogger("huggingface_hub").propagate = False
        try:
            code: int = args.func(args)
        except ProbebenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        return code
    finally:
        sys.stdout, sys.stderr = out, err


__all__ = ["build_parser", "main"]
