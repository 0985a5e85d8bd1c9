"""``probebench registry list|show|download``: read a registry from a folder, a built
leaderboard or a URL (``probebench.registry.mirror``), as a pip user without a checkout
does (``download`` copies an entry's verified artifact folder out of it); and
``registry sign``, the maintainers' signature of a built leaderboard's index
(``probebench.registry.signing``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probebench.registry.mirror import RegistrySource

SOURCE_HELP = ("where the registry is: a folder holding probes/, a built leaderboard "
               "holding registry.json, or the https:// URL of its registry.json or of the "
               "leaderboard itself (https://host/board/ reads .../board/registry.json; files "
               "are downloaded into $PROBEBENCH_HOME/mirrors and checked against the index). "
               "Default: $PROBEBENCH_REGISTRY, else the enclosing checkout's registry/, else "
               "the project's published leaderboard")
PIN_HELP = ("pin the registry.json of a leaderboard or URL by its SHA-256 (also URL#sha256=HEX): "
            "a changed index is refused; recommended when citing a result")


def _add_reader_options(parser: argparse.ArgumentParser) -> None:
    """What every command that reads a registry takes: --quiet, which registry
    (``add_source_options``) and --require-signed."""
    parser.add_argument("--quiet", action="store_true", help="no registry line on stderr")
    add_source_options(parser)
    parser.add_argument("--require-signed", action="store_true",
                        help="refuse a registry read unsigned (a folder, or a built "
                             "leaderboard without registry.json.sig); a URL is always "
                             "verified")


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """--registry SRC and --registry-sha256 HEX: a registry anywhere, pinned or not."""
    group = parser.add_argument_group("which registry")
    group.add_argument("--registry", dest="registry_source", default=None, metavar="SRC",
                       help=SOURCE_HELP)
    group.add_argument("--registry-sha256", default=None, metavar="HEX", help=PIN_HELP)


def _signed_if_asked(args: argparse.Namespace, source: RegistrySource) -> None:
    if getattr(args, "require_signed", False) and source.verified is None:
        from probebench.registry.signing import UnsignedIndexError

        raise UnsignedIndexError(f"{source.given}: read unsigned, and --require-signed asks "
                                 "for a verified registry.json.sig")


def _per_task(values: dict[str, float | None]) -> str:
    shown = [f"{t} {v:.3f}" for t, v in sorted(values.items()) if v is not None]
    return "; ".join(shown) or "no stored result"


#: ``registry list``'s columns, in order
LIST_COLUMNS = ("ID", "STATUS", "MODEL", "SITE", "PROBE", "AUROC per task")
#: ``registry list --status``'s choices: one entry status, or ``all``
LIST_STATUSES = ("live", "pending_review", "deprecated", "all")


def _entries(n: int, status: str = "") -> str:
    return f"{n} {status + ' ' if status else ''}entr{'y' if n == 1 else 'ies'}"


def _count_line(shown: int, total: list[str], status: str) -> str:
    """The trailing line: how many are listed and, when some are not, how to see them."""
    if status == "all":
        order = [s for s in LIST_STATUSES if s in total] + sorted(set(total) -
                                                                   set(LIST_STATUSES))
        by = ", ".join(f"{total.count(s)} {s}" for s in order)
        return f"{_entries(shown)}" + (f" ({by})" if by else "")
    others = len(total) - shown
    hidden = f" ({others} other{'s' if others != 1 else ''}: --status all)" if others else ""
    return (_entries(shown, status) if shown else f"no {status} entries") + hidden


def cmd_list(args: argparse.Namespace) -> int:
    from probebench.registry.mirror import registry_entries

    source, every = registry_entries(args.registry_source, sha256=args.registry_sha256)
    _signed_if_asked(args, source)
    if not args.quiet:
        print(f"probebench: {source.describe()}", file=sys.stderr)
    entries = [e for e in every if args.status in ("all", e.status)]
    rows = [(e.id, e.status, e.model, f"{e.layer}:{e.position}", e.probe_type,
             _per_task(e.auroc)) for e in entries]
    if rows:
        widths = [max(len(r[k]) for r in [LIST_COLUMNS, *rows])
                  for k in range(len(LIST_COLUMNS) - 1)]
        for row in [LIST_COLUMNS, *rows]:
            print("  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths, strict=False))
                  + "  " + row[-1])
    print(_count_line(len(entries), [e.status for e in every], args.status))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import yaml

    from probebench.registry.mirror import show_entry

    source, entry, stored = show_entry(args.entry, args.registry_source,
                                       sha256=args.registry_sha256)
    _signed_if_asked(args, source)
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


def cmd_sign(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime, timedelta
    from pathlib import Path

    from probebench.registry.mirror import sign_site
    from probebench.registry.signing import read_private_key

    if args.key == "-":
        data, where = sys.stdin.buffer.read(1 << 16), "the key on stdin"
    else:
        path = Path(args.key)
        try:
            data, where = path.read_bytes()[: 1 << 16], str(path)
        except OSError as exc:
            print(f"probebench: {path}: cannot read the signing key ({exc.strerror})",
                  file=sys.stderr)
            return 2
    key = read_private_key(data, where)
    now = datetime.now(UTC)
    out = sign_site(Path(args.site), key, version=args.version, now=now,
                    expires=now + timedelta(days=args.expires_in_days))
    from probebench.registry.signing import parse_signature

    signed = parse_signature(out.read_bytes(), str(out)).signed
    print(f"signed {out}: index sha256 {signed.index_sha256}, version {signed.version}, "
          f"expires {signed.expires}, key {signed.key_id[:16]}...")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from probebench.registry.mirror import download_artifact

    folder, found = download_artifact(args.entry, args.out, registry=args.registry_source,
                                      sha256=args.registry_sha256,
                                      require_signed=args.require_signed)
    if not args.quiet:
        print(f"probebench: {found.source.describe()}", file=sys.stderr)
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    print(f"wrote {folder}: the artifact of {found.entry.id} ({files} files, bundle sha256 "
          f"{found.entry.artifact_sha256}, validated)")
    print(f"next: probebench validate {folder} --sha256 {found.entry.artifact_sha256}")
    return 0


def _days(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 366:
        raise argparse.ArgumentTypeError("expected 1 to 366 days")
    return value


def register(reg_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rlist = reg_sub.add_parser(
        "list", help="list the registry's entries (a folder, a built leaderboard or a URL)",
        description="List a registry's entries, under a header row: id, status, model, "
                    "site, probe type and its latest stored AUROC per task. Only live "
                    "entries unless --status says otherwise; the last line counts those "
                    "left out. The registry can be a checkout's folder, a built leaderboard "
                    "or a published registry.json (only the index is downloaded).",
        epilog="example: probebench registry list --registry "
               "https://example.org/leaderboard/registry.json --status all")
    rlist.add_argument("--status", choices=LIST_STATUSES, default="live",
                       help="only entries with this status, or all of them "
                            "(default: %(default)s)")
    _add_reader_options(rlist)
    rlist.set_defaults(func=cmd_list)
    rshow = reg_sub.add_parser(
        "show", help="show one entry and its stored results",
        description="Print an entry's fields and its latest stored result per task (with "
                    "the sealed-holdout score where one is stored), and how to load it.",
        epilog="example: probebench registry show probebench/verb-grammar-smollm2-135m-l15-v2 "
               "--registry ./leaderboard")
    rshow.add_argument("entry", metavar="ENTRY_ID")
    _add_reader_options(rshow)
    rshow.set_defaults(func=cmd_show)
    rdown = reg_sub.add_parser(
        "download", help="copy an entry's verified artifact folder out of the registry",
        description="Copy the artifact folder of a registry entry to --out: from a mirror "
                    "(a built leaderboard or a URL) it is downloaded into the cache and each "
                    "file checked against the signed index; from a folder, the entry's "
                    "artifact_url is resolved. The copy is validated with the entry's "
                    "artifact_sha256 before it appears under its name; an existing folder "
                    "that is not empty is never overwritten.",
        epilog="example: probebench registry download "
               "probebench/blimp-det-noun-smollm2-135m-l15-v1 --out det-noun "
               "--registry https://example.org/leaderboard/")
    rdown.add_argument("entry", metavar="ENTRY_ID")
    rdown.add_argument("--out", default=None, metavar="DIR",
                       help="the folder to write, new or empty (default: ./NAME, the part of "
                            "the id after org/)")
    _add_reader_options(rdown)
    rdown.set_defaults(func=cmd_download)
    rsign = reg_sub.add_parser(
        "sign", help="sign a built leaderboard's registry.json (maintainers' workflow)",
        description="Write SITE/registry.json.sig: an Ed25519 signature (the maintainers' "
                    "key, a secret of the leaderboard workflow) over the index's SHA-256 and "
                    "size, a version that only goes up and an expiry. Readers of a URL "
                    "refuse an index that is unsigned, signed by a key the package does not "
                    "ship (or $PROBEBENCH_REGISTRY_KEYS names), expired, or older than one "
                    "they have verified. docs/registry.md, 'A signed index', has the threat "
                    "model.",
        epilog="example (the key never touches the disk): printf '%s' \"$KEY\" | "
               "probebench registry sign leaderboard --key -")
    rsign.add_argument("site", metavar="SITE", help="a built leaderboard holding registry.json")
    rsign.add_argument("--key", required=True, metavar="FILE",
                       help="the Ed25519 private key, PKCS#8 PEM ('-': read it from stdin)")
    rsign.add_argument("--version", type=int, default=None, metavar="N",
                       help="the index version (default: now, in UTC seconds: it only goes "
                            "up, also across key rotations)")
    rsign.add_argument("--expires-in-days", type=_days, default=30, metavar="DAYS",
                       help="how long the signature holds (default 30; the workflow "
                            "re-signs weekly)")
    rsign.set_defaults(func=cmd_sign)


__all__ = ["add_source_options", "register"]
