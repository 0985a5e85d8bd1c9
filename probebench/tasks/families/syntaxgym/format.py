"""SyntaxGym test suites (Hu et al., ACL 2020; the syntaxgym-core JSON format).

A suite has items; each item has conditions (variants of one sentence split into
numbered regions) and the suite has predictions over region surprisals. Two uses:

* **Surprisal predictions** (as SyntaxGym scores a model): ``prediction_results``
  evaluates each prediction of an item from the model's region surprisals, under each
  metric the suite names (``meta.metric``: a name, a list, or ``"all"``). An empty
  region has no tokens; its value is what the metric gives on none (``sum``: 0, as in
  syntaxgym-core), and predictions that read it are evaluated with that value.
* **Probe prompts**: each condition is a prompt (its regions joined with single
  spaces, empty regions skipped, spans ``region_<n>`` over each region's content),
  labelled by ``formula.condition_labels`` (1 expected, 0 anomalous, None unlabelled).

Both prediction forms are read: ``{"type": "formula", "formula": ...}`` and the legacy
2019 form, converted to a formula. ``predictions`` may be empty (the format's default):
syntaxgym-core then reports nothing per item, and here its items have no labels and no
score (None). Items are split into train and test by the hashed rule; an item's
conditions always stay together.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from probebench.errors import InputError
from probebench.models.surprisal import TokenSurprisal, region_surprisal, token_surprisals
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families.base import FreshGenerator, LMScoring, TaskData, TaskFormat
from probebench.tasks.families.syntaxgym.formula import (
    Prediction,
    Ref,
    condition_labels,
    evaluate,
    legacy_to_formula,
    parse_formula,
    references,
)
from probebench.tasks.spec import TaskSpec

METRICS = ("sum", "mean", "median", "range", "max", "min")


def _metrics(meta: Mapping[str, Any], source: str) -> list[str]:
    metric = meta.get("metric")
    if metric == "all":
        return list(METRICS)
    names = metric if isinstance(metric, list) else [metric]
    for name in names:
        if name not in METRICS:
            raise InputError(f"{source}: meta.metric: expected one of {', '.join(METRICS)}, a "
                             f"list of them, or 'all'; found {metric!r}")
    return [str(n) for n in names]


def _formulas(preds: Any, source: str) -> list[str]:
    if not isinstance(preds, list):
        raise InputError(f"{source}: predictions must be a list (it may be empty)")
    out = []
    for i, pred in enumerate(preds):
        where = f"{source}: predictions[{i}]"
        if not isinstance(pred, dict):
            raise InputError(f"{where}: expected an object")
        if "formula" in pred:
            if pred.get("type", "formula") != "formula" or not isinstance(pred["formula"], str):
                raise InputError(f"{where}: expected type 'formula' with a string formula")
            out.append(pred["formula"].strip())
        elif "relation" in pred:
            out.append(legacy_to_formula(pred, where))
        else:
            raise InputError(f"{where}: expected a 'formula' or a legacy 'relation'")
    return out


def read_suite(path: Path) -> tuple[dict[str, Any], list[Item]]:
    """Parse and validate a suite; returns (summary, items)."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        suite = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    source = str(path)
    if not isinstance(suite, dict):
        raise InputError(f"{source}: expected a JSON object")
    for key in ("meta", "predictions", "region_meta", "items"):
        if key not in suite:
            raise InputError(f"{source}: field {key!r} is missing")
    meta = suite["meta"]
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise InputError(f"{source}: meta.name must be a string")
    name = meta["name"]
    metrics = _metrics(meta, source)
    formulas = _formulas(suite["predictions"], source)
    preds = [parse_formula(f, f"{source}: predictions[{i}]") for i, f in enumerate(formulas)]
    region_meta = suite["region_meta"]
    if not isinstance(region_meta, dict) or not region_meta:
        raise InputError(f"{source}: region_meta must be a non-empty object")
    try:
        regions = sorted(int(k) for k in region_meta)
    except ValueError:
        raise InputError(f"{source}: region_meta keys must be region numbers") from None
    if regions != list(range(1, len(regions) + 1)):
        raise InputError(f"{source}: region numbers must run 1..{len(regions)}, found {regions}")
    refs = [r for p in preds for r in references(p)]
    for ref in refs:
        if ref.region is not None and ref.region not in regions:
            raise InputError(f"{source}: a prediction reads region {ref.region}, which "
                             "region_meta does not define")
    items_raw = suite["items"]
    if not isinstance(items_raw, list) or not items_raw:
        raise InputError(f"{source}: items must be a non-empty list")
    items: list[Item] = []
    numbers: set[int] = set()
    for i, raw in enumerate(items_raw):
        where = f"{source}: items[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("item_number"), int):
            raise InputError(f"{where}: item_number must be an integer")
        if raw["item_number"] in numbers:
            raise InputError(f"{where}: item_number {raw['item_number']} is used twice")
        numbers.add(raw["item_number"])
        items.append(_item(name, raw, regions, preds, formulas, metrics, refs, where))
    summary = {"name": name, "metrics": metrics, "formulas": formulas,
               "region_meta": {str(k): region_meta[str(k)] for k in regions}}
    return summary, items


