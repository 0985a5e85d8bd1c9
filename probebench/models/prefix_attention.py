"""Attention over a shared prefix held once (the distribution-shift pass's long context).

The plain way to read many prompts after one prefix gives every row of a batch the
prefix's key/value states: each block concatenates them to the row's own keys, the
sdpa path repeats the key/value heads for every query head of every row (``repeat_kv``),
and every row's token count includes the prefix, so batches are small. This module
computes the same attention in two parts instead:

* every row's queries against the prefix's keys, as one matrix product per key/value
  head over all rows at once: the prefix's states are held once, and the query heads
  that share a key/value head are stacked rows of that product (grouped queries are
  reshaped, never repeated);
* every row's queries against its own keys, causally;

and merges them with the softmax's log-sum-exp rule: with the row maxima ``m_p`` and
``m_o`` of the two parts' scores, ``m = max(m_p, m_o)``, the output is
``(e^(m_p-m) O_p + e^(m_o-m) O_o) / (e^(m_p-m) L_p + e^(m_o-m) L_o)``, where ``O`` are
the unnormalised weighted values and ``L`` the sums of the exponentials. That is
the softmax over the concatenated keys, so the model function is unchanged (float
rounding aside). Batches then count only the prompts' own tokens.

Right padding needs no mask: a real token at position ``t`` attends to its own tokens
``0..t``, all real; a padded query reads garbage that no pooler reads, and stays finite.

It is registered with transformers as the attention implementation ``probebench_prefix``
(``AttentionInterface``; its mask function builds no mask) and reads the current prefix
from a context variable that ``prefix_attention`` sets for the duration of a pass. Only
architectures whose attention is exactly "rotary queries and keys, grouped heads,
scaled dot product, causal" use it (``supports``); others keep the plain path, as do
attention-weighted sites (they need the probabilities, which this path never forms).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

__all__ = ["NAME", "SUPPORTED_MODEL_TYPES", "attend", "attend_after_prefix", "prefix_attention",
           "prefix_attention_forward", "supports"]

#: the attention implementation's name in transformers' registries
NAME = "probebench_prefix"
#: model types whose attention this module computes exactly (checked on the SmolLM2
#: reference: ``tests/models/test_prefix_attention.py``)
SUPPORTED_MODEL_TYPES = frozenset({"llama"})
#: score elements (prefix keys x query rows, all key/value heads) computed at once: the
#: prefix part is cut into query chunks under this bound (256 MiB in float32), so a large
#: GPU batch never holds its whole score matrix
CHUNK_ELEMENTS = 2**26

#: the prefix's ``(keys, values)`` per block, each ``(1, kv_heads, prefix, head_dim)``
_PREFIX: ContextVar[Sequence[tuple[Any, Any]] | None] = ContextVar("probebench_prefix",
                                                                  default=None)
_registered = False


def supports(config: Any) -> bool:
    """Whether a model (its transformers ``config``) computes attention the way this
    module does: a supported model type, no sliding window, no logit soft-capping and
    no attention sinks."""
    if getattr(config, "model_type", None) not in SUPPORTED_MODEL_TYPES:
        return False
    for name in ("sliding_window", "attn_logit_softcapping"):
        if getattr(config, name, None):
            return False
    return not getattr(config, "use_sinks", False)


def _register() -> None:
    global _registered
    if _registered:
        return
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(NAME, prefix_attention_forward)
    AttentionMaskInterface.register(NAME, _no_mask)
    _registered = True


def _no_mask(*args: Any, **kwargs: Any) -> None:
    """Right padding and causal attention need no mask here (see the module docstring)."""
    return None


@contextmanager
def prefix_attention(model: Any, states: Sequence[tuple[Any, Any]]) -> Iterator[None]:
    """Within the block, ``model`` (a transformers ``PreTrainedModel`` that ``supports``)
    reads every batch after the prefix whose key/value states per block are ``states``.

    The caller passes ``position_ids`` that start after the prefix and no cache."""
    _register()
    previous = model.config._attn_implementation
    token = _PREFIX.set(states)
    model.set_attn_implementation(NAME)
    try:
        yield
    finally:
        model.set_attn_implementation(previous)
        _PREFIX.reset(token)


def prefix_attention_forward(module: Any, query: torch.Tensor, key: torch.Tensor,
                             value: torch.Tensor, attention_mask: torch.Tensor | None,
                             scaling: float | None = None, dropout: float = 0.0,
                             **kwargs: Any) -> tuple[torch.Tensor, None]:
    """Attention of ``query`` ``(B, heads, T, D)`` over the current prefix's keys and
    the rows' own ``key``/``value`` ``(B, kv_heads, T, D)``; returns ``(B, T, heads, D)``
    like transformers' implementations (and no weights)."""
    states = _PREFIX.get()
    if states is None:
        raise RuntimeError(f"the {NAME!r} attention runs only inside prefix_attention()")
    prefix_k, prefix_v = states[module.layer_idx]
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    out = attend_after_prefix(query, key, value, prefix_k, prefix_v, scale)
    return out.transpose(1, 2).contiguous(), None


