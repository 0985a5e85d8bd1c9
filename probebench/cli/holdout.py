"""``probebench holdout``: sealed holdouts, a submitter cannot train on them: keygen,
seal, verify, unseal, rotate, reveal (``probebench.tasks.sealed`` does the work)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.cli.common import add_workspace_options, workspace
from probebench.errors import InputError
from probebench.tasks.sealed import FRESH, KEY_ENV, LISTING_FILE

if TYPE_CHECKING:
    from probebench.tasks.sealed import Generation, HoldoutItems

KEY_RULE = (f"The key comes only from --key FILE or from ${KEY_ENV} (the key's text, as a "
            "GitHub secret is passed); no default path is ever read.")
ITEMS_FORMAT = ("ITEMS is a JSONL file of item records in canonical form, one "
                "Item.record() per line: {\"id\", \"slices\", \"data\", \"prompts\": "
                "[{\"text\", \"spans\", \"id\", \"label\", \"slices\"}]} (what `holdout "
                "unseal` writes), or a folder holding items.jsonl.")


def cmd_keygen(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import write_key_file

    ident = write_key_file(args.out)
    print(f"wrote a new holdout key to {args.out} (mode 0600, key id {ident})")
    print(f"keep it out of every repository; for CI, store the file's text as the secret "
          f"{KEY_ENV}")
    return 0


def _items(args: argparse.Namespace) -> HoldoutItems:
    """What --from or --fresh asks to seal."""
    if (args.from_path is None) == (not args.fresh):
        raise InputError("give --from ITEMS or --fresh, one of them")
    if args.fresh:
        return FRESH
    return Path(args.from_path)


def _made(args: argparse.Namespace, gen: Generation) -> None:
    if args.fresh:
        print(f"made {gen.n_items} fresh items for {args.task} (generator seeded from the "
              "key; nothing written but the sealed file)")


def cmd_seal(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import seal

    catalog = workspace(args).catalog
    gen = seal(catalog, args.task, _items(args), args.key, n_items=args.n_items)
    _made(args, gen)
    print(f"sealed generation {gen.generation} of {args.task} ({gen.n_items} items, key id "
          f"{gen.key_id}) in {catalog.root_of(args.task) / gen.sealed_file}")
    print(f"  commitment {gen.commitment}")
    print(f"commit the sealed file and {LISTING_FILE} beside the tasks file; keep any "
          "items file out of the repository")
    return 0


def cmd_rotate(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import rotate

    catalog = workspace(args).catalog
    retired, gen = rotate(catalog, args.task, _items(args), args.key, n_items=args.n_items)
    _made(args, gen)
    print(f"retired generation {retired.generation} of {args.task}; sealed generation "
          f"{gen.generation} ({gen.n_items} items) in "
          f"{catalog.root_of(args.task) / gen.sealed_file}")
    print(f"  commitment {gen.commitment}")
    print(f"reveal the retired one when its audits are done: probebench holdout reveal "
          f"{args.task} --generation {retired.generation} --key FILE")
    return 0


def cmd_unseal(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import unseal_to

    if bool(args.task) == bool(args.all):
        raise InputError("give a TASK or --all, not both or neither")
    catalog = workspace(args).catalog
    for opened, path in unseal_to(catalog, args.out, args.key, task_id=args.task,
                                  generation=args.generation):
        print(f"wrote generation {opened.generation} of {opened.task} ({len(opened.items)} "
              f"items, mode 0600) to {path}")
    return 0


def cmd_reveal(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import reveal

    catalog = workspace(args).catalog
    gen = reveal(catalog, args.task, args.generation, args.key)
    print(f"revealed generation {gen.generation} of {args.task}: "
          f"{catalog.root_of(args.task) / str(gen.revealed_file)}")
    print(f"  commitment {gen.commitment}, nonce {gen.commitment_nonce}")
    print("anyone can now check it: probebench holdout verify " + args.task)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import FORM_ONLY, verify_holdouts

    catalog = workspace(args).catalog
    checks = verify_holdouts(catalog, [args.task] if args.task else None, args.key)
    if not checks:
        print(f"no sealed holdouts listed ({catalog.describe()})")
        return 0
    form = [c for c in checks if c.ok and c.level == "form"]
    if form:
        print(f"{FORM_ONLY}: sealed generations without their key get a form-only check, "
              "since an AES-GCM tag needs the key; revealed ones are checked in full")
    for c in checks:
        gen = f"gen {c.generation}" if c.generation is not None else "-"
        print(f"  {'ok  ' if c.ok else 'FAIL'}  {c.task:<38} {gen:<7} {c.message}")
    bad = [c for c in checks if not c.ok]
    note = f"; {len(form)} checked for form only: authenticity needs the key" if form else ""
    print(f"{len(checks) - len(bad)} of {len(checks)} checks pass{note}")
    return 1 if bad else 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    holdout = commands.add_parser(
        "holdout", help="sealed holdouts: keygen, seal, verify, unseal, rotate, reveal",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Holdouts a submitter cannot train on. A task's holdout is kept in generations; "
            "each is sealed (AES-256-GCM) with the maintainers' key and listed in "
            "holdouts.yaml beside the tasks file (never in the tasks file) with a public "
            "commitment, sha256(nonce || plaintext), whose nonce stays sealed until the "
            "generation is revealed. " + KEY_RULE, 80),
        epilog="lifecycle:\n"
               "  probebench holdout keygen --out ~/holdout.key     # once; never commit it\n"
               "  probebench holdout seal TASK --fresh --key ~/holdout.key\n"
               "  probebench holdout seal TASK --from items.jsonl --key ~/holdout.key\n"
               "  probebench holdout verify                         # form only, no key\n"
               "  probebench holdout rotate TASK --from new.jsonl --key ~/holdout.key\n"
               "  probebench holdout reveal TASK --generation 1 --key ~/holdout.key\n"
               "see docs/tasks.md, \"Sealed holdouts\"")
    add_workspace_options(holdout, include=False)
    sub = holdout.add_subparsers(dest="holdout_command", metavar="ACTION", required=True)

    def action(name: str, func: object, *, workspace_options: bool = True,
               **kwargs: object) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, **kwargs)  # type: ignore[arg-type]
        if workspace_options:
            add_workspace_options(parser, include=False)
        parser.set_defaults(func=func)
        return parser

    def key_option(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
        extra = (" Without a key, sealed generations are checked for form only."
                 if optional else "")
        parser.add_argument("--key", type=Path, default=None, metavar="FILE",
                            help=f"the holdout key file (64 hex digits; `holdout keygen`). "
                                 f"Else ${KEY_ENV} holds the key's text; no default path is "
                                 f"read.{extra}")

    def items_options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--from", dest="from_path", type=Path, default=None,
                            metavar="ITEMS", help="the items to seal (see above)")
        parser.add_argument("--fresh", action="store_true",
                            help="instead of --from: make the items with the task's fresh-item "
                                 "generator (tasks/families/*/fresh.py), seeded from the key, so "
                                 "the public generator code does not give them away; they "
                                 "are checked against every packaged file and never written "
                                 "in plaintext")
        parser.add_argument("--n-items", type=int, default=None, metavar="N",
                            help="with --fresh: how many items (default: the generator's, "
                                 "sized to detect a 10-point AUROC drop)")

    keygen = action("keygen", cmd_keygen, workspace_options=False,
                    help="write a new random key file (mode 0600)",
                    description="Write 32 random bytes, as 64 hex digits, to FILE with mode "
                                "0600. An existing file is never overwritten. Keep the key "
                                "out of every repository; CI gets the file's text as the "
                                f"secret {KEY_ENV}.")
    keygen.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="where to write the key (must not exist)")

    seal = action("seal", cmd_seal, help="seal items as a task's first (or next) generation",
                  description="Seal ITEMS as the next generation of TASK's holdout, now "
                              "current: the sealed file goes to holdouts/TASK/gen-N.sealed "
                              "beside the tasks file, and holdouts.yaml beside it lists it "
                              "with its commitment (the tasks file is never written). Refused "
                              "when TASK has a current generation (use rotate), and when an "
                              "item repeats an item id or prompt text of the task's splits or "
                              "of an earlier generation. "
                              + ITEMS_FORMAT + " " + KEY_RULE)
    seal.add_argument("task", metavar="TASK", help="a registered task id")
    items_options(seal)
    key_option(seal)

    verify = action("verify", cmd_verify,
                    help="check every listed generation; exit 1 on any failure",
                    description="Check the sealed holdouts listed in holdouts.yaml beside "
                                "each tasks file. With the key: each generation is decrypted, "
                                "authenticated and matched to its commitment. Without it: form "
                                "only (files present, sizes and SHA-256 as listed, sealed files "
                                "well formed), since an AES-GCM tag cannot be checked without the "
                                "key; revealed generations are checked in full either way (the "
                                "revealed file against its commitment).")
    verify.add_argument("task", metavar="TASK", nargs="?", default=None,
                        help="one task (default: every listed one)")
    key_option(verify, optional=True)

    unseal = action("unseal", cmd_unseal, help="write a generation's plaintext (maintainers)",
                    description="Decrypt TASK's current generation (or --generation N), or "
                                "every task's current one (--all), and write "
                                "OUT/TASK/gen-N.jsonl with mode 0600: the item records that "
                                "seal and rotate read. Nothing is printed but paths and "
                                "counts. Refused inside the task catalog's folder; warned "
                                "inside a git checkout. " + KEY_RULE)
    unseal.add_argument("task", metavar="TASK", nargs="?", default=None, help="a task id")
    unseal.add_argument("--all", action="store_true",
                        help="every task with a current sealed generation")
    unseal.add_argument("--generation", type=int, default=None, metavar="N",
                        help="a generation other than the current one")
    unseal.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="folder to write into (outside the repository)")
    key_option(unseal)

    rotate = action("rotate", cmd_rotate,
                    help="retire the current generation and seal the next",
                    description="Retire TASK's current generation (the key must open it) "
                                "and seal ITEMS as the next, in one listing write. The "
                                "retired generation stays sealed until `holdout reveal`. "
                                + ITEMS_FORMAT + " " + KEY_RULE)
    rotate.add_argument("task", metavar="TASK", help="a registered task id")
    items_options(rotate)
    key_option(rotate)

    reveal = action("reveal", cmd_reveal, help="publish a retired generation's plaintext",
                    description="Write a retired generation's plaintext to "
                                "holdouts/TASK/gen-N.revealed.jsonl (its exact bytes) and its "
                                "commitment nonce into holdouts.yaml, so that "
                                "anyone can check it against the commitment listed since its "
                                "sealing (`holdout verify`, no key needed). The current generation"
                                " is never revealed: rotate first. " + KEY_RULE)
    reveal.add_argument("task", metavar="TASK", help="a registered task id")
    reveal.add_argument("--generation", type=int, required=True, metavar="N",
                        help="the retired generation to reveal")
    key_option(reveal)
