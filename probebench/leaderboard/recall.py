"""What the leaderboard shows of the recall at 1% false positives (``recall_at_1pct_fpr``):
a reported column, not a ProbeScore axis, for the tasks that declare a control set.

A result carries the recall when its task declared a control set when it was evaluated
(``TaskResult.recall_at_1pct_fpr``); the task pages show the column when the task
declares one now, and the entry pages and ``leaderboard.json`` whenever the result has
the number. Results stored before the metric, or on tasks without a control set, show
none: ``n/a`` where a column is drawn, ``null`` in ``leaderboard.json``.
"""

from __future__ import annotations

from typing import Any

from probebench.evaluation.definitions import METRICS
from probebench.evaluation.results import TaskResult
from probebench.leaderboard.entry_page import interval_text
from probebench.tasks.spec import TaskSpec

#: the metric's name (its ``MetricDef`` gives the column's header and tooltip)
METRIC = "recall_at_1pct_fpr"


def declares_control(spec: TaskSpec | None) -> bool:
    """Whether the task's pages draw the recall column: the task declares a control set."""
    return spec is not None and spec.control is not None


def recall_cell(result: TaskResult) -> str:
    """The recall with its 95% CI as a table cell: ``0.812 [0.741, 0.870]``; ``n/a``
    when the result has none."""
    return interval_text(result.recall_at_1pct_fpr)


def recall_sort_value(result: TaskResult) -> float | str:
    """The cell's sort key: the point value, or "" (sorted last) without one."""
    r = result.recall_at_1pct_fpr
    return "" if r is None or r.value is None else r.value


def recall_view(result: TaskResult) -> dict[str, Any] | None:
    """What an entry page shows of a result's recall (None: the result has none): the
    recall and CI, the threshold, the control set's realised FPR, and the control set."""
    r = result.recall_at_1pct_fpr
    if r is None:
        return None
    return {"recall": recall_cell(result), "threshold": f"{r.threshold:.6f}",
            "control_fpr": f"{r.control_fpr:.3f}", "n_positives": r.n_positives,
            "n_control": r.n_control, "file": r.control.file,
            "sha256": r.control.sha256[:16], "description": r.control.description,
            "definition": METRICS[METRIC].text}


def recall_fields(result: TaskResult) -> dict[str, Any]:
    """``leaderboard.json``'s (and the CSV's) recall fields of one result: the value, its
    CI and the threshold, all None without a control set."""
    r = result.recall_at_1pct_fpr
    if r is None:
        return {"recall_at_1pct_fpr": None, "recall_at_1pct_fpr_ci_low": None,
                "recall_at_1pct_fpr_ci_high": None, "recall_threshold": None}
    return {"recall_at_1pct_fpr": r.value, "recall_at_1pct_fpr_ci_low": r.ci_low,
            "recall_at_1pct_fpr_ci_high": r.ci_high, "recall_threshold": r.threshold}


__all__ = ["METRIC", "declares_control", "recall_cell", "recall_fields", "recall_sort_value",
           "recall_view"]
