"""A language model's own accuracy on registered tasks, scored as each data set's authors
score a model, so that a model's baseline stands on its own (``probebench score-lm``).

Each task format that has such a protocol maps to one ``LMProtocol`` (``PROTOCOLS``):

* ``blimp``: a pair is correct when ``log P(good) > log P(bad)``, each sentence's every
  token scored after the model's BOS token (EOS when it has none), as the BLiMP paper
  and lm-evaluation-harness do (``probebench.models.surprisal.sentence_log_probs``).
* ``syntaxgym``: the suite's own region predictions on region surprisals (bits, no BOS,
  the first token unscored), under the suite's first metric; an item is correct when
  every prediction holds (``probebench.tasks.formats.syntaxgym.score_items``).
* ``verbs``: multiple choice, the candidate prompt with the highest ``log P`` (the same
  BOS protocol) wins, ties share the credit; lines with a single sentence have nothing
  to compare and are not scored.

Item correctness is averaged with an item-bootstrap 95% CI seeded from ``seed`` and the
task id alone (``headline.mean_interval``), so a task's interval does not depend on
which other tasks ran.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from probebench.errors import InputError, ModelError
from probebench.evaluation.headline import Flat, mean_interval
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.evaluation.results import IntervalOut
from probebench.models.loading import LoadedModel, ModelIdentity, ResolvedModel
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import TaskFormat, get_format
from probebench.tasks.spec import TaskSpec
from probebench.version import __version__

#: which items are scored: the registered test split, or every item of the task's files
SPLITS = ("test", "all")
#: the formats scored when no task is named
DEFAULT_FORMATS = ("blimp", "syntaxgym")


class LMProtocol(ABC):
    """How a model's own answer on one item is read from the model (a kind of format)."""

    #: short name stored in results
    name: ClassVar[str]
    #: whether texts are read after a start token (BOS, else EOS)
    uses_start_token: ClassVar[bool]

    def __init__(self, definition: str) -> None:
        #: one sentence for ``--help`` and results: when an item counts as correct
        self.definition = definition

    @abstractmethod
    def item_scores(self, lm: LoadedModel, fmt: TaskFormat, items: Sequence[Item], *,
                    start_token: str | None, progress: bool) -> list[float | None]:
        """Correctness of each item in [0, 1], or None when it cannot be scored."""


class SentenceLogProbProtocol(LMProtocol):
    """Every prompt scored by ``log2 P(prompt)`` after BOS/EOS; the format's own item rule
    (``TaskFormat.score_item`` with no threshold) compares the prompts of an item."""

    name = "sentence_log_prob"
    uses_start_token = True

    def item_scores(self, lm: LoadedModel, fmt: TaskFormat, items: Sequence[Item], *,
                    start_token: str | None, progress: bool) -> list[float | None]:
        from probebench.models.surprisal import sentence_log_probs

        flat = Flat.of(items)
        scores = sentence_log_probs(lm, flat.prompts, start_token=start_token,
                                    progress=progress)
        return fmt.item_scores(items, scores, flat.item_of, threshold=None)


class SyntaxGymProtocol(LMProtocol):
    """SyntaxGym's prediction accuracy: every prediction of an item holds, under the
    suite's first metric (all registered suites name ``sum`` only)."""

    name = "syntaxgym_predictions"
    uses_start_token = False

    def item_scores(self, lm: LoadedModel, fmt: TaskFormat, items: Sequence[Item], *,
                    start_token: str | None, progress: bool) -> list[float | None]:
        scores = fmt.model_item_scores(lm, items, progress=progress)
        assert scores is not None  # the SyntaxGym format defines its own protocol
        return scores


PROTOCOLS: dict[str, LMProtocol] = {
    "blimp": SentenceLogProbProtocol(
        "a pair is correct when log P(good) > log P(bad), every token of each sentence "
        "scored after the model's BOS token (EOS when it has none), as the BLiMP paper and "
        "lm-evaluation-harness do; a tie counts 0.5"),
    "syntaxgym": SyntaxGymProtocol(
        "SyntaxGym's own prediction accuracy: region surprisals (bits, no BOS, the first "
        "token unscored, as in Hu et al. 2020) under the suite's metric; an item is correct "
        "when all its predictions hold"),
    "verbs": SentenceLogProbProtocol(
        "multiple choice: the candidate prompt with the highest log P (every token scored "
        "after BOS/EOS) wins, ties share the credit; single-sentence lines are not scored"),
}


def protocol_of(fmt: str) -> LMProtocol:
    """The protocol of a task format; the error lists the formats that have one."""
    try:
        return PROTOCOLS[fmt]
    except KeyError:
        raise InputError(f"score-lm has no protocol for format {fmt!r}; it scores "
                         f"{', '.join(PROTOCOLS)}") from None


@dataclass(frozen=True)
class LMTaskScore:
    """The model's own accuracy on one task."""

    task: str
    format: str
    protocol: str
    split: str
    task_version: int
    test_sha256: str
    files_sha256: dict[str, str]
    accuracy: IntervalOut
    #: correctness of each item in [0, 1] (None: not scored), in ``item_ids`` order
    item_scores: list[float | None]
    item_ids: list[str]

    @property
    def n_items(self) -> int:
        """Items scored (unscorable ones, e.g. single-sentence verb lines, left out)."""
        return sum(s is not None for s in self.item_scores)

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "format": self.format, "protocol": self.protocol,
                "split": self.split, "task_version": self.task_version,
                "test_sha256": self.test_sha256, "files_sha256": self.files_sha256,
                "n_items": self.n_items, "n_unscored": len(self.item_scores) - self.n_items,
                "accuracy": self.accuracy.model_dump()}


