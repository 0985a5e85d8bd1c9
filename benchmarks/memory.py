"""Peak memory of extracting many sentences at one site (default 10,000 at 15:last_token).

Runs the extraction in a child process and reports its peak resident set size
(``ru_maxrss``), which includes the Python runtime, torch, the float32 model and the
output file. Only pooled vectors are kept (n x hidden floats), never whole layers.

    python benchmarks/memory.py [--n 10000] [--site 15:last_token]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import sentences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--site", default="15:last_token")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "in.jsonl"
        with inp.open("w") as handle:
            for i, text in enumerate(sentences(args.n, seed=1)):
                handle.write(json.dumps({"id": f"s{i}", "text": text}) + "\n")
        code = (
            "import resource, sys; from probebench.cli import main; "
            f"rc = main(['extract', '--site', {args.site!r}, '--input', {str(inp)!r}, "
            f"'--out', {str(Path(tmp) / 'out.safetensors')!r}, '--no-cache', '--quiet', "
            "'--device', 'cpu']); "
            "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); "
            "sys.exit(rc)"
        )
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True)
        elapsed = time.perf_counter() - start
    rss_kb = next(int(line.split()[1]) for line in proc.stdout.splitlines()
                  if line.startswith("MAXRSS_KB"))
    print(f"{'sentences':>10} {'site':>14} {'peak RSS':>10} {'wall':>8}  target")
    print(f"{args.n:>10} {args.site:>14} {rss_kb / 1024**2:>8.2f} GB {elapsed:>7.0f}s  < 1.5 GB")


if __name__ == "__main__":
    main()
