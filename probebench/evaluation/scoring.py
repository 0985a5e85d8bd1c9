"""Per-item correctness for each task format, from any per-prompt scores.

Scores are "higher = more likely label 1" (a probe's P(positive), or minus a
sentence's surprisal). Ties are credited as a random tie-break would be on average.

* verbs, multiple choice: the candidate with the highest score is the answer; credit
  1/k when the expected candidate ties with k-1 others at the top. Classification
  lines: P >= 0.5 means "correct" (only meaningful for probabilities; ``threshold``
  None leaves them unscored). Ambiguous items are not scored (not penalised).
* blimp: the pair is right when the good sentence scores higher (a tie gives 0.5).
* syntaxgym: the item is right when every expected condition scores higher than every
  anomalous one (ties give 0.5 for that comparison; the item needs all to hold).
* senteval (binary): P >= 0.5 agrees with the label.

An item without scoreable labels gives None and is left out of accuracies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from probebench.tasks.anatomy import Item

ItemScorer = Callable[[Item, np.ndarray, float | None], float | None]


def _labels(item: Item) -> list[int | None]:
    return [p.label for p in item.prompts]


def _verbs(item: Item, scores: np.ndarray, threshold: float | None) -> float | None:
    labels = _labels(item)
    if all(lab is None for lab in labels):
        return None
    if item.data.get("form") == "multiple_choice":
        top = scores.max()
        tied = np.flatnonzero(scores == top)
        expected = labels.index(1)
        return 1.0 / len(tied) if expected in tied else 0.0
    if threshold is None:
        return None
    return float((scores[0] >= threshold) == bool(labels[0]))


def _pair(item: Item, scores: np.ndarray, threshold: float | None) -> float | None:
    labels = _labels(item)
    if 1 not in labels or 0 not in labels:
        return None
    good = scores[labels.index(1)]
    bad = scores[labels.index(0)]
    return 1.0 if good > bad else 0.5 if good == bad else 0.0


def _conditions(item: Item, scores: np.ndarray, threshold: float | None) -> float | None:
    labels = _labels(item)
    good = [s for s, lab in zip(scores, labels, strict=True) if lab == 1]
    bad = [s for s, lab in zip(scores, labels, strict=True) if lab == 0]
    if not good or not bad:
        return None
    if min(good) > max(bad):
        return 1.0
    return 0.0


def _binary(item: Item, scores: np.ndarray, threshold: float | None) -> float | None:
    label = item.prompts[0].label
    if label is None or threshold is None:
        return None
    return float((scores[0] >= threshold) == bool(label))


ITEM_SCORERS: dict[str, ItemScorer] = {"verbs": _verbs, "blimp": _pair,
                                       "syntaxgym": _conditions, "senteval": _binary}
#: what the item accuracy is called in results, by format
ACCURACY_NAMES = {"verbs": "mc_accuracy", "blimp": "pair_accuracy",
                  "syntaxgym": "prediction_accuracy", "senteval": "accuracy"}


def group_by_slice(items: Sequence[Item], scores: Sequence[float | None],
                   names: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """Scored items' correctness grouped by each slice's values (unscored items left out)."""
    out: dict[str, dict[str, list[float]]] = {}
    for name in names:
        groups: dict[str, list[float]] = {}
        for item, score in zip(items, scores, strict=True):
            if score is not None:
                groups.setdefault(str(item.slices.get(name, "-")), []).append(score)
        if groups:
            out[name] = dict(sorted(groups.items()))
    return out


def item_scores(fmt: str, items: Sequence[Item], prompt_scores: np.ndarray,
                item_of: np.ndarray, threshold: float | None = 0.5) -> list[float | None]:
    """Correctness (0..1 or None) of each item, from the scores of its prompts."""
    scorer = ITEM_SCORERS[fmt]
    out: list[float | None] = []
    for index, item in enumerate(items):
        out.append(scorer(item, prompt_scores[item_of == index], threshold))
    return out
