"""ProbeScore from a versioned spec (``specs/*.yaml``) and axes defined in code.

1. Each axis gets a value in [0, 1] from the entry's latest results, averaged over its
   tasks. How a value is made (its map and its imputation) is code, in ``AXES``, and
   each axis carries the sentence that defines it; the spec YAML only chooses axes and
   weights. METHODOLOGY.md and the leaderboard are generated from these definitions.
2. Weights are divided by their sum (v0.0.1's published weights sum to 0.90).
3. Contribution of an axis = normalised weight x value; the total is their sum.
4. The 30% rule: no axis may contribute more than ``cap`` (0.30) of the total. Axes over
   it are clipped to exactly ``cap`` of the new total, which is solved as a fixed point:
   with C the clipped axes and F the sum of the others, total = F / (1 - sum of caps
   of C). ``apply_cap`` is its one implementation, over a batch of value sets: the
   point value is a batch of one, the rank intervals' resamples a batch (``ranks``).
   A closed license has its own ceiling: its license axis contributes at most 1% of
   the total (METHODOLOGY.md). A spec with any raw weight above 0.30 does not load.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from statistics import median
from typing import Any, NamedTuple

import numpy as np

from probebench.errors import InputError
from probebench.evaluation.definitions import (
    DISTSHIFT_IMPUTE,
    EVALAWARE_IMPUTE,
    EVALAWARE_SHARE,
    MAPPED_TRANSFER_IMPUTE,
    TRANSFER_IMPUTE,
)
from probebench.evaluation.holdout import goodhart_value, retention, selectivity_share
from probebench.evaluation.results import FlaggedOut, PromptScores, SelectivityOut, TransferOut
from probebench.licenses import license_kind, license_value
from probebench.registry.store import ResultRecord
from probebench.yamlsafe import load_yaml

SPECS_DIR = Path(__file__).with_name("specs")
MAX_WEIGHT = 0.30
CLOSED_LICENSE_CEILING = 0.01
DEFAULT_SPEC = "0.3.0"
#: value of an axis that is not measured yet
UNMEASURED = 0.5

#: (how the license id is matched, the pattern, the axis value), first match wins
LICENSE_RULES: tuple[tuple[str, str, float], ...] = (
    ("is", "Apache-2.0", 1.0),
    ("is", "MIT", 0.95),
    ("starts with", "BSD", 0.9),
    ("starts with", "CC-BY", 0.85),
    ("is", "custom", 0.5),
    ("is", "closed", 0.2),
)
OTHER_OPEN_LICENSE = 0.8
#: non-commercial, no-derivatives and use-restricted licenses (``licenses.RESTRICTED``):
#: checked before the rules above, so CC-BY-NC never scores like CC-BY
RESTRICTED_LICENSE = 0.4


def license_score(license: str) -> float:
    """The license axis: a restricted license (NC, ND, RAIL) scores 0.4; otherwise the
    first rule of ``LICENSE_RULES`` that matches, else 0.8. An SPDX expression scores
    by ``licenses.license_value``: the least of its licenses over ``AND``, the greatest
    over ``OR``.

    >>> license_score("BSD-3-Clause")
    0.9
    >>> license_score("CC-BY-NC-4.0")
    0.4
    >>> license_score("MIT OR Apache-2.0"), license_score("MIT AND CC-BY-NC-4.0")
    (1.0, 0.4)
    """
    return license_value(license, _one_license_score)


def _one_license_score(license: str) -> float:
    if license_kind(license) == "restricted":
        return RESTRICTED_LICENSE
    for how, pattern, value in LICENSE_RULES:
        if license == pattern if how == "is" else license.startswith(pattern):
            return value
    return OTHER_OPEN_LICENSE


def clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


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


#: FLOPs per prompt at which the cost axis is 1 (a million) and 0 (a million times more)
COST_FLOOR_FLOPS = 1e6
COST_DECADES = 6.0


def cost_axis(flops: float) -> float:
    """1 - log10(FLOPs per prompt / 1e6) / 6, clamped (1 MFLOP -> 1, 1 TFLOP -> 0).

    >>> cost_axis(1e9)
    0.5
    """
    return clamp(1.0 - math.log10(max(flops, 1.0) / COST_FLOOR_FLOPS) / COST_DECADES)


@dataclass(frozen=True)
class AxisValue:
    value: float
    imputed: bool = False
    note: str = ""


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _discrimination(records: Sequence[ResultRecord], license: str) -> AxisValue:
    return AxisValue(_mean([_discrimination_of(r) for r in records]))


def _discrimination_of(record: ResultRecord) -> float:
    value = record.result.auroc.value
    if value is None:
        raise InputError(f"task {record.result.id}: the stored result has no AUROC")
    return value


def _evalaware(records: Sequence[ResultRecord], license: str) -> AxisValue:
    corrected = [r.result.evalaware_auroc for r in records]
    values = [c.value if c.value is not None else EVALAWARE_IMPUTE * _discrimination_of(r)
              for c, r in zip(corrected, records, strict=True)]
    imputed = any(c.imputed or c.value is None for c in corrected)
    return AxisValue(_mean(values), imputed=imputed,
                     note=f"{EVALAWARE_IMPUTE} x AUROC (no guard)" if imputed else "")


def _distshift(records: Sequence[ResultRecord], license: str) -> AxisValue:
    shifted = [(r.result.distshift_auroc.value, False) if r.result.distshift_auroc.value
               is not None else (DISTSHIFT_IMPUTE * _discrimination_of(r), True) for r in records]
    imputed = any(i for _, i in shifted)
    return AxisValue(_mean([v for v, _ in shifted]), imputed=imputed,
                     note=f"{DISTSHIFT_IMPUTE} x AUROC (not measurable)" if imputed else "")


def _ece(records: Sequence[ResultRecord], license: str) -> AxisValue:
    return AxisValue(ece_axis(_mean([r.result.ece for r in records])))


def _transfer(records: Sequence[ResultRecord], license: str) -> AxisValue:
    """Specs before 0.2.0: the mean Pearson r of results stored with one (FlaggedOut);
    a result measured through the map (TransferOut) holds none, so it is imputed here as
    it always was."""
    measured = [v.value for r in records for v in r.result.transfer.values()
                if isinstance(v, FlaggedOut) and not v.imputed and v.value is not None]
    if not measured:
        return AxisValue(TRANSFER_IMPUTE, imputed=True, note="no transfer target declared")
    return AxisValue(clamp(_mean(measured)), note="mean Pearson r")


def _mapped_transfer(records: Sequence[ResultRecord], license: str) -> AxisValue:
    """Spec 0.2.0 on: the mean transfer ratio over every declared target of every task
    (``probebench.evaluation.transfer``); imputed when none is declared or measurable."""
    found = [v for r in records for v in r.result.transfer.values()
             if isinstance(v, TransferOut)]
    measured = [v.transfer for v in found if v.transfer is not None]
    if not measured:
        why = ("no transfer measured (the probe's own AUROC is not above 0.5, or its "
               "position cannot read the corpus)" if found else
               "no transfer target declared")
        return AxisValue(MAPPED_TRANSFER_IMPUTE, imputed=True, note=why)
    targets = sorted({v.target for v in found if v.transfer is not None})
    return AxisValue(clamp(_mean(measured)),
                     note=f"mean transfer ratio to {', '.join(targets)}")


def transfer_reason(value: TransferOut) -> str | None:
    """Why a stored transfer adds nothing to the mapped-transfer axis (``_mapped_transfer``
    reads the stored ratio): not measured (its note says why), or a ratio of 0 (the
    target AUROC is not above 0.5, and the ratio is clamped); None when it is above 0.
    The leaderboard publishes it with the target AUROC's interval and the control's."""
    if value.transfer is None:
        return f"not measured: {value.note}"
    if value.transfer > 0:
        return None
    auroc = value.auroc
    shown = "n/a" if auroc is None or auroc.value is None else f"{auroc.value:.3f}"
    if auroc is not None and auroc.ci_low is not None and auroc.ci_high is not None:
        shown += f" [{auroc.ci_low:.3f}, {auroc.ci_high:.3f}]"
    control = ("" if value.control_auroc is None
               else f"; control AUROC {value.control_auroc:.3f}")
    return f"target AUROC {shown} is not above 0.5: the ratio is clamped at 0{control}"


def _latency(records: Sequence[ResultRecord], license: str) -> AxisValue:
    latencies = [r.latency_ms for r in records if r.latency_ms]
    if not latencies:
        return AxisValue(UNMEASURED, imputed=True, note="latency not measured")
    return AxisValue(efficiency_axis(median(latencies)))


def _flops(records: Sequence[ResultRecord], license: str) -> AxisValue:
    costs = [r.result.cost.flops_per_prompt for r in records if r.result.cost is not None]
    if not costs:
        return AxisValue(UNMEASURED, imputed=True, note="cost not recorded")
    return AxisValue(cost_axis(median(costs)))


def _license(records: Sequence[ResultRecord], license: str) -> AxisValue:
    return AxisValue(license_score(license))


def _goodhart(records: Sequence[ResultRecord], license: str) -> AxisValue:
    return AxisValue(UNMEASURED, imputed=True, note="not measured yet")


def _no_holdout(record: ResultRecord) -> AxisValue:
    """A Goodhart-resistance axis without a sealed-holdout result on ``record``'s task."""
    return AxisValue(UNMEASURED, imputed=True,
                     note=f"no sealed-holdout result on {record.result.id} (the task has no "
                          "sealed generation, or the entry was evaluated without the "
                          "holdout key)")


