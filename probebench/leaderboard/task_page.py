"""What a task page says about the task's data: where it comes from, its license, its
size per split, its pinned hashes and files, and a few example items.

The examples come from the train split when the task has one (the test items are
public in the repository, but the page that ranks probes on them need not print them),
else from the test split. A task whose files cannot be loaded (drifted, or not in this
checkout) keeps its page and says why instead.

A task is flagged as **solvable from surface features** (``surface_flag``) when a
baseline that reads no learned representation reaches an AUROC of ``SURFACE_AUROC`` or
more on some stored model and site: ``length`` or ``majority`` (the prompt's surface),
or ``random_features`` (a randomly initialised copy of the model: token identity through
random layers). The flag names the feature where a simple check finds one
(``separating_word``): a word position (the first, second, ... or the last words) whose
few words (at most ``SYSTEMATIC_WORDS`` on each side) never coincide between the labels
across the test items, or a word found in every prompt of one label and in none of the
other; otherwise it names the baseline.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from probebench.errors import InputError
from probebench.leaderboard.files import LeaderboardFiles
from probebench.registry.baselines import BaselineRecord
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog, effective_license

#: example items shown per task, and prompts per item
EXAMPLES = 3
EXAMPLE_PROMPTS = 4
#: a surface or random-init baseline at this AUROC or above flags the task
SURFACE_AUROC = 0.95
#: the baselines that read no learned representation
SURFACE_BASELINES = ("random_features", "length", "majority")
#: word positions checked from each end by ``separating_word``
WORD_POSITIONS = 5
#: at most this many distinct words on each side make a position's separation
#: systematic (more: each item has its own words, which separate nothing learnable)
SYSTEMATIC_WORDS = 10
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_ORDINALS = ("first", "second", "third", "fourth", "fifth")


def task_data(catalog: TaskCatalog, task_id: str, files: LeaderboardFiles) -> dict[str, Any] | None:
    """The data section of ``task_id``'s page (None for a task the catalog lacks)."""
    spec = catalog.specs.get(task_id)
    if spec is None:
        return None
    root = catalog.root_of(task_id)
    file_rows = []
    for role, rel in sorted(spec.files.items()):
        link = files.repository_file(root / rel, f"files/tasks/{task_id}/{rel}",
                                     name=rel)
        file_rows.append({"role": role, "path": rel, "link": link,
                          "sha256": spec.files_sha256.get(rel, "not pinned")})
    view: dict[str, Any] = {
        "description": spec.description, "source": spec.source, "license": effective_license(spec),
        "labels": sorted(spec.labels.items(), reverse=True), "files": file_rows,
        "splits": [], "examples": [], "examples_from": None, "problem": None,
        "holdouts": [h.version for h in spec.holdouts],
    }
    try:
        data = catalog.load(task_id)
    except (InputError, OSError) as exc:
        view["problem"] = str(exc)
        return view
    for name in ("train", "val", "test"):
        items = data.splits.get(name)
        if items:
            view["splits"].append((name, len(items), sum(len(i.prompts) for i in items)))
    split = "train" if data.splits.get("train") else "test"
    view["examples_from"] = split
    for item in data.splits[split][:EXAMPLES]:
        view["examples"].append({
            "id": item.id, "slices": sorted(item.slices.items()),
            "prompts": [(p.text, "not scored", "") if p.label is None else
                        (p.text, f"label {p.label}", spec.labels.get(p.label, ""))
                        for p in item.prompts[:EXAMPLE_PROMPTS]],
            "more": max(0, len(item.prompts) - EXAMPLE_PROMPTS)})
    return view


def _examples(words: Counter[str]) -> str:
    shown = ", ".join(f"“{w}”" for w, _ in words.most_common(3))
    return shown + (f" (and {len(words) - 3} more)" if len(words) > 3 else "")


def separating_word(items: Sequence[Item]) -> str | None:
    """A word position or a word that separates the labels of every labelled prompt of
    ``items``, in words; None when there is none.

    >>> from probebench.prompts import Prompt
    >>> from probebench.tasks.anatomy import Item
    >>> items = [Item(id=str(k), prompts=[Prompt(text=f"No {n} ran", label=1),
    ...                                    Prompt(text=f"The {n} ran", label=0)])
    ...          for k, n in enumerate(["dog", "cat"])]
    >>> separating_word(items)
    'the first word: label 1 prompts have “No”, label 0 prompts “The”'
    """
    words: dict[int, list[list[str]]] = {1: [], 0: []}
    for item in items:
        for prompt in item.prompts:
            if prompt.label in words:
                words[prompt.label].append(_WORD.findall(prompt.text))
    if not words[1] or not words[0]:
        return None
    shortest = min(len(w) for side in words.values() for w in side)
    for k in range(min(WORD_POSITIONS, shortest)):
        for index, name in ((k, f"the {_ORDINALS[k]} word"),
                            (-1 - k, "the last word" if k == 0 else
                             f"the {_ORDINALS[k]} word from the end")):
            pos = Counter(w[index] for w in words[1])
            neg = Counter(w[index] for w in words[0])
            if len(pos) <= SYSTEMATIC_WORDS and len(neg) <= SYSTEMATIC_WORDS \
                    and not set(pos) & set(neg):
                return (f"{name}: label 1 prompts have {_examples(pos)}, label 0 prompts "
                        f"{_examples(neg)}")
    for label, other in ((1, 0), (0, 1)):
        common = set.intersection(*(set(w) for w in words[label]))
        common -= {w for ws in words[other] for w in ws}
        if common:
            word = sorted(common)[0]
            return (f"the word “{word}”: in every label {label} prompt and in no label "
                    f"{other} prompt")
    return None


def surface_flag(catalog: TaskCatalog, task_id: str,
                 stored: Mapping[str, BaselineRecord]) -> dict[str, Any] | None:
    """The task page's flag when a surface or random-init baseline stored for the task
    (``stored``: "<model> at <site>" -> record) reaches ``SURFACE_AUROC``; None when
    none does."""
    hits = []
    for key, record in sorted(stored.items()):
        for name in SURFACE_BASELINES:
            base = record.baselines.get(name)
            if base is not None and base.auroc is not None and base.auroc.value is not None \
                    and base.auroc.value >= SURFACE_AUROC:
                hits.append({"baseline": name, "where": key, "auroc": base.auroc.value})
    if not hits:
        return None
    feature = None
    if task_id in catalog.specs:
        try:
            feature = separating_word(catalog.load(task_id).test)
        except (InputError, OSError):
            feature = None
    return {"threshold": SURFACE_AUROC, "hits": hits, "feature": feature}


__all__ = ["EXAMPLES", "SURFACE_AUROC", "SURFACE_BASELINES", "separating_word",
           "surface_flag", "task_data"]
