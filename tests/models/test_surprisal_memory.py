"""The model's own log-probabilities are read in chunks of positions, never as
``(batch, tokens, vocabulary)`` logits, and equal a plain full-logits ``log_softmax``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from probebench.errors import ModelError
from probebench.evaluation.lm_scores import answer_log_odds
from probebench.models import surprisal
from probebench.models.activations import pad_id_of
from probebench.models.surprisal import chunk_rows, target_log_probs, token_surprisals
from probebench.tasks.spec import ReadoutSpec

# lengths 3 and 14 tokens: a batch of them has padding rows, and 5-position chunks end
# inside rows
TEXTS = ["Hi there.",
         "The keys to the cabinet are on the table by the old door.",
         "Yesterday, the author that the critics praised wrote a new book."]
CHUNK = 5


@pytest.fixture
def small_chunks(smollm: Any, monkeypatch: pytest.MonkeyPatch) -> int:
    vocab = smollm.model.get_output_embeddings().weight.shape[0]
    monkeypatch.setattr(surprisal, "LOGIT_CHUNK", CHUNK * vocab)
    assert chunk_rows(smollm) == CHUNK
    return CHUNK


def _batch(lm: Any, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    rows = [lm.tokenizer(t)["input_ids"] for t in texts]
    ids = np.full((len(rows), max(map(len, rows))), pad_id_of(lm), dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, row in enumerate(rows):
        ids[r, :len(row)] = row
        mask[r, :len(row)] = 1
    return ids, mask


def _plain(lm: Any, ids: np.ndarray, mask: np.ndarray) -> torch.Tensor:
    """Every position's full-vocabulary log_softmax, as the passes computed it before."""
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                          use_cache=False).logits
    return torch.log_softmax(logits.float(), dim=-1)


@pytest.fixture(scope="module")
def plain_batch(smollm: Any) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
    ids, mask = _batch(smollm, TEXTS)
    return ids, mask, _plain(smollm, ids, mask)


def test_chunked_log_probs_equal_a_full_log_softmax_across_padding_and_chunks(
        smollm: Any, small_chunks: int,
        plain_batch: tuple[np.ndarray, np.ndarray, torch.Tensor]) -> None:
    ids, mask, full = plain_batch
    assert (mask == 0).any()  # padding rows
    rows, cols = np.nonzero(mask[:, 1:])
    assert len(rows) > 3 * small_chunks and len(rows) % small_chunks != 0
    # two targets a position: the next token and a fixed other one
    targets = np.stack([ids[:, 1:][rows, cols], np.full(len(rows), 1000)], axis=1)
    with torch.inference_mode():
        got = target_log_probs(smollm, ids, mask, rows, cols, targets).numpy()
    want = full[torch.from_numpy(rows), torch.from_numpy(cols)].gather(
        -1, torch.from_numpy(targets)).numpy()
    assert got.shape == (len(rows), 2)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_token_surprisals_read_a_chunk_at_a_time_and_equal_the_plain_pass(
        smollm: Any, small_chunks: int,
        plain_batch: tuple[np.ndarray, np.ndarray, torch.Tensor]) -> None:
    head = smollm.model.get_output_embeddings()
    seen: list[tuple[int, ...]] = []
    handle = head.register_forward_hook(
        lambda module, args, output: seen.append(tuple(output.shape)))
    try:
        results = token_surprisals(smollm, TEXTS, progress=False)
    finally:
        handle.remove()
    ids, mask, full = plain_batch
    for r, ts in enumerate(results):
        n = int(mask[r].sum())
        nats = full[r, torch.arange(n - 1), torch.from_numpy(ids[r, 1:n])].numpy()
        assert not ts.scored[0] and ts.surprisal[0] == 0.0
        np.testing.assert_allclose(ts.surprisal[1:], -nats / math.log(2), rtol=0, atol=1e-5)
    scored = int(sum(ts.scored.sum() for ts in results))
    assert scored > 3 * small_chunks
    # every logits tensor the head made holds at most one chunk of positions
    assert all(math.prod(shape[:-1]) <= small_chunks for shape in seen)
    # every scored position read once, plus the first chunk once more as the check
    assert sum(math.prod(shape[:-1]) for shape in seen) == scored + small_chunks


def test_answer_log_odds_in_small_chunks_equal_the_plain_pass(smollm: Any,
                                                              small_chunks: int) -> None:
    readout = ReadoutSpec(kind="answer", suffix=" This is", positive=" quite true",
                          negative=" false")
    texts = TEXTS[:2]
    got = answer_log_odds(smollm, texts, readout, progress=False)
    start = smollm.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    want = []
    for text in texts:
        context = [start, *smollm.tokenizer(text + readout.suffix)["input_ids"]]
        total = []
        for answer in (readout.positive, readout.negative):
            tokens = smollm.tokenizer(answer, add_special_tokens=False)["input_ids"]
            ids = np.array([context + tokens], dtype=np.int64)
            full = _plain(smollm, ids, np.ones_like(ids))[0]
            total.append(sum(float(full[len(context) - 1 + k, t])
                             for k, t in enumerate(tokens)))
        want.append(total[0] - total[1])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


def test_a_logit_transform_the_forward_does_not_make_is_a_named_error(
        smollm: Any, small_chunks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the config names a softcap that this (Llama) forward never applies: the chunks the
    # head reads alone would disagree with the model's own first chunk
    monkeypatch.setattr(smollm.model.config, "final_logit_softcapping", 5.0, raising=False)
    with pytest.raises(ModelError, match="transforms the LM head's logits"):
        token_surprisals(smollm, TEXTS[1:2], progress=False)
