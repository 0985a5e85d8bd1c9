"""Analytical inference cost of a probe: floating-point operations per prompt.

A probe at layer ``L`` needs the embeddings and the first ``L`` blocks of its model (the
LM head never runs), then its scaler and classifier. The count follows the usual
dense-transformer accounting (Kaplan et al. 2020, appendix; one multiply-add = 2 FLOPs),
from the model's ``config.json`` alone, so it is the same on every machine:

per token and block
    attention projections  2·d·(d_q + 2·d_kv + d_q)   (query, key, value, output)
    attention scores       4·d_q·c                    (QKᵀ and the weighted sum of V)
    feed-forward           2·k·d·d_ff                 (k = 3 for gated units such as
                                                       SwiGLU, else 2)

with ``d`` the hidden size, ``d_q`` heads × head size, ``d_kv`` key/value heads × head
size, and ``c`` the mean number of positions a token attends to: ``(T + 1) / 2`` in a
causal model and ``T`` in an encoder, for a prompt of ``T`` tokens. Embedding lookups,
normalisations and activations are left out (under 1% at these sizes). The probe adds
``2·d`` for the scaler and ``2·Σ fan_in·fan_out`` for its layers; pooling over tokens
adds ``T·d``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from probebench.errors import ModelError

#: model types whose feed-forward is gated (three matrices: gate, up, down)
GATED_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "gemma", "gemma2",
    "gemma3", "gemma3_text", "phi3", "olmo", "olmo2", "granite", "cohere", "smollm3",
    "deepseek_v3", "starcoder2_gated",
})


@dataclass(frozen=True)
class BlockShape:
    """What the FLOP count needs of a model's config."""

    hidden: int
    query: int        #: heads × head size
    key_value: int    #: key/value heads × head size
    ffn: int
    gated: bool
    causal: bool

    @classmethod
    def of(cls, config: Mapping[str, Any], *, causal: bool) -> BlockShape:
        text = config.get("text_config") or {}

        def get(*keys: str) -> Any:
            for source in (config, text):
                for key in keys:
                    if isinstance(source.get(key), int):
                        return source[key]
            return None

        hidden = get("hidden_size", "n_embd", "d_model")
        heads = get("num_attention_heads", "n_head")
        if hidden is None or heads is None:
            raise ModelError("the model config gives no hidden size or head count, so the "
                             "probe's cost cannot be computed")
        head_dim = get("head_dim") or hidden // heads
        kv_heads = get("num_key_value_heads") or heads
        ffn = get("intermediate_size", "n_inner", "ffn_dim") or 4 * hidden
        model_type = str(config.get("model_type", ""))
        return cls(hidden, heads * head_dim, kv_heads * head_dim, ffn,
                   model_type in GATED_MODEL_TYPES, causal)

    def per_token(self, tokens: float) -> float:
        """FLOPs of one block for one token of a ``tokens``-token prompt."""
        context = (tokens + 1) / 2 if self.causal else tokens
        projections = 2 * self.hidden * (2 * self.query + 2 * self.key_value)
        scores = 4 * self.query * context
        feed_forward = (3 if self.gated else 2) * 2 * self.hidden * self.ffn
        return projections + scores + feed_forward


def forward_flops(shape: BlockShape, *, layers: int, tokens: Sequence[int]) -> float:
    """Mean FLOPs per prompt of running ``layers`` blocks over prompts of ``tokens``
    tokens each."""
    if not tokens:
        return 0.0
    total = sum(layers * t * shape.per_token(t) for t in tokens)
    return total / len(tokens)


def probe_flops(n_features: int, hidden_sizes: Sequence[int], *, pooled_tokens: float,
                outputs: int = 1) -> float:
    """FLOPs of pooling, the scaler and the classifier (``outputs`` units: 1 for a
    binary probe, K for K > 2 classes) on one prompt."""
    sizes = [n_features, *hidden_sizes, outputs]
    layers = sum(2 * a * b for a, b in pairwise(sizes))
    return pooled_tokens * n_features + 2 * n_features + layers


__all__ = ["GATED_MODEL_TYPES", "BlockShape", "forward_flops", "probe_flops"]
