"""Steering and ablation on the residual stream at a probe's site.

A probe at ``Site(layer, position)`` reads ``hidden_states[layer]`` (``probebench.sites``:
the input of block ``layer``; the output after the final norm when ``layer`` is the
model's last). Steering adds ``alpha * v`` there, at exactly the token positions the site
pools (``readouts.site_positions``); directional ablation projects a unit direction ``u``
out of every position there (``h - (h . u) u``, Arditi et al., at this one layer).

Cost (``SteeringRunner``): the blocks below the site run once per row, and the hidden
state entering block ``layer`` is kept with the arguments the model passed that block
(attention mask, rotary position embeddings: one set per padded batch, the same for
every block of a Llama-style stack). Each (direction, alpha) runs only the blocks from
``layer`` on, then the final norm, then the LM head on the hidden states of the read
positions alone: ``(reads, vocabulary)`` logits, never ``(batch, tokens, vocabulary)``.
Where the site steers from a row's last prompt token (``last_token``, a marker), the
positions before it are the same steered or not: the unsteered pass runs once and keeps
every upper block's keys and values, and each steered pass runs only the positions from
the first steered one on against them (``SPLIT_MODEL_TYPES``; a readout's suffix and
answer tokens, not the whole prompt). Ablation touches every position and runs them all.
A model whose head does more than a linear map (logit softcapping) is not exact here.

``steering_hook`` does the same addition inside an ordinary forward pass (a forward
pre-hook on block ``layer``, or a forward hook on the final norm for the last layer), for
generation and for the tests that compare the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from probebench.causal.readouts import Row
from probebench.errors import ModelError, SiteError

if TYPE_CHECKING:
    import torch

    from probebench.models.loading import LoadedModel

__all__ = ["SPLIT_MODEL_TYPES", "Stack", "SteeringRunner", "hf_stack", "steering_hook"]

#: model types whose attention takes a key/value cache as ``update(keys, values,
#: layer_idx)`` and honours a custom 4D mask, so that a steered pass may run only the
#: positions from the first steered one on (checked on the SmolLM2 reference:
#: ``tests/causal/test_steer.py``)
SPLIT_MODEL_TYPES = frozenset({"llama"})

#: rows per batch and padded tokens per batch of the runner (CPU-sized; the cached
#: states of every batch stay in memory: rows x tokens x hidden float32)
BATCH_ROWS = 32
BATCH_TOKENS = 4096


@dataclass
class Stack:
    """The parts of a causal language model the runner drives, split at a site's layer.

    ``lower(ids, mask, positions)`` runs the model up to the site's layer and returns
    the hidden state there ``(B, T, d)`` with the keyword arguments the upper blocks take
    (``mask`` is ``(B, T)`` padding, or for tree rows a boolean ``(B, 1, T, T)`` mask,
    True where a token attends, with ``positions`` ``(B, T)``);
    ``blocks`` are the blocks from the site's layer on (each called ``block(h, **kw)``,
    returning a tensor or a tuple whose first element is one); ``norm`` is the final norm
    (None when the site is after it); ``head`` maps ``(n, d)`` to ``(n, vocabulary)``
    logits."""

    lower: Callable[..., tuple[Any, dict[str, Any]]]
    blocks: Sequence[Any]
    norm: Any | None
    head: Any
    device: str = "cpu"
    #: the keyword the blocks take a key/value cache by, where the runner may reuse the
    #: unsteered keys and values of the positions before the first steered one
    #: (``SPLIT_MODEL_TYPES``); None: every pass runs every position
    cache_kwarg: str | None = None


class _StopError(Exception):
    pass


def _final_norm(base: Any) -> Any:
    for name in ("norm", "final_layernorm", "ln_f", "final_layer_norm"):
        module = getattr(base, name, None)
        if module is not None:
            return module
    raise ModelError(f"cannot find the final norm of {type(base).__name__} (looked for "
                     "norm, final_layernorm, ln_f, final_layer_norm); steering needs it")


def hf_stack(lm: LoadedModel, layer: int) -> Stack:
    """The ``Stack`` of a loaded causal model split at ``layer`` (0..num_layers)."""
    n = lm.identity.num_layers
    if not lm.is_causal:
        raise ModelError(f"steering reads the model's own next-token probabilities; "
                         f"{lm.identity.name!r} is an {lm.identity.architecture} model")
    if not 0 <= layer <= n:
        raise SiteError(f"layer {layer} is out of range; this model has layers 0..{n}")
    head = lm.model.get_output_embeddings()
    if head is None:
        raise ModelError(f"model {lm.identity.name!r} has no output embeddings (LM head)")

    def lower(ids: torch.Tensor, mask: torch.Tensor,
              positions: torch.Tensor | None = None) -> tuple[torch.Tensor, dict[str, Any]]:
        extra = {} if positions is None else {"position_ids": positions}
        if mask.dim() == 4:  # tree rows: additive, in the model's own dtype
            mask = _additive(mask, lm.model.dtype)
        if layer == n:  # the site reads after the final norm: the whole base runs
            out = lm.base(input_ids=ids, attention_mask=mask, use_cache=False, **extra)
            return out[0], {}
        caught: dict[str, Any] = {}

        def catch(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            caught["h"] = args[0] if args else kwargs["hidden_states"]
            caught["kw"] = {k: v for k, v in kwargs.items() if k != "hidden_states"}
            raise _StopError

        handle = lm.layers[layer].register_forward_pre_hook(catch, with_kwargs=True)
        try:
            lm.base(input_ids=ids, attention_mask=mask, use_cache=False, **extra)
        except _StopError:
            pass
        finally:
            handle.remove()
        return caught["h"], caught["kw"]

    blocks = list(lm.layers)[layer:] if layer < n else []
    cache_kwarg = None
    if blocks and getattr(lm.model.config, "model_type", None) in SPLIT_MODEL_TYPES:
        import inspect

        params = inspect.signature(type(blocks[0]).forward).parameters
        cache_kwarg = next((name for name in ("cache", "past_key_values", "past_key_value")
                            if name in params), None)
    return Stack(lower=lower, blocks=blocks, norm=_final_norm(lm.base) if layer < n else None,
                 head=head, device=lm.device, cache_kwarg=cache_kwarg)


def _additive(sees: Any, dtype: Any) -> Any:
    """A boolean attention mask (True: attends) as the additive mask the blocks take: 0
    where a token attends, the dtype's minimum elsewhere."""
    import torch

    return torch.zeros(sees.shape, dtype=dtype, device=sees.device).masked_fill(
        ~sees, torch.finfo(dtype).min)