@dataclass(frozen=True)
class LMScores:
    """``score_lm``'s result: one ``LMTaskScore`` per task, in the order asked."""

    model: ModelIdentity
    split: str
    seed: int
    n_resamples: int
    #: the token BOS-protocol texts were read after, as the tokenizer spells it (None when
    #: no task used one)
    start_token: str | None
    tasks: list[LMTaskScore] = field(default_factory=list)

    @property
    def macro_mean(self) -> float | None:
        """Unweighted mean of the tasks' accuracies (BLiMP's and SyntaxGym's overall score)."""
        values = [t.accuracy.value for t in self.tasks if t.accuracy.value is not None]
        return float(np.mean(values)) if values else None

    def to_json(self) -> dict[str, Any]:
        used = {t.format for t in self.tasks}
        return {"probebench_version": __version__, "model": self.model.to_dict(),
                "split": self.split, "seed": self.seed, "bootstrap": self.n_resamples,
                "start_token": self.start_token,
                "protocols": {f: PROTOCOLS[f].definition for f in sorted(used)},
                "tasks": [t.to_json() for t in self.tasks], "macro_mean": self.macro_mean}


def default_tasks(catalog: TaskCatalog) -> list[str]:
    """Every registered task of a default format (BLiMP and SyntaxGym), in catalog order."""
    return [s.id for s in catalog.specs.values() if s.format in DEFAULT_FORMATS]


def _items(catalog: TaskCatalog, spec: TaskSpec, split: str) -> list[Item]:
    data = catalog.load(spec.id)  # verifies every pinned hash first
    if split == "test":
        return list(data.test)
    # every item of the task's files, whatever split (or holdout carve) it fell in
    unsplit = get_format(spec.format).read(spec, catalog.files_of(spec))
    seen: dict[str, Item] = {}
    for items in unsplit.splits.values():
        for item in items:
            seen.setdefault(item.id, item)
    return list(seen.values())


def score_lm(model: str | ResolvedModel | LoadedModel, task_ids: Sequence[str] | None = None,
             *, catalog: TaskCatalog, split: str = "test", seed: int = 0,
             n_resamples: int = N_RESAMPLES, start_token: str | None = None,
             device: str = "auto", dtype: str = "auto", progress: bool = True) -> LMScores:
    """A causal LM's own accuracy, with item-bootstrap 95% CIs, on registered tasks.

    ``model`` is a name (alias, folder or hub id), a resolved or a loaded model.
    ``task_ids`` default to every registered BLiMP and SyntaxGym task. ``split`` is
    ``"test"`` (the registered test split) or ``"all"`` (every item of the task's files,
    comparable with published full-suite numbers). ``start_token`` replaces the BOS/EOS
    token that BOS-protocol texts are read after. Tasks, split and the model's
    architecture are checked before the model is loaded; an encoder is refused.
    """
    from tqdm.auto import tqdm

    from probebench.models.loading import load_model, resolve_model
    from probebench.models.surprisal import start_token_name

    if split not in SPLITS:
        raise InputError(f"split must be one of {', '.join(SPLITS)}; found {split!r}")
    ids = list(dict.fromkeys(task_ids)) if task_ids else default_tasks(catalog)
    if not ids:
        raise InputError(f"no task to score: {catalog.describe()} registers no "
                         f"{' or '.join(DEFAULT_FORMATS)} task")
    specs = [catalog.spec(t) for t in ids]
    for spec in specs:
        protocol_of(spec.format)
    items = {spec.id: _items(catalog, spec, split) for spec in specs}

    if isinstance(model, LoadedModel):
        lm: LoadedModel | None = model
        resolved = model.resolved
    else:
        lm = None
        resolved = model if isinstance(model, ResolvedModel) else resolve_model(
            model, device=device, dtype=dtype, progress=progress)
    ident = resolved.identity
    if ident.architecture != "causal":
        raise ModelError(f"score-lm needs a causal language model (its own probability of "
                         f"each text); {ident.name!r} is an {ident.architecture} model, which "
                         "has no surprisal")
    if lm is None:
        lm = load_model(resolved, progress=progress)

    uses_start = any(protocol_of(s.format).uses_start_token for s in specs)
    result = LMScores(model=ident, split=split, seed=seed, n_resamples=n_resamples,
                      start_token=start_token_name(lm, start_token) if uses_start else None)
    for spec in tqdm(specs, desc="score-lm", unit="task", disable=not progress, leave=False):
        protocol = protocol_of(spec.format)
        task_items = items[spec.id]
        scores = protocol.item_scores(lm, get_format(spec.format), task_items,
                                      start_token=start_token, progress=progress)
        accuracy = mean_interval(scores, seed=seed, n_resamples=n_resamples,
                                 parts=(spec.id, "score_lm", split))
        result.tasks.append(LMTaskScore(
            task=spec.id, format=spec.format, protocol=protocol.name, split=split,
            task_version=spec.version, test_sha256=spec.test_sha256,
            files_sha256=dict(spec.files_sha256), accuracy=accuracy, item_scores=scores,
            item_ids=[i.id for i in task_items]))
    return result


__all__ = ["DEFAULT_FORMATS", "PROTOCOLS", "SPLITS", "LMProtocol", "LMScores", "LMTaskScore",
           "default_tasks", "protocol_of", "score_lm"]
