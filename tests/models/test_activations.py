"""Extraction equals a plain Hugging Face forward with ``output_hidden_states=True``.

Tolerance: ``atol=1e-4`` plus ``rtol=1e-5``. Batching and padding change kernel shapes
and so the last float32 bits; SmolLM2's first-token "massive activations" reach ~8000,
where one float32 ulp is ~5e-4, so a pure 1e-4 absolute bound cannot hold there. Every
value below ~10 is held to 1e-4 absolute.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from probebench.errors import SiteError
from probebench.models import Site, extract
from probebench.models.activations import span_token_indices
from probebench.prompts import Prompt
from probebench.sites import SPAN_OF_POSITION

ATOL, RTOL = 1e-4, 1e-5
SENTENCE = "the old grey cat slowly walked across a quiet sunny garden toward home"


def _qa(question: str, think: str, answer: str) -> Prompt:
    text = f"{question} <think>{think}</think> {answer}"
    q = (0, len(question))
    t0 = text.index("<think>") + len("<think>")
    t = (t0, t0 + len(think))
    a0 = text.rindex(answer)
    return Prompt(text, spans={"question": q, "think": t, "answer": (a0, a0 + len(answer))})


PROMPTS = [
    _qa("Which tense is 'she walked'?", "The verb ends in -ed so it is past.", "Past simple."),
    _qa("Is 'they goes' correct?", "No.", "Incorrect."),
    _qa("¿Cuál es el pasado de 'ir'?", "Fui, fuiste, fue: es irregular y muy común.", "fue"),
    _qa("Hi?", "Short one.", "Yes"),
    _qa("What is the participle of 'write' in English grammar, please?",
        "Irregular verb: write, wrote, written.", "written"),
]


def _reference(lm: Any, prompt: Prompt, sites: list[Site]) -> dict[Site, np.ndarray]:
    """Pool one prompt from a plain HF forward (eager attention), batch of one, no padding."""
    enc = lm.tokenizer(prompt.text, return_tensors="pt", return_offsets_mapping=True)
    offsets = [(int(a), int(b)) for a, b in enc.pop("offset_mapping")[0]]
    with torch.inference_mode():
        out = lm.model(**enc, output_hidden_states=True, output_attentions=True)
    pooled = {}
    for site in sites:
        states = out.hidden_states[site.layer][0].float().numpy()
        pos = site.position
        if pos == "last_token":
            pooled[site] = states[-1]
        elif pos == "token_avg":
            pooled[site] = states.mean(0)
        elif pos == "attention_weighted":
            weights = out.attentions[site.layer - 1][0, :, -1, :].mean(0).float().numpy()
            pooled[site] = (weights[:, None] * states).sum(0) / weights.sum()
        else:
            tokens = span_token_indices(offsets, prompt.spans[SPAN_OF_POSITION[pos]])
            pooled[site] = states[tokens[(len(tokens) - 1) // 2] if pos == "mid_think"
                                  else tokens[-1]]
    return pooled


def _check_against_reference(lm: Any, layers: list[int]) -> None:
    positions = ["last_token", "token_avg", "end_question", "mid_think", "end_think",
                 "end_answer"]
    sites = [Site(layer, p) for layer in layers for p in positions]
    sites += [Site(layer, "attention_weighted") for layer in layers if layer > 0]
    result = extract(lm, PROMPTS, sites, cache=False, progress=False)
    for site in sites:
        assert result[site].shape == (len(PROMPTS), lm.identity.hidden_size)
        assert result[site].dtype == np.float32
    previous = lm.model.config._attn_implementation
    lm.model.set_attn_implementation("eager")
    try:
        for i, prompt in enumerate(PROMPTS):
            ref = _reference(lm, prompt, sites)
            for site in sites:
                np.testing.assert_allclose(result[site][i], ref[site], atol=ATOL, rtol=RTOL,
                                           err_msg=f"{site} prompt {i}")
    finally:
        lm.model.set_attn_implementation(previous)


def test_smollm_matches_hf_hidden_states(smollm: Any) -> None:
    _check_against_reference(smollm, [0, 1, 15, 29, 30])


def test_minilm_matches_hf_hidden_states(minilm: Any) -> None:
    _check_against_reference(minilm, [0, 3, 6])


def test_positions_differ_where_they_should(smollm: Any) -> None:
    """Guards the reference test against a pooler that ignores its position."""
    sites = [Site(12, p) for p in ("last_token", "token_avg", "end_question", "mid_think",
                                  "end_think")]
    result = extract(smollm, PROMPTS[:2], sites, cache=False, progress=False)
    vectors = [result[s][0] for s in sites]
    for a in range(len(vectors)):
        for b in range(a + 1, len(vectors)):
            assert not np.allclose(vectors[a], vectors[b])


@pytest.mark.parametrize("model_name", ["smollm", "minilm"])
def test_batch_of_one_equals_batch_of_32(model_name: str, request: pytest.FixtureRequest) -> None:
    lm = request.getfixturevalue(model_name)
    words = SENTENCE.split()
    prompts = [" ".join(words[: 3 + (i * 7) % 11]).capitalize() + f" number {i}."
               for i in range(40)]
    sites = [Site(2, "last_token"), Site(2, "token_avg"), Site(lm.identity.num_layers,
                                                               "last_token")]
    one = extract(lm, prompts, sites, cache=False, progress=False, max_batch_size=1)
    many = extract(lm, prompts, sites, cache=False, progress=False, max_batch_size=32)
    for site in sites:
        np.testing.assert_allclose(one[site], many[site], atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("layers", [[3, 12], [30]])
def test_a_shared_prefix_equals_reading_the_prefix_and_prompt_as_one_sequence(
        smollm: Any, layers: list[int]) -> None:
    """The prefix runs once (only through the blocks the sites read) and each row sees its
    key/value states as a broadcast view: every row still equals a plain HF forward over
    the prefix's tokens (with the tokenizer's special tokens) followed by the prompt's own
    tokens, pooled over the prompt's tokens only. Rows of different lengths share a batch."""
    prefix = "A fixed context. " * 12
    prompts = [Prompt(f"{SENTENCE[: 10 + 9 * i]}.") for i in range(5)]
    sites = [Site(layer, p) for layer in layers for p in ("last_token", "token_avg")]
    result = extract(smollm, prompts, sites, cache=False, progress=False, prefix=prefix)
    head = smollm.tokenizer(prefix, add_special_tokens=True)["input_ids"]
    for i, prompt in enumerate(prompts):
        own = smollm.tokenizer(prompt.text, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            out = smollm.model(input_ids=torch.tensor([head + own]), output_hidden_states=True)
        for site in sites:
            states = out.hidden_states[site.layer][0, len(head):].float().numpy()
            ref = states[-1] if site.position == "last_token" else states.mean(0)
            np.testing.assert_allclose(result[site][i], ref, atol=ATOL, rtol=RTOL,
                                       err_msg=f"{site} prompt {i}")


def test_forward_stops_after_deepest_layer_and_skips_lm_head(smollm: Any) -> None:
    calls = {"block20": 0, "block15": 0, "block14": 0, "lm_head": 0}

    def counter(name: str) -> Any:
        def hook(*_: Any) -> None:
            calls[name] += 1
        return hook

    handles = [smollm.layers[20].register_forward_hook(counter("block20")),
               smollm.layers[15].register_forward_hook(counter("block15")),
               smollm.layers[14].register_forward_hook(counter("block14")),
               smollm.model.lm_head.register_forward_hook(counter("lm_head"))]
    try:
        extract(smollm, PROMPTS, [Site(15, "last_token"), Site(4, "token_avg")], cache=False,
                progress=False)
        # layer 15 is block 14's output: block 14 runs, block 15 and later never do
        assert calls["block14"] > 0
        assert calls["block15"] == 0 and calls["block20"] == 0
        extract(smollm, PROMPTS, [Site(30, "last_token")], cache=False, progress=False)
        assert calls["block20"] > 0
        assert calls["lm_head"] == 0
    finally:
        for handle in handles:
            handle.remove()


def test_missing_span_is_an_error_naming_the_prompt(smollm: Any) -> None:
    prompts = [PROMPTS[0], Prompt("No spans here.", id="plain-7")]
    with pytest.raises(SiteError, match=r"prompt 'plain-7' \(#1\) has no 'think' span"):
        extract(smollm, prompts, [Site(3, "mid_think")], cache=False, progress=False)


def test_span_covering_no_token_is_an_error(minilm: Any) -> None:
    # BERT tokens carry no spaces, so a span over a space covers no token
    prompt = Prompt("two words", spans={"answer": (3, 4)}, id="gap")
    with pytest.raises(SiteError, match=r"prompt 'gap': span 'answer' \[3, 4\] covers no token"):
        extract(minilm, [prompt], [Site(1, "end_answer")], cache=False, progress=False)


def test_layer_out_of_range_is_refused(minilm: Any) -> None:
    with pytest.raises(SiteError, match=r"layer 7 is out of range; this model has layers 0\.\.6"):
        extract(minilm, ["hello"], [Site(7, "last_token")], cache=False, progress=False)


def test_too_long_prompt_is_refused_not_truncated(minilm: Any) -> None:
    with pytest.raises(SiteError, match="reads at most 512"):
        extract(minilm, ["word " * 600], [Site(1, "last_token")], cache=False, progress=False)