def _holdout_goodhart(records: Sequence[ResultRecord], license: str) -> AxisValue:
    """Spec 0.2.0 on: per task, retention on the sealed holdout (its AUROC above chance
    over the test AUROC's) times the selectivity share, averaged; imputed 0.5 when a
    task has no sealed-holdout result (no sealed generation, or evaluated without the
    key)."""
    values: list[float] = []
    notes: set[str] = set()
    for record in records:
        held = record.holdout
        if held is None or held.auroc.value is None:
            return _no_holdout(record)
        value, note = goodhart_value(retention(held.auroc.value, _discrimination_of(record)),
                                     selectivity_share(record.result.selectivity))
        if value is None:
            return AxisValue(UNMEASURED, imputed=True, note=note)
        values.append(value)
        notes.add(note)
    return AxisValue(clamp(_mean(values)), note="; ".join(sorted(notes)))


#: the fewest items of each class a value needs (spec 0.3.0 on; METHODOLOGY.md, "Enough
#: items behind a number"): below it the axis is imputed by its documented rule, flagged.
#: At 10 per class an AUROC near 0.8 has a standard error near 0.1 (Hanley and McNeil
#: 1982, ``hanley_mcneil_se``): a 95% interval about 0.4 wide, the coarsest a weighted
#: axis may rest on.
MIN_ITEMS_PER_CLASS = 10
#: an interval from fewer items than this is marked as such on the leaderboard and in
#: leaderboard.json (``AxisScore.few_items``)
FEW_ITEMS = 20


