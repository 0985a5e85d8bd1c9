"""``probebench review``: the reviewer's checklist for a registry entry."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from probebench.cli.common import (
    add_quiet,
    add_sandbox_options,
    add_workspace_options,
    live_entry_ids,
    report_name,
    sandbox_limits_of,
    workspace,
)
from probebench.errors import InputError


def cmd_review(args: argparse.Namespace) -> int:
    from probebench.evaluation.results import read_submission
    from probebench.hashing import atomic_write_bytes
    from probebench.intake.reproduce import ReproducerRun, read_reproducer_run
    from probebench.intake.review import review_entry

    ws = workspace(args, uses_registry=True)
    if (args.entry is None) == (not args.live):
        raise InputError("give one ENTRY_ID, or --live for every live entry")
    if args.live and args.evaluation:
        raise InputError("--evaluation belongs to one entry, not --live")
    ids = [args.entry] if args.entry else live_entry_ids(ws.registry)

    def reproduced(entry_id: str) -> ReproducerRun | None:
        if not args.reproduced:
            return None
        path = Path(args.reproduced)
        return read_reproducer_run(path / report_name(entry_id) if args.live else path)

    evaluation = read_submission(Path(args.evaluation)) if args.evaluation else None
    limits = sandbox_limits_of(args)
    reviews = [review_entry(entry_id, ws.registry, ws.repo, catalog=ws.catalog,
                            timeout=args.timeout, reproduced=reproduced(entry_id),
                            evaluation=evaluation, limits=limits) for entry_id in ids]
    text = "\n".join(r.markdown() for r in reviews)
    doc = reviews[0].to_json() if args.entry else [r.to_json() for r in reviews]
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(text, end="")
    if args.markdown:
        atomic_write_bytes(Path(args.markdown), text.encode("utf-8"))
    if args.json_out:
        atomic_write_bytes(Path(args.json_out), (json.dumps(doc, indent=2) + "\n").encode())
    return 0 if all(r.passed for r in reviews) else 1




def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from probebench.intake.reproduce import NOTEBOOK_TIMEOUT

    rev = commands.add_parser(
        "review", help="the reviewer's checklist for a registry entry",
        description="Check an entry as a reviewer would: artifact hash; reproducer notebook "
                    "(run in the bubblewrap sandbox, its PROBEBENCH_METRICS compared with "
                    "probebench's own re-evaluation within 0.02); registered test-set "
                    "hashes; license; personal data in the test sets; eval-awareness "
                    "declaration. Prints a Markdown checklist (the PR comment body); exit 0 "
                    "when every item passes.")
    rev.add_argument("entry", metavar="ENTRY_ID", nargs="?")
    rev.add_argument("--live", action="store_true",
                     help="review every live entry (the scheduled re-run of reproducers)")
    rev.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    rev.add_argument("--markdown", default=None, help="also write the checklist here")
    rev.add_argument("--json-out", default=None, help="also write the JSON checklist here")
    rev.add_argument("--reproduced", default=None, metavar="FILE",
                     help="judge this report of `probebench registry reproduce` instead of "
                          "running the notebook here (in the sandbox); with --live, the "
                          "folder of `registry reproduce --live`")
    rev.add_argument("--evaluation", default=None, metavar="FILE",
                     help="compare with this submission.json of the entry (`registry "
                          "evaluate --submission`) instead of re-evaluating here")
    rev.add_argument("--timeout", type=int, default=NOTEBOOK_TIMEOUT,
                     help="seconds per notebook cell (default: %(default)s)")
    add_sandbox_options(rev)
    add_quiet(rev, "no workspace line on stderr")
    add_workspace_options(rev, registry=True)
    rev.set_defaults(func=cmd_review)

