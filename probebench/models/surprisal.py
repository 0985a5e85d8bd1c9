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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from probebench.errors import InputError, SiteError
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
            ids_t = torch.from_numpy(ids).to(lm.device)
            logits = lm.model(input_ids=ids_t, attention_mask=torch.from_numpy(mask)
                              .to(lm.device), use_cache=False).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            picked = logprobs.gather(-1, ids_t[:, 1:, None])[..., 0]
            bits = (-picked / _LN2).double().cpu().numpy()
            for r, i in enumerate(rows):
                n = int(lengths[r])
                full = np.concatenate([[0.0], bits[r, : n - 1]])
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