class _KeyValues:
    """What an attention layer takes as its cache (``update(keys, values, layer_idx)``):
    without ``before`` it keeps each layer's keys and values and returns them as they
    are; with ``before`` it returns those kept keys and values ahead of the new ones."""

    def __init__(self, before: dict[int, tuple[Any, Any]] | None = None) -> None:
        self.before = before
        self.kept: dict[int, tuple[Any, Any]] = {}

    def update(self, keys: Any, values: Any, layer_idx: int, *args: Any,
               **kwargs: Any) -> tuple[Any, Any]:
        import torch

        if self.before is None:
            self.kept[layer_idx] = (keys, values)
            return keys, values
        k, v = self.before[layer_idx]
        return torch.cat([k, keys], dim=-2), torch.cat([v, values], dim=-2)


@dataclass
class _Tail:
    """A batch's positions from each row's first steered one on (the rest of each row
    is the same steered or not), ready to run against the kept keys and values."""

    hidden: Any                  #: (B, L, d) the tail's unsteered states at the site
    steer: Any                   #: (B, L, 1)
    kwargs: dict[str, Any]       #: the blocks' arguments for the tail (mask, positions)
    kept: dict[int, tuple[Any, Any]]  #: per block, the unsteered keys and values (B, h, T, e)
    read_pos: Any                #: (R,) position of each read in the tail


@dataclass
class _Cached:
    rows: np.ndarray             #: indices into the runner's rows
    hidden: Any                  #: (B, T, d) at the site's layer, unsteered
    kwargs: dict[str, Any]
    steer: Any                   #: (B, T, 1) 1.0 at the positions steering adds to
    read_row: Any                #: (R,) batch row of each read
    read_pos: Any                #: (R,) position of each read
    targets: Any                 #: (R, C) token ids read
    counts: list[int]            #: reads per batch row
    base: np.ndarray | None = None   #: (R, C) the unsteered log-probabilities, when kept
    tail: _Tail | None = None


