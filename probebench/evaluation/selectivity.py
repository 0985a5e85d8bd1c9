"""Control-task selectivity (Hewitt and Liang, 2019, "Designing and Interpreting Probes
with Control Tasks").

A probe that reaches high accuracy may show what the model encodes, or only what a
flexible classifier can memorise. The control task keeps the inputs and replaces the
labels with a fixed random function of *word types*, which only lexical memorisation can
solve: every word type (lower-cased ``\\w+``) gets a fixed random vote of +1 or -1 from a
salted hash, a prompt's control score is the mean vote of some of its words, and prompts
above a threshold are labelled 1, the threshold chosen so that the control task's share
of positive train prompts is as close as the scores allow to the real task's (equal
label balance). Which words vote depends on the task:

* ``sentence-vote`` (sentence tasks, e.g. SentEval): every word of the prompt. Labelling
  by one word (Hewitt and Liang label single tokens) would leave a task with a handful
  of types, which any probe memorises.
* ``differing-types`` (formats with ``minimal_pairs``: BLiMP, SyntaxGym, verb grammar):
  the word types **where the real task decides**, so that the control separates the
  prompts of an item exactly when their deciding words are of types with different
  votes. A prompt's deciding types are the words of its ``answer`` span when it has one
  (verb grammar: the verb form), else the types it holds that not every other labelled
  prompt of its item holds (BLiMP's good against bad sentence; SyntaxGym's conditions);
  an item's only labelled prompt (nothing to differ from) keeps all its types. The
  score is a function of those types alone (its hash tie-break too), so the shared
  context of an item never moves its control labels. A sentence-level vote asked a
  different question: on ``syntaxgym_npi_orc_any`` the good and the bad sentence of 93%
  of the pairs got the same label, since they share all but one or two words.

A control can be **degenerate** (``degenerate_reasons``): its train labels are all
alike; its words span fewer than ``MIN_CONTROL_TYPES`` word types (every pair of
``syntaxgym_npi_orc_any`` differs in "no" against "the": a lookup of two words, which
any probe memorises, and which of the few labellings the salt draws decides the
number); no good/bad pair of the test items gets different control labels; or its train
labels equal the task's (or their opposite) on at least ``COINCIDENT_SHARE`` of the
prompts, so it asks the task's own question. Then no control accuracy and no
selectivity are reported (value None), and the reason is stored.

The entry's architecture (linear, or an MLP with its hidden size) is re-trained with
``train``'s protocol (``probebench.evaluation.protocol``) twice, on the real labels and
on the control labels, from the same activations. Reported on the test prompts:
accuracy (P >= 0.5), control accuracy and **selectivity = accuracy - control
accuracy**, each with a 95% item bootstrap (the difference is paired: one resample of
items serves both), and ``pairs_split``, the share of the test items' good/bad prompt
pairs that get different control labels. High accuracy with low selectivity means the
probe could have memorised word identity; selectivity near the accuracy's distance from
chance means the representation, not the probe, carries the property.

``task_selectivity`` applies it to a task in a session, from the session's activations;
``minimal_pair_controls`` summarises the control of every registered minimal-pair task
(``python -m probebench.evaluation.selectivity`` prints it as a markdown table).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError
from probebench.evaluation.definitions import MIN_CONTROL_TYPES
from probebench.evaluation.headline import Flat, mean_interval
from probebench.evaluation.protocol import (
    DEFAULT_HIDDEN,
    fit_protocols,
    labelled_prompts,
    predict,
    protocol_record,
    train_val_items,
)
from probebench.evaluation.results import IntervalOut, SelectivityOut
from probebench.evaluation.session import SELECTIVITY, Session
from probebench.hashing import sha256_bytes, sha256_json
from probebench.sites import Site
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import TaskFormat, get_format

CONTROL_SALT = "probebench-control-v1"
#: the selectivity code's version, part of its disk-cache key: raise it whenever what
#: ``selectivity`` returns for the same inputs changes
SELECTIVITY_VERSION = 1
SENTENCE_VOTE = "sentence-vote"
DIFFERING_TYPES = "differing-types"
#: the span that marks where a prompt's answer lies (verb grammar: the verb form)
ANSWER_SPAN = "answer"
#: a control whose train labels equal the task's (or their opposite) on at least this
#: share of prompts asks the task's question, not a lexical one
COINCIDENT_SHARE = 0.95
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _hash(text: str) -> bytes:
    return hashlib.sha256(f"{CONTROL_SALT}/{text}".encode()).digest()


def vote(word_type: str) -> float:
    """The fixed random vote (+1 or -1) of a word type."""
    return 1.0 if _hash(word_type)[0] & 1 else -1.0


def control_score(text: str) -> float:
    """``sentence-vote``: the mean vote of the prompt's words, plus a hash tie-break of
    the text below 1e-6."""
    votes = [vote(w) for w in words(text)]
    jitter = int.from_bytes(_hash("tie/" + text)[:4], "big") / 2**32 * 1e-7
    return (sum(votes) / len(votes) if votes else 0.0) + jitter


def types_score(types: Collection[str]) -> float:
    """``differing-types``: the mean vote of the word types, plus a hash tie-break of the
    sorted types below 1e-6 (a function of the types alone; no types score 0)."""
    ordered = sorted(set(types))
    votes = [vote(w) for w in ordered]
    jitter = int.from_bytes(_hash("types/" + " ".join(ordered))[:4], "big") / 2**32 * 1e-7
    return (sum(votes) / len(votes) if votes else 0.0) + jitter


def control_kind(fmt: TaskFormat) -> str:
    """``differing-types`` for minimal-pair formats, else ``sentence-vote``."""
    return DIFFERING_TYPES if fmt.minimal_pairs else SENTENCE_VOTE


def decision_types(item: Item) -> list[frozenset[str]]:
    """The word types where the task decides, for each labelled prompt of ``item`` (in
    order): the words of its ``answer`` span when it has one, else the types it holds
    that not every other labelled prompt of the item holds (all its types when it is
    the only one)."""
    prompts = [p for p in item.prompts if p.label is not None]
    types = [frozenset(words(p.text)) for p in prompts]
    out = []
    for i, p in enumerate(prompts):
        if ANSWER_SPAN in p.spans:
            start, end = p.spans[ANSWER_SPAN]
            out.append(frozenset(words(p.text[start:end])))
            continue
        others = [t for j, t in enumerate(types) if j != i]
        shared = frozenset.intersection(*others) if others else frozenset()
        out.append(types[i] - shared)
    return out


def control_types(items: Sequence[Item], kind: str) -> list[frozenset[str]]:
    """The word types each labelled prompt's control label is a function of."""
    if kind == DIFFERING_TYPES:
        return [t for item in items for t in decision_types(item)]
    return [frozenset(words(p.text)) for p in labelled_prompts(items)]


