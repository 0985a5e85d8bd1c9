"""The whole leaderboard as data: ``leaderboard.json``, ``leaderboard.csv`` and
``leaderboard.schema.json`` at the leaderboard's root, so others can build on it.

``leaderboard.csv`` has one row per (entry, task): the fields of ``ResultRow``, in
their order, with empty cells for missing values. ``leaderboard.json`` holds the same
rows plus the rankings of every task-set group, each entry's ProbeScore breakdown and
each family's generalisation matrix (reported, never ranked);
each row carries the causal test's verdict on its task (``causal_fields``: the "moves the
model" column's ``moves_the_model``, reported, never ranked);
its JSON Schema is exported from ``Leaderboard`` (pydantic), with every field's
description. Nothing in them depends on the time of the build.

Their text is shown as the pages show it: every string of both (names, notes, task and
slice names) passes through ``probebench.safetext.visible``, so a control or bidi
character of an entry or a task arrives as an escape such as ``\\u202e``, never raw.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from probebench.evaluation.results import CausalOut
from probebench.leaderboard.columns import moves_the_model
from probebench.safetext import visible, visible_data

#: bumped when a field is renamed or removed, or may hold what it could not before
#: (adding one keeps it). 2: a ranking's rank, rank_best and rank_worst are null for an
#: entry that does not beat its baselines (listed after the ranked ones). 3: a transfer
#: target's ``reason`` may be set while its ratio is above 0 (not credited under spec
#: 0.3.0), and ``n_items``/``few_items``/``note``/``selective`` came with it. 4: a
#: ``family`` (results, rankings) may be a family that tasks.yaml declares (``truth``,
#: ``honesty``, ``refusal``), no longer always a format; ``generalisation`` came with it
LEADERBOARD_SCHEMA_VERSION = "4"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ResultRow(_Model):
    """One entry's latest stored result on one task (a row of leaderboard.csv)."""

    entry_id: str = Field(description="The entry's id (registry/probes/<id>.yaml).")
    short_name: str
    name: str
    author: str
    org: str
    status: Literal["live", "pending_review", "deprecated"]
    guard: bool = Field(description="A guard: listed apart, never ranked.")
    category: str
    model: str = Field(description="The model the probe reads.")
    layer: int
    position: str
    probe_type: str
    license: str
    artifact_url: str
    artifact_sha256: str = Field(description="The bundle hash of the artifact evaluated.")
    task: str = Field(description="The registered task id.")
    task_version: int
    family: str = Field(description="The task's benchmark family: the family tasks.yaml "
                        "declares for it (e.g. truth), else its format.")
    test_sha256: str = Field(description="Hash of the canonical test set evaluated on.")
    n_items: int
    auroc: float | None
    auroc_ci_low: float | None = Field(description="95% item-bootstrap interval, low end.")
    auroc_ci_high: float | None
    best_baseline: str | None = Field(description="The task's baseline with the highest "
                                      "AUROC on the same model and site (None: no baseline "
                                      "has an AUROC).")
    best_baseline_auroc: float | None
    baseline_gap: float | None = Field(description="AUROC minus the best baseline's AUROC "
                                       "(None: unknown).")
    baseline_gap_ci_low: float | None = Field(description="95% interval of the gap, low end "
                                              "(see baseline_gap_method).")
    baseline_gap_ci_high: float | None
    baseline_gap_method: Literal["stored", "paired", "intervals", "none"] = Field(
        description="stored: paired item bootstrap made with the result; paired: the same, "
                    "at build time from the stored per-prompt scores of the probe and the "
                    "baseline; intervals: approximate, combined from the two AUROCs' stored "
                    "95% intervals as if independent (MOVER), for results stored before "
                    "baselines kept per-prompt scores; none: not compared.")
    beats_baselines: bool | None = Field(description="The gap's 95% interval lies above 0 "
                                         "(None: baselines not compared). An entry that "
                                         "does not beat its baselines is never ranked.")
    accuracy_name: str = Field(description="What accuracy means for the task's format.")
    accuracy: float | None
    accuracy_ci_low: float | None
    accuracy_ci_high: float | None
    ece: float
    brier: float
    fpr_at_99tpr: float | None
    selectivity: float | None = Field(description="Accuracy minus control-task accuracy "
                                      "(None: not measured).")
    selectivity_ci_low: float | None
    selectivity_ci_high: float | None
    distshift_auroc: float | None
    distshift_imputed: bool
    evalaware_auroc: float | None
    evalaware_imputed: bool
    recall_at_1pct_fpr: float | None = Field(
        default=None, description="Recall of the test positives at 1% false positives on "
        "the task's control set (a reported column, not a ProbeScore axis; None: the task "
        "declares no control set, or the result was stored before it was measured).")
    recall_at_1pct_fpr_ci_low: float | None = Field(default=None, description="Its 95% "
                                                    "bootstrap interval, low end.")
    recall_at_1pct_fpr_ci_high: float | None = None
    recall_threshold: float | None = Field(default=None, description="The threshold: the "
                                           "probe's 99th percentile on the control set.")
    moves_the_model: Literal["yes", "no", "n/a", "not measured"] = Field(
        description="The causal test's verdict on this task (the \"moves the model\" "
                    "column, reported, not a ProbeScore axis): yes, the effect's 95% "
                    "interval lies above 0 and the effect above every random control; no, "
                    "measured otherwise; n/a, the test does not apply (causal_note says "
                    "why); not measured, no stored causal test of the entry's current "
                    "artifact on this task's test set.")
    causal_note: str = Field(description="The cell's detail as the pages show it: the effect "
                             "[interval] and control percentile, or why there is none.")
    causal_effect: float | None = Field(description="Mean slope of the model's readout per "
                                        "standard deviation of steering along the probe's "
                                        "direction (None: not measured, or n/a).")
    causal_ci_low: float | None = Field(description="Its 95% item-bootstrap interval, low "
                                        "end.")
    causal_ci_high: float | None
    causal_control_percentile: float | None = Field(description="Percent of the random "
                                                    "control directions' effects below "
                                                    "the probe's (ties count half).")
    holdout_generation: int | None = Field(description="The sealed holdout generation the "
                                           "entry was scored on (None: no sealed-holdout "
                                           "result).")
    holdout_commitment: str | None = Field(description="That generation's public "
                                           "commitment, sha256(nonce || plaintext).")
    holdout_auroc: float | None = Field(description="AUROC on the sealed holdout.")
    holdout_auroc_ci_low: float | None
    holdout_auroc_ci_high: float | None
    holdout_retention: float | None = Field(description="(holdout AUROC - 0.5) / (AUROC - "
                                            "0.5), clamped to [0, 1].")
    goodhart_resistance: float | None = Field(description="This task's Goodhart-resistance "
                                              "value: retention x selectivity share "
                                              "(None: not measured).")
    gflops_per_prompt: float | None = Field(description="Analytical cost (None: not kept).")
    latency_ms: float | None = Field(description="Measured; depends on the hardware.")
    task_probescore: float = Field(description="ProbeScore from this task's result alone.")
    task_rank: int | None = Field(description="Rank on the task's page (None: not ranked; "
                                  "task_unranked says why for a live entry).")
    task_rank_best: int | None
    task_rank_worst: int | None
    task_unranked: str | None = Field(description="Why a live entry is not ranked on the "
                                      "task's page: it does not beat its baselines, or they "
                                      "were not compared (None: ranked, or not live).")
    evaluated_at: str | None = Field(description="UTC time of the evaluation (None: stored "
                                     "before provenance was kept).")
    probebench_version: str | None
    probebench_commit: str | None
    device: str
    dtype: str
    hardware: str | None
    seed: int
    bootstrap_resamples: int
    page: str = Field(description="The entry's page, relative to the leaderboard's root.")