class SteeringRunner:
    """Runs ``rows`` once below the site, then any number of steered upper passes.

    ``log_probs(add=v)`` adds ``v`` (shape ``(d,)``, already scaled) at each row's
    ``steer`` positions; ``log_probs(ablate=u)`` projects the unit ``u`` out of every
    position; both None is the unsteered model. Each returns, per row, the
    log-probabilities ``(len(row.reads), C)`` of its targets. ``passes`` counts the upper
    passes run."""

    def __init__(self, stack: Stack, rows: Sequence[Row], *, pad_id: int = 0,
                 batch_rows: int = BATCH_ROWS, batch_tokens: int = BATCH_TOKENS) -> None:
        import torch

        from probebench.models.activations import length_batches

        if not rows:
            raise SiteError("no rows to steer")
        widths = {len(t) for r in rows for t in r.targets}
        if len(widths) != 1:
            raise SiteError(f"every read of a runner reads as many tokens; found {widths}")
        self.stack = stack
        self.rows = list(rows)
        self.passes = 0
        lengths = np.array([len(r.ids) for r in self.rows], dtype=np.int64)
        dev = stack.device
        self._batches: list[_Cached] = []
        with torch.inference_mode():
            for batch in length_batches(lengths, batch_tokens=batch_tokens,
                                        max_batch_size=batch_rows):
                width = int(lengths[batch].max())
                ids = np.full((len(batch), width), pad_id, dtype=np.int64)
                mask = np.zeros_like(ids)
                steer = np.zeros((len(batch), width, 1), dtype=np.float32)
                read_row, read_pos, targets, counts = [], [], [], []
                for b, i in enumerate(batch):
                    row = self.rows[i]
                    ids[b, :len(row.ids)] = row.ids
                    mask[b, :len(row.ids)] = 1
                    steer[b, list(row.steer), 0] = 1.0
                    read_row += [b] * len(row.reads)
                    read_pos += list(row.reads)
                    targets += [list(t) for t in row.targets]
                    counts.append(len(row.reads))
                args = [torch.from_numpy(ids).to(dev), torch.from_numpy(mask).to(dev)]
                if any(self.rows[i].parents is not None for i in batch):
                    args[1:] = _tree_inputs([self.rows[i] for i in batch], width, dev)
                hidden, kwargs = stack.lower(*args)
                cached = _Cached(
                    rows=batch, hidden=hidden.detach().clone(), kwargs=kwargs,
                    steer=torch.from_numpy(steer).to(dev).to(hidden.dtype),
                    read_row=torch.tensor(read_row, device=dev),
                    read_pos=torch.tensor(read_pos, device=dev),
                    targets=torch.tensor(targets, device=dev), counts=counts)
                self._split(cached, [self.rows[i] for i in batch], width)
                self._batches.append(cached)

    @property
    def hidden_size(self) -> int:
        return int(self._batches[0].hidden.shape[-1])

    @property
    def split_batches(self) -> int:
        """Batches whose steered passes run only the positions from each row's first
        steered one on (the earlier ones' keys and values kept from the unsteered pass)."""
        return sum(cached.tail is not None for cached in self._batches)

    def _split(self, cached: _Cached, rows: list[Row], width: int) -> None:
        """Keep what a steered pass needs to run only each row's positions from its first
        steered one on: the unsteered pass's keys and values in every block above the
        site (run once here; its log-probabilities are the unsteered readout), and the
        tail's inputs. Positions before a row's first steered one are the same steered or
        not (the attention is causal), so their keys and values are reused, exactly.
        Nothing is kept where that saves no position (steering from the first token) or a
        read comes before the first steered position."""
        import torch

        kwarg = self.stack.cache_kwarg
        starts = np.array([min(r.steer) for r in rows], dtype=np.int64)
        lengths = np.array([len(r.ids) for r in rows], dtype=np.int64)
        tails = lengths - starts
        if (kwarg is None or not self.stack.blocks or int(tails.max()) >= width
                or any(min(r.reads) < s for r, s in zip(rows, starts, strict=True))):
            return
        keep = _KeyValues()
        h = cached.hidden
        for block in self.stack.blocks:
            result = block(h, **{**cached.kwargs, kwarg: keep})
            h = result[0] if isinstance(result, tuple) else result
        if len(keep.kept) != len(self.stack.blocks):  # a block never used the cache
            return
        cached.base = self._read(cached, h, cached.read_pos)
        span = int(tails.max())
        idx = np.minimum(starts[:, None] + np.arange(span)[None, :], lengths[:, None] - 1)
        valid = np.arange(span)[None, :] < tails[:, None]
        sees = np.zeros((len(rows), 1, span, width + span), dtype=bool)
        for b, row in enumerate(rows):
            full, s, n = row.sees(), int(starts[b]), int(tails[b])
            sees[b, 0, :n, :s] = full[s:s + n, :s]
            sees[b, 0, :n, width:width + n] = full[s:s + n, s:s + n]
            sees[b, 0, np.arange(n, span), width + np.arange(n, span)] = True
        dev, dtype = cached.hidden.device, cached.hidden.dtype
        where = torch.from_numpy(idx).to(dev)
        rows_at = torch.arange(len(rows), device=dev)[:, None]
        mask = _additive(torch.from_numpy(sees).to(dev), dtype)

        def gather(t: Any) -> Any:  # (1 or B, T, ...) -> (B, span, ...)
            return t.expand(len(rows), *t.shape[1:])[rows_at, where]

        kwargs = dict(cached.kwargs)
        kwargs["attention_mask"] = mask
        if kwargs.get("position_embeddings") is not None:
            kwargs["position_embeddings"] = tuple(gather(t) for t in
                                                  kwargs["position_embeddings"])
        if kwargs.get("position_ids") is not None:
            kwargs["position_ids"] = gather(kwargs["position_ids"])
        shift = torch.from_numpy(starts).to(dev)[cached.read_row]
        cached.tail = _Tail(
            hidden=cached.hidden[rows_at, where],
            steer=cached.steer[rows_at, where]
            * torch.from_numpy(valid).to(dev)[..., None].to(dtype),
            kwargs=kwargs, kept=keep.kept, read_pos=cached.read_pos - shift)

    def _read(self, cached: _Cached, h: Any, positions: Any) -> np.ndarray:
        """The targets' log-probabilities at the reads, from the last block's output."""
        import torch

        picked = h[cached.read_row, positions]
        if self.stack.norm is not None:  # per-position norm: same on the gathered
            picked = self.stack.norm(picked)
        logits = self.stack.head(picked).float()
        values = torch.log_softmax(logits, dim=-1).gather(-1, cached.targets)
        return np.asarray(values.double().cpu().numpy())

    def _upper(self, cached: _Cached, add: np.ndarray | None,
               ablate: np.ndarray | None) -> np.ndarray:
        import torch

        if add is None and ablate is None and cached.base is not None:
            return cached.base
        tail = cached.tail if ablate is None else None
        h = cached.hidden if tail is None else tail.hidden
        kwargs = cached.kwargs
        if tail is not None:
            assert self.stack.cache_kwarg is not None
            kwargs = {**tail.kwargs, self.stack.cache_kwarg: _KeyValues(tail.kept)}
        if add is not None:
            vec = torch.as_tensor(np.asarray(add), device=h.device, dtype=h.dtype)
            h = h + (cached.steer if tail is None else tail.steer) * vec
        if ablate is not None:
            u = torch.as_tensor(np.asarray(ablate), device=h.device, dtype=h.dtype)
            h = h - (h @ u)[..., None] * u
        for block in self.stack.blocks:
            result = block(h, **kwargs)
            h = result[0] if isinstance(result, tuple) else result
        return self._read(cached, h, cached.read_pos if tail is None else tail.read_pos)

    def log_probs(self, *, add: np.ndarray | None = None,
                  ablate: np.ndarray | None = None) -> list[np.ndarray]:
        import torch

        out: list[np.ndarray | None] = [None] * len(self.rows)
        with torch.inference_mode():
            for cached in self._batches:
                host = self._upper(cached, add, ablate)
                at = 0
                for i, count in zip(cached.rows, cached.counts, strict=True):
                    out[int(i)] = host[at:at + count]
                    at += count
        self.passes += 1
        return [v for v in out if v is not None]