def attend_after_prefix(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        prefix_k: torch.Tensor, prefix_v: torch.Tensor, scale: float, *,
                        fused: bool | None = None) -> torch.Tensor:
    """Causal attention of ``query`` ``(B, heads, T, D)`` over a prefix's keys and
    values ``(1, kv_heads, P, D)`` followed by each row's own ``(B, kv_heads, T, D)``:
    ``(B, heads, T, D)``, as if every row's keys were the prefix's and then its own
    (``fused``: see ``attend``)."""
    import torch

    batch, heads, length, dim = query.shape
    kv_heads = key.shape[1]
    groups = heads // kv_heads
    # the rows' own tokens, causally (short: repeating their key/value heads is cheap)
    own_out, own_lse = attend(query, _repeat(key, groups), _repeat(value, groups), scale,
                              causal=True, fused=fused)
    # every row against the prefix: head h reads key/value head h // groups (repeat_kv's
    # order), so the query heads of one key/value head, of every row, are stacked as the
    # rows of one product with the prefix's keys, which are held once
    rows = query.reshape(batch, kv_heads, groups * length, dim).transpose(0, 1)
    rows = rows.reshape(1, kv_heads, batch * groups * length, dim)
    pre_out, pre_lse = attend(rows, prefix_k, prefix_v, scale, causal=False, fused=fused)
    pre_out = pre_out.reshape(kv_heads, batch, groups * length, dim).transpose(0, 1)
    pre_lse = pre_lse.reshape(kv_heads, batch, groups * length).transpose(0, 1)
    own_out = own_out.reshape(batch, kv_heads, groups * length, dim)
    own_lse = own_lse.reshape(batch, kv_heads, groups * length)
    # the softmax over both parts' keys: each part weighted by its share of the total
    total = torch.logaddexp(own_lse, pre_lse)
    out = (own_out.float() * torch.exp(own_lse - total)[..., None]
           + pre_out.float() * torch.exp(pre_lse - total)[..., None])
    return out.to(query.dtype).reshape(batch, heads, length, dim)


def _repeat(states: torch.Tensor, groups: int) -> torch.Tensor:
    if groups == 1:
        return states
    b, h, t, d = states.shape
    return states[:, :, None].expand(b, h, groups, t, d).reshape(b, h * groups, t, d)


def attend(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, scale: float, *,
           causal: bool, fused: bool | None = None,
           chunk: int = CHUNK_ELEMENTS) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax attention ``(out, lse)``: ``out`` ``(B, H, L, D)`` in the query's dtype and
    the log-sum-exp of each query's scaled scores ``(B, H, L)`` in float32 (``causal``
    aligns query ``i`` with key ``i``).

    ``fused`` (default: on the CPU in float32 or bfloat16) is torch's CPU flash kernel,
    which returns the log-sum-exp beside the output and never forms the scores;
    otherwise the scores are formed explicitly, at most ``chunk`` of them at once."""
    import torch

    flash = _cpu_flash()
    if fused is None:
        fused = (flash is not None and query.device.type == "cpu"
                 and query.dtype in (torch.float32, torch.bfloat16))
    if fused:
        out, lse = flash(query, key, value, 0.0, causal, scale=scale)[:2]
        return out, lse.float()
    batch, heads, rows, _ = query.shape
    keys = key.shape[2]
    step = max(1, chunk // max(1, batch * heads * keys))
    outs, lses = [], []
    for start in range(0, rows, step):
        q = query[:, :, start:start + step]
        scores = torch.matmul(q, key.transpose(-1, -2)).float() * scale
        if causal:
            ahead = torch.ones(q.shape[2], keys, dtype=torch.bool, device=q.device).triu(
                start + 1)
            scores = scores.masked_fill(ahead, float("-inf"))
        lse = torch.logsumexp(scores, dim=-1)
        weights = torch.exp(scores - lse[..., None]).to(value.dtype)
        outs.append(torch.matmul(weights, value))
        lses.append(lse)
    if len(outs) == 1:
        return outs[0], lses[0]
    return torch.cat(outs, dim=2), torch.cat(lses, dim=2)


@cache
def _cpu_flash() -> Any:
    """torch's CPU flash-attention operator (``out, logsumexp``), or None in a torch
    without it."""
    import torch

    return getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
