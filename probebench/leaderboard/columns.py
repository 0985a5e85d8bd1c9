"""What the site's table columns are called and what they mean.

Headers are words, not field names; each header's tooltip (and the methodology page's
list of columns) is its definition, taken from the code that computes the number: the
metric definitions of ``submission.json`` (``metric_definitions``, the source of
METHODOLOGY.md's list), the ProbeScore axes (``AXES``, the source of its axis table)
and the rank bootstrap (``RANK_DEFINITION``). Nothing here is a hand-made copy.
"""

from __future__ import annotations

from dataclasses import dataclass

from probebench.evaluation.definitions import metric_definitions
from probebench.leaderboard.markdown import plain_markdown
from probebench.leaderboard.probescore import ProbeScoreSpec
from probebench.leaderboard.ranks import RANK_DEFINITION


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    #: plain text (no Markdown), shown as the header's tooltip
    definition: str


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def columns(spec: ProbeScoreSpec) -> dict[str, Column]:
    """key -> column, for every column the site's tables show; ProbeScore axes are keyed
    ``axis:<name>`` in the order of ``spec``."""
    d = {k: plain_markdown(v) for k, v in metric_definitions().items()}
    cap = f"{spec.cap * 100:g}%"
    rows = [
        ("rank", "Rank", _first_upper(RANK_DEFINITION) + "."),
        ("entry", "Entry", "The entry's short name, and its id "
                           "(registry/probes/<id>.yaml)."),
        ("model", "Model", "The language model the probe reads."),
        ("site", "Site", "layer:position, where the probe reads the model: the hidden state "
                         "after block number layer (0 = the embeddings), taken at or pooled "
                         "over position (last_token, token_avg, ...)."),
        ("tasks", "Task set", "The registered tasks the entry is scored on. An entry is "
                              "ranked only against entries scored on exactly the same "
                              "task set."),
        ("probescore", "ProbeScore",
         f"ProbeScore v{spec.version}: the sum of the axes' values times their normalised "
         f"weights, no axis contributing more than {cap} of the total (Methodology). In "
         "brackets, its 95% interval from the rank bootstrap, which resamples the test "
         "items and recomputes AUROC and the axes derived from it (the other axes are "
         "held)."),
        ("auroc", "AUROC", "AUROC, mean over the task set: " + d["auroc"] + " In brackets, "
                           "the 95% interval: " + d["ci"]),
        ("selectivity", "Selectivity",
         "Accuracy minus control-task accuracy, mean over the task set. " + d["selectivity"]),
        ("accuracy", "Accuracy", _first_upper(d["accuracy"])),
        ("ece", "ECE", "Expected calibration error (lower is better): " + d["ece"]),
        ("brier", "Brier", "Brier score (lower is better): " + d["brier"]),
        ("fpr", "FPR@99TPR", "False-positive rate at 99% true-positive rate (lower is "
                             "better): " + d["fpr_at_99tpr"]),
        ("cost", "GFLOPs/prompt", "Billions of FLOPs per test prompt: " + d["cost"]),
        ("latency", "Latency", "Measured, not scored (it depends on the machine): "
                               + d["latency_ms"]),
        ("distshift", "Shifted AUROC", _first_upper(d["distshift_auroc"])),
        ("evalaware", "Eval-aware AUROC", _first_upper(d["evalaware_auroc"])),
        ("marks", "Marks", _first_upper(d["marks"])),
        ("status", "Status", "live (ranked), pending_review (awaiting review, not ranked), "
                             "deprecated (archived) or guard (never ranked)."),
    ]
    out = {key: Column(key, label, text) for key, label, text in rows}
    weights = spec.normalised()
    for axis in spec.axes:
        out[f"axis:{axis.name}"] = Column(
            axis.name, axis.label,
            f"{axis.label}, the ProbeScore axis {axis.name} (normalised weight "
            f"{weights[axis.name]:.3f}): {plain_markdown(axis.definition)}.")
    return out


__all__ = ["Column", "columns"]