class RankedRow(_Model):
    """One entry of a ranking: ranked among the entries that beat their baselines, or
    (rank null) listed after them."""

    entry_id: str
    rank: int | None = Field(description="Rank among the group's entries that beat their "
                             "baselines (null: the entry does not, or was not compared; "
                             "see unranked).")
    rank_best: int | None = Field(description="2.5th percentile of the bootstrap ranks.")
    rank_worst: int | None = Field(description="97.5th percentile of the bootstrap ranks.")
    probescore: float
    probescore_ci_low: float = Field(description="2.5th percentile of the ProbeScore over the "
                                     "joint item bootstrap (every axis with sampling "
                                     "uncertainty recomputed, the cap applied, per resample); "
                                     "the plain percentile: the ProbeScore may lie outside "
                                     "it (marked in probescores[].outside).")
    probescore_ci_high: float
    probescore_ci_note: str | None = Field(description="Why the ProbeScore's interval has "
                                           "zero width (None: it has width).")
    auroc: float = Field(description="Mean AUROC over the group's tasks.")
    auroc_ci_low: float
    auroc_ci_high: float
    beats_baselines: bool | None = Field(description="Beats its baselines on every task of "
                                         "the group (None: not compared on some).")
    baseline_gap: float | None = Field(description="The gap the standing turns on: the "
                                       "task's, or over several tasks a failing one, else "
                                       "the one with the lowest interval.")
    baseline_gap_ci_low: float | None
    baseline_gap_ci_high: float | None
    unranked: str | None = Field(description="Why the entry is not ranked (None: ranked).")


