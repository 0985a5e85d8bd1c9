"""Control-task selectivity (Hewitt and Liang, 2019, "Designing and Interpreting Probes
with Control Tasks").

A probe that reaches high accuracy may show what the model encodes, or only what a
flexible classifier can memorise. The control task keeps the inputs and replaces the
labels with a fixed random function of *word types*, which only lexical memorisation can
solve: every word type (lower-cased ``\\w+``) gets a fixed random vote of +1 or -1 from a
salted hash, a prompt's control score is the mean vote of its words, and prompts above
a threshold are labelled 1, the threshold chosen so that the control task's share of
positive train prompts equals the real task's (equal label balance). Sentence-level
tasks need the whole vocabulary here: labelling by one word (Hewitt and Liang label
single tokens) leaves a SyntaxGym suite with two or three types, which any probe
memorises.

The entry's architecture (linear, or an MLP with its hidden size) is re-trained with
``train``'s protocol (``probebench.evaluation.protocol``) twice, on the real labels and
on the control labels, from the same activations. Reported on the test prompts:
accuracy (P >= 0.5), control accuracy and **selectivity = accuracy - control
accuracy**, each with a 95% item bootstrap (the difference is paired: one resample of
items serves both). High accuracy with low selectivity means the probe could have
memorised word identity; selectivity near the accuracy's distance from chance means the
representation, not the probe, carries the property.

``task_selectivity`` applies it to a task in a session, from the session's activations.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError
from probebench.evaluation.headline import Flat, mean_interval
from probebench.evaluation.protocol import (
    DEFAULT_HIDDEN,
    fit_protocol,
    labelled_prompts,
    train_val_items,
)
from probebench.evaluation.results import IntervalOut, SelectivityOut
from probebench.evaluation.session import Session
from probebench.prompts import Prompt
from probebench.sites import Site

CONTROL_SALT = "probebench-control-v1"
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _hash(text: str) -> bytes:
    return hashlib.sha256(f"{CONTROL_SALT}/{text}".encode()).digest()


def control_score(text: str) -> float:
    """Mean +1/-1 vote of the prompt's word types, plus a hash tie-break below 1e-6."""
    votes = [1.0 if _hash(w)[0] & 1 else -1.0 for w in words(text)]
    jitter = int.from_bytes(_hash("tie/" + text)[:4], "big") / 2**32 * 1e-7
    return (sum(votes) / len(votes) if votes else 0.0) + jitter


def control_threshold(train: Sequence[Prompt], positive_rate: float) -> float:
    """The score above which the share of train prompts equals ``positive_rate``."""
    scores = np.sort([control_score(p.text) for p in train])
    k = round((1.0 - positive_rate) * len(scores))
    if k <= 0:
        return float(scores[0]) - 1.0
    if k >= len(scores):
        return float(scores[-1])
    return float((scores[k - 1] + scores[k]) / 2)


def control_labels(prompts: Sequence[Prompt], threshold: float) -> np.ndarray:
    return np.asarray([int(control_score(p.text) > threshold) for p in prompts],
                      dtype=np.int64)


@dataclass
class ControlData:
    """Labelled prompts and their activations at the probe's site, per split."""

    train: Sequence[Prompt]
    x_train: np.ndarray
    val: Sequence[Prompt]
    x_val: np.ndarray
    test: Sequence[Prompt]
    x_test: np.ndarray
    test_items: np.ndarray  #: item index of each test prompt


def selectivity(data: ControlData, *, probe_type: str, hidden: int, seed: int,
                n_resamples: int, parts: Sequence[str]) -> SelectivityOut:
    """Accuracy, control accuracy and selectivity with paired item-bootstrap CIs."""
    y_train = np.array([p.label for p in data.train], dtype=np.int64)
    y_val = np.array([p.label for p in data.val], dtype=np.int64)
    y_test = np.array([p.label for p in data.test], dtype=np.int64)
    threshold = control_threshold(data.train, float(y_train.mean()))
    c_train = control_labels(data.train, threshold)
    c_val, c_test = control_labels(data.val, threshold), control_labels(data.test, threshold)

    correct = {}
    for name, (a, b, t) in {"task": (y_train, y_val, y_test),
                            "control": (c_train, c_val, c_test)}.items():
        if len(set(a.tolist())) < 2 or len(set(b.tolist())) < 2:
            # one class only (a tiny task): predict it
            pred = np.full(len(t), round(float(np.mean(a))))
        else:
            probe, scaler, _ = fit_protocol(probe_type, data.x_train, a, data.x_val, b,
                                            seed=seed, hidden=hidden)
            pred = probe.predict(scaler.transform(np.asarray(data.x_test, dtype=np.float64)))
        correct[name] = (np.asarray(pred) == t).astype(np.float64)
    items = np.unique(data.test_items)
    task = [float(correct["task"][data.test_items == i].mean()) for i in items]
    control = [float(correct["control"][data.test_items == i].mean()) for i in items]
    diff = [a - b for a, b in zip(task, control, strict=True)]
    # one seed for all three: the same items are drawn for each (a paired bootstrap)
    def interval(values: list[float]) -> IntervalOut:
        return mean_interval(values, seed=seed, n_resamples=n_resamples,
                             parts=(*parts, "selectivity"))

    return SelectivityOut(
        accuracy=interval(task), control_accuracy=interval(control),
        selectivity=interval(diff),
        control_positive_rate=float(c_train.mean()),
        note=f"{probe_type} re-trained with train's protocol on {len(data.train)} train and "
             f"{len(data.val)} validation prompts; control labels from the votes of "
             f"{len({w for p in data.train for w in words(p.text)})} word types")


def task_selectivity(session: Session, meta: ProbeMeta, weights: ProbeWeights, task_id: str,
                     site: Site) -> SelectivityOut | None:
    """Control-task selectivity of the entry's architecture at its site (None when the
    task has no train split to fit on)."""
    data = session.task(task_id)
    try:
        train_items, val_items, _ = train_val_items(data)
    except InputError:
        return None
    train, val = labelled_prompts(train_items), labelled_prompts(val_items)
    flat = Flat.of(data.test)
    idx, _ = flat.labelled()
    if not train or not val:
        return None
    x_test = session.activations(meta.model, f"{task_id}/test", flat.prompts, site)[idx]
    control = ControlData(
        train=train, x_train=session.activations(meta.model, f"{task_id}/train-labelled",
                                                 train, site),
        val=val, x_val=session.activations(meta.model, f"{task_id}/val-labelled", val, site),
        test=[flat.prompts[i] for i in idx.tolist()], x_test=x_test,
        test_items=flat.item_of[idx])
    hidden = weights.hidden_sizes[0] if weights.hidden_sizes else DEFAULT_HIDDEN
    return selectivity(control, probe_type=meta.probe_type, hidden=hidden,
                       seed=session.options.seed, n_resamples=session.options.bootstrap,
                       parts=(task_id,))


__all__ = ["CONTROL_SALT", "ControlData", "control_labels", "control_score",
           "control_threshold", "selectivity", "task_selectivity", "words"]
