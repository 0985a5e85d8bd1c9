"""``python -m probebench.tasks.families.statements.exchanges --source DATA --out DIR``:
write the chat-exchange tasks' files (``DIR/refusal/...``, ``DIR/honesty/...``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from probebench.tasks.families.statements.exchanges.files import write_jsonl
from probebench.tasks.families.statements.exchanges.honesty import (
    honesty_cities_files,
    honesty_files,
)
from probebench.tasks.families.statements.exchanges.refusal import refusal_files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m probebench.tasks.families.statements.exchanges",
        description="Write the files of refusal_harmful and honesty_instructed from their "
                    "pinned sources; on the same sources the packaged files come out byte "
                    "for byte.")
    parser.add_argument("--source", type=Path, required=True,
                        help="a folder with refusal/ (advbench.csv, harmless_val.json, "
                             "harmless_test.json) and honesty/ (facts_true_false.csv)")
    parser.add_argument("--out", type=Path, required=True,
                        help="the data folder to write (the catalog's: probebench/catalog/"
                             "data); honesty_instructed_cities reads OUT/truth/cities.csv, "
                             "truth_cities' file")
    args = parser.parse_args(argv)
    for folder, files in (("refusal", refusal_files(args.source / "refusal")),
                          ("honesty", honesty_files(args.source / "honesty")),
                          ("honesty", honesty_cities_files(args.out / "truth" /
                                                           "cities.csv"))):
        for name, rows in files.items():
            write_jsonl(args.out / folder / name, rows)
            print(f"{args.out / folder / name}: {len(rows)} items")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
