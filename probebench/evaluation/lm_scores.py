"""A language model's own accuracy on registered tasks, scored as each data set's authors
score a model, so that a model's baseline stands on its own (``probebench score-lm``).

Each task format says whether and how (``TaskFormat.lm_scoring``, an ``LMScoring``); its
``protocol`` names one ``LMProtocol`` here (``PROTOCOLS``):

* ``sentence_log_prob``: every prompt scored by ``log P`` with every token read after
  the model's document start, as the BLiMP paper and lm-evaluation-harness do
  (``probebench.models.surprisal.sentence_log_probs``): its BOS token (EOS when it has
  none), except that a chat-turn marker gives way to the document separator the model
  was pre-trained with (``probebench.models.start_token``; SmolLM2-Instruct:
  ``<|endoftext|>``, not its BOS ``<|im_start|>``); the
  format's own item rule compares an item's prompts (BLiMP: a pair is correct when
  ``log P(good) > log P(bad)``; verbs: multiple choice, the highest ``log P`` wins, ties
  share the credit, single-sentence lines are not scored).
* ``model_item_scores``: the format's own protocol (SyntaxGym: the suite's region
  predictions on region surprisals, bits, no BOS, the first token unscored, under the
  suite's first metric; an item is correct when every prediction holds).

With no task named, every task of a format whose ``LMScoring.by_default`` is set is
scored (BLiMP and SyntaxGym).

Item correctness is averaged with an item-bootstrap 95% CI seeded from ``seed`` and the
task id alone (``headline.mean_interval``), so a task's interval does not depend on
which other tasks ran.

Two per-prompt scores of a causal LM serve as baselines of single-prompt tasks
(``probebench.evaluation.task_baselines``), each cached under its own version:

* ``mean_log_probs`` (``MEAN_LOG_PROB_VERSION``): the mean ``log2 P`` per token of a
  statement, every token scored after the model's document start.
* ``answer_log_odds`` (``ANSWER_VERSION``): the model's own answer under a task's
  ``readout`` (Marks and Tegmark 2024's prompting baseline): ``log P(positive) - log
  P(negative)`` as the tokens after the text and the readout's suffix. Only the answer
  tokens' logits are computed: the LM head runs at the readout positions alone, in chunks
  (``probebench.models.surprisal.target_log_probs``).
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
from probebench.models.batching import BATCH_TOKENS
from probebench.models.loading import LoadedModel, ModelIdentity, ResolvedModel
from probebench.models.surprisal import SCORING_VERSION
from probebench.prompts import Prompt, as_prompts
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import LMScoring, TaskFormat, format_names, get_format
from probebench.tasks.spec import ReadoutSpec, TaskSpec
from probebench.version import __version__

#: which items are scored: the registered test split, or every item of the task's files
SPLITS = ("test", "all")


class LMProtocol(ABC):
    """How a model's own answer on one item is read from the model (``LMScoring.protocol``
    names one)."""

    #: the name formats give in ``LMScoring.protocol``
    kind: ClassVar[str]
    #: whether texts are read after a start token (``models.start_token``)
    uses_start_token: ClassVar[bool]

    @abstractmethod
    def item_scores(self, lm: LoadedModel, fmt: TaskFormat, items: Sequence[Item], *,
                    start_token: str | None, progress: bool) -> list[float | None]:
        """Correctness of each item in [0, 1], or None when it cannot be scored."""


class SentenceLogProbProtocol(LMProtocol):
    """Every prompt scored by ``log2 P(prompt)`` after the start token; the format's own item rule
    (``TaskFormat.score_item`` with no threshold) compares the prompts of an item."""

    kind = "sentence_log_prob"
    uses_start_token = True

    def item_scores(self, lm: LoadedModel, fmt: TaskFormat, items: Sequence[Item], *,
                    start_token: str | None, progress: bool) -> list[float | None]:
        from probebench.models.surprisal import sentence_log_probs

        flat = Flat.of(items)
        scores = sentence_log_probs(lm, flat.prompts, start_token=start_token,
                                    progress=progress)
        return fmt.item_scores(items, scores, flat.item_of, threshold=None)


class ModelItemScoresProtocol(LMProtocol):
    """The format's own protocol, ``TaskFormat.model_item_scores`` (SyntaxGym: every
    prediction of an item holds, under the suite's first metric)."""

    kind = "model_item_scores"
    uses_start_token = False

    def item_scores(self, lm: LoadedModel, fmt: TaskFormat, items: Sequence[Item], *,
                    start_token: str | None, progress: bool) -> list[float | None]:
        scores = fmt.model_item_scores(lm, items, progress=progress)
        if scores is None:
            raise InputError(f"format {fmt.name} names the {self.kind} protocol for "
                             "score-lm but its model_item_scores gives no scores")
        return scores


#: the protocols a format's ``LMScoring.protocol`` may name
PROTOCOLS: dict[str, LMProtocol] = {
    p.kind: p for p in (SentenceLogProbProtocol(), ModelItemScoresProtocol())}