def control_scores(items: Sequence[Item], kind: str) -> np.ndarray:
    """The control score of every labelled prompt of ``items``, in order."""
    if kind == DIFFERING_TYPES:
        return np.array([types_score(t) for t in control_types(items, kind)],
                        dtype=np.float64)
    return np.array([control_score(p.text) for p in labelled_prompts(items)],
                    dtype=np.float64)


def control_threshold(scores: np.ndarray, positive_rate: float) -> float:
    """The score above which the share of ``scores`` (the train prompts') is as close to
    ``positive_rate`` as equal scores allow."""
    ordered = np.sort(np.asarray(scores, dtype=np.float64))
    k = round((1.0 - positive_rate) * len(ordered))
    if k <= 0:
        return float(ordered[0]) - 1.0
    if k >= len(ordered):
        return float(ordered[-1])
    return float((ordered[k - 1] + ordered[k]) / 2)


def pairs_split(items: Sequence[Item], labels: np.ndarray) -> float | None:
    """Share of the (label 1, label 0) prompt pairs within an item whose ``labels`` (one
    per labelled prompt of ``items``, in order) differ; None when no item holds both."""
    split = total = 0
    at = 0
    for item in items:
        real = [p.label for p in item.prompts if p.label is not None]
        mine = labels[at:at + len(real)]
        at += len(real)
        good = [c for c, y in zip(mine, real, strict=True) if y == 1]
        bad = [c for c, y in zip(mine, real, strict=True) if y == 0]
        total += len(good) * len(bad)
        split += sum(int(g != b) for g in good for b in bad)
    return split / total if total else None


