"""Shared prefix attention (``probebench.models.prefix_attention``): the same model
function as the plain path that gives every row the prefix's cache."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from probebench.models import Site
from probebench.models.activations import run_extraction
from probebench.models.prefix_attention import (
    NAME,
    attend,
    attend_after_prefix,
    prefix_attention,
    prefix_attention_forward,
    supports,
)
from probebench.prompts import Prompt

#: the float32 contract of ``tests/models/test_activations.py``
ATOL, RTOL = 1e-4, 1e-5
PREFIX = "The following statements were read aloud at a meeting. " * 6
SENTENCE = "the keys to the old cabinet in the hall were lost by the children last summer"
#: five lengths, so the rows of a batch are right-padded
PROMPTS = [Prompt(f"{SENTENCE[: 12 + 13 * i].capitalize()}.") for i in range(5)]
SITES = [Site(layer, position) for layer in (2, 9, 20)
         for position in ("last_token", "token_avg")]


def _implementations(lm: Any, layer: int) -> tuple[list[str], Any]:
    """Record the attention implementation that block ``layer - 1`` runs under."""
    seen: list[str] = []

    def hook(*_: Any) -> None:
        seen.append(lm.model.config._attn_implementation)

    return seen, lm.layers[layer - 1].register_forward_pre_hook(hook)


def test_the_shared_path_equals_the_plain_path_on_padded_batches(smollm: Any) -> None:
    own = smollm.model.config._attn_implementation
    seen, handle = _implementations(smollm, SITES[-1].layer)
    try:
        shared = run_extraction(smollm, PROMPTS, SITES, prefix=PREFIX, progress=False)
    finally:
        handle.remove()
    # the prefix's pass under the model's own attention, then one batch of five padded
    # rows through the shared path; the model's own attention is restored after it
    assert seen == [own, NAME]
    assert smollm.model.config._attn_implementation == own
    plain = run_extraction(smollm, PROMPTS, SITES, prefix=PREFIX, progress=False,
                           shared_prefix_attention=False)
    for site in SITES:
        assert not np.allclose(shared[site][0], shared[site][1])  # rows differ
        np.testing.assert_allclose(shared[site], plain[site], atol=ATOL, rtol=RTOL,
                                   err_msg=str(site))


def test_padding_and_batching_change_no_more_than_rounding_and_runs_repeat_bits(
        smollm: Any) -> None:
    sites = [Site(9, "last_token"), Site(9, "token_avg")]
    batched = run_extraction(smollm, PROMPTS, sites, prefix=PREFIX, progress=False)
    again = run_extraction(smollm, PROMPTS, sites, prefix=PREFIX, progress=False)
    alone = run_extraction(smollm, PROMPTS, sites, prefix=PREFIX, progress=False,
                           max_batch_size=1)
    for site in sites:
        assert np.array_equal(batched[site], again[site])
        np.testing.assert_allclose(batched[site], alone[site], atol=ATOL, rtol=RTOL)


def test_attention_weighted_sites_keep_the_plain_path(smollm: Any) -> None:
    """The shared path never forms attention probabilities: attention-pooled sites read
    them from the eager implementation over the prefix and the prompt."""
    seen, handle = _implementations(smollm, 3)
    try:
        run_extraction(smollm, PROMPTS[:2], [Site(3, "attention_weighted"),
                                             Site(3, "last_token")],
                       prefix=PREFIX, progress=False)
    finally:
        handle.remove()
    assert seen[1:] == ["eager"]  # after the prefix's own pass


def _reference(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scores = (query.double() @ key.double().transpose(-1, -2)) / query.shape[-1] ** 0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, -1) @ value.double(), torch.logsumexp(scores, -1)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("causal", [True, False])
def test_attend_returns_the_softmax_and_its_log_sum_exp(fused: bool, causal: bool) -> None:
    query, key, value = (torch.randn(2, 3, 7, 8) for _ in range(3))
    mask = (torch.ones(7, 7, dtype=torch.bool).tril() if causal
            else torch.ones(7, 7, dtype=torch.bool))
    # a chunk of 2 x 3 x 7 x 3 scores: three query chunks (3, 3, 1) on the explicit path
    out, lse = attend(query, key, value, 8 ** -0.5, causal=causal, fused=fused, chunk=126)
    ref_out, ref_lse = _reference(query, key, value, mask)
    torch.testing.assert_close(out.double(), ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lse.double(), ref_lse, atol=1e-5, rtol=1e-5)


class _Layer:
    layer_idx = 1


@pytest.mark.parametrize("fused", [True, False])
def test_the_merge_equals_attention_over_the_concatenated_keys(fused: bool) -> None:
    """Grouped heads (6 query heads over 2 key/value heads) read the prefix held once;
    the result is the softmax over the prefix's keys and the row's own, causally."""
    batch, heads, kv_heads, length, prefix, dim = 3, 6, 2, 5, 11, 8
    query = torch.randn(batch, heads, length, dim)
    key, value = (torch.randn(batch, kv_heads, length, dim) for _ in range(2))
    prefix_k, prefix_v = (torch.randn(1, kv_heads, prefix, dim) for _ in range(2))
    out = attend_after_prefix(query, key, value, prefix_k, prefix_v, dim ** -0.5,
                              fused=fused)
    groups = heads // kv_heads
    keys = torch.cat([prefix_k.expand(batch, -1, -1, -1), key], 2).repeat_interleave(groups, 1)
    values = torch.cat([prefix_v.expand(batch, -1, -1, -1), value],
                       2).repeat_interleave(groups, 1)
    mask = torch.cat([torch.ones(length, prefix, dtype=torch.bool),
                      torch.ones(length, length, dtype=torch.bool).tril()], 1)
    expected, _ = _reference(query, keys, values, mask)
    torch.testing.assert_close(out.double(), expected, atol=1e-5, rtol=1e-5)
    if fused:  # as transformers calls it: block 1's prefix states, (B, T, heads, D) out
        with prefix_attention(_Model(), [(key, value), (prefix_k, prefix_v)]):
            hf, weights = prefix_attention_forward(_Layer(), query, key, value, None,
                                                   scaling=dim ** -0.5)
        assert weights is None
        assert torch.equal(hf, out.transpose(1, 2))


class _Model:
    """The two members of a transformers model that ``prefix_attention`` uses."""

    class config:  # noqa: N801
        _attn_implementation = "sdpa"

    def set_attn_implementation(self, name: str) -> None:
        self.config._attn_implementation = name


def test_the_attention_outside_a_pass_is_an_error() -> None:
    query = torch.randn(1, 2, 3, 4)
    with pytest.raises(RuntimeError, match="runs only inside prefix_attention"):
        prefix_attention_forward(_Layer(), query, query, query, None)


def test_supports_only_the_architectures_it_computes_exactly() -> None:
    from transformers import BertConfig, LlamaConfig, MistralConfig

    assert supports(LlamaConfig(num_hidden_layers=1))
    assert not supports(MistralConfig(num_hidden_layers=1, sliding_window=64))
    assert not supports(BertConfig(num_hidden_layers=1))
