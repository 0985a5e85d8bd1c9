"""How small a drop in AUROC a holdout of a given size can detect.

Hanley and McNeil (1982) give the standard error of an AUROC ``A`` from ``n1`` positive
and ``n0`` negative prompts::

    Q1 = A / (2 - A),  Q2 = 2 A² / (1 + A)
    SE² = (A (1 - A) + (n1 - 1)(Q1 - A²) + (n0 - 1)(Q2 - A²)) / (n1 n0)

The *minimum detectable drop* of a holdout is the true fall in AUROC that a one-sided
test at level 2.5% (the re-evaluation's "stored AUROC above the holdout's whole 95% CI")
catches with 80% power: ``(z_0.975 + z_0.8) x SE``, taken at a typical probe AUROC of
0.75 (the registry's reference probes range from 0.70 to 0.97). A holdout whose
minimum detectable drop is above 10 points cannot support the deprecation rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from probebench.tasks.anatomy import Item

#: the AUROC at which a holdout's power is quoted
TYPICAL_AUROC = 0.75
Z_975 = 1.959963984540054
Z_80 = 0.8416212335729143
#: the drop (AUROC points) a holdout must detect: the deprecation threshold
TARGET_DROP = 10.0


def standard_error(auroc: float, n_pos: int, n_neg: int) -> float:
    """Hanley-McNeil standard error of an AUROC.

    >>> round(standard_error(0.75, 100, 100), 4)
    0.0344
    """
    if n_pos < 1 or n_neg < 1:
        raise ValueError(f"need prompts of both labels, found {n_pos} and {n_neg}")
    a = auroc
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n_pos - 1) * (q1 - a * a) + (n_neg - 1) * (q2 - a * a)) / (
        n_pos * n_neg)
    return math.sqrt(max(var, 0.0))


def minimum_detectable_drop(n_pos: int, n_neg: int, *, auroc: float = TYPICAL_AUROC,
                            power_z: float = Z_80) -> float:
    """The AUROC drop, in points, caught with 80% power by a one-sided 2.5% test.

    >>> round(minimum_detectable_drop(100, 100), 1)
    9.6
    >>> round(minimum_detectable_drop(12, 12), 1)
    28.4
    """
    return 100.0 * (Z_975 + power_z) * standard_error(auroc, n_pos, n_neg)


def label_counts(items: Sequence[Item]) -> tuple[int, int]:
    """(label-1 prompts, label-0 prompts) of ``items``."""
    labels = [p.label for item in items for p in item.prompts]
    return sum(1 for x in labels if x == 1), sum(1 for x in labels if x == 0)


def items_drop(items: Sequence[Item], *, auroc: float = TYPICAL_AUROC) -> float | None:
    """The minimum detectable drop of a holdout made of ``items`` (None without prompts
    of both labels)."""
    n_pos, n_neg = label_counts(items)
    if not n_pos or not n_neg:
        return None
    return minimum_detectable_drop(n_pos, n_neg, auroc=auroc)


__all__ = ["TARGET_DROP", "TYPICAL_AUROC", "items_drop", "label_counts",
           "minimum_detectable_drop", "standard_error"]