def scored_formats() -> dict[str, LMScoring]:
    """Each registered format that score-lm scores -> how, in registration order."""
    return {name: scoring for name in format_names()
            if (scoring := get_format(name).lm_scoring) is not None}


def default_formats() -> list[str]:
    """The formats whose tasks score-lm scores when no task is named."""
    return [name for name, scoring in scored_formats().items() if scoring.by_default]


def scoring_of(fmt: str) -> LMScoring:
    """How score-lm scores a task format; the error lists the formats it scores."""
    scoring = get_format(fmt).lm_scoring
    if scoring is None:
        raise InputError(f"score-lm has no protocol for format {fmt!r}; it scores "
                         f"{', '.join(scored_formats())}")
    return scoring


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
                "start_token": self.start_token, "scoring_version": SCORING_VERSION,
                "protocols": {f: scoring_of(f).definition for f in sorted(used)},
                "tasks": [t.to_json() for t in self.tasks], "macro_mean": self.macro_mean}


def default_tasks(catalog: TaskCatalog) -> list[str]:
    """Every registered task of a default format (BLiMP and SyntaxGym), in catalog order."""
    formats = set(default_formats())
    return [s.id for s in catalog.specs.values() if s.format in formats]


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
    comparable with published full-suite numbers). ``start_token`` replaces the token
    that BOS-protocol texts are read after (``probebench.models.start_token``'s rule:
    the model's document start). Tasks, split and the model's
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
                         f"{' or '.join(default_formats())} task")
    specs = [catalog.spec(t) for t in ids]
    scorings = {spec.id: scoring_of(spec.format) for spec in specs}
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

    uses_start = any(PROTOCOLS[s.protocol].uses_start_token for s in scorings.values())
    result = LMScores(model=ident, split=split, seed=seed, n_resamples=n_resamples,
                      start_token=start_token_name(lm, start_token) if uses_start else None)
    for spec in tqdm(specs, desc="score-lm", unit="task", disable=not progress, leave=False):
        scoring = scorings[spec.id]
        task_items = items[spec.id]
        scores = PROTOCOLS[scoring.protocol].item_scores(
            lm, get_format(spec.format), task_items, start_token=start_token,
            progress=progress)
        accuracy = mean_interval(scores, seed=seed, n_resamples=n_resamples,
                                 parts=(spec.id, "score_lm", split))
        result.tasks.append(LMTaskScore(
            task=spec.id, format=spec.format, protocol=scoring.result_name, split=split,
            task_version=spec.version, test_sha256=spec.test_sha256,
            files_sha256=dict(spec.files_sha256), accuracy=accuracy, item_scores=scores,
            item_ids=[i.id for i in task_items]))
    return result


#: the version of ``mean_log_probs``'s rule (with ``SCORING_VERSION``): part of the cache
#: key of its scores, raised whenever a number it gives changes
MEAN_LOG_PROB_VERSION = 1
#: the version of ``answer_log_odds``'s rule (tokenisation of the answers, the document
#: start, natural logarithms): part of the cache key of its scores, raised whenever a
#: number it gives changes
ANSWER_VERSION = 1


def mean_log_probs(lm: LoadedModel, texts: Sequence[str | Prompt], *,
                   start_token: str | None = None, batch_tokens: int = BATCH_TOKENS,
                   max_batch_size: int = 32, progress: bool = True,
                   desc: str = "surprisal") -> np.ndarray:
    """The mean ``log2 P`` per token of each text (minus its mean surprisal, bits), every
    token of the text scored after the model's document start, as ``sentence_log_probs``
    reads it (``probebench.models.surprisal``).

    The mean, not the total: single statements of varied length are compared with each
    other, and a total falls with every token, so it would rank a statement by its
    length before its content (the length baseline's information). Returns a float64
    array of shape ``(len(texts),)``, in input order, each value <= 0.
    """
    from probebench.models.surprisal import token_surprisals

    results = token_surprisals(lm, texts, prepend_bos=True, start_token=start_token,
                               batch_tokens=batch_tokens, max_batch_size=max_batch_size,
                               progress=progress, desc=desc)
    return np.array([-float(r.surprisal[r.scored].mean()) for r in results],
                    dtype=np.float64)


