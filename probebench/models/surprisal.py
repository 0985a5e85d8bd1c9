"""Per-token surprisal in bits, and its aggregation onto character regions.

Surprisal of token ``t_i`` is ``-log2 P(t_i | t_<i)`` under a causal LM.

BOS handling. The first token of a text has no context and cannot be scored. Two
protocols, each the published one of its data:

* ``prepend_bos=False`` (the default; SyntaxGym's reference protocol, GPT-2 numbers of
  Hu et al. 2020): the text's own tokens only. The first token is reported with
  ``scored=False`` and surprisal 0.0, so region sums match the published numbers.
* ``prepend_bos=True`` (BLiMP's protocol, as lm-evaluation-harness runs it): the text is
  read after the model's document start (``probebench.models.start_token``: its BOS
  token, else its EOS token, except that a chat-turn marker gives way to the document
  separator the model was pre-trained with; ``start_token`` names another). That token
  is context, never reported, and every token of the text, the first included, is
  scored.
  ``sentence_log_probs`` gives the resulting ``log2 P(text)`` that minimal pairs compare.

A tokenizer that itself adds a BOS token (Llama-2 style) gets it scored as context, never
reported, under both protocols: all reported tokens then have ``scored=True`` (and
``prepend_bos=True`` does not add a second one).

Memory. A pass that reads the model's own log-probabilities (``token_surprisals`` here,
``probebench.evaluation.lm_scores``'s readouts) goes through ``target_log_probs``: the
transformer runs once per batch, a forward pre-hook on the LM head takes the hidden
states of the positions read (padding left out), and the head then runs on chunks of at
most ``chunk_rows`` positions (``LOGIT_CHUNK`` logits, 32 MiB in float32), each
normalised with ``log_softmax`` and reduced at once to the target tokens' values. So
``(batch, tokens, vocabulary)`` logits are never made: for SmolLM2 (vocabulary 49,152)
a 4,096-token batch held 0.8 GB of float32 logits and as much again for their
``log_softmax``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probebench.errors import InputError, ModelError, SiteError
from probebench.models.activations import (
    BATCH_TOKENS,
    length_batches,
    pad_batch,
    pad_id_of,
    tokenize,
)
from probebench.models.loading import LoadedModel
from probebench.models.start_token import start_token_id
from probebench.prompts import Prompt, as_prompts

_LN2 = math.log(2.0)
#: the version of the scoring rule (surprisal in bits, the BOS handling above, the region
#: rule below): part of the cache key of cached scores, bumped whenever a number changes.
#: 2: a chat-turn marker as BOS gives way to the pre-training document separator
SCORING_VERSION = 2

#: the most logits (positions x vocabulary) one call of the LM head makes (32 MiB of
#: float32; SmolLM2: 170 positions); ``chunk_rows`` turns it into positions
LOGIT_CHUNK = 1 << 22
#: positions of the first chunk whose logits are read both ways (``target_log_probs``)
_CHECK_ROWS = 8


@dataclass(frozen=True)
class TokenSurprisal:
    """Surprisal of every token of one text (special tokens left out)."""

    text: str
    token_ids: np.ndarray      #: (n,) int64
    offsets: np.ndarray        #: (n, 2) character [start, end) of each token in text
    surprisal: np.ndarray      #: (n,) float64, bits; 0.0 where not scored
    scored: np.ndarray         #: (n,) bool; False only for an unscorable first token

    @property
    def total(self) -> float:
        return float(self.surprisal.sum())


def token_surprisals(lm: LoadedModel, texts: Sequence[str | Prompt], *,
                     prepend_bos: bool = False, start_token: str | None = None,
                     batch_tokens: int = BATCH_TOKENS, max_batch_size: int = 32,
                     progress: bool = True, desc: str = "surprisal") -> list[TokenSurprisal]:
    """Surprisal (bits) of every token of every text under a causal LM, in input order.

    ``prepend_bos`` reads each text after ``start_token`` (default: the model's document
    start, ``start_token.start_token_id``) and scores every token of the text; see the
    module docstring.
    ``desc`` names the stage on the progress bar.
    """
    import torch
    from tqdm.auto import tqdm

    if not lm.is_causal:
        raise SiteError(f"surprisal needs a causal language model; {lm.identity.name!r} is an "
                        f"{lm.identity.architecture} model")
    prompts = as_prompts(texts)
    tok = tokenize(lm, prompts, prepend_bos=prepend_bos, start_token=start_token)
    pad_id = pad_id_of(lm)
    results: list[TokenSurprisal | None] = [None] * len(prompts)
    batches = length_batches(tok.lengths, batch_tokens=batch_tokens,
                             max_batch_size=max_batch_size)
    with torch.inference_mode(), tqdm(total=len(prompts), disable=not progress,
                                      desc=desc, unit="text", leave=False) as bar:
        for rows in batches:
            ids, mask, lengths = pad_batch(tok, rows, pad_id)
            # position j of a row predicts its token j + 1; padding predicts nothing
            read = mask[:, 1:].astype(bool)
            at_row, at_col = np.nonzero(read)  # row-major: each row's positions in order
            picked = target_log_probs(lm, ids, mask, at_row, at_col,
                                      ids[:, 1:][read][:, None])
            bits = (-picked[:, 0] / _LN2).double().cpu().numpy()
            starts = np.concatenate([[0], np.cumsum(lengths - 1)])
            for r, i in enumerate(rows):
                n = int(lengths[r])
                full = np.concatenate([[0.0], bits[starts[r]: starts[r + 1]]])
                scored = np.ones(n, dtype=bool)
                scored[0] = False
                offsets = np.asarray(tok.offsets[i], dtype=np.int64).reshape(n, 2)
                # Special tokens (BOS, [CLS], ...) have empty offsets: context, not text.
                keep = offsets[:, 1] > offsets[:, 0]
                results[i] = TokenSurprisal(
                    text=prompts[i].text,
                    token_ids=np.asarray(tok.ids[i], dtype=np.int64)[keep],
                    offsets=offsets[keep],
                    surprisal=full[keep],
                    scored=scored[keep],
                )
            bar.update(len(rows))
    return [r for r in results if r is not None]


def chunk_rows(lm: LoadedModel) -> int:
    """How many positions one call of the LM head reads: ``LOGIT_CHUNK`` logits' worth, at
    least one."""
    return max(1, LOGIT_CHUNK // _vocabulary(lm))


def target_log_probs(lm: LoadedModel, ids: np.ndarray, mask: np.ndarray, rows: np.ndarray,
                     cols: np.ndarray, targets: np.ndarray) -> Any:
    """Natural-log probabilities of chosen next tokens at chosen positions of one batch,
    from one forward pass, without ``(batch, tokens, vocabulary)`` logits.

    ``ids`` and ``mask`` are a right-padded ``(B, T)`` batch; the ``N`` positions read are
    ``(rows[k], cols[k])`` and ``targets[k]`` holds the ``K`` token ids read there (an
    ``(N, K)`` int array). Returns a float32 torch tensor ``(N, K)``: ``log P(targets[k, c]
    | ids[rows[k], :cols[k] + 1])``.

    A forward pre-hook on the LM head (the model's output embeddings) keeps the hidden
    states at the ``N`` positions and hands the head the first ``chunk_rows`` of them, so
    the model's own forward makes those logits (softcapping or scaling of logits
    included). The head then reads the other chunks directly, followed by the logit
    transform the model's config names (``_logit_transform``); the first ``_CHECK_ROWS``
    positions, read both ways, check that transform against the model's own forward.
    """
    import torch

    head = lm.model.get_output_embeddings()
    if head is None:
        raise ModelError(f"model {lm.identity.name!r} has no output embeddings (LM head)")
    n = len(rows)
    chunk = chunk_rows(lm)
    device = lm.device
    where_row = torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(device)
    where_col = torch.from_numpy(np.asarray(cols, dtype=np.int64)).to(device)
    given = np.asarray(targets, dtype=np.int64)
    if n == 0:  # no position read (e.g. one-token texts without a BOS): an empty (0, K)
        width = given.shape[-1] if given.ndim == 2 else 1
        return torch.empty((0, width), dtype=torch.float32, device=device)
    wanted = torch.from_numpy(given.reshape(n, -1)).to(device)
    out = torch.empty(wanted.shape, dtype=torch.float32, device=device)
    shape = tuple(ids.shape)
    kept: list[Any] = []

    def keep(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        hidden = args[0]
        if tuple(hidden.shape[:2]) != shape:
            raise ModelError(f"model {lm.identity.name!r}: its LM head reads "
                             f"{tuple(hidden.shape[:2])} positions, expected {shape} (every "
                             "position of the batch)")
        kept.append(hidden[where_row, where_col])
        return (kept[0][None, :chunk], *args[1:])

    hook = head.register_forward_pre_hook(keep)
    try:
        first = lm.model(input_ids=torch.from_numpy(ids).to(device),
                         attention_mask=torch.from_numpy(mask).to(device),
                         use_cache=False).logits[0]
    finally:
        hook.remove()
    out[:chunk] = _picked(first, wanted[:chunk])
    if n > chunk:
        hidden = kept[0]
        transform = _logit_transform(lm)
        # a few rows suffice to check the transform (it acts position by position);
        # the whole first chunk read twice held ~5 chunks of temporaries at once
        rows_checked = min(chunk, _CHECK_ROWS)
        own = transform(head(hidden[None, :rows_checked]))[0]
        if not torch.allclose(own.float(), first[:rows_checked].float(), rtol=1e-4,
                              atol=1e-4):
            raise ModelError(
                f"model {lm.identity.name!r}: its forward transforms the LM head's logits in a "
                "way probebench does not know (known: final_logit_softcapping, logit_scale, "
                "logits_scaling in its config); its log-probabilities cannot be read in "
                f"chunks of {chunk} positions")
        for start in range(chunk, n, chunk):
            logits = transform(head(hidden[None, start:start + chunk]))[0]
            out[start:start + chunk] = _picked(logits, wanted[start:start + chunk])
    return out


def _picked(logits: Any, targets: Any) -> Any:
    """``log_softmax`` of ``(C, V)`` logits in float32, read at ``(C, K)`` target ids."""
    import torch

    return torch.log_softmax(logits.float(), dim=-1).gather(-1, targets)


def _vocabulary(lm: LoadedModel) -> int:
    head = lm.model.get_output_embeddings()
    weight = getattr(head, "weight", None)
    if weight is not None:
        return int(weight.shape[0])
    return int(lm.model.config.get_text_config().vocab_size)


def _logit_transform(lm: LoadedModel) -> Callable[[Any], Any]:
    """What the model's forward does to its LM head's output, from its config: Gemma's
    ``final_logit_softcapping`` (``cap * tanh(logits / cap)``), Cohere's ``logit_scale``
    (times) and Granite's ``logits_scaling`` (divided by); the identity for the rest."""
    import torch

    config = lm.model.config.get_text_config()
    cap = getattr(config, "final_logit_softcapping", None)
    scale = getattr(config, "logit_scale", None)
    divisor = getattr(config, "logits_scaling", None)

    def transform(logits: Any) -> Any:
        if isinstance(scale, (int, float)) and not isinstance(scale, bool):
            logits = logits * scale
        if isinstance(divisor, (int, float)) and not isinstance(divisor, bool):
            logits = logits / divisor
        if isinstance(cap, (int, float)) and not isinstance(cap, bool) and cap:
            logits = torch.tanh(logits / cap) * cap
        return logits

    return transform