@dataclass(frozen=True)
class ControlTask:
    """A task's control labels on its train, validation and test prompts."""

    kind: str
    threshold: float
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    #: distinct word types the labels of all three splits are a function of
    n_types: int
    #: share of the test items' good/bad pairs with different control labels
    pairs_split: float | None
    #: why the control is degenerate (empty when it is not)
    degenerate: tuple[str, ...]


def degenerate_reasons(y_train: np.ndarray, c_train: np.ndarray, n_types: int,
                       split: float | None) -> tuple[str, ...]:
    """Why a control task cannot give a selectivity worth reporting (empty when it can)."""
    reasons = []
    if len(set(c_train.tolist())) < 2:
        reasons.append("one control label for every train prompt")
    if n_types < MIN_CONTROL_TYPES:
        reasons.append(f"{n_types} word type{'' if n_types == 1 else 's'} (fewer than "
                       f"{MIN_CONTROL_TYPES}): a lookup")
    if split == 0.0:
        reasons.append("no good/bad pair split")
    if len(c_train) and len(c_train) == len(y_train):
        agree = float(np.mean(c_train == y_train))
        if max(agree, 1.0 - agree) >= COINCIDENT_SHARE:
            same = "the task's labels" if agree >= 0.5 else "the task's labels flipped"
            reasons.append(f"{same} on {max(agree, 1 - agree):.0%} of train prompts")
    return tuple(reasons)


def control_task(kind: str, train: Sequence[Item], val: Sequence[Item],
                 test: Sequence[Item]) -> ControlTask:
    """The control labels of ``kind`` for the labelled prompts of each split, the
    threshold matching the train split's positive rate."""
    y_train = np.array([p.label for p in labelled_prompts(train)], dtype=np.int64)
    s_train = control_scores(train, kind)
    rate = float(y_train.mean()) if len(y_train) else 0.5
    threshold = control_threshold(s_train, rate)

    def label(items: Sequence[Item]) -> np.ndarray:
        return (control_scores(items, kind) > threshold).astype(np.int64)

    c_train, c_test = label(train), label(test)
    n_types = len(frozenset().union(*(t for items in (train, val, test)
                                      for t in control_types(items, kind))))
    split = pairs_split(test, c_test)
    return ControlTask(kind, threshold, c_train, label(val), c_test, n_types, split,
                       degenerate_reasons(y_train, c_train, n_types, split))


@dataclass
class ControlData:
    """The task's items per split and the activations of their labelled prompts (in
    order) at the probe's site."""

    train: Sequence[Item]
    x_train: np.ndarray
    val: Sequence[Item]
    x_val: np.ndarray
    test: Sequence[Item]
    x_test: np.ndarray
    #: ``sentence-vote`` or ``differing-types`` (``control_kind``)
    kind: str = SENTENCE_VOTE


def _labels(items: Sequence[Item]) -> np.ndarray:
    return np.array([p.label for p in labelled_prompts(items)], dtype=np.int64)


