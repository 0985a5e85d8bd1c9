"""Readouts: the model's own behaviour on a task's items, as token rows to run and read.

A task declares what the causal test reads (``TaskSpec.steering_readout``, else its
``readout``; the pydantic models live in ``probebench.tasks.spec``). ``build_plan`` turns
the declaration and a task's items into ``Row``s (token ids, the positions steering
touches, the positions whose next-token log-probabilities are read, the token ids read
there) and ``Unit``s (one readout value each, from one or more rows). The kinds:

``answer``      the prompt, then ``suffix``; ``log P(positive) - log P(negative)`` as the
                next tokens (Marks & Tegmark's " This statement is" -> " True" / " False").
                An answer of several tokens is read token by token after the ones before.
``openings``    the prompt (a chat exchange ending on a user turn is read with the
                generation prompt); the log-odds ``log p - log(1 - p)`` of the summed
                probability ``p`` of the openings' first tokens as the next token
                (Arditi et al.'s refusal score, as odds so that 0 is the decision point).
``candidates``  items whose prompts differ only in one span (verb grammar): the text
                before the span, then each candidate; ``log P(expected) - mean log
                P(other)``. Steering touches only the tokens before the blank. The
                candidates of one item share one row (``Row.parents``): the text
                before the blank once, then each candidate's tokens after it, each
                attending to the shared tokens and its own (tree attention, the
                positions continuing from the shared text), so the tokens before the
                blank run once per item, not once per candidate. Models outside
                ``TREE_MODEL_TYPES`` get one plain row per candidate (the same numbers).

Every value is oriented so that above 0 means label 1 (for ``candidates``: the expected
candidate). The prompt's own tokens are tokenized exactly as extraction tokenizes them
(``probebench.models.activations.tokenize``), so the positions a site pools are the
positions steering touches: ``last_token`` its last token, ``token_avg`` and
``attention_weighted`` every token of the prompt (not the suffix), a marker position its
marker token (for ``candidates``: clipped to the tokens before the blank).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from probebench.errors import InputError, ModelError
from probebench.prompts import Prompt
from probebench.sites import SPAN_OF_POSITION, Site
from probebench.tasks.anatomy import Item
from probebench.tasks.spec import CandidatesReadout, OpeningsReadout, ReadoutSpec, TaskSpec

if TYPE_CHECKING:
    from probebench.models.loading import LoadedModel

Readout = ReadoutSpec | OpeningsReadout | CandidatesReadout

__all__ = ["TREE_MODEL_TYPES", "Readout", "ReadoutPlan", "Row", "Unit", "build_plan",
           "site_positions", "task_readout"]

#: model types whose forward pass honours a custom 4D attention mask with explicit
#: position ids, so that tree rows give each candidate's own log-probabilities (checked
#: on the SmolLM2 reference: ``tests/causal/test_steer.py``)
TREE_MODEL_TYPES = frozenset({"llama"})


@dataclass(frozen=True)
class Row:
    """One token sequence the model runs."""

    ids: tuple[int, ...]
    steer: tuple[int, ...]             #: positions steering adds to (the site's)
    reads: tuple[int, ...]             #: positions whose next-token log-probs are read
    targets: tuple[tuple[int, ...], ...]  #: per read, the token ids read (C each)
    #: per token, the token it follows (-1 for the first), when the row is a tree (each
    #: token attends to the tokens it follows and itself; its position is its depth);
    #: None for a plain sequence
    parents: tuple[int, ...] | None = None

    def positions(self) -> tuple[int, ...]:
        """Each token's position id (its depth in the tree; ``0..n-1`` for a plain row)."""
        if self.parents is None:
            return tuple(range(len(self.ids)))
        depth: list[int] = []
        for parent in self.parents:
            depth.append(0 if parent < 0 else depth[parent] + 1)
        return tuple(depth)

    def sees(self) -> np.ndarray:
        """``(n, n)`` booleans: whether token ``i`` attends to token ``j``."""
        n = len(self.ids)
        if self.parents is None:
            return np.tril(np.ones((n, n), dtype=bool))
        out = np.zeros((n, n), dtype=bool)
        for i, parent in enumerate(self.parents):
            if parent >= 0:
                out[i] = out[parent]
            out[i, i] = True
        return out


@dataclass(frozen=True)
class Unit:
    """One readout value: a prompt (answer, openings) or an item (candidates)."""

    rows: tuple[int, ...]   #: indices into ``ReadoutPlan.rows``
    item: str               #: the item it belongs to (the bootstrap resamples items)
    label: int              #: 1 where a value above 0 is right, 0 where below 0 is
    #: ``candidates`` in one tree row: the reads of each candidate, in order (expected
    #: first); empty when each candidate has its own row
    groups: tuple[int, ...] = ()


