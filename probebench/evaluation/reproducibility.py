"""The reproducibility contract: what two evaluations of the same inputs agree on.

Measured by ``benchmarks/reproducibility.py`` and the re-evaluation of stored records
(figures in BENCHMARKS.md; the contract in METHODOLOGY.md). On the CPU in float32:

* The same machine, kernels, library versions, seed and batch budget give **identical**
  results whatever the thread count (1, 2 or 4), the machine's load, and whether
  activations come from the cache or a fresh forward pass: the kernels' reductions do
  not depend on the thread count, a cached array is the array the forward pass
  produced, and every re-trained fit runs in float64 on one BLAS thread
  (``probebench.evaluation.protocol``).
* Another batch budget, or another CPU, changes each activation by float rounding
  (relative 1e-7 to 1e-6). Two hosts that both call themselves "AMD EPYC (2 cores)" may
  run different kernels: torch dispatches AVX512 kernels on a Zen 4 EPYC and AVX2 ones
  on an earlier one, and the two round differently (``provenance.hardware`` names the kernels
  since). Measured on verb grammar at SmolLM2-135M's layer 20, a fresh evaluation with
  AVX512 kernels against a record made with AVX2 ones: the probe's probabilities moved
  by up to 5e-6, every surprisal score by relative -1.8e-6 to -3.3e-6 (all in one
  direction: the kernels' vectorised exp and log round differently, and a sentence's
  bits sum ~35 tokens), the random-feature baseline's scores by up to 1.2e-5, and the
  re-trained MLP's control accuracy by one prompt of 300. The same host with
  ``ATEN_CPU_CAPABILITY=avx2`` reproduced that record exactly, every number of it.

Each stored number is compared by the rule that fits how it is made (``tolerance_at``):

* **Rounded numbers** (``same_within``). Every continuous number is stored rounded to
  ``DECIMALS`` places, each with up to half a unit of the last place (``UNIT``) of
  rounding error, so two true values within a tolerance ``t`` are stored within
  ``t + UNIT``, and no closer bound holds: 0.1234565 moved by 1e-9 rounds to 0.123456
  on one side and 0.123457 on the other. Every rule below therefore allows one unit
  more than its tolerance (and a few float64 ulps, as 0.123457 - 0.123456 is
  1.0000000000287557e-06 in binary).
* **Probabilities, metrics and CI bounds**: ``VALUE_TOLERANCE`` absolute. Bounded in
  [0, 1]; float rounding of the activations moved them by at most 5e-6 (above).
* **A language model's own scores** (``LM_SCORE_PATHS``: the surprisal baseline's
  ``log2 P`` of each prompt, in bits): ``LM_SCORE_TOLERANCE`` **relative** to their
  magnitude. They are unbounded sums (a verb-grammar prompt scores -130 to -260 bits)
  of one float32 log-softmax term per token, each with a resolution of ~6e-8 relative
  to its log-sum-exp (10 to 20 nats) on top of the logits' own rounding, so an absolute
  tolerance would have to grow with the sentence: at 254 bits one float32 step of the
  total is already 1.5e-5. Another batch composition (1 against 32 prompts a batch)
  moved them by at most 3.3e-7 relative, the kernels' change by 3.3e-6, in one
  direction; 1e-5 is three times the larger.
* **A model's own answer** (``ANSWER_PATHS``: the ``own_answer`` baseline's
  log P(positive) - log P(negative), in nats): ``ANSWER_TOLERANCE`` absolute. A
  difference of two float32 log-softmax terms, each exact to ~1e-6 of its log-sum-exp
  (10 to 20 nats): up to ~4e-5 apart across kernels, and often near 0, where a relative
  rule cannot hold; batching moved them by under 3e-6.
* **Scores of a baseline fitted again on model activations** (``REFIT_PATHS``: the
  random-feature baseline's logistic regression on a random-init model's activations):
  ``REFIT_TOLERANCE`` absolute. The fit is convex, so its optimum moves smoothly with
  its inputs, but by their rounding times the problem's conditioning (576 features on
  800 prompts): measured 1.2e-5 across kernels, and up to 2.1e-4 over five draws of
  relative 1e-6 noise on every activation (the contract's bound on float rounding);
  ``protocol`` measured the same order, 5e-4, for a linear probe at C = 10.
* **Re-trained numbers** (``RETRAINED_KEYS``: the entry's architecture fitted again,
  ``probebench.evaluation.selectivity``): ``RETRAINED_TOLERANCE`` absolute. Identical on
  one machine type (above); across kernels an MLP's fit ends in another minimum when its
  activations move by float rounding, moving its accuracies by whole prompts (one of 300
  between the AVX2 and AVX512 kernels; over ten relative-1e-6 perturbations at that
  entry's site the accuracy, control accuracy and selectivity spread over 0.033, 0.027
  and 0.030, standard deviation 0.01 each): 0.05 is three standard deviations of a
  difference between two machines.
* **The causal test's numbers** (a stored ``_causal.json`` record: slopes of steered
  readouts, the dose-response curve, the controls' effects, the ablation's readout
  change, all differences of float32 log-probabilities in nats): ``CAUSAL_TOLERANCE``
  absolute over the whole record, for the reason ``ANSWER_TOLERANCE`` gives; its
  accuracies and AUROCs are count-based (below) and move by whole items or more.
* **Count-based numbers** (an accuracy, an AUROC as a share of pairs, a FPR) move in
  whole steps: a score lying within float noise of the 0.5 threshold, or of a score of
  the other class, can flip one decision. Such a flip is a change beyond the contract
  and is stored as a new record; the benchmark reports how often it happened.

``differences`` is the comparison ``registry evaluate`` uses to decide whether a
re-evaluation is a new result (results and task baselines files alike), and the one
tests use instead of exact equality.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: decimal places of every continuous number stored (probabilities, metrics, CI bounds)
DECIMALS = 6
#: one unit in the last stored place: the most that rounding alone moves a difference
UNIT = 10.0 ** -DECIMALS
#: largest absolute difference between two evaluations that is not a new result
VALUE_TOLERANCE = 1e-5
#: the same for re-trained numbers (under ``RETRAINED_KEYS``: the entry's architecture
#: fitted again, ``probebench.evaluation.selectivity``): an MLP's fit ends in another
#: minimum when its activations move by float rounding, moving its accuracies by whole
#: prompts; the spread measured on the verb-grammar MLP entry is in METHODOLOGY.md
RETRAINED_TOLERANCE = 0.05
RETRAINED_KEYS = frozenset({"selectivity"})
#: largest difference of a language model's own score (``LM_SCORE_PATHS``), relative to
#: its magnitude, that is not a new result
LM_SCORE_TOLERANCE = 1e-5
#: (parent key, key) of the lists of a language model's own scores: unbounded sums of
#: float32 log-probabilities, compared relative to their magnitude
LM_SCORE_PATHS = frozenset({("surprisal", "scores")})
#: largest absolute difference of a model's own answer (``ANSWER_PATHS``: log P(positive)
#: - log P(negative), in nats) that is not a new result: a difference of two float32
#: log-softmax terms, each exact to ~1e-6 of its log-sum-exp (10 to 20 nats), so up to
#: ~4e-5 apart on another kernel set; near zero a relative rule would not hold
ANSWER_TOLERANCE = 1e-4
#: largest absolute difference of a number of the causal test's record (log-probability
#: differences in nats, and counts that move by whole items) that is not a new record
CAUSAL_TOLERANCE = ANSWER_TOLERANCE
#: (parent key, key) of the model's own answers (the ``own_answer`` baseline's scores)
ANSWER_PATHS = frozenset({("own_answer", "scores")})
#: largest absolute difference of a score of a baseline fitted again on model
#: activations (``REFIT_PATHS``) that is not a new result
REFIT_TOLERANCE = 5e-4
#: (parent key, key) of the scores of baselines fitted on model activations
REFIT_PATHS = frozenset({("random_features", "scores"), ("random_features", "class_scores")})


@dataclass(frozen=True)
class Rule:
    """How far two stored numbers may lie apart and still be the same result:
    ``absolute`` plus ``relative`` times the larger magnitude, plus one ``UNIT`` (the
    rounding of both)."""

    absolute: float
    relative: float = 0.0

    def allows(self, a: float, b: float) -> bool:
        return same_within(a, b, self.absolute, relative=self.relative)


def rounded(x: float) -> float:
    """``x`` to ``DECIMALS`` places (-0.0 becomes 0.0; NaN and inf are left alone).

    >>> rounded(0.12345678)
    0.123457
    """
    if not math.isfinite(x):
        return x
    return round(x, DECIMALS) + 0.0


def same_within(a: float, b: float, tolerance: float = VALUE_TOLERANCE, *,
                relative: float = 0.0) -> bool:
    """Whether two numbers stored rounded to ``DECIMALS`` places are the same result:
    ``|a - b| <= tolerance + relative * max(|a|, |b|) + UNIT`` (each stored value carries
    up to half a ``UNIT`` of rounding error), with a few float64 ulps of slack for the
    binary representation of decimals. NaN equals only NaN; an infinity only itself.

    One unit in the last place is rounding alone, whatever the tolerance:

    >>> same_within(0.123456, 0.123457, 0.0)
    True
    >>> same_within(0.123455, 0.123457, 0.0)
    False

    Within the tolerance after rounding (1e-5 + one unit):

    >>> same_within(0.5, 0.500011), same_within(0.5, 0.500012)
    (True, False)

    Relative to the magnitude (a surprisal in bits):

    >>> same_within(-254.123456, -254.124656, 0.0, relative=1e-5)
    True
    >>> same_within(-254.123456, -254.126456, 0.0, relative=1e-5)
    False
    """
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b or (math.isnan(a) and math.isnan(b))
    larger = max(abs(a), abs(b))
    allowed = tolerance + relative * larger + UNIT
    return abs(a - b) <= allowed + 4 * math.ulp(max(larger, 1.0))


def tolerance_at(parent: str | None, key: str, rule: Rule, *,
                 retrained_tolerance: float = RETRAINED_TOLERANCE,
                 lm_score_tolerance: float = LM_SCORE_TOLERANCE,
                 refit_tolerance: float = REFIT_TOLERANCE) -> Rule:
    """The rule for the numbers under ``key`` (whose mapping sits under ``parent``),
    inside a part compared by ``rule``.

    >>> base = Rule(VALUE_TOLERANCE)
    >>> tolerance_at("baselines", "surprisal", base) == base
    True
    >>> tolerance_at("surprisal", "scores", base)
    Rule(absolute=1e-05, relative=1e-05)
    >>> tolerance_at("random_features", "scores", base)
    Rule(absolute=0.0005, relative=0.0)
    >>> tolerance_at("own_answer", "scores", base)
    Rule(absolute=0.0001, relative=0.0)
    >>> tolerance_at("result", "selectivity", base)
    Rule(absolute=0.05, relative=0.0)
    """
    if key in RETRAINED_KEYS:
        return Rule(max(rule.absolute, retrained_tolerance), rule.relative)
    if (parent, key) in LM_SCORE_PATHS:
        return Rule(rule.absolute, max(rule.relative, lm_score_tolerance))
    if (parent, key) in REFIT_PATHS:
        return Rule(max(rule.absolute, refit_tolerance), rule.relative)
    if (parent, key) in ANSWER_PATHS:
        return Rule(max(rule.absolute, ANSWER_TOLERANCE), rule.relative)
    return rule


def differences(old: Any, new: Any, *, tolerance: float = VALUE_TOLERANCE,
                path: str = "", limit: int = 20,
                retrained_tolerance: float = RETRAINED_TOLERANCE,
                lm_score_tolerance: float = LM_SCORE_TOLERANCE,
                refit_tolerance: float = REFIT_TOLERANCE) -> list[str]:
    """Where two JSON-like documents of stored numbers differ beyond the contract (the
    rule ``tolerance_at`` gives each number, from ``tolerance`` outside the paths it
    names) or at all (anything else): at most ``limit`` lines ``path: old -> new``.

    >>> differences({"p": [0.5, 0.25]}, {"p": [0.500011, 0.26]})
    ['p[1]: 0.25 -> 0.26']
    >>> differences({"surprisal": {"scores": [-254.0]}},
    ...             {"surprisal": {"scores": [-254.0006]}})
    []
    """
    out: list[str] = []
    rules = {"retrained_tolerance": retrained_tolerance,
             "lm_score_tolerance": lm_score_tolerance, "refit_tolerance": refit_tolerance}
    _walk(old, new, Rule(tolerance), path, None, out, limit, rules)
    return out


def _walk(a: Any, b: Any, rule: Rule, path: str, parent: str | None, out: list[str],
          limit: int, rules: Mapping[str, float]) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(f"{where}: {a.get(key, 'missing')!r} -> "
                           f"{b.get(key, 'missing')!r}")
            else:
                sub = tolerance_at(parent, str(key), rule, **rules)
                _walk(a[key], b[key], sub, where, str(key), out, limit, rules)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} values -> {len(b)} values")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            # a list's items keep the list's place: ``scores[3]`` is under ``scores``
            _walk(x, y, rule, f"{path}[{i}]", parent, out, limit, rules)
        return
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if not rule.allows(a, b):
            out.append(f"{path}: {a!r} -> {b!r}")
        return
    if a != b:
        out.append(f"{path}: {a!r} -> {b!r}")


__all__ = ["DECIMALS", "LM_SCORE_PATHS", "LM_SCORE_TOLERANCE", "REFIT_PATHS",
           "REFIT_TOLERANCE", "RETRAINED_KEYS", "RETRAINED_TOLERANCE", "UNIT",
           "VALUE_TOLERANCE", "Rule", "differences", "rounded", "same_within",
           "tolerance_at"]