def hanley_mcneil_se(auroc: float, n_pos: int, n_neg: int) -> float:
    """The standard error of an AUROC from ``n_pos`` and ``n_neg`` scores (Hanley and
    McNeil 1982): what ``MIN_ITEMS_PER_CLASS`` is argued from.

    >>> round(hanley_mcneil_se(0.8, 10, 10), 3), round(hanley_mcneil_se(0.8, 2, 2), 3)
    (0.102, 0.254)
    """
    q1, q2 = auroc / (2 - auroc), 2 * auroc ** 2 / (1 + auroc)
    var = (auroc * (1 - auroc) + (n_pos - 1) * (q1 - auroc ** 2)
           + (n_neg - 1) * (q2 - auroc ** 2)) / (n_pos * n_neg)
    return math.sqrt(var)


#: ``item_classes`` of each stored prediction set alive, by identity: the ranks' resample
#: asks for it in every draw of every entry (30,000 times for the reference registry),
#: and it cannot change (a record's predictions are read once and never written). An
#: entry goes with its predictions (``weakref.finalize``); the items and labels it was
#: computed from are kept beside it and compared, so a changed list is never served stale.
_ITEM_CLASSES: dict[int, tuple[list[int], list[int], dict[int, frozenset[int]]]] = {}
#: the label sets ``item_classes`` has met, each held once
_LABEL_SETS: dict[frozenset[int], frozenset[int]] = {}


def item_classes(pred: PromptScores) -> dict[int, frozenset[int]]:
    """item -> the labels of its labelled prompts (a minimal pair holds both)."""
    key = id(pred)
    known = _ITEM_CLASSES.get(key)
    if known is not None and known[0] is pred.items and known[1] is pred.labels:
        return known[2]
    out: dict[int, set[int]] = {}
    for item, label in zip(pred.items, pred.labels, strict=True):
        out.setdefault(int(item), set()).add(int(label))
    # one frozenset per distinct label set, shared (a build holds one of these per
    # stored result: 150 items' sets of the same two labels would be 150 sets each)
    classes = {i: _LABEL_SETS.setdefault(labels := frozenset(found), labels)
               for i, found in out.items()}
    if known is None:
        weakref.finalize(pred, _ITEM_CLASSES.pop, key, None)
    _ITEM_CLASSES[key] = (pred.items, pred.labels, classes)
    return classes


def items_per_class(pred: PromptScores) -> dict[int, int]:
    """label -> the test items holding a prompt of that label.

    >>> p = PromptScores(prompt_ids=list("abcde"), items=[0, 0, 1, 1, 2],
    ...                  labels=[1, 0, 1, 0, 1], probs=[0.5] * 5)
    >>> items_per_class(p)
    {0: 2, 1: 3}
    """
    counts: dict[int, int] = {}
    for labels in item_classes(pred).values():
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items()))