@dataclass
class ReadoutPlan:
    """The rows and units of one readout over a task's items."""

    readout: Readout
    rows: list[Row]
    units: list[Unit]
    #: the items the readout does not apply to (``candidates``: not one blank), by reason
    skipped: dict[str, int] = field(default_factory=dict)
    #: the prompts whose activations the site reads (for the direction's scale)
    prompts: list[Prompt] = field(default_factory=list)

    @property
    def labels(self) -> np.ndarray:
        return np.array([u.label for u in self.units], dtype=np.int64)

    @property
    def items(self) -> np.ndarray:
        return np.array([u.item for u in self.units])

    def values(self, read: Sequence[np.ndarray]) -> np.ndarray:
        """Each unit's readout (float64, ``(len(units),)``) from each row's log-probs
        (``read[r]``: ``(len(rows[r].reads), C)``, natural logarithms)."""
        kind = self.readout.kind
        out = np.empty(len(self.units), dtype=np.float64)
        for k, unit in enumerate(self.units):
            parts = [np.asarray(read[r], dtype=np.float64) for r in unit.rows]
            if kind == "answer":
                if len(parts) == 1:      # both answers one token, read at one position
                    out[k] = parts[0][0, 0] - parts[0][0, 1]
                else:
                    out[k] = parts[0].sum() - parts[1].sum()
            elif kind == "openings":
                log_p = float(np.logaddexp.reduce(parts[0][0]))
                log_p = min(log_p, -1e-12)  # p = 1 to float rounding: a finite odds
                out[k] = log_p - float(np.log(-np.expm1(log_p)))
            else:
                if unit.groups:
                    cuts = np.cumsum(unit.groups)[:-1]
                    parts = np.split(parts[0], cuts)
                sums = [p.sum() for p in parts]
                out[k] = sums[0] - float(np.mean(sums[1:]))
        return out


def task_readout(spec: TaskSpec) -> Readout | None:
    """The readout the causal test uses for a task: ``steering_readout``, else
    ``readout``, else None."""
    return spec.steering_readout if spec.steering_readout is not None else spec.readout


def site_positions(prompt: Prompt, offsets: Sequence[tuple[int, int]], n_tokens: int,
                   position: str) -> tuple[int, ...]:
    """The token positions of a prompt that a site's position pools (see module doc)."""
    from probebench.models.activations import _marker_index

    if position == "last_token":
        return (n_tokens - 1,)
    if position in SPAN_OF_POSITION:
        return (_marker_index(prompt, offsets, position),)
    return tuple(range(n_tokens))


def _token_ids(lm: LoadedModel, text: str, what: str) -> list[int]:
    ids = [int(t) for t in lm.tokenizer(text, add_special_tokens=False)["input_ids"]]
    if not ids:
        raise InputError(f"{what} {text!r} tokenizes to no tokens for model "
                         f"{lm.identity.name!r}")
    return ids


def build_plan(lm: LoadedModel, items: Sequence[Item], readout: Readout,
               site: Site) -> ReadoutPlan:
    """The rows and units of ``readout`` over ``items`` for a probe read at ``site``.

    Errors (``InputError``) name the readout field at fault; a readout that applies to
    none of the items is an error too."""
    if not lm.is_causal:
        raise ModelError(f"a readout needs a causal language model; {lm.identity.name!r} "
                         f"is an {lm.identity.architecture} model with no LM head")
    if isinstance(readout, CandidatesReadout):
        plan = _candidates_plan(lm, items, readout, site)
    else:
        plan = _prompt_plan(lm, items, readout, site)
    if not plan.units:
        why = ", ".join(f"{n} {reason}" for reason, n in plan.skipped.items()) or "no items"
        raise InputError(f"readout kind {readout.kind!r} applies to none of the "
                         f"{len(items)} items ({why})")
    return plan


def _prompt_plan(lm: LoadedModel, items: Sequence[Item],
                 readout: ReadoutSpec | OpeningsReadout, site: Site) -> ReadoutPlan:
    from probebench.models.activations import tokenize

    pairs = [(item, p) for item in items for p in item.prompts if p.label in (0, 1)]
    skipped = sum(len(item.prompts) for item in items) - len(pairs)
    prompts = [p for _, p in pairs]
    tok = tokenize(lm, prompts) if prompts else None
    rows: list[Row] = []
    units: list[Unit] = []
    if isinstance(readout, ReadoutSpec):
        suffix = _token_ids(lm, readout.suffix, "readout suffix")
        pos = _token_ids(lm, readout.positive, "readout positive")
        neg = _token_ids(lm, readout.negative, "readout negative")
    else:
        firsts = list(dict.fromkeys(_token_ids(lm, o, "readout opening")[0]
                                    for o in readout.openings))
    for k, (item, prompt) in enumerate(pairs):
        assert tok is not None and prompt.label is not None
        ids = tok.ids[k]
        steer = site_positions(tok.prompts[k], tok.offsets[k], len(ids), site.position)
        if isinstance(readout, OpeningsReadout):
            rows.append(Row(tuple(ids), steer, (len(ids) - 1,), (tuple(firsts),)))
            units.append(Unit((len(rows) - 1,), item.id, int(prompt.label)))
            continue
        context = [*ids, *suffix]
        if len(pos) == len(neg) == 1:
            rows.append(Row(tuple(context), steer, (len(context) - 1,),
                            ((pos[0], neg[0]),)))
            units.append(Unit((len(rows) - 1,), item.id, int(prompt.label)))
            continue
        first = len(rows)
        for answer in (pos, neg):
            rows.append(Row(tuple(context + answer[:-1]), steer,
                            tuple(range(len(context) - 1, len(context) - 1 + len(answer))),
                            tuple((t,) for t in answer)))
        units.append(Unit((first, first + 1), item.id, int(prompt.label)))
    return ReadoutPlan(readout, rows, units,
                       {"prompts without a 0/1 label": skipped} if skipped else {},
                       prompts)


