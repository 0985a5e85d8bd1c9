"""``probebench holdout``: sealed holdouts, a submitter cannot train on them: keygen,
seal, verify, unseal, rotate, reveal (``probebench.tasks.sealed`` does the work)."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from probebench.cli.common import add_workspace_options, workspace
from probebench.errors import InputError
from probebench.paths import enclosing_repo
from probebench.tasks.sealed import KEY_ENV

if TYPE_CHECKING:
    from probebench.tasks.anatomy import Item
    from probebench.tasks.catalog import TaskCatalog

KEY_RULE = (f"The key comes only from --key FILE or from ${KEY_ENV} (the key's text, as a "
            "GitHub secret is passed); no default path is ever read.")
ITEMS_FORMAT = ("ITEMS is a JSONL file of item records in canonical form, one "
                "Item.record() per line: {\"id\", \"slices\", \"data\", \"prompts\": "
                "[{\"text\", \"spans\", \"id\", \"label\", \"slices\"}]} (what `holdout "
                "unseal` writes), or a folder holding items.jsonl.")


def _key(args: argparse.Namespace, *, required: bool = True) -> bytes | None:
    from probebench.tasks.sealed import read_key

    return read_key(args.key, required=required)


def _required_key(args: argparse.Namespace) -> bytes:
    """The key from --key or the environment; a named error when neither gives one."""
    key = _key(args)
    assert key is not None  # read_key(required=True) raises instead of returning None
    return key


def cmd_keygen(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import write_key_file

    out = Path(args.out)
    ident = write_key_file(out)
    print(f"wrote a new holdout key to {out} (mode 0600, key id {ident})")
    repo = enclosing_repo(out.parent.resolve())
    if (repo / ".git").exists():
        print(f"warning: {out} is inside the git checkout {repo}: never commit it",
              file=sys.stderr)
    print(f"keep it out of every repository; for CI, store the file's text as the secret "
          f"{KEY_ENV}")
    return 0


def _items(args: argparse.Namespace, catalog: TaskCatalog, key: bytes,
           generation: int) -> list[Item]:
    """The items to seal: read from --from, or made fresh (--fresh) by the task's
    generator under the key-derived seed, in memory only."""
    from probebench.tasks.fresh import fresh_items
    from probebench.tasks.sealed import read_items

    if (args.from_path is None) == (not args.fresh):
        raise InputError("give --from ITEMS or --fresh, one of them")
    if args.from_path is not None:
        return read_items(args.from_path)
    items = fresh_items(catalog, args.task, key, generation, n_items=args.n_items)
    print(f"made {len(items)} fresh items for {args.task} (generator seeded from the key; "
          "nothing written but the sealed file)")
    return items


def _next_generation(catalog: TaskCatalog, task_id: str) -> int:
    from probebench.tasks.sealed import generations

    return len(generations(catalog, task_id)) + 1


def cmd_seal(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import seal

    catalog = workspace(args).catalog
    key = _required_key(args)
    items = _items(args, catalog, key, _next_generation(catalog, args.task))
    gen = seal(catalog, args.task, items, key)
    print(f"sealed generation {gen.generation} of {args.task} ({gen.n_items} items, key id "
          f"{gen.key_id}) in {catalog.root_of(args.task) / gen.sealed_file}")
    print(f"  commitment {gen.commitment}")
    print("commit the sealed file and tasks.yaml (its sealed_holdouts); keep any items "
          "file out of the repository")
    return 0


def cmd_rotate(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import rotate

    catalog = workspace(args).catalog
    key = _required_key(args)
    items = _items(args, catalog, key, _next_generation(catalog, args.task))
    retired, gen = rotate(catalog, args.task, items, key)
    print(f"retired generation {retired.generation} of {args.task}; sealed generation "
          f"{gen.generation} ({gen.n_items} items) in "
          f"{catalog.root_of(args.task) / gen.sealed_file}")
    print(f"  commitment {gen.commitment}")
    print(f"reveal the retired one when its audits are done: probebench holdout reveal "
          f"{args.task} --generation {retired.generation} --key FILE")
    return 0


def cmd_unseal(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import read_listing, unseal, write_unsealed

    catalog = workspace(args).catalog
    if bool(args.task) == bool(args.all):
        raise InputError("give a TASK or --all, not both or neither")
    if args.all and args.generation is not None:
        raise InputError("--generation picks one task's generation: give a TASK with it")
    key = _required_key(args)
    out = Path(args.out).resolve()
    roots = {catalog.root_of(t).resolve() for t in catalog.ids}
    for root in roots:
        if out.is_relative_to(root):
            raise InputError(f"--out {args.out}: inside the task catalog {root}, which is "
                             "committed and shipped in the wheel; write the plaintext "
                             "elsewhere")
    repo = enclosing_repo(out)
    if (repo / ".git").exists():
        print(f"warning: {out} is inside the git checkout {repo}: never commit the "
              "plaintext", file=sys.stderr)
    if args.all:
        tasks = sorted({t for source in {catalog.source_of(t) for t in catalog.ids}
                        for t, held in read_listing(source).tasks.items()
                        if held.current is not None and t in catalog.specs})
        if not tasks:
            raise InputError(f"{catalog.describe()}: no task has a current sealed generation")
    else:
        tasks = [args.task]
    for task_id in tasks:
        opened = unseal(catalog, task_id, key, generation=args.generation)
        path = write_unsealed(opened, out)
        print(f"wrote generation {opened.generation} of {task_id} ({len(opened.items)} "
              f"items, mode 0600) to {path}")
    return 0


def cmd_reveal(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import reveal

    catalog = workspace(args).catalog
    key = _required_key(args)
    gen = reveal(catalog, args.task, args.generation, key)
    print(f"revealed generation {gen.generation} of {args.task}: "
          f"{catalog.root_of(args.task) / str(gen.revealed_file)}")
    print(f"  commitment {gen.commitment}, nonce {gen.commitment_nonce}")
    print("anyone can now check it: probebench holdout verify " + args.task)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from probebench.tasks.sealed import FORM_ONLY, verify_holdouts

    catalog = workspace(args).catalog
    key = _key(args, required=False)
    checks = verify_holdouts(catalog, [args.task] if args.task else None, key)
    if not checks:
        print(f"no sealed holdouts listed ({catalog.describe()})")
        return 0
    if key is None:
        print(f"no key given ({FORM_ONLY}): sealed generations get a form-only check, "
              "since an AES-GCM tag needs the key; revealed ones are checked in full")
    for c in checks:
        gen = f"gen {c.generation}" if c.generation is not None else "-"
        print(f"  {'ok  ' if c.ok else 'FAIL'}  {c.task:<38} {gen:<7} {c.message}")
    bad = [c for c in checks if not c.ok]
    form = [c for c in checks if c.ok and c.level == "form"]
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
            "the tasks file's sealed_holdouts section with a public commitment, "
            "sha256(nonce || plaintext), whose nonce stays sealed until the generation is "
            "revealed. " + KEY_RULE, 80),
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
                                 "generator (probebench.tasks.fresh), seeded from the key, so "
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
                              "current: the sealed file goes to holdouts/TASK/gen-N.sealed beside "
                              "the tasks file, and its sealed_holdouts section lists it with its "
                              "commitment. Refused when TASK has a current generation (use "
                              "rotate), and when an item repeats an item id or prompt text of the "
                              "task's splits or of an earlier generation. "
                              + ITEMS_FORMAT + " " + KEY_RULE)
    seal.add_argument("task", metavar="TASK", help="a registered task id")
    items_options(seal)
    key_option(seal)

    verify = action("verify", cmd_verify,
                    help="check every listed generation; exit 1 on any failure",
                    description="Check the sealed holdouts listed in tasks.yaml "
                                "(sealed_holdouts). With the key: each generation is decrypted, "
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
                                "commitment nonce into tasks.yaml (sealed_holdouts), so that "
                                "anyone can check it against the commitment listed since its "
                                "sealing (`holdout verify`, no key needed). The current generation"
                                " is never revealed: rotate first. " + KEY_RULE)
    reveal.add_argument("task", metavar="TASK", help="a registered task id")
    reveal.add_argument("--generation", type=int, required=True, metavar="N",
                        help="the retired generation to reveal")
    key_option(reveal)