def _tree_inputs(rows: Sequence[Row], width: int, device: str) -> list[Any]:
    """The boolean ``(B, 1, T, T)`` attention mask (True where a token attends) and the
    ``(B, T)`` position ids of a batch holding tree rows. A padded token attends to
    itself alone, so its states stay finite and no real token reads them."""
    import torch

    sees = np.zeros((len(rows), 1, width, width), dtype=bool)
    positions = np.zeros((len(rows), width), dtype=np.int64)
    for b, row in enumerate(rows):
        n = len(row.ids)
        sees[b, 0, :n, :n] = row.sees()
        positions[b, :n] = row.positions()
        sees[b, 0, np.arange(n, width), np.arange(n, width)] = True
    return [torch.from_numpy(sees).to(device), torch.from_numpy(positions).to(device)]


@contextmanager
def steering_hook(lm: LoadedModel, layer: int, vector: np.ndarray,
                  positions: np.ndarray | None = None) -> Iterator[None]:
    """Add ``vector`` (``(d,)``) to ``hidden_states[layer]`` inside ``lm``'s own forward
    passes while the context is open: at the positions where ``positions`` (``(B, T)``,
    1 = add) is set, or at every position when it is None (as llama.cpp applies a
    control vector)."""
    import torch

    n = lm.identity.num_layers
    if not 0 <= layer <= n:
        raise SiteError(f"layer {layer} is out of range; this model has layers 0..{n}")

    def steer(h: torch.Tensor) -> torch.Tensor:
        vec = torch.as_tensor(np.asarray(vector), device=h.device, dtype=h.dtype)
        if positions is None:
            return h + vec
        where = torch.as_tensor(np.asarray(positions), device=h.device, dtype=h.dtype)
        return h + where[..., None] * vec

    if layer < n:
        def pre(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if args:
                return (steer(args[0]), *args[1:]), kwargs
            return args, {**kwargs, "hidden_states": steer(kwargs["hidden_states"])}
        handle = lm.layers[layer].register_forward_pre_hook(pre, with_kwargs=True)
    else:
        def post(module: Any, args: tuple[Any, ...], output: Any) -> Any:
            return steer(output)
        handle = _final_norm(lm.base).register_forward_hook(post)
    try:
        yield
    finally:
        handle.remove()
