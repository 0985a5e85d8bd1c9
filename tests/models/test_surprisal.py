from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from probebench.errors import InputError, SiteError
from probebench.models import region_surprisal, token_surprisals
from probebench.models.surprisal import TokenSurprisal

TEXTS = ["The keys to the cabinet are on the table.",
         "The keys to the cabinet is on the table.",
         "Hi.",
         "Yesterday, the author that the critics praised wrote a new book."]


def _direct_bits(lm: Any, ids: list[int]) -> np.ndarray:
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
    logp = torch.log_softmax(logits.double(), dim=-1)
    return np.array([-logp[i - 1, ids[i]].item() / math.log(2) for i in range(1, len(ids))])


def test_surprisal_equals_direct_log_softmax(smollm: Any) -> None:
    results = token_surprisals(smollm, TEXTS, progress=False)
    for text, ts in zip(TEXTS, results, strict=True):
        ids = smollm.tokenizer(text)["input_ids"]
        assert ts.token_ids.tolist() == ids
        # no BOS: the first token is not scored and reported as 0
        assert not ts.scored[0] and ts.scored[1:].all()
        assert ts.surprisal[0] == 0.0
        np.testing.assert_allclose(ts.surprisal[1:], _direct_bits(smollm, ids), atol=1e-4)
        # offsets cover the text exactly, in order
        assert "".join(text[a:b] for a, b in ts.offsets) == text


def test_prepend_bos_scores_the_first_token(smollm: Any) -> None:
    (plain,) = token_surprisals(smollm, [TEXTS[0]], progress=False)
    (bos,) = token_surprisals(smollm, [TEXTS[0]], prepend_bos=True, progress=False)
    assert bos.token_ids.tolist() == plain.token_ids.tolist()  # BOS is context, not reported
    assert bos.scored.all()
    # read after the document start: <|endoftext|>, not the chat-turn marker BOS
    ids = [smollm.tokenizer.convert_tokens_to_ids("<|endoftext|>"), *plain.token_ids.tolist()]
    np.testing.assert_allclose(bos.surprisal, _direct_bits(smollm, ids), atol=1e-4)
    assert bos.surprisal[0] > 0


def test_grammatical_sentence_is_less_surprising(smollm: Any) -> None:
    good, bad = token_surprisals(smollm, TEXTS[:2], progress=False)
    assert good.total < bad.total


def test_surprisal_needs_a_causal_model(minilm: Any) -> None:
    with pytest.raises(SiteError, match="needs a causal language model"):
        token_surprisals(minilm, ["hello"], progress=False)


def _synthetic() -> TokenSurprisal:
    # "The cat sat" with byte-level tokens: "The", " cat", " sat"
    return TokenSurprisal(text="The cat sat", token_ids=np.array([1, 2, 3]),
                          offsets=np.array([[0, 3], [3, 7], [7, 11]]),
                          surprisal=np.array([0.0, 4.0, 2.0]),
                          scored=np.array([False, True, True]))


def test_region_metrics_on_known_values() -> None:
    ts = _synthetic()
    # regions joined by single spaces: the space belongs to the following region
    regions = [(0, 3), (3, 11)]
    assert region_surprisal(ts, regions, "sum").tolist() == [0.0, 6.0]
    assert region_surprisal(ts, regions, "mean").tolist() == [0.0, 3.0]
    assert region_surprisal(ts, regions, "median").tolist() == [0.0, 3.0]
    assert region_surprisal(ts, regions, "range").tolist() == [0.0, 2.0]
    assert region_surprisal(ts, regions, "max").tolist() == [0.0, 4.0]
    assert region_surprisal(ts, regions, "min").tolist() == [0.0, 2.0]


def test_empty_region_and_unknown_metric() -> None:
    ts = _synthetic()
    out = region_surprisal(ts, [(11, 11), (0, 11)], "mean")
    assert math.isnan(out[0]) and out[1] == 2.0
    assert region_surprisal(ts, [(11, 11)], "sum").tolist() == [0.0]
    with pytest.raises(InputError, match="region metric must be one of"):
        region_surprisal(ts, [(0, 3)], "mode")


def test_regions_on_a_real_model_add_up(smollm: Any) -> None:
    text = "The keys to the cabinet are on the table."
    (ts,) = token_surprisals(smollm, [text], progress=False)
    cut = text.index(" are")
    regions = [(0, cut), (cut, cut + 4), (cut + 4, len(text))]
    sums = region_surprisal(ts, regions, "sum")
    assert sums.sum() == pytest.approx(ts.total)
    assert sums[1] == pytest.approx(ts.surprisal[ts.token_ids.tolist().index(
        smollm.tokenizer(" are")["input_ids"][0])])