class Ranking(_Model):
    """The ranking of one group: entries evaluated on exactly ``tasks``."""

    family: str
    tasks: list[str]
    entries: list[RankedRow] = Field(description="The ranked entries, best first, then "
                                     "those that do not beat their baselines (unranked), "
                                     "by ProbeScore.")


class TransferTarget(_Model):
    """One declared transfer target of one task, as stored (``TransferOut``)."""

    task: str
    target: str = Field(description="MODEL@LAYER:POSITION: the target model and its site.")
    transfer: float | None = Field(description="The stored ratio (auroc - 0.5) / "
                                   "(source_auroc - 0.5), clamped to [0, 1] (None: not "
                                   "measured).")
    auroc: float | None = Field(description="AUROC of the probe on the mapped target "
                                "activations.")
    auroc_ci_low: float | None = Field(description="Its 95% item-bootstrap interval, low end.")
    auroc_ci_high: float | None
    control_auroc: float | None = Field(description="AUROC through the shuffled-pair "
                                        "control maps (what a map that carries nothing "
                                        "reaches).")
    reason: str | None = Field(description="Why this target adds less than its stored ratio "
                               "to the transfer axis: not measured, clamped at 0 or, from "
                               "spec 0.3.0, not credited (its interval reaches the control, "
                               "or too few items); None: the ratio counts as stored.")


class AxisScore(_Model):
    value: float
    imputed: bool
    contribution: float
    capped: bool
    ci_low: float = Field(description="2.5th percentile of the axis value over the joint "
                          "item bootstrap behind the ProbeScore's interval (every axis with "
                          "sampling uncertainty recomputed on each resample by the axis's "
                          "own definition); the plain percentile, never stretched to the "
                          "value (see EntryScore.outside).")
    ci_high: float = Field(description="97.5th percentile of the same draws.")
    n_items: int | None = Field(description="Test items behind the value, summed over the "
                                "entry's tasks (eval-aware: the items the guard kept; "
                                "Goodhart resistance: the sealed holdout's); None: no "
                                "sampling uncertainty (cost, license, a constant).")
    few_items: bool = Field(default=False, description="n_items is below 20: the interval "
                            "rests on few items, and the site marks it so.")
    note: str = Field(default="", description="How the value was made: the imputation rule "
                      "and why it applied (a missing guard, fewer items of a class than the "
                      "axis's minimum, a degenerate control), or what was averaged.")
    reason: str | None = Field(default=None, description="Transfer axis only: why its value "
                               "is 0 (None: it is not 0).")
    targets: list[TransferTarget] | None = Field(
        default=None, description="Transfer axis only: every declared target of every task, "
                                  "with its target AUROC's interval and the control AUROC.")


class EntryScore(_Model):
    """An entry's ProbeScore over all its tasks, axis by axis."""

    entry_id: str
    tasks: list[str]
    probescore: float
    probescore_ci_low: float = Field(description="2.5th percentile of the ProbeScore over "
                                     "the joint item bootstrap (a live entry: its task-set "
                                     "ranking's; others: scored alone).")
    probescore_ci_high: float
    axes: dict[str, AxisScore]
    selective: bool | None = Field(default=None, description="Shown to be selective: on "
                                   "every task with a computable control (tasks without one "
                                   "are not judged), the selectivity's 95% interval (re-trained "
                                   "probe vs a control task, Hewitt and Liang 2019) lies "
                                   "above 0. False: on some task it does not (the site marks "
                                   "'not shown to be selective'); None: no task has a "
                                   "computable control.")
    outside: list[str] = Field(description="The axes whose value lies outside its "
                               "[ci_low, ci_high] (as published, 6 decimals), then "
                               "'probescore' where the ProbeScore does: marked, never "
                               "hidden; `leaderboard build` also prints a warning line for "
                               "each.")


class GeneralisationCell(_Model):
    """One entry on one task of its family: its own result (the diagonal) or a sibling
    evaluation (reported, never ranked)."""

    own: bool = Field(description="The entry's own result on the task (the diagonal: its "
                      "stored result, the one ranked); false: the probe read on a sibling "
                      "task (probebench.evaluation.generalisation), which no ProbeScore "
                      "axis and no ranking reads.")
    auroc: float | None = Field(description="AUROC on the task's test set (None: not "
                                "measured; note says why).")
    auroc_ci_low: float | None = Field(description="95% item-bootstrap interval, low end.")
    auroc_ci_high: float | None
    n_items: int = Field(description="Test items behind the AUROC.")
    note: str | None = Field(description="Why a sibling was not measured, or is shown "
                             "without a value (measured on another test set than the "
                             "registered one); None otherwise.")


class GeneralisationRow(_Model):
    """One live entry's row of its family's matrix."""

    entry_id: str
    trained_on: list[str] = Field(description="The entry's tasks in the family (its rows' "
                                  "group).")
    cells: dict[str, GeneralisationCell] = Field(description="Task -> the cell; a task "
                                                 "absent: not measured.")