def _item(suite: str, raw: dict[str, Any], regions: list[int], preds: list[Prediction],
          formulas: list[str], metrics: list[str], refs: list[Ref], where: str) -> Item:
    conds = raw.get("conditions")
    if not isinstance(conds, list) or not conds:
        raise InputError(f"{where}: conditions must be a non-empty list")
    names = []
    for j, cond in enumerate(conds):
        if not isinstance(cond, dict) or not isinstance(cond.get("condition_name"), str):
            raise InputError(f"{where}.conditions[{j}]: condition_name must be a string")
        names.append(cond["condition_name"])
    if len(set(names)) != len(names):
        raise InputError(f"{where}: condition names repeat: {names}")
    for ref in refs:
        if ref.condition not in names:
            raise InputError(f"{where}: a prediction names condition {ref.condition!r}, which "
                             f"this item lacks (it has {', '.join(names)})")
    labels = condition_labels(preds, names)
    item_id = f"{suite}-{raw['item_number']}"
    prompts = []
    for j, cond in enumerate(conds):
        text, spans = _join_regions(cond.get("regions"), regions, f"{where}.conditions[{j}]")
        name = cond["condition_name"]
        prompts.append(Prompt(text, spans=spans, id=f"{item_id}-{name}", label=labels[name],
                              slices={"suite": suite, "condition": name}))
    return Item(id=item_id, prompts=tuple(prompts), slices={"suite": suite},
                data={"formulas": formulas, "metrics": metrics})


def _join_regions(raw: Any, regions: list[int], where: str) -> tuple[str, dict[str, tuple[int,
                                                                                        int]]]:
    if not isinstance(raw, list):
        raise InputError(f"{where}: regions must be a list")
    parts: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    seen = []
    pos = 0
    for k, region in enumerate(raw):
        if not isinstance(region, dict) or not isinstance(region.get("region_number"), int) \
                or not isinstance(region.get("content"), str):
            raise InputError(f"{where}.regions[{k}]: needs an integer region_number and a "
                             "string content")
        seen.append(region["region_number"])
        content = region["content"].strip()
        if not content:
            continue
        if parts:
            pos += 1  # the joining space
        spans[f"region_{region['region_number']}"] = (pos, pos + len(content))
        parts.append(content)
        pos += len(content)
    if seen != regions:
        raise InputError(f"{where}: regions numbered {seen}; region_meta defines {regions}")
    if not parts:
        raise InputError(f"{where}: every region is empty")
    return " ".join(parts), spans


def region_values_lookup(values: Mapping[str, Mapping[int, float]]) -> Any:
    """A formula lookup over ``{condition: {region_number: value}}`` (``*`` sums all)."""
    def lookup(ref: Ref) -> float:
        per_region = values.get(ref.condition)
        if per_region is None or (ref.region is not None and ref.region not in per_region):
            where = "any region" if per_region is None else f"region {ref.region}"
            raise InputError(f"a prediction reads {where} of condition {ref.condition!r}, "
                             "which the region values lack (an empty region needs "
                             "empty_region_value(metric); region_values gives it)")
        if ref.region is None:
            return float(sum(per_region.values()))
        return float(per_region[ref.region])
    return lookup


def prediction_results(item: Item, values: Mapping[str, Mapping[int, float]]) -> list[bool]:
    """Whether each of the suite's predictions holds for this item, given region values
    (already aggregated with one metric) per condition; ``[]`` when it states none."""
    lookup = region_values_lookup(values)
    return [evaluate(parse_formula(f), lookup) for f in item.data["formulas"]]


def item_passes(results: Sequence[bool]) -> bool | None:
    """SyntaxGym's item outcome: every prediction holds. None when there is no
    prediction, never the vacuous True of ``all([])``."""
    return all(results) if results else None


def empty_region_value(metric: str) -> float:
    """A region with no tokens: syntaxgym-core aggregates an empty list, so ``sum`` is 0
    and ``mean``/``median`` are NaN (any comparison with them is false). It fails on
    ``range``/``max``/``min``; NaN here, so the item is scored instead of aborting."""
    return 0.0 if metric == "sum" else math.nan


