"""``probebench registry list|show``: read a registry from a folder, a built leaderboard
or a URL (``probebench.registry.mirror``), as a pip user without a checkout does."""

from __future__ import annotations

import argparse
import sys

SOURCE_HELP = ("where the registry is: a folder holding probes/, a built leaderboard "
               "holding registry.json, or the https:// URL of its registry.json (files are "
               "downloaded into $PROBEBENCH_HOME/mirrors and checked against the index). "
               "Default: $PROBEBENCH_REGISTRY, else the enclosing checkout's registry/, else "
               "the project's published leaderboard")
PIN_HELP = ("pin the registry.json of a leaderboard or URL by its SHA-256 (also URL#sha256=HEX): "
            "a changed index is refused; recommended when citing a result")


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """--registry SRC and --registry-sha256 HEX: a registry anywhere, pinned or not."""
    group = parser.add_argument_group("which registry")
    group.add_argument("--registry", dest="registry_source", default=None, metavar="SRC",
                       help=SOURCE_HELP)
    group.add_argument("--registry-sha256", default=None, metavar="HEX", help=PIN_HELP)


def _per_task(values: dict[str, float | None]) -> str:
    shown = [f"{t} {v:.3f}" for t, v in sorted(values.items()) if v is not None]
    return "; ".join(shown) or "no stored result"


def cmd_list(args: argparse.Namespace) -> int:
    from probebench.registry.mirror import registry_entries

    source, entries = registry_entries(args.registry_source, sha256=args.registry_sha256,
                                       status=args.status)
    if not args.quiet:
        print(f"probebench: {source.describe()}", file=sys.stderr)
    if not entries:
        print("no entries" + (f" with status {args.status}" if args.status else ""))
        return 0
    width = max(len(e.id) for e in entries)
    for e in entries:
        print(f"{e.id:<{width}}  {e.status:<14}  {e.model:<14} {e.layer}:{e.position:<13} "
              f"{e.probe_type:<7} AUROC {_per_task(e.auroc)}")
    print(f"{len(entries)} entries")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import yaml

    from probebench.registry.mirror import show_entry

    source, entry, stored = show_entry(args.entry, args.registry_source,
                                       sha256=args.registry_sha256)
    if not args.quiet:
        print(f"probebench: {source.describe()}", file=sys.stderr)
    print(yaml.safe_dump(entry.model_dump(mode="json", exclude_none=True), sort_keys=False,
                         allow_unicode=True).rstrip())
    for task, record in sorted(stored.items()):
        t = record.result
        print(f"result {task}: AUROC {t.auroc.value:.3f} [{t.auroc.ci_low:.3f}, "
              f"{t.auroc.ci_high:.3f}], {t.accuracy_name} {t.accuracy.value}, evaluated "
              f"{record.run.evaluated_at if record.run else 'before provenance was kept'}"
              + ("" if record.holdout is None else
                 f", sealed generation {record.holdout.generation} AUROC "
                 f"{record.holdout.auroc.value:.3f}"))
    print(f"load it: probebench.load_probe({entry.id!r}"
          + (f", registry={source.given!r}" if source.kind != "folder" else "") + ")")
    return 0


def register(reg_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rlist = reg_sub.add_parser(
        "list", help="list the registry's entries (a folder, a built leaderboard or a URL)",
        description="List every entry of a registry: id, status, model, site, probe type "
                    "and its latest stored AUROC per task. The registry can be a checkout's "
                    "folder, a built leaderboard or a published registry.json (only the "
                    "index is downloaded).",
        epilog="example: probebench registry list --registry "
               "https://example.org/leaderboard/registry.json --status live")
    rlist.add_argument("--status", choices=["live", "pending_review", "deprecated"],
                       default=None, help="only entries with this status")
    rlist.add_argument("--quiet", action="store_true", help="no registry line on stderr")
    add_source_options(rlist)
    rlist.set_defaults(func=cmd_list)
    rshow = reg_sub.add_parser(
        "show", help="show one entry and its stored results",
        description="Print an entry's fields and its latest stored result per task (with "
                    "the sealed-holdout score where one is stored), and how to load it.",
        epilog="example: probebench registry show probebench/verb-grammar-smollm2-135m-l15-v2 "
               "--registry ./leaderboard")
    rshow.add_argument("entry", metavar="ENTRY_ID")
    rshow.add_argument("--quiet", action="store_true", help="no registry line on stderr")
    add_source_options(rshow)
    rshow.set_defaults(func=cmd_show)


__all__ = ["add_source_options", "register"]