class GeneralisationMatrix(_Model):
    """A family's generalisation matrix: every live entry of the family on every task
    of it. Reported, never ranked."""

    family: str
    tasks: list[str] = Field(description="Every task of the family (the columns), in the "
                             "tasks file's order.")
    rows: list[GeneralisationRow] = Field(description="Grouped by the tasks trained on "
                                          "(in column order), then by entry id.")


class Leaderboard(_Model):
    """leaderboard.json."""

    schema_version: str = LEADERBOARD_SCHEMA_VERSION
    probebench_version: str
    spec_version: str = Field(description="The ProbeScore spec the scores use.")
    rank_resamples: int
    rank_seed: int
    results: list[ResultRow] = Field(description="One row per (entry, task); "
                                     "leaderboard.csv holds the same rows.")
    rankings: list[Ranking] = Field(description="One ranking per (family, task set); "
                                    "entries are never ranked across groups.")
    probescores: list[EntryScore]
    generalisation: list[GeneralisationMatrix] = Field(
        default_factory=list, description="One matrix per family with more than one task "
        "that declares its siblings (or has stored sibling evaluations): the probes read "
        "on the other tasks of their family. Not part of any ranking or ProbeScore.")


def causal_fields(out: CausalOut | None, missing: str = "") -> dict[str, Any]:
    """A row's causal fields from the entry's stored causal test on the task (None: not
    measured, ``missing`` says why): the verdict and detail of ``moves_the_model``, the
    function the pages' column shows, and the numbers behind it (None unless measured).

    >>> causal_fields(None, "no causal test stored")["moves_the_model"]
    'not measured'
    """
    cell = moves_the_model(out, missing or "no causal test stored")
    effect = low = high = percentile = None
    if out is not None and out.applicable:
        effect, percentile = out.effect, out.control_percentile
        low, high = out.ci if out.ci is not None else (None, None)
    return {"moves_the_model": cell.verdict, "causal_note": cell.detail,
            "causal_effect": effect, "causal_ci_low": low, "causal_ci_high": high,
            "causal_control_percentile": percentile}


def csv_columns() -> list[str]:
    """leaderboard.csv's header, in order."""
    return list(ResultRow.model_fields)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return visible(str(value), lines=True)


def leaderboard_csv(rows: list[ResultRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(csv_columns())
    for row in rows:
        data = row.model_dump()
        writer.writerow([_cell(data[c]) for c in csv_columns()])
    return buffer.getvalue()


def leaderboard_json(board: Leaderboard) -> str:
    return json.dumps(visible_data(board.model_dump(mode="json")), indent=1,
                      sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"


def _dumps(value: object) -> str:
    return json.dumps(visible_data(value), indent=1, sort_keys=False, ensure_ascii=False,
                      allow_nan=False)


def leaderboard_json_parts(board: Leaderboard) -> Iterator[str]:
    """``leaderboard_json(board)`` in parts, one list element at a time: the same text,
    without the whole board as dicts (twice: dumped, then made visible) and as one string
    at once (a third of a 10,000-entry build's peak memory). JSON escapes every newline
    inside a string, so a nested element's lines are indented by prefixing each line."""
    yield "{"
    names = list(Leaderboard.model_fields)
    for k, name in enumerate(names):
        value = getattr(board, name)
        yield f"\n {_dumps(name)}: "
        if isinstance(value, list) and value:
            yield "["
            for j, element in enumerate(value):
                dumped = _dumps(element.model_dump(mode="json")
                                if isinstance(element, BaseModel) else element)
                yield "\n  " + dumped.replace("\n", "\n  ") + ("," if j < len(value) - 1 else "")
            yield "\n ]"
        else:
            dumped = _dumps(value.model_dump(mode="json") if isinstance(value, BaseModel)
                            else value)
            yield dumped.replace("\n", "\n ")
        if k < len(names) - 1:
            yield ","
    yield "\n}\n"


def write_leaderboard_json(board: Leaderboard, path: Path) -> None:
    """Write ``leaderboard_json(board)`` to ``path`` part by part
    (``leaderboard_json_parts``)."""
    with path.open("w", encoding="utf-8") as out:
        for part in leaderboard_json_parts(board):
            out.write(part)


def leaderboard_schema() -> str:
    schema = Leaderboard.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


__all__ = ["LEADERBOARD_SCHEMA_VERSION", "AxisScore", "EntryScore", "GeneralisationCell",
           "GeneralisationMatrix", "GeneralisationRow", "Leaderboard", "RankedRow", "Ranking",
           "ResultRow", "TransferTarget", "causal_fields", "csv_columns", "leaderboard_csv",
           "leaderboard_json", "leaderboard_json_parts", "leaderboard_schema",
           "write_leaderboard_json"]