def _correct(probe_type: str, data: ControlData,
             labels: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], *, seed: int,
             hidden: int) -> list[np.ndarray]:
    """For each (train labels, validation labels, test labels) of ``labels``, per test
    prompt, whether the protocol fitted on the first two predicts the third; the fits
    of every labelling share one pool of workers (``protocol.fit_protocols``)."""
    def one_class(a: np.ndarray, b: np.ndarray) -> bool:
        return len(set(a.tolist())) < 2 or len(set(b.tolist())) < 2

    fitted = iter(fit_protocols(probe_type, data.x_train, data.x_val,
                                [(a, b) for a, b, _ in labels if not one_class(a, b)],
                                seed=seed, hidden=hidden))
    out = []
    for a, b, t in labels:
        if one_class(a, b):  # one class only (a tiny task): predict it
            pred = np.full(len(t), round(float(np.mean(a))))
        else:
            probe, scaler, _ = next(fitted)
            pred = predict(probe, scaler, data.x_test)
        out.append((np.asarray(pred) == t).astype(np.float64))
    return out


def selectivity(data: ControlData, *, probe_type: str, hidden: int, seed: int,
                n_resamples: int, parts: Sequence[str]) -> SelectivityOut:
    """Accuracy, control accuracy and selectivity with paired item-bootstrap CIs; no
    control accuracy and no selectivity when the control is degenerate."""
    y_train, y_val, y_test = _labels(data.train), _labels(data.val), _labels(data.test)
    control = control_task(data.kind, data.train, data.val, data.test)
    item_of = np.array([i for i, item in enumerate(data.test) for p in item.prompts
                        if p.label is not None], dtype=np.int64)
    items = np.unique(item_of)

    def per_item(correct: np.ndarray) -> list[float]:
        return [float(correct[item_of == i].mean()) for i in items]

    # one seed for all three: the same items are drawn for each (a paired bootstrap)
    def interval(values: list[float]) -> IntervalOut:
        return mean_interval(values, seed=seed, n_resamples=n_resamples,
                             parts=(*parts, "selectivity"))

    labellings = [(y_train, y_val, y_test)]
    if not control.degenerate:
        labellings.append((control.train, control.val, control.test))
    correct = _correct(probe_type, data, labellings, seed=seed, hidden=hidden)
    task = per_item(correct[0])
    how = (f"{probe_type} re-trained with train's protocol on {len(y_train)} train and "
           f"{len(y_val)} validation prompts; control labels ({control.kind}) from the "
           f"votes of {control.n_types} word types")
    if control.degenerate:
        none = IntervalOut(value=None, ci_low=None, ci_high=None, resamples=0, dropped=0)
        control_iv, diff_iv = none, none
        note = (f"{how}; no control accuracy or selectivity: the control is degenerate ("
                + "; ".join(control.degenerate) + ")")
    else:
        ctrl = per_item(correct[1])
        control_iv = interval(ctrl)
        diff_iv = interval([a - b for a, b in zip(task, ctrl, strict=True)])
        note = how
    return SelectivityOut(
        accuracy=interval(task), control_accuracy=control_iv, selectivity=diff_iv,
        control_positive_rate=float(control.train.mean()), control=control.kind,
        control_types=control.n_types, pairs_split=control.pairs_split,
        degenerate=bool(control.degenerate),
        degenerate_reason="; ".join(control.degenerate) or None, note=note)


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
        train=train_items,
        x_train=session.activations(meta.model, f"{task_id}/train-labelled", train, site),
        val=val_items,
        x_val=session.activations(meta.model, f"{task_id}/val-labelled", val, site),
        test=data.test, x_test=x_test, kind=control_kind(data.format))
    hidden = weights.hidden_sizes[0] if weights.hidden_sizes else DEFAULT_HIDDEN
    opts = session.options

    def compute() -> dict[str, object]:
        return selectivity(control, probe_type=meta.probe_type, hidden=hidden,
                           seed=opts.seed, n_resamples=opts.bootstrap,
                           parts=(task_id,)).model_dump(mode="json")

    with session.stage(SELECTIVITY):
        # a deterministic function of these inputs: the activations' bytes, the items
        # (their labels and the control's words), the architecture, the protocol and
        # the seed (a re-trained MLP on other float kernels is within the contract's
        # tolerance, not identical: the cache is this machine's)
        record = {"kind": "selectivity", "version": SELECTIVITY_VERSION,
                  "activations_sha256": [sha256_bytes(np.ascontiguousarray(x).tobytes())
                                         for x in (control.x_train, control.x_val, x_test)],
                  "items_sha256": sha256_json([[item.record() for item in items] for items
                                               in (train_items, val_items, data.test)]),
                  "control": control.kind, "salt": CONTROL_SALT,
                  "probe_type": meta.probe_type, "hidden": hidden,
                  "protocol": protocol_record(), "seed": opts.seed,
                  "bootstrap": opts.bootstrap, "task": task_id}
        stored = session.cached_result(record, compute,
                                       what=f"{SELECTIVITY} of {task_id} at {site}")
        return SelectivityOut.model_validate(stored)