def sentence_log_probs(lm: LoadedModel, texts: Sequence[str | Prompt], *,
                       start_token: str | None = None, batch_tokens: int = BATCH_TOKENS,
                       max_batch_size: int = 32, progress: bool = True,
                       desc: str = "surprisal") -> np.ndarray:
    """``log2 P(text)`` of each text: minus its total surprisal in bits, every token of the
    text scored after the model's document start (its BOS, else EOS, unless that is a
    chat-turn marker: ``probebench.models.start_token``; ``start_token`` names another),
    as the BLiMP paper and lm-evaluation-harness score a sentence.

    Returns a float64 array of shape ``(len(texts),)``, in input order, each value <= 0.
    A minimal pair is correct when its good sentence has the higher value; unlike the
    no-BOS protocol, a pair that differs in its first token is compared on that token too.
    """
    results = token_surprisals(lm, texts, prepend_bos=True, start_token=start_token,
                               batch_tokens=batch_tokens, max_batch_size=max_batch_size,
                               progress=progress, desc=desc)
    return np.array([-r.total for r in results], dtype=np.float64)


def start_token_name(lm: LoadedModel, start_token: str | None = None) -> str:
    """The token ``sentence_log_probs`` reads texts after, as the tokenizer spells it."""
    return str(lm.tokenizer.convert_ids_to_tokens(start_token_id(lm, start_token)))


