"""Multi-class tasks (a SentEval task without ``positive_class``): each prompt's class,
each item's correctness and the majority and length baselines.

A multi-class probe outputs one probability per class, in the task's sorted class order
(``TaskFormat.classes``). Its metrics are the binary ones' functions given class
probabilities (``probebench.evaluation.metrics``: one-vs-rest macro AUROC, top-label
ECE, Brier summed over classes; FPR at 99% TPR has no single multi-class meaning and is
left out), through the same ``headline`` and item bootstrap. Accuracy: the most probable
class is the prompt's class (ties: the first class in order); an item's correctness is
the share of its prompts that are right.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.families import TaskData, TaskFormat


def task_classes(data: TaskData) -> tuple[str, ...] | None:
    """The sorted classes of a multi-class task; None for a binary one."""
    return data.format.classes(data)


def class_indices(fmt: TaskFormat, prompts: Sequence[Prompt], classes: Sequence[str],
                  what: str) -> np.ndarray:
    """(n,) index into ``classes`` of each prompt's class; an error names a prompt whose
    class is missing or not among ``classes``."""
    index = {c: i for i, c in enumerate(classes)}
    out = np.empty(len(prompts), dtype=np.int64)
    for n, prompt in enumerate(prompts):
        cls = fmt.prompt_class(prompt)
        if cls not in index:
            raise InputError(f"{what} prompt {prompt.label_name}: class {cls!r} is not one of "
                             f"the task's classes {list(classes)}")
        out[n] = index[cls]
    return out


def item_correctness(items: Sequence[Item], proba: np.ndarray, y: np.ndarray
                     ) -> list[float | None]:
    """Each item's share of prompts whose most probable class is right (``proba`` and
    ``y``: the items' prompts in order)."""
    item_of = np.array([i for i, item in enumerate(items) for _ in item.prompts],
                       dtype=np.int64)
    right = (np.argmax(proba, axis=1) == y).astype(np.float64)
    return [float(right[item_of == i].mean()) for i in range(len(items))]


# --- baselines -------------------------------------------------------------------------

def majority_class_proba(y_train: np.ndarray, n_test: int, n_classes: int) -> np.ndarray:
    """Every test prompt gets the train split's class frequencies (argmax: the most
    frequent class; macro AUROC 0.5)."""
    freq = np.bincount(y_train, minlength=n_classes).astype(np.float64)
    return np.tile(freq / freq.sum(), (n_test, 1))


def length_class_proba(train: Sequence[Prompt], y_train: np.ndarray,
                       test: Sequence[Prompt], n_classes: int, seed: int) -> np.ndarray:
    """A multinomial logistic regression on the prompt's length in characters alone."""
    from sklearn.linear_model import LogisticRegression

    x = np.array([[len(p.text)] for p in train], dtype=np.float64)
    mean, std = x.mean(), x.std() or 1.0
    model = LogisticRegression(random_state=seed).fit((x - mean) / std, y_train)
    x_test = np.array([[len(p.text)] for p in test], dtype=np.float64)
    out = np.zeros((len(test), n_classes))
    out[:, model.classes_] = model.predict_proba((x_test - mean) / std)
    return out


__all__ = ["class_indices", "item_correctness", "length_class_proba", "majority_class_proba",
           "task_classes"]