@dataclass(frozen=True)
class ControlSummary:
    """One task's control as ``submit`` builds it, over all its items."""

    task: str
    format: str
    kind: str
    #: share of good/bad pairs within an item (all splits) with different control labels
    pairs_split: float | None
    #: the same under the sentence-level vote (the control before ``differing-types``)
    sentence_vote_split: float | None
    n_types: int
    positive_rate: float
    degenerate: tuple[str, ...]


def summarise_control(task_id: str, catalog: TaskCatalog) -> ControlSummary:
    """The control of one registered task, with the threshold ``submit`` would fit on
    its train split (all its train items when it is too small to hold out validation)."""
    data = catalog.load(task_id)
    try:
        train, val, _ = train_val_items(data)
    except InputError:
        train, val = list(data.splits.get("train", [])), []
    everything = [*train, *val, *data.test]
    kind = control_kind(data.format)
    control = control_task(kind, train, val, everything)
    old = control_task(SENTENCE_VOTE, train, val, everything)
    return ControlSummary(task_id, data.spec.format, kind, control.pairs_split,
                          old.pairs_split, control.n_types,
                          float(control.train.mean()) if len(control.train) else 0.0,
                          control.degenerate)


def minimal_pair_controls(catalog: TaskCatalog | None = None) -> list[ControlSummary]:
    """``summarise_control`` for every task of ``catalog`` (default: the packaged tasks)
    whose format has minimal pairs."""
    catalog = catalog or TaskCatalog.default()
    return [summarise_control(task_id, catalog) for task_id in catalog.ids
            if get_format(catalog.spec(task_id).format).minimal_pairs]


def controls_markdown(rows: Sequence[ControlSummary]) -> str:
    """The summaries as a markdown table."""
    def share(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0%}"

    lines = ["| task | good/bad pairs split | the same by sentence vote | word types | "
             "degenerate |", "| --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        why = "; ".join(r.degenerate) if r.degenerate else "no"
        lines.append(f"| `{r.task}` | {share(r.pairs_split)} | "
                     f"{share(r.sentence_vote_split)} | {r.n_types} | {why} |")
    return "\n".join(lines) + "\n"


__all__ = ["ANSWER_SPAN", "COINCIDENT_SHARE", "CONTROL_SALT", "DIFFERING_TYPES",
           "MIN_CONTROL_TYPES", "SENTENCE_VOTE", "ControlData", "ControlSummary",
           "ControlTask", "control_kind", "control_score", "control_scores",
           "control_task", "control_threshold", "control_types", "controls_markdown",
           "decision_types", "degenerate_reasons", "minimal_pair_controls", "pairs_split",
           "selectivity", "summarise_control", "task_selectivity", "types_score", "vote",
           "words"]

if __name__ == "__main__":
    print(controls_markdown(minimal_pair_controls()), end="")
