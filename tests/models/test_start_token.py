"""The start token of minimal-pair scoring: the model's document start, not a chat-turn
marker (``probebench.models.start_token``), on the real SmolLM2-Instruct tokenizer."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from probebench.errors import SiteError
from probebench.models.builtin import DOCUMENT_SEPARATORS, document_separator
from probebench.models.cache import ActivationCache
from probebench.models.loading import LoadedModel
from probebench.models.start_token import is_chat_marker, start_token_id
from probebench.models.surprisal import SCORING_VERSION, sentence_log_probs, start_token_name

SENTENCE = "Only Bill would ever complain."


def _as_local(lm: Any, *, chat_template: str | bool | None = False) -> LoadedModel:
    """``lm`` as if loaded from a local folder (the catalog does not know it), optionally
    with another chat template (``False`` keeps the tokenizer's own)."""
    ident = dataclasses.replace(lm.identity, name="/models/some-chat-model", source="local")
    tokenizer = lm.tokenizer
    if chat_template is not False:
        tokenizer = copy.deepcopy(lm.tokenizer)
        tokenizer.chat_template = chat_template
    return LoadedModel(resolved=dataclasses.replace(lm.resolved, identity=ident),
                       model=lm.model, tokenizer=tokenizer)


def test_smollm2_instruct_reads_pairs_after_endoftext(smollm: Any) -> None:
    tok = smollm.tokenizer
    # the tokenizer's BOS is the chat-turn marker its chat template opens every turn with
    assert tok.bos_token == "<|im_start|>" and is_chat_marker(tok, tok.bos_token)
    assert not is_chat_marker(tok, "<|endoftext|>")
    assert document_separator("smollm2-135m") == "<|endoftext|>"
    assert start_token_id(smollm) == tok.convert_tokens_to_ids("<|endoftext|>") == 0
    assert start_token_name(smollm) == "<|endoftext|>"


def test_an_explicit_start_token_wins(smollm: Any) -> None:
    tok = smollm.tokenizer
    assert start_token_id(smollm, "<|im_start|>") == tok.bos_token_id
    assert start_token_name(smollm, "<|im_start|>") == "<|im_start|>"
    assert start_token_id(_as_local(smollm), "<|im_end|>") == tok.eos_token_id
    with pytest.raises(SiteError, match="not one token"):
        start_token_id(smollm, "<|not a token|>")
    default, endoftext, im_start = (
        sentence_log_probs(smollm, [SENTENCE], start_token=token, progress=False)[0]
        for token in (None, "<|endoftext|>", "<|im_start|>"))
    assert default == endoftext != im_start


def test_the_generic_rule_finds_the_separator_without_the_catalog(smollm: Any) -> None:
    tok = smollm.tokenizer
    local = _as_local(smollm)
    assert document_separator(local.identity.name) is None
    assert start_token_id(local) == tok.convert_tokens_to_ids("<|endoftext|>")
    # a BOS that no chat template uses is a document start: it stays
    assert start_token_id(_as_local(smollm, chat_template=None)) == tok.bos_token_id
    plain = "{% for m in messages %}{{ bos_token }}{{ m['content'] }}{% endfor %}"
    assert start_token_id(_as_local(smollm, chat_template=plain)) == tok.bos_token_id
    # a template that uses every separator spelling too: nothing better, BOS stays
    everything = "<|im_start|><|endoftext|><|end_of_text|></s>"
    assert start_token_id(_as_local(smollm, chat_template=everything)) == tok.bos_token_id


def test_the_catalog_names_tokens_of_the_tokenizers_it_covers(smollm: Any) -> None:
    ours = smollm.tokenizer
    for hub_id, token in DOCUMENT_SEPARATORS.items():
        assert hub_id.startswith("HuggingFaceTB/SmolLM2-") and hub_id.endswith("-Instruct")
        assert ours.convert_tokens_to_ids(token) == 0  # the shared SmolLM2 vocabulary


def test_cached_scores_of_the_old_rule_are_not_reused(smollm: Any) -> None:
    store = ActivationCache()
    ident, device = smollm.identity, smollm.device

    def key(rule: int) -> str:
        scoring = {"kind": "sentence_log_probs", "rule": rule, "start_token": None,
                   "texts_sha256": "0" * 64}
        return store.scores_key(ident, device, scoring)

    assert SCORING_VERSION >= 2  # 2: the chat-turn marker gives way to <|endoftext|>
    assert key(SCORING_VERSION) != key(1)
