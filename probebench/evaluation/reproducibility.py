"""The reproducibility contract: what two evaluations of the same inputs agree on.

Measured by ``benchmarks/reproducibility.py`` (figures in BENCHMARKS.md; the contract in
METHODOLOGY.md). On the CPU in float32:

* The same machine, library versions, seed and batch budget give **identical** results
  whatever the thread count (1, 2 or 4) and whether activations come from the cache or
  a fresh forward pass: the kernels' reductions do not depend on the thread count, and
  a cached array is the array the forward pass produced.
* Another batch budget (or another machine) changes each activation by float rounding
  (relative 1e-7 to 1e-6: kernel shapes differ). That moves probabilities, ECE, Brier
  and CI bounds by less than ``VALUE_TOLERANCE``, and every continuous number stored is
  rounded to ``DECIMALS`` places so such noise does not reach the digits shown.
* Count-based numbers (an accuracy, an AUROC as a share of pairs, a FPR) move in whole
  steps: a score lying within float noise of the 0.5 threshold, or of a score of the
  other class, can flip one decision. Such a flip is a change beyond the contract and
  is stored as a new record; the benchmark reports how often it happened.

``differences`` is the comparison ``registry evaluate`` uses to decide whether a
re-evaluation is a new result, and the one tests use instead of exact equality.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: decimal places of every continuous number stored (probabilities, metrics, CI bounds)
DECIMALS = 6
#: largest absolute difference between two evaluations that is not a new result
VALUE_TOLERANCE = 1e-5
#: the same for re-trained numbers (under ``RETRAINED_KEYS``: the entry's architecture
#: fitted again, ``probebench.evaluation.selectivity``): an MLP's fit ends in another
#: minimum when its activations move by float rounding, moving its accuracies by whole
#: prompts; the spread measured on the verb-grammar MLP entry is in METHODOLOGY.md
RETRAINED_TOLERANCE = 0.05
RETRAINED_KEYS = frozenset({"selectivity"})


def rounded(x: float) -> float:
    """``x`` to ``DECIMALS`` places (-0.0 becomes 0.0; NaN and inf are left alone).

    >>> rounded(0.12345678)
    0.123457
    """
    if not math.isfinite(x):
        return x
    return round(x, DECIMALS) + 0.0


def differences(old: Any, new: Any, *, tolerance: float = VALUE_TOLERANCE,
                path: str = "", limit: int = 20,
                retrained_tolerance: float = RETRAINED_TOLERANCE) -> list[str]:
    """Where two JSON-like documents differ beyond ``tolerance`` (numbers; the larger
    ``retrained_tolerance`` under a key of ``RETRAINED_KEYS``) or at all (anything
    else): at most ``limit`` lines ``path: old -> new``."""
    out: list[str] = []
    _walk(old, new, tolerance, path, out, limit, retrained_tolerance)
    return out


def _walk(a: Any, b: Any, tol: float, path: str, out: list[str], limit: int,
          retrained: float = RETRAINED_TOLERANCE) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(f"{where}: {a.get(key, 'missing')!r} -> "
                           f"{b.get(key, 'missing')!r}")
            else:
                sub = max(tol, retrained) if key in RETRAINED_KEYS else tol
                _walk(a[key], b[key], sub, where, out, limit, retrained)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} values -> {len(b)} values")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(x, y, tol, f"{path}[{i}]", out, limit, retrained)
        return
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if abs(float(a) - float(b)) > tol:
            out.append(f"{path}: {a!r} -> {b!r}")
        return
    if a != b:
        out.append(f"{path}: {a!r} -> {b!r}")


__all__ = ["DECIMALS", "RETRAINED_KEYS", "RETRAINED_TOLERANCE", "VALUE_TOLERANCE", "differences",
           "rounded"]