def answer_log_odds(lm: LoadedModel, texts: Sequence[str | Prompt], readout: ReadoutSpec, *,
                    start_token: str | None = None, batch_tokens: int = BATCH_TOKENS,
                    max_batch_size: int = 32, progress: bool = True,
                    desc: str = "own answer") -> np.ndarray:
    """The model's own answer on each text (Marks and Tegmark 2024's prompting baseline):
    ``log P(positive) - log P(negative)`` (natural logarithms) as the next tokens after
    the text followed by ``readout.suffix``, read after the model's document start (as
    ``sentence_log_probs``; ``start_token`` names another). A chat exchange is read in
    its plain rendering (``Prompt.text``).

    The context (document start, then text and suffix, tokenised together) and each
    answer (tokenised alone, no special tokens) are joined as token ids, as
    lm-evaluation-harness joins a context and a continuation; an answer of several
    tokens scores the sum of its tokens' log-probabilities, each after the ones before.
    When both answers are one token, one forward pass per text reads both at its last
    position; otherwise each answer gets its own pass. The LM head runs only at the
    positions read, in chunks (``_read_log_probs``), never over every position.

    Returns a float64 array of shape ``(len(texts),)``, in input order: above 0 where the
    model prefers ``positive`` (label 1).
    """
    from probebench.models.activations import tokenize

    if not lm.is_causal:
        raise ModelError(f"the model's own answer needs a causal language model; "
                         f"{lm.identity.name!r} is an {lm.identity.architecture} model with "
                         "no LM head")
    answers = []
    for name, answer in (("positive", readout.positive), ("negative", readout.negative)):
        ids = [int(t) for t in lm.tokenizer(answer, add_special_tokens=False)["input_ids"]]
        if not ids:
            raise InputError(f"readout.{name} {answer!r} tokenizes to no tokens for model "
                             f"{lm.identity.name!r}")
        answers.append(ids)
    positive, negative = answers
    prompts = [Prompt(p.text + readout.suffix, id=p.id)
               for p in as_prompts(texts)]
    longest = max(len(positive), len(negative))
    contexts = tokenize(lm, prompts, prepend_bos=True, start_token=start_token,
                        reserved=longest - 1).ids
    if len(positive) == len(negative) == 1:
        single = [(c, [len(c) - 1], [[positive[0], negative[0]]]) for c in contexts]
        read = _read_log_probs(lm, single, batch_tokens=batch_tokens,
                               max_batch_size=max_batch_size, progress=progress, desc=desc)
        return np.array([r[0, 0] - r[0, 1] for r in read], dtype=np.float64)
    rows: list[tuple[list[int], list[int], list[list[int]]]] = []
    for c in contexts:
        for tokens in (positive, negative):
            # the answer's tokens but its last are context for the ones after them
            rows.append((c + tokens[:-1], list(range(len(c) - 1, len(c) - 1 + len(tokens))),
                         [[t] for t in tokens]))
    read = _read_log_probs(lm, rows, batch_tokens=batch_tokens,
                           max_batch_size=max_batch_size, progress=progress, desc=desc)
    return np.array([read[2 * k].sum() - read[2 * k + 1].sum() for k in range(len(contexts))],
                    dtype=np.float64)


def _read_log_probs(lm: LoadedModel, rows: Sequence[tuple[list[int], list[int], list[list[int]]]],
                    *, batch_tokens: int, max_batch_size: int, progress: bool, desc: str
                    ) -> list[np.ndarray]:
    """For each row ``(token ids, positions, targets)``: the log-probability (natural
    logarithm, float64 array ``(len(positions), C)``) of each target token id as the token
    after each position (``targets[j]``: the C ids read at ``positions[j]``).

    Rows are right-padded in length-sorted batches (``length_batches``). The LM head reads
    the positions read alone, in chunks (``probebench.models.surprisal.target_log_probs``:
    the model's own forward, softcapping and scaling of the logits included, makes the
    first chunk's logits), never ``(batch, tokens, vocabulary)``."""
    import torch
    from tqdm.auto import tqdm

    from probebench.models.activations import length_batches, pad_id_of
    from probebench.models.surprisal import target_log_probs

    if lm.model.get_output_embeddings() is None:
        raise ModelError(f"model {lm.identity.name!r} has no output embeddings (LM head)")
    lengths = np.array([len(ids) for ids, _, _ in rows], dtype=np.int64)
    pad_id = pad_id_of(lm)
    out: list[np.ndarray | None] = [None] * len(rows)
    batches = length_batches(lengths, batch_tokens=batch_tokens, max_batch_size=max_batch_size)
    with torch.inference_mode(), tqdm(total=len(rows), disable=not progress, desc=desc,
                                      unit="text", leave=False) as bar:
        for batch in batches:
            width = int(lengths[batch].max())
            ids = np.full((len(batch), width), pad_id, dtype=np.int64)
            mask = np.zeros_like(ids)
            at_row: list[int] = []
            at_col: list[int] = []
            targets: list[list[int]] = []
            for r, i in enumerate(batch):
                tokens, positions, wanted = rows[i]
                ids[r, :len(tokens)] = tokens
                mask[r, :len(tokens)] = 1
                at_row.extend([r] * len(positions))
                at_col.extend(positions)
                targets.extend(wanted)
            values = target_log_probs(lm, ids, mask, np.array(at_row, dtype=np.int64),
                                      np.array(at_col, dtype=np.int64),
                                      np.array(targets, dtype=np.int64)
                                      ).double().cpu().numpy()
            start = 0
            for i in batch:
                count = len(rows[i][1])
                out[i] = values[start:start + count]
                start += count
            bar.update(len(batch))
    return [v for v in out if v is not None]


__all__ = ["ANSWER_VERSION", "MEAN_LOG_PROB_VERSION", "PROTOCOLS", "SPLITS", "LMProtocol",
           "LMScores", "LMTaskScore", "answer_log_odds", "default_formats", "default_tasks",
           "mean_log_probs", "score_lm", "scored_formats", "scoring_of"]