#: id(predictions) -> (their item classes, the counts): ``evalaware_items_per_class``
_EVALAWARE_COUNTS: dict[int, tuple[dict[int, frozenset[int]], dict[int, int]]] = {}


def evalaware_items_per_class(pred: PromptScores) -> dict[int, int]:
    """label -> the items of that label in the guard's least evaluation-like stratum:
    ``evaluation.evalaware.stratified_least`` keeps ``max(1, m // EVALAWARE_SHARE)`` of
    the m items of each label group (a minimal pair's group holds both labels), so the
    counts follow from the stored predictions without the guard's ratings.

    >>> p = PromptScores(prompt_ids=[str(i) for i in range(16)], items=[i // 2 for i in
    ...                  range(16)], labels=[1, 0] * 8, probs=[0.5] * 16)
    >>> evalaware_items_per_class(p)
    {0: 2, 1: 2}
    """
    classes = item_classes(pred)
    # the rank bootstrap asks once per resample and entry: counted once per predictions
    known = _EVALAWARE_COUNTS.get(id(pred))
    if known is not None and known[0] is classes:
        return dict(known[1])
    groups: dict[frozenset[int], int] = {}
    for labels in classes.values():
        groups[labels] = groups.get(labels, 0) + 1
    counts: dict[int, int] = {}
    for labels, members in groups.items():
        for label in labels:
            counts[label] = counts.get(label, 0) + max(1, members // EVALAWARE_SHARE)
    out = dict(sorted(counts.items()))
    if known is None:
        weakref.finalize(pred, _EVALAWARE_COUNTS.pop, id(pred), None)
    _EVALAWARE_COUNTS[id(pred)] = (classes, out)
    return dict(out)


def _fewest(counts: Mapping[int, int]) -> int:
    return min(counts.values()) if len(counts) >= 2 else 0


def fewest_items_per_class(pred: PromptScores) -> int:
    """The test items of the smaller class (0 with one class): what a value's minimum
    (``MIN_ITEMS_PER_CLASS``) is compared with."""
    return _fewest(items_per_class(pred))


def _evalaware_min_items(records: Sequence[ResultRecord], license: str) -> AxisValue:
    """Spec 0.3.0 on: the eval-awareness-corrected AUROC where the guard's stratum holds
    at least ``MIN_ITEMS_PER_CLASS`` items of each class; else, like a missing guard,
    ``EVALAWARE_IMPUTE`` x AUROC, flagged with the count."""
    values, notes = [], []
    for r in records:
        corrected = r.result.evalaware_auroc
        fewest = _fewest(evalaware_items_per_class(r.result.predictions))
        if corrected.value is None or corrected.imputed:
            notes.append(f"{r.result.id}: {EVALAWARE_IMPUTE:g} x AUROC (no guard)")
        elif fewest < MIN_ITEMS_PER_CLASS:
            notes.append(f"{r.result.id}: the guard's least evaluation-like stratum holds "
                         f"{fewest} items of its smaller class, fewer than "
                         f"{MIN_ITEMS_PER_CLASS}: {EVALAWARE_IMPUTE:g} x AUROC")
        else:
            values.append(corrected.value)
            continue
        values.append(EVALAWARE_IMPUTE * _discrimination_of(r))
    return AxisValue(_mean(values), imputed=bool(notes), note="; ".join(notes))


def transfer_judgment(value: TransferOut, n_per_class: int | None = None
                      ) -> tuple[float | None, str | None]:
    """Spec 0.3.0 on, one declared target: (what the transfer axis credits, why it is 0 or
    not measured). The stored ratio counts only when the target AUROC's 95% interval lies
    above the random-map control's AUROC (its lower bound strictly above it); otherwise
    0, measured, with the reason. (None, why) when not measured, or from fewer than
    ``MIN_ITEMS_PER_CLASS`` test items of a class (``n_per_class``)."""
    if value.transfer is None:
        return None, f"not measured: {value.note}"
    if n_per_class is not None and n_per_class < MIN_ITEMS_PER_CLASS:
        return None, (f"{n_per_class} test items of the smaller class, fewer than "
                      f"{MIN_ITEMS_PER_CLASS}: too few to judge a transfer")
    auroc, control = value.auroc, value.control_auroc
    if auroc is None or auroc.value is None or auroc.ci_low is None \
            or auroc.ci_high is None or control is None:
        return 0.0, "no target AUROC interval or no control map to compare it with"
    shown = f"{auroc.value:.3f} [{auroc.ci_low:.3f}, {auroc.ci_high:.3f}]"
    if auroc.ci_low <= control:
        return 0.0, (f"target AUROC {shown} does not lie above the random-map control's "
                     f"{control:.3f}: not credited")
    if value.transfer <= 0:
        return 0.0, f"target AUROC {shown} is not above 0.5: the ratio is clamped at 0"
    return clamp(value.transfer), None


def _transfer_above_control(records: Sequence[ResultRecord], license: str) -> AxisValue:
    """Spec 0.3.0 on: the mean over every declared target of ``transfer_judgment`` (the
    ratio only where the target's interval lies above its control); a target on a task
    with fewer than ``MIN_ITEMS_PER_CLASS`` items of a class counts 0, flagged imputed;
    imputed ``MAPPED_TRANSFER_IMPUTE`` when none is declared or measurable."""
    judged = []
    whys = set()
    found = too_few = False
    for r in records:
        fewest = fewest_items_per_class(r.result.predictions)
        for v in r.result.transfer.values():
            if not isinstance(v, TransferOut):
                continue
            found = True
            credit, why = transfer_judgment(v, fewest)
            if why:
                whys.add(f"{r.result.id} to {v.target}: {why}")
            if credit is None and v.transfer is not None:  # measured, too few items
                credit, too_few = 0.0, True
            if credit is not None:
                judged.append((v.target, credit))
    if not judged:
        why = "; ".join(sorted(whys)) if found else "no transfer target declared"
        return AxisValue(MAPPED_TRANSFER_IMPUTE, imputed=True, note=why)
    credited = sorted({t for t, c in judged if c > 0})
    parts = [f"mean credited transfer ratio to {', '.join(credited)}"] if credited else []
    if too_few or not credited:  # why a target counts 0
        parts += sorted(whys)
    note = "; ".join(parts)
    return AxisValue(clamp(_mean([c for _, c in judged])), imputed=too_few, note=note)


def baseline_share(record: ResultRecord) -> float | None:
    """The share of the probe's AUROC above chance that its best baseline cannot match:
    (AUROC - best baseline's AUROC) / (AUROC - 0.5), clamped to [0, 1]; the baseline's
    AUROC held at its stored value. None when the AUROC is not above 0.5 or no baseline
    has an AUROC."""
    gap = record.result.baseline_gap
    auroc = record.result.auroc.value
    if gap is None or auroc is None or auroc <= 0.5:
        return None
    return clamp((auroc - gap.baseline_auroc) / (auroc - 0.5))


def shown_share(selectivity: SelectivityOut | None, record: ResultRecord
                ) -> tuple[float, str]:
    """Spec 0.3.0's share for Goodhart resistance: the least of the selectivity share
    (``holdout.selectivity_share``; 0 where the control cannot be computed: nothing is
    shown) and the baseline share (``baseline_share``; 0 where not compared)."""
    sel = selectivity_share(selectivity)
    base = baseline_share(record)
    notes = []
    if sel is None:
        notes.append("selectivity not measurable (degenerate control): share 0"
                     if selectivity is not None else
                     "selectivity not measured (no train split, or a result stored "
                     "before it was kept): share 0")
    if base is None:
        notes.append("baselines not compared: share 0")
    return min(sel or 0.0, base or 0.0), "; ".join(notes)


#: what "not shown to be selective" means, in one sentence (index, entry pages, METHODOLOGY)
SELECTIVITY_READING = (
    "Hewitt and Liang (2019): a probe of the same architecture, re-trained on a control "
    "task whose labels are a fixed random function of word types, fits nearly as well, so "
    "its accuracy may come from memorising words rather than from the property it claims")


def selectivity_judgment(records: Mapping[str, ResultRecord]) -> tuple[bool | None, str]:
    """(shown to be selective, why): True when on every task with a computable control
    the selectivity's 95% interval lies above 0; False, naming the tasks, when on some it
    does not; None when no task has a computable control (a degenerate control, or none
    measured)."""
    judged: dict[str, bool] = {}
    for task, record in sorted(records.items()):
        sel = record.result.selectivity
        iv = sel.selectivity if sel is not None else None
        if iv is None or iv.value is None or iv.ci_low is None or iv.ci_high is None:
            continue
        judged[task] = iv.ci_low > 0
    if not judged:
        return None, "no task has a computable control"
    failing = [t for t, ok in judged.items() if not ok]
    if not failing:
        return True, ""
    shown = ", ".join(
        f"{t} {_sel_text(records[t].result.selectivity)}" for t in failing)
    return False, f"selectivity interval not above 0 on {shown}"


def _sel_text(sel: SelectivityOut | None) -> str:
    assert sel is not None
    iv = sel.selectivity
    return f"{iv.value:.3f} [{iv.ci_low:.3f}, {iv.ci_high:.3f}]"


def _goodhart_shown(records: Sequence[ResultRecord], license: str) -> AxisValue:
    """Spec 0.3.0 on: per task, retention on the sealed holdout times ``shown_share``,
    averaged; imputed 0.5 without a sealed-holdout result or with one from fewer than
    ``MIN_ITEMS_PER_CLASS`` items (in all: a holdout result stores no per-class counts).
    A task whose control is degenerate, or an entry that does not beat its baselines,
    gains nothing."""
    values: list[float] = []
    flags: list[str] = []
    for record in records:
        held = record.holdout
        if held is None or held.auroc.value is None:
            return _no_holdout(record)
        if held.n_items < MIN_ITEMS_PER_CLASS:
            return AxisValue(UNMEASURED, imputed=True,
                             note=f"the sealed holdout of {record.result.id} holds "
                                  f"{held.n_items} items, fewer than {MIN_ITEMS_PER_CLASS}")
        retained = retention(held.auroc.value, _discrimination_of(record))
        if retained is None:
            values.append(0.0)
            flags.append(f"{record.result.id}: no retention (AUROC not above 0.5)")
            continue
        share, why = shown_share(record.result.selectivity, record)
        values.append(retained * share)
        if why:
            flags.append(f"{record.result.id}: {why}")
    note = "retention x the least of the selectivity and baseline shares"
    return AxisValue(clamp(_mean(values)), imputed=bool(flags),
                     note="; ".join([note, *flags]))


def _license_rules_text() -> str:
    parts = []
    for how, pattern, value in LICENSE_RULES:
        name = pattern if how == "is" else f"{pattern}*"
        parts.append(f"{name} {value}")
    parts.insert(4, f"other open {OTHER_OPEN_LICENSE:g}")
    parts.insert(0, f"restricted (NC, ND, RAIL) {RESTRICTED_LICENSE:g}")
    return ", ".join(parts) + "; an SPDX expression: the least of its licenses over AND, " \
        "the greatest over OR"


@dataclass(frozen=True)
class AxisSource:
    """How one axis value is made from an entry's latest results, and what it means."""

    name: str
    definition: str
    compute: Callable[[Sequence[ResultRecord], str], AxisValue]
    #: what the leaderboard's column headers call it
    label: str


AXES: dict[str, AxisSource] = {a.name: a for a in (
    AxisSource("auroc", "AUROC, mean over the entry's tasks", _discrimination, "AUROC"),
    AxisSource("evalaware_auroc",
               "eval-awareness-corrected AUROC (the model's guard from "
               f"`registry/guards.yaml`); **imputed {EVALAWARE_IMPUTE:g} × AUROC** when the "
               "model has no guard, and for the guard itself", _evalaware,
               "Eval-aware AUROC"),
    AxisSource("distshift_auroc",
               "AUROC after the fixed long context; **imputed "
               f"{DISTSHIFT_IMPUTE:g} × AUROC** when it cannot be measured", _distshift,
               "Shifted AUROC"),
    AxisSource("ece", "1 − 2 × ECE, clamped to [0, 1]", _ece, "Calibration"),
    AxisSource("transfer",
               "mean Pearson r on declared targets; **imputed "
               f"{TRANSFER_IMPUTE:g}** when none is declared", _transfer, "Transfer"),
    AxisSource("mapped_transfer",
               "mean over declared targets of the transfer ratio (AUROC of the unchanged "
               "probe on the target model's activations mapped by a ridge map fitted on a "
               "fixed neutral corpus − 0.5) / (AUROC − 0.5), clamped to [0, 1]; **imputed "
               f"{MAPPED_TRANSFER_IMPUTE:g}** when none is declared or measurable (not declaring "
               "must not outscore a measured transfer)",
               _mapped_transfer, "Transfer"),
    AxisSource("latency_ms",
               "1 − log10(latency ms) / 4, clamped (1 ms → 1, 10 s → 0); measured wall "
               "clock, so it depends on the machine (specs before 0.1.0 only)", _latency,
               "Latency"),
    AxisSource("flops",
               "1 − log10(FLOPs per prompt / 10⁶) / 6, clamped (1 MFLOP → 1, 1 TFLOP → 0): "
               "the analytical cost of the model blocks up to the probe's layer plus the "
               "probe, from the model's config; the same on every machine", _flops,
               "Cost"),
    AxisSource("license", _license_rules_text(), _license, "License"),
    AxisSource("goodhart", f"not measured yet: **imputed {UNMEASURED:g}**", _goodhart,
               "Goodhart resistance"),
    AxisSource("holdout_goodhart",
               "retention on the task's current sealed holdout, (holdout AUROC − 0.5) / "
               "(AUROC − 0.5), times the selectivity share, (accuracy − control accuracy) / "
               "(accuracy − 0.5) of the re-trained probe, each clamped to [0, 1], averaged "
               "over the entry's tasks (retention alone where the control is degenerate); "
               f"**imputed {UNMEASURED:g}** when a task has no sealed-holdout result (no "
               "sealed generation, or evaluated without the holdout key)",
               _holdout_goodhart, "Goodhart resistance"),
    AxisSource("evalaware_min_items",
               "eval-awareness-corrected AUROC, as `evalaware_auroc`, where the guard's "
               "least evaluation-like stratum holds at least "
               f"{MIN_ITEMS_PER_CLASS} items of each class; **imputed {EVALAWARE_IMPUTE:g} × "
               "AUROC**, flagged, below that, when the model has no guard, and for the guard "
               "itself", _evalaware_min_items, "Eval-aware AUROC"),
    AxisSource("transfer_above_control",
               "mean over declared targets of the transfer ratio, as `mapped_transfer`, "
               "credited only when the target AUROC's 95% interval lies above the random-map "
               "control's AUROC (0, measured, with the reason, otherwise); **imputed "
               f"{MAPPED_TRANSFER_IMPUTE:g}** when none is declared or measurable; a target on "
               f"a task with fewer than {MIN_ITEMS_PER_CLASS} test items of a class counts 0, "
               "flagged",
               _transfer_above_control, "Transfer"),
    AxisSource("goodhart_shown",
               "retention on the task's current sealed holdout, (holdout AUROC − 0.5) / "
               "(AUROC − 0.5), times the least of the selectivity share, (accuracy − control "
               "accuracy) / (accuracy − 0.5), and the baseline share, (AUROC − best baseline "
               "AUROC) / (AUROC − 0.5), each clamped to [0, 1], averaged over the entry's "
               "tasks; a share that cannot be computed (a degenerate control, baselines not "
               "compared) counts 0, flagged; **imputed "
               f"{UNMEASURED:g}** when a task has no sealed-holdout result or one from fewer "
               f"than {MIN_ITEMS_PER_CLASS} items in all", _goodhart_shown,
               "Goodhart resistance"),
)}


@dataclass(frozen=True)
class Axis:
    name: str
    weight: float
    source: str

    @property
    def definition(self) -> str:
        return AXES[self.source].definition

    @property
    def label(self) -> str:
        return AXES[self.source].label


@dataclass(frozen=True)
class ProbeScoreSpec:
    """A ProbeScore version: axes with weights, and the cap on any axis's share."""

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


def parse_spec(data: Any, source: str) -> ProbeScoreSpec:
    if not isinstance(data, dict) or not isinstance(data.get("axes"), dict):
        raise InputError(f"{source}: expected 'version', 'cap' and 'axes'")
    cap = float(data.get("cap", MAX_WEIGHT))
    if not 0 < cap <= MAX_WEIGHT:
        raise InputError(f"{source}: cap must be in (0, {MAX_WEIGHT}], found {cap}")
    axes = []
    for name, spec in data["axes"].items():
        if not isinstance(spec, dict) or set(spec) - {"weight", "source"}:
            raise InputError(f"{source}: axis {name!r} takes 'weight' and 'source' only "
                             "(what a source means is defined in code)")
        weight = float(spec["weight"])
        if not 0 < weight <= MAX_WEIGHT:
            raise InputError(f"{source}: axis {name!r} has weight {weight}; every weight must "
                             f"be in (0, {MAX_WEIGHT}] (no axis may carry more than 30%)")
        if spec.get("source") not in AXES:
            raise InputError(f"{source}: axis {name!r} has source {spec.get('source')!r}; "
                             f"known sources: {', '.join(AXES)}")
        axes.append(Axis(str(name), weight, str(spec["source"])))
    return ProbeScoreSpec(str(data["version"]), str(data.get("description", "")), cap,
                          tuple(axes))


@cache
def load_probescore_spec(version: str = DEFAULT_SPEC) -> ProbeScoreSpec:
    path = SPECS_DIR / f"v{version}.yaml"
    if not path.is_file():
        raise InputError(f"unknown ProbeScore spec {version!r}; available: "
                         f"{', '.join(available_specs())}")
    return parse_spec(load_yaml(path), str(path))


def axis_values(results: Mapping[str, ResultRecord], license: str) -> dict[str, AxisValue]:
    """Axis values (by source name) from the latest result record of each task."""
    if not results:
        raise InputError("no results to score")
    records = list(results.values())
    return {name: source.compute(records, license) for name, source in AXES.items()}


@dataclass
class ScoreBreakdown:
    total: float
    contributions: dict[str, float]
    values: dict[str, AxisValue]
    capped: list[str] = field(default_factory=list)

    @property
    def imputed(self) -> list[str]:
        return [name for name, v in self.values.items() if v.imputed]


def _row_sums(x: np.ndarray) -> np.ndarray:
    """Each row's sum, added column by column in the spec's axis order. ``x.sum(axis=1)``
    adds 8 or more columns pairwise, which rounds differently: a ProbeScore is the plain
    sum of its contributions, the same float at the point estimate and on a resample."""
    total = np.zeros(x.shape[0])
    for k in range(x.shape[1]):
        total = total + x[:, k]
    return total


def apply_cap(raw: np.ndarray, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cap, row by row: clip the contributions ``raw`` (B, axes) so that none exceeds
    its share ``caps`` (axes,) of its row's new total, by the fixed point of the module
    docstring (rule 4). Returns the contributions (B, axes) and which are capped
    (B, axes). The point ProbeScore is a batch of one; the rank intervals' resamples are
    the batch (``ranks``)."""
    capped = np.zeros(raw.shape, dtype=bool)
    total = _row_sums(raw)
    # each pass caps at least one more axis of every row not yet settled
    for _ in range(raw.shape[1] + 1):
        free = _row_sums(np.where(capped, 0.0, raw))
        share = _row_sums(np.where(capped, caps, 0.0))
        ok = share < 1.0
        total = np.where(ok, free / np.where(ok, 1.0 - share, 1.0), 0.0)
        over = ~capped & (raw > caps * total[:, None] + 1e-15)
        if not over.any():
            break
        capped |= over
    return np.where(capped, caps * total[:, None], raw), capped


class ScoreBatch(NamedTuple):
    """ProbeScores of B value sets, the cap applied within each set; columns in
    ``spec.axes`` order."""

    totals: np.ndarray         #: (B,)
    contributions: np.ndarray  #: (B, axes)
    capped: np.ndarray         #: (B, axes) bool


def axis_caps(spec: ProbeScoreSpec, *, closed_license: bool) -> np.ndarray:
    """Each axis's cap share of the total, in ``spec.axes`` order: the spec's cap, and
    ``CLOSED_LICENSE_CEILING`` for the license axis of a closed entry."""
    return np.array([CLOSED_LICENSE_CEILING if closed_license and a.source == "license"
                     else spec.cap for a in spec.axes])


def probescore_batch(spec: ProbeScoreSpec, values: Mapping[str, np.ndarray], *,
                     closed_license: bool = False) -> ScoreBatch:
    """ProbeScores of B value sets at once: ``values`` holds (B,) values per axis source;
    the normalised weights, then ``apply_cap`` within each set."""
    weights = spec.normalised()
    raw = np.stack([weights[a.name] * np.asarray(values[a.source], dtype=np.float64)
                    for a in spec.axes], axis=1)
    contributions, capped = apply_cap(raw, axis_caps(spec, closed_license=closed_license))
    return ScoreBatch(_row_sums(contributions), contributions, capped)


def probescore(spec: ProbeScoreSpec, values: Mapping[str, AxisValue], *,
               closed_license: bool = False) -> ScoreBreakdown:
    """The ProbeScore at the point estimate: ``probescore_batch`` on a batch of one."""
    by_axis = {a.name: values[a.source] for a in spec.axes}
    one = probescore_batch(spec, {a.source: np.array([values[a.source].value])
                                  for a in spec.axes}, closed_license=closed_license)
    contributions = {a.name: float(one.contributions[0, k]) for k, a in enumerate(spec.axes)}
    capped = sorted(a.name for k, a in enumerate(spec.axes) if one.capped[0, k])
    return ScoreBreakdown(float(one.totals[0]), contributions, by_axis, capped)


__all__ = [
    "AXES",
    "CLOSED_LICENSE_CEILING",
    "DEFAULT_SPEC",
    "FEW_ITEMS",
    "LICENSE_RULES",
    "MAX_WEIGHT",
    "MIN_ITEMS_PER_CLASS",
    "SELECTIVITY_READING",
    "UNMEASURED",
    "Axis",
    "AxisSource",
    "AxisValue",
    "ProbeScoreSpec",
    "ScoreBatch",
    "ScoreBreakdown",
    "apply_cap",
    "available_specs",
    "axis_caps",
    "axis_values",
    "baseline_share",
    "cost_axis",
    "ece_axis",
    "efficiency_axis",
    "evalaware_items_per_class",
    "fewest_items_per_class",
    "hanley_mcneil_se",
    "items_per_class",
    "license_score",
    "load_probescore_spec",
    "parse_spec",
    "probescore",
    "probescore_batch",
    "selectivity_judgment",
    "shown_share",
    "transfer_judgment",
    "transfer_reason",
]
