"""How fast ``probebench validate`` answers, in a fresh process each time (best of 5).

Cases: a malformed ``meta.yaml`` (the target: under 1 s, no torch import), and a
complete valid joblib artifact of a 576-feature MLP. Baseline: ``python -c pass``
(the interpreter's own start-up), so the table shows what probebench adds.

    python benchmarks/validate.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.artifacts import make_artifact


def best_of(argv: list[str], n: int = 5) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        good, *_ = make_artifact(Path(tmp) / "good", probe_type="mlp", hidden=(32,))
        bad, *_ = make_artifact(Path(tmp) / "bad")
        (bad / "meta.yaml").write_text("spec_version: [unclosed\n")
        base = best_of([sys.executable, "-c", "pass"])
        cli = [sys.executable, "-m", "probebench", "validate"]
        rows = [("malformed meta.yaml", best_of([*cli, str(bad)]), "< 1 s"),
                ("valid MLP artifact (576 -> 32 -> 1)", best_of([*cli, str(good)]), "")]
    print(f"{'case':<38} {'wall':>8} {'minus python start-up':>22}  target")
    print(f"{'python -c pass (baseline)':<38} {base:>7.3f}s {'':>22}")
    for name, t, target in rows:
        print(f"{name:<38} {t:>7.3f}s {t - base:>21.3f}s  {target}")


if __name__ == "__main__":
    main()
