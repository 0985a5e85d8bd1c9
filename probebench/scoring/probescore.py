"""ProbeScore from a versioned scoring spec (``specs/*.yaml``).

1. Each axis gets a value in [0, 1] from the entry's latest results, averaged over its
   tasks (maps and imputations in the spec; imputed values are flagged).
2. Weights are divided by their sum (v0.0.1's published weights sum to 0.90).
3. Contribution of an axis = normalised weight x value; the total is their sum.
4. The 30% rule: no axis may contribute more than ``cap`` (0.30) of the total. Axes over
   it are clipped to exactly ``cap`` of the new total, which is solved as a fixed point:
   with C the clipped axes and F the sum of the others, total = F / (1 - sum of caps
   of C). A closed licence has its own ceiling: its licence axis contributes at most
   1% of the total (METHODOLOGY.md). A spec with any raw weight above 0.30 does not
   load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from statistics import median
from typing import Any

from probebench.errors import InputError
from probebench.yamlsafe import load_yaml

SPECS_DIR = Path(__file__).with_name("specs")
MAX_WEIGHT = 0.30
CLOSED_LICENCE_CEILING = 0.01
LICENCE_SCORES = {"Apache-2.0": 1.0, "MIT": 0.95, "custom": 0.5, "closed": 0.2}
DEFAULT_SPEC = "0.0.2"


@dataclass(frozen=True)
class Axis:
    name: str
    weight: float
    source: str
    note: str


@dataclass(frozen=True)
class ScoringSpec:
    version: str
    description: str
    cap: float
    axes: tuple[Axis, ...]

    @property
    def weight_sum(self) -> float:
        return sum(a.weight for a in self.axes)

    def normalised(self) -> dict[str, float]:
        return {a.name: a.weight / self.weight_sum for a in self.axes}


def available_specs() -> list[str]:
    return sorted(p.stem.lstrip("v") for p in SPECS_DIR.glob("v*.yaml"))


def parse_spec(data: Any, source: str) -> ScoringSpec:
    if not isinstance(data, dict) or not isinstance(data.get("axes"), dict):
        raise InputError(f"{source}: expected 'version', 'cap' and 'axes'")
    cap = float(data.get("cap", MAX_WEIGHT))
    if not 0 < cap <= MAX_WEIGHT:
        raise InputError(f"{source}: cap must be in (0, {MAX_WEIGHT}], found {cap}")
    axes = []
    for name, spec in data["axes"].items():
        weight = float(spec["weight"])
        if not 0 < weight <= MAX_WEIGHT:
            raise InputError(f"{source}: axis {name!r} has weight {weight}; every weight must "
                             f"be in (0, {MAX_WEIGHT}] (no axis may carry more than 30%)")
        note = str(spec.get("map") or spec.get("impute") or "")
        axes.append(Axis(str(name), weight, str(spec["source"]), note))
    return ScoringSpec(str(data["version"]), str(data.get("description", "")), cap, tuple(axes))


@cache
def load_spec(version: str = DEFAULT_SPEC) -> ScoringSpec:
    path = SPECS_DIR / f"v{version}.yaml"
    if not path.is_file():
        raise InputError(f"unknown scoring spec {version!r}; available: "
                         f"{', '.join(available_specs())}")
    return parse_spec(load_yaml(path), str(path))


@dataclass(frozen=True)
class AxisValue:
    value: float
    imputed: bool = False
    note: str = ""


def clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def licence_score(licence: str) -> float:
    if licence in LICENCE_SCORES:
        return LICENCE_SCORES[licence]
    if licence.startswith("BSD"):
        return 0.9
    if licence.startswith("CC-BY"):
        return 0.85
    return 0.8  # another open licence


def ece_axis(ece: float) -> float:
    """1 - 2 x ECE, clamped.

    >>> ece_axis(0.05)
    0.9
    """
    return clamp(1.0 - 2.0 * ece)


def efficiency_axis(latency_ms: float) -> float:
    """1 - log10(latency in ms) / 4, clamped (1 ms -> 1.0, 10 s -> 0.0).

    >>> efficiency_axis(10.0)
    0.75
    """
    return clamp(1.0 - math.log10(max(latency_ms, 1e-9)) / 4.0)


def axis_values(results: dict[str, dict[str, Any]], licence: str) -> dict[str, AxisValue]:
    """Axis values (by source name) from the latest result record of each task."""
    if not results:
        raise InputError("no results to score")
    tasks = [r["result"] for r in results.values()]
    aurocs = [t["auroc"]["value"] for t in tasks]
    auroc = sum(aurocs) / len(aurocs)
    evalaware = [t["evalaware_auroc"] for t in tasks]
    dist = []
    for t, a in zip(tasks, aurocs, strict=True):
        d = t["distshift_auroc"]
        dist.append((d["value"], False) if d["value"] is not None else (0.7 * a, True))
    transfers = [v for t in tasks for v in t["transfer"].values()]
    measured = [v["value"] for v in transfers if not v["imputed"] and v["value"] is not None]
    latencies = [r["latency_ms"] for r in results.values() if r.get("latency_ms")]
    out = {
        "auroc": AxisValue(auroc),
        "evalaware_auroc": AxisValue(sum(e["value"] for e in evalaware) / len(evalaware),
                                     imputed=any(e["imputed"] for e in evalaware),
                                     note="0.85 x AUROC (no guard)"
                                     if any(e["imputed"] for e in evalaware) else ""),
        "distshift_auroc": AxisValue(sum(v for v, _ in dist) / len(dist),
                                     imputed=any(i for _, i in dist),
                                     note="0.7 x AUROC (not measurable)"
                                     if any(i for _, i in dist) else ""),
        "ece": AxisValue(ece_axis(sum(t["ece"] for t in tasks) / len(tasks))),
        "transfer": AxisValue(clamp(sum(measured) / len(measured)), note="mean Pearson r")
        if measured else AxisValue(0.5, imputed=True, note="no transfer target declared"),
        "latency_ms": AxisValue(efficiency_axis(median(latencies)))
        if latencies else AxisValue(0.5, imputed=True, note="latency not measured"),
        "license": AxisValue(licence_score(licence)),
        "goodhart": AxisValue(0.5, imputed=True, note="not measured yet"),
    }
    return out


@dataclass
class ScoreBreakdown:
    total: float
    contributions: dict[str, float]
    values: dict[str, AxisValue]
    capped: list[str] = field(default_factory=list)

    @property
    def imputed(self) -> list[str]:
        return [name for name, v in self.values.items() if v.imputed]


def apply_cap(raw: dict[str, float], caps: dict[str, float]) -> tuple[dict[str, float],
                                                                      list[str]]:
    """Clip contributions so none exceeds its cap share of the (new) total."""
    capped: set[str] = set()
    while True:
        free = sum(v for k, v in raw.items() if k not in capped)
        share = sum(caps[k] for k in capped)
        total = free / (1.0 - share) if share < 1.0 else 0.0
        over = {k for k, v in raw.items() if k not in capped and v > caps[k] * total + 1e-15}
        if not over:
            break
        capped |= over
    out = {k: (caps[k] * total if k in capped else v) for k, v in raw.items()}
    return out, sorted(capped)


def probescore(spec: ScoringSpec, values: dict[str, AxisValue], *,
               closed_licence: bool = False) -> ScoreBreakdown:
    weights = spec.normalised()
    by_axis = {a.name: values[a.source] for a in spec.axes}
    raw = {name: weights[name] * v.value for name, v in by_axis.items()}
    caps = {name: spec.cap for name in raw}
    if closed_licence and "license_score" in caps:
        caps["license_score"] = CLOSED_LICENCE_CEILING
    contributions, capped = apply_cap(raw, caps)
    return ScoreBreakdown(sum(contributions.values()), contributions, by_axis, capped)
