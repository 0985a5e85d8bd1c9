"""``probebench leaderboard build``: the static website."""

from __future__ import annotations

import argparse
import time

from probebench.cli.common import add_seed, add_workspace_options, workspace


def cmd_build(args: argparse.Namespace) -> int:
    from probebench.leaderboard.build import build_leaderboard

    ws = workspace(args, uses_registry=True)
    start = time.perf_counter()
    summary = build_leaderboard(ws.registry, args.out, catalog=ws.catalog, spec_version=args.spec,
                         n_resamples=args.resamples, seed=args.seed)
    for note in summary.skipped:
        print(f"  skipped {note}")
    print(f"built {summary.entries} entries in {time.perf_counter() - start:.1f}s")
    if args.top and summary.ranking:
        print(f"top {min(args.top, len(summary.ranking))} of {summary.entries} "
              f"(ProbeScore spec {args.spec}):")
        print(summary.top_table(args.top))
    print(f"open {summary.out.resolve() / 'index.html'}")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pathlib import Path

    from probebench.leaderboard.probescore import DEFAULT_SPEC
    from probebench.leaderboard.ranks import RANK_RESAMPLES

    board = commands.add_parser("leaderboard", help="build the static leaderboard website")
    add_workspace_options(board, registry=True)
    board_sub = board.add_subparsers(dest="board_command", metavar="ACTION", required=True)
    build = board_sub.add_parser(
        "build", help="write plain HTML/CSS/JS (works from file://)",
        description="Score every entry of the registry that has stored results with a "
                    "ProbeScore spec, compute rank intervals and write the static website; "
                    "prints the top entries and the page to open.")
    build.add_argument("--out", type=Path, default=Path("leaderboard"),
                       help="output folder, replaced (default: %(default)s)")
    build.add_argument("--spec", default=DEFAULT_SPEC,
                       help="ProbeScore spec version (default: %(default)s)")
    build.add_argument("--resamples", type=int, default=RANK_RESAMPLES,
                       help="bootstrap resamples for rank intervals (default: %(default)s)")
    add_seed(build, "seed of the rank bootstrap")
    build.add_argument("--top", type=int, default=5,
                       help="print the N best entries (default: %(default)s; 0: none)")
    add_workspace_options(build, registry=True)
    build.set_defaults(func=cmd_build)