def _blank(item: Item, span: str) -> tuple[str, list[str], int] | str:
    """``(text before the blank, candidates with the expected first, index of the
    expected prompt)``, or the reason the item has no single blank."""
    prompts = item.prompts
    if len(prompts) < 2:
        return "items of one prompt"
    if any(p.messages is not None for p in prompts):
        return "chat exchanges"
    if any(span not in p.spans for p in prompts):
        return f"prompts without a {span!r} span"
    expected = [k for k, p in enumerate(prompts) if p.label == 1]
    if len(expected) != 1 or any(p.label not in (0, 1) for p in prompts):
        return "items without exactly one label-1 prompt"
    befores, cands = set(), []
    for p in prompts:
        start, end = p.spans[span]
        before = p.text[:start]
        cut = len(before.rstrip())
        befores.add(before[:cut])
        cands.append(p.text[cut:end])  # the blank's leading space goes with the candidate
    if len(befores) != 1 or not next(iter(befores)):
        return "items whose prompts differ before the blank"
    order = [expected[0], *[k for k in range(len(prompts)) if k != expected[0]]]
    return next(iter(befores)), [cands[k] for k in order], expected[0]


def _candidates_plan(lm: LoadedModel, items: Sequence[Item], readout: CandidatesReadout,
                     site: Site) -> ReadoutPlan:
    from probebench.models.activations import tokenize

    rows: list[Row] = []
    units: list[Unit] = []
    skipped: dict[str, int] = {}
    used: list[tuple[Item, str, list[str], int]] = []
    for item in items:
        found = _blank(item, readout.span)
        if isinstance(found, str):
            skipped[found] = skipped.get(found, 0) + 1
        else:
            used.append((item, *found))
    if not used:
        return ReadoutPlan(readout, rows, units, skipped)
    befores = tokenize(lm, [Prompt(before) for _, before, _, _ in used])
    fulls = tokenize(lm, [item.prompts[k] for item, _, _, k in used])
    tree = getattr(lm.model.config, "model_type", None) in TREE_MODEL_TYPES
    prompts: list[Prompt] = []
    for j, (item, _, cands, _k) in enumerate(used):
        ids = befores.ids[j]
        n = len(ids)
        full = site_positions(fulls.prompts[j], fulls.offsets[j], len(fulls.ids[j]),
                              site.position)
        steer = tuple(p for p in full if p < n) or (n - 1,)
        tokens = [_token_ids(lm, cand, f"item {item.id}: candidate {c}")
                  for c, cand in enumerate(cands)]
        prompts.extend(item.prompts)
        if tree:
            rows.append(_tree_row(ids, steer, tokens))
            units.append(Unit((len(rows) - 1,), item.id, 1,
                              tuple(len(t) for t in tokens)))
            continue
        first = len(rows)
        for cand_ids in tokens:
            rows.append(Row(tuple(ids + cand_ids[:-1]), steer,
                            tuple(range(n - 1, n - 1 + len(cand_ids))),
                            tuple((t,) for t in cand_ids)))
        units.append(Unit(tuple(range(first, len(rows))), item.id, 1))
    return ReadoutPlan(readout, rows, units, skipped, prompts)


def _tree_row(before: list[int], steer: tuple[int, ...], candidates: list[list[int]]) -> Row:
    """One row holding ``before`` once and then each candidate's tokens but its last,
    each candidate's first token following ``before``'s last; its reads are each
    candidate's tokens in turn (the first read at ``before``'s last token)."""
    ids = list(before)
    parents = [t - 1 for t in range(len(before))]
    reads: list[int] = []
    targets: list[tuple[int]] = []
    for cand in candidates:
        at = len(before) - 1
        for k, token in enumerate(cand):
            reads.append(at)
            targets.append((token,))
            if k + 1 < len(cand):   # the token is read after, so it is run
                ids.append(token)
                parents.append(at)
                at = len(ids) - 1
    return Row(tuple(ids), steer, tuple(reads), tuple(targets), tuple(parents))


def describe(readout: Readout) -> dict[str, Any]:
    """The readout as JSON (what a result records)."""
    return readout.model_dump(mode="json")
