"""Per-prompt records of a submission (``submit --log-samples``), and its most confident
errors (REPORT.md).

A result keeps each labelled test prompt's id, item index, label and probability
(``TaskResult.predictions``) but not its text: the text is the task's. ``sample_records``
joins the two back, one record per entry of ``predictions`` and in its order, from the
same task catalog the submission was evaluated with (the registered tasks, plus those
``--include`` adds), cut to the submission's ``--limit``. lm-evaluation-harness's
``--log_samples`` is the model.

A record (one JSONL line) holds:

* ``task``, ``item_id`` (the item holding the prompt), ``prompt_id``, ``text``;
* ``label``: binary, 1 or 0; multi-class, the index of the prompt's class in the task's
  classes (as ``predictions.labels``), with ``class``, the class's name;
* ``probability``: the stored prediction: binary, P(label 1); multi-class, P(the
  prompt's class). A multi-class record adds ``probabilities`` (class -> probability,
  every class, in the task's class order) and ``predicted_class`` (the argmax; ties:
  the first class in order);
* ``correct``: binary, the decision at 0.5 (P >= 0.5 means 1) equals the label;
  multi-class, the predicted class is the prompt's class;
* ``slices``: the prompt's slice fields.

The file is data (its texts are exact); REPORT.md, its human view, shows texts through
``probebench.safetext.visible``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probebench.errors import InputError
from probebench.evaluation.headline import Flat
from probebench.evaluation.results import Submission, TaskResult
from probebench.hashing import atomic_write_bytes
from probebench.safetext import json_visible
from probebench.tasks.catalog import TaskCatalog

#: the decision threshold of a binary prompt: P >= THRESHOLD means label 1
THRESHOLD = 0.5
#: how many errors REPORT.md lists per task
N_ERRORS = 10


def _argmax(row: Sequence[float]) -> int:
    """The first index of the largest value (numpy's argmax tie rule)."""
    return max(range(len(row)), key=lambda k: (row[k], -k))


def decision_correct(label: int, probability: float) -> bool:
    """A binary prompt's decision at 0.5 agrees with its label."""
    return (probability >= THRESHOLD) == bool(label)


def sample_records(submission: Submission, catalog: TaskCatalog) -> list[dict[str, Any]]:
    """One record per labelled test prompt of every task of ``submission``, in the order
    of each result's ``predictions`` (tasks in the submission's order); see the module's
    docstring for the fields.

    ``catalog`` must be the one the submission was evaluated with (``--include`` adds
    own tasks to it); the submission's ``limit`` cuts each test set as ``submit`` did.

    Raises:
        InputError: a task is not in ``catalog``, its test set is not the one the result
            was measured on, or the result's predictions do not match its prompts.
    """
    limit = None if submission.limit is None else submission.limit.items
    records: list[dict[str, Any]] = []
    for result in submission.tasks:
        records.extend(_task_records(result, catalog, limit))
    return records


def _task_records(result: TaskResult, catalog: TaskCatalog, limit: int | None
                  ) -> list[dict[str, Any]]:
    data = catalog.load(result.id)
    if data.spec.test_sha256 != result.test_sha256:
        raise InputError(f"task {result.id}: the catalog's test set (sha256 "
                         f"{data.spec.test_sha256[:16]}…) is not the one the result was "
                         f"measured on ({result.test_sha256[:16]}…)")
    items = data.test if limit is None else data.test[:limit]
    flat = Flat.of(items)
    pred = result.predictions
    # a binary result predicts its labelled prompts; a multi-class one every prompt
    idx = (flat.labelled()[0].tolist() if result.classes is None
           else list(range(len(flat.prompts))))
    ids = [flat.prompts[i].id or str(i) for i in idx]
    if ids != pred.prompt_ids:
        first = next((n for n, (a, b) in enumerate(zip(ids, pred.prompt_ids, strict=False))
                      if a != b), min(len(ids), len(pred.prompt_ids)))
        raise InputError(f"task {result.id}: the result's predictions do not match the "
                         f"task's labelled test prompts ({len(pred.prompt_ids)} predictions, "
                         f"{len(ids)} prompts; first difference at position {first}): was it "
                         "evaluated with another --limit or task file?")
    out = []
    for n, i in enumerate(idx):
        prompt = flat.prompts[i]
        label, probability = pred.labels[n], pred.probs[n]
        record: dict[str, Any] = {
            "task": result.id, "item_id": items[int(flat.item_of[i])].id,
            "prompt_id": pred.prompt_ids[n], "text": prompt.text, "label": label}
        if result.classes is None:
            record["probability"] = probability
            record["correct"] = decision_correct(label, probability)
        else:
            if pred.class_probs is None:
                raise InputError(f"task {result.id}: a multi-class result without "
                                 "predictions.class_probs")
            row = pred.class_probs[n]
            predicted = _argmax(row)
            record["class"] = result.classes[label]
            record["probability"] = probability
            record["probabilities"] = dict(zip(result.classes, row, strict=True))
            record["predicted_class"] = result.classes[predicted]
            record["correct"] = predicted == label
        record["slices"] = dict(sorted(prompt.slices.items()))
        out.append(record)
    return out


def samples_jsonl(records: Sequence[Mapping[str, Any]]) -> str:
    """The records as JSONL: one JSON object per line, keys in the records' order.
    A prompt's text is the task's, exactly, once parsed; in the file every control,
    bidi or format character is a ``\\uXXXX`` escape (``safetext.json_visible``), so
    reading the file in a terminal or a viewer shows them instead of obeying them.

    >>> samples_jsonl([{"text": "a\\u202eb"}])
    '{"text": "a\\\\u202eb"}\\n'
    """
    return "".join(json_visible(r, allow_nan=False) + "\n" for r in records)


def write_samples(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Write ``records`` to ``path`` as JSONL, atomically: a reader sees the old file or
    the complete new one, and a failed write leaves no partial file.

    Raises:
        InputError: the file cannot be written (the message names the path).
    """
    data = samples_jsonl(records).encode("utf-8")
    path = Path(path)
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the samples file "
                         f"({exc.strerror or exc})") from None


def samples_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot become a samples file (checked before any model work), or
    None: it is a folder, or the nearest existing folder above it is a file."""
    path = Path(path)
    if path.is_dir():
        return f"{path} is a folder; give a file path, e.g. {path / 'samples.jsonl'}"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a folder, so {path} cannot be written"
            return None
    return None


@dataclass(frozen=True)
class ConfidentError:
    """One misclassified prompt, as REPORT.md lists it."""

    position: int
    """Its index in the result's ``predictions``."""
    prompt_id: str
    label: str
    """Binary: "1" or "0"; multi-class: the prompt's class."""
    probability: float
    """Binary: P(label 1); multi-class: P(the prompt's class)."""
    predicted: str | None
    """Multi-class: the argmax class (None for a binary prompt)."""
    confidence: float
    """Binary: |P - 0.5|; multi-class: P(the predicted class)."""


def confident_errors(result: TaskResult, n: int = N_ERRORS) -> list[ConfidentError]:
    """The ``n`` most confident errors of ``result``: binary, prompts whose decision at
    0.5 disagrees with their label, largest |P - 0.5| first; multi-class, prompts whose
    argmax is not their class, largest P(argmax) first. Ties keep the predictions' order.
    """
    pred = result.predictions
    found = []
    for pos, (pid, label, p) in enumerate(zip(pred.prompt_ids, pred.labels, pred.probs,
                                              strict=True)):
        if result.classes is None:
            if not decision_correct(label, p):
                found.append(ConfidentError(pos, pid, str(label), p, None, abs(p - THRESHOLD)))
        elif pred.class_probs is not None:
            row = pred.class_probs[pos]
            k = _argmax(row)
            if k != label:
                found.append(ConfidentError(pos, pid, result.classes[label], p,
                                            result.classes[k], row[k]))
    found.sort(key=lambda e: (-e.confidence, e.position))
    return found[:n]


__all__ = ["N_ERRORS", "THRESHOLD", "ConfidentError", "confident_errors", "decision_correct",
           "sample_records", "samples_jsonl", "samples_path_problem", "write_samples"]