def _range(values: np.ndarray) -> float:
    return float(np.ptp(values))


#: Aggregations of a region's token surprisals (SyntaxGym's metric names).
REGION_METRICS: dict[str, Callable[[np.ndarray], float]] = {
    "sum": lambda v: float(np.sum(v)),
    "mean": lambda v: float(np.mean(v)),
    "median": lambda v: float(np.median(v)),
    "range": _range,
    "max": lambda v: float(np.max(v)),
    "min": lambda v: float(np.min(v)),
}


def region_token_indices(ts: TokenSurprisal, region: tuple[int, int]) -> np.ndarray:
    """The tokens of a region: those whose last character lies in ``[start, end)``.

    Byte-level BPE tokens carry their leading space (" cat"); regions joined by single
    spaces give the space to the following region (SyntaxGym's convention), and a
    token that straddles two regions counts for the one holding its last character.
    """
    start, end = region
    last = ts.offsets[:, 1] - 1
    return np.flatnonzero((last >= start) & (last < end))


def region_surprisal(ts: TokenSurprisal, regions: Sequence[tuple[int, int]],
                     metric: str = "sum") -> np.ndarray:
    """Aggregate token surprisals onto character regions.

    Returns one value per region. An empty region (no token) gives 0.0 for ``sum`` and
    NaN for the other metrics, which have no value on nothing.
    """
    if metric not in REGION_METRICS:
        raise InputError(f"region metric must be one of {', '.join(REGION_METRICS)}; "
                         f"found {metric!r}")
    fn = REGION_METRICS[metric]
    out = np.empty(len(regions), dtype=np.float64)
    for k, region in enumerate(regions):
        idx = region_token_indices(ts, region)
        if idx.size == 0:
            out[k] = 0.0 if metric == "sum" else math.nan
        else:
            out[k] = fn(ts.surprisal[idx])
    return out