def _region_numbers(item: Item) -> list[int]:
    # Every condition lists the suite's regions 1..N (read_suite checks), so a number
    # without a span is an empty region. N is the highest number a span or a formula
    # names: the hashed item does not store it.
    named = {n for p in item.prompts for n in item_region_numbers(p)}
    named |= {r.region for f in item.data["formulas"] for r in references(parse_formula(f))
              if r.region is not None}
    return list(range(1, max(named, default=0) + 1))


def region_values(item: Item, surprisals: Sequence[TokenSurprisal],
                  metric: str) -> dict[str, dict[int, float]]:
    """``{condition: {region_number: value}}`` of every region of the item under one
    metric, from each prompt's token surprisals (in ``item.prompts`` order)."""
    numbers = _region_numbers(item)
    values: dict[str, dict[int, float]] = {}
    for prompt, ts in zip(item.prompts, surprisals, strict=True):
        present = item_region_numbers(prompt)
        agg = region_surprisal(ts, [prompt.spans[f"region_{n}"] for n in present], metric)
        found = dict(zip(present, map(float, agg), strict=True))
        values[prompt.slices["condition"]] = {
            n: found.get(n, empty_region_value(metric)) for n in numbers}
    return values


def score_items(lm: Any, items: Sequence[Item], *, progress: bool = False
                ) -> dict[str, list[list[bool]]]:
    """SyntaxGym's own protocol on a causal LM: for each metric the suite names, whether
    each prediction holds on each item (``{metric: [[bool per prediction] per item]}``;
    ``item_passes`` turns one item's list into its outcome).

    Region values are token surprisals (bits, no BOS, first token 0) aggregated onto
    each region's characters; ``probebench.models.region_surprisal`` documents the rule.
    """
    prompts = [p for item in items for p in item.prompts]
    surprisals = iter(token_surprisals(lm, prompts, progress=progress))
    metrics: list[str] = list(items[0].data["metrics"]) if items else []
    out: dict[str, list[list[bool]]] = {m: [] for m in metrics}
    for item in items:
        per_prompt = [next(surprisals) for _ in item.prompts]
        for metric in metrics:
            values = region_values(item, per_prompt, metric)
            out[metric].append(prediction_results(item, values))
    return out


class SyntaxGymFormat(TaskFormat):
    """SyntaxGym suites: an item is right (1) when every expected condition scores
    strictly higher than every anomalous one, else wrong (0); a tie is wrong, as in
    syntaxgym-core, whose ``<`` and ``>`` are strict. An item with no labelled pair
    (e.g. its suite states no prediction) gets None."""

    name = "syntaxgym"
    roles = ("suite",)
    test_roles = ("suite",)
    accuracy_name = "prediction_accuracy"
    accuracy_definition = "every expected condition above every anomalous one"
    minimal_pairs = True
    model_baseline_note = ("SyntaxGym's own protocol: the suite's region predictions on the "
                           "model's surprisal (bits, no BOS); an item is right when all hold")
    lm_scoring = LMScoring(
        "model_item_scores",
        "SyntaxGym's own prediction accuracy: region surprisals (bits, no BOS, the first "
        "token unscored, as in Hu et al. 2020) under the suite's metric; an item is correct "
        "when all its predictions hold", by_default=True, name="syntaxgym_predictions")
    display_name = "SyntaxGym"

    def fresh_generators(self) -> tuple[FreshGenerator, ...]:
        """Fresh items of three suites, with the registered suite's conditions and
        predictions."""
        # imported here: the word lists load when a holdout is sealed, not with every task
        from probebench.tasks.families.syntaxgym.fresh import GENERATORS
        return GENERATORS

    def model_item_scores(self, lm: Any, items: Sequence[Item], *, progress: bool = False
                          ) -> list[float | None] | None:
        """SyntaxGym's own accuracy: an item is right when every prediction of the suite
        holds under its (first) metric; an item without predictions is not scored."""
        if not items:
            return []
        metric = str(items[0].data["metrics"][0])
        outcomes = score_items(lm, items, progress=progress)[metric]
        return [None if ok is None else float(ok) for ok in map(item_passes, outcomes)]

    def score_item(self, item: Item, scores: np.ndarray,
                   threshold: float | None) -> float | None:
        labels = [p.label for p in item.prompts]
        good = [s for s, lab in zip(scores, labels, strict=True) if lab == 1]
        bad = [s for s, lab in zip(scores, labels, strict=True) if lab == 0]
        if not good or not bad:
            return None
        return 1.0 if min(good) > max(bad) else 0.0

    def read(self, spec: TaskSpec, files: dict[str, Path]) -> TaskData:
        _, items = read_suite(files["suite"])
        return TaskData(spec, self.split_by_hash(spec, items))


def item_region_numbers(prompt: Prompt) -> Sequence[int]:
    return sorted(int(k.split("_", 1)[1]) for k in prompt.spans if k.startswith("region_"))
