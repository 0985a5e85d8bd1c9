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
                                n_resamples=args.resamples, seed=args.seed,
                                source_url=args.source_url, index_rows=args.index_rows)
    if args.top > 0:
        for note in summary.skipped:
            print(f"  skipped {note}")
        for line in summary.outside:  # shown, not hidden: the site still builds
            print(f"  warning: {line}")
    else:  # --top 0: a count and the first ids, never thousands of lines
        _print_summarised(summary.skipped, "entries skipped", "")
        _print_summarised(summary.outside, "values outside their 95% interval",
                          " (each marked in leaderboard.json, probescores[].outside)")
    print(f"built {summary.entries} entries in {time.perf_counter() - start:.1f}s "
          f"({summary.rendered} entry pages rendered, {summary.reused} reused unchanged)")
    if args.top and summary.ranking:
        print(f"top {args.top} of each task-set group (ProbeScore spec {args.spec}; an entry "
              "is ranked only against entries evaluated on exactly the same tasks):")
        print(summary.top_table(args.top))
    if summary.guards and args.top > 0:
        print(f"guards (never ranked): {', '.join(summary.guards)}")
    elif summary.guards:  # --top 0: no lists at all, only the count
        print(f"{len(summary.guards)} guards (never ranked): guards.html")
    print(f"open {summary.out.resolve() / 'index.html'}")
    return 0


#: the ids a summarised warning names (``--top 0``)
FIRST_IDS = 5


def _print_summarised(lines: list[str], what: str, where: str) -> None:
    """One line for ``lines`` (each starting with an entry id): their count and the first
    ``FIRST_IDS`` distinct ids."""
    if not lines:
        return
    ids = list(dict.fromkeys(line.split(maxsplit=1)[0].rstrip(":") for line in lines))
    more = f", ... ({len(ids)} entries in all)" if len(ids) > FIRST_IDS else ""
    print(f"  warning: {len(lines)} {what} ({', '.join(ids[:FIRST_IDS])}{more}){where}; "
          "--top 1 or more lists each")


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
                    "ProbeScore spec and write the static website. Entries are ranked only "
                    "against entries evaluated on exactly the same task set: one ranking "
                    "per task (from that task's result alone) and, per benchmark family "
                    "(verb grammar, BLiMP, SyntaxGym, or a task format of its own), one "
                    "ranking per task set, each with rank intervals from a paired item "
                    "bootstrap; there is no overall ranking. Guards (registry/guards.yaml, "
                    "and entries evaluated on guard tasks only) are listed apart, never "
                    "ranked. Prints the best entries of each task-set group and the page "
                    "to open.")
    build.add_argument("--out", type=Path, default=Path("leaderboard"),
                       help="output folder, replaced (default: %(default)s)")
    build.add_argument("--spec", default=DEFAULT_SPEC,
                       help="ProbeScore spec version (default: %(default)s)")
    build.add_argument("--resamples", type=int, default=RANK_RESAMPLES,
                       help="bootstrap resamples for rank intervals (default: %(default)s)")
    build.add_argument("--source-url", metavar="URL", default=None,
                       help="link repository files (artifact files, notebooks, stored "
                            "results) under URL/<path>, e.g. https://github.com/OWNER/REPO/"
                            "blob/COMMIT (default: copy them into the leaderboard under files/, so "
                            "every link works from file://)")
    build.add_argument("--index-rows", type=int, default=None, metavar="N",
                       help="rows of each table the index writes as HTML; its entry list "
                            "pages through every entry N at a time (default: 50)")
    add_seed(build, "seed of the rank bootstrap")
    build.add_argument("--top", type=int, default=5,
                       help="print the N best entries of each family/task-set group, one "
                            "small table per group, and the guard ids (default: "
                            "%(default)s; 0: no table and no ids, only counts)")
    add_workspace_options(build, registry=True)
    build.set_defaults(func=cmd_build)
