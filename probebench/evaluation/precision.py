"""The precision policy: float32 is the reference; reduced precision is checked against it.

* Every model runs in float32 unless a command is given ``--dtype bfloat16`` or
  ``float16`` (``dtype="auto"`` is float32 on the CPU and on CUDA). Results record the
  model's dtype (``model.dtype`` of a submission and of a stored record) and the device.
* float32 results compare across devices, thread counts and batch budgets under the
  reproducibility contract (``probebench.evaluation.reproducibility``): CUDA float32
  equals CPU float32 to a relative 1e-6 (issue 16, measured on an H100).
* A result in reduced precision is *accepted* when every headline metric lies within
  ``TOLERANCE`` of the float32 result of the same entry and task: the registry then
  keeps the float32 record and stores nothing new. Beyond it, the reduced-precision
  record is stored (no number is hidden) but the leaderboard and re-evaluation keep
  reading the float32 record, and ``registry evaluate`` reports the disagreement.
* ``TOLERANCE`` is measured, not guessed: ``benchmarks/precision.py`` re-evaluates the
  reference probes in bfloat16 and prints the largest difference per metric; each
  tolerance is at least twice the largest difference seen (BENCHMARKS.md, "Precision").
"""

from __future__ import annotations

from probebench.evaluation.results import TaskResult

#: the precision every stored reference result is computed in
REFERENCE_DTYPE = "float32"

#: the largest |reduced precision - float32| accepted per headline metric (absolute, on
#: the metric's own 0-1 scale): at least twice the largest difference
#: benchmarks/precision.py measured over the 13 reference probes in bfloat16 on the CPU,
#: rounded up (BENCHMARKS.md, "Precision"); GPU bfloat16 kernels differ, so re-measure
#: there with `python benchmarks/precision.py --device cuda` when a GPU is at hand
TOLERANCE: dict[str, float] = {
    "auroc": 0.01,            # largest seen 0.0039 (syntaxgym_number_prep)
    "accuracy": 0.06,         # 0.0300 (verb_grammar, layer 15)
    "ece": 0.07,              # 0.0304 (verb_grammar MLP, layer 20)
    "brier": 0.05,            # 0.0244 (verb_grammar, layer 20)
    "fpr_at_99tpr": 0.03,     # 0.0121 (blimp_determiner_noun_agreement_1)
    "distshift_auroc": 0.04,  # 0.0156 (syntaxgym_number_prep, 32 prompts)
    "evalaware_auroc": 0.13,  # 0.0625 (syntaxgym_number_prep, 32 prompts)
}


def headline_values(task: TaskResult) -> dict[str, float | None]:
    """The metrics the precision policy compares, by name."""
    return {
        "auroc": task.auroc.value,
        "accuracy": task.accuracy.value,
        "ece": task.ece,
        "brier": task.brier,
        "fpr_at_99tpr": task.fpr_at_99tpr,
        "distshift_auroc": task.distshift_auroc.value,
        "evalaware_auroc": task.evalaware_auroc.value,
    }


def precision_gaps(reference: TaskResult, other: TaskResult) -> dict[str, float]:
    """|other - reference| per headline metric (metrics missing on either side left out)."""
    ref, new = headline_values(reference), headline_values(other)
    return {name: abs(float(b) - float(a)) for name, (a, b) in
            ((k, (ref[k], new[k])) for k in TOLERANCE) if a is not None and b is not None}


def beyond_tolerance(reference: TaskResult, other: TaskResult) -> dict[str, float]:
    """The metrics on which ``other`` (reduced precision) differs from the float32
    ``reference`` by more than ``TOLERANCE``: name -> the difference. Empty: accepted."""
    return {name: gap for name, gap in precision_gaps(reference, other).items()
            if gap > TOLERANCE[name]}


__all__ = ["REFERENCE_DTYPE", "TOLERANCE", "beyond_tolerance", "headline_values",
           "precision_gaps"]
