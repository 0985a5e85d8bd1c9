"""The token a text is read after when every one of its tokens must be scored (BLiMP's
protocol for minimal pairs: the first word is scored too).

The rule, first match wins:

1. the token the caller names (``--start-token``, ``start_token=``);
2. the catalog's document separator for the model (``builtin.DOCUMENT_SEPARATORS``, a
   built-in alias or a hub id; SmolLM2-Instruct: ``<|endoftext|>``);
3. the tokenizer's BOS token, else its EOS token (lm-evaluation-harness's
   ``prefix_token_id``), **unless** that token is a chat-turn marker: it appears
   literally in the tokenizer's chat template (SmolLM2-Instruct's BOS ``<|im_start|>``,
   Qwen2.5-Instruct's EOS ``<|im_end|>``). A sentence read after a turn marker is read
   as the start of a chat turn, its first word as a role name. Then the first of
   ``SEPARATOR_SPELLINGS`` that is a special token of the tokenizer and does not appear
   in its chat template is used: the document separator such models were pre-trained
   with. When there is none, the BOS/EOS token stays.

A template that writes ``{{ bos_token }}`` rather than the token itself does not make
the BOS a turn marker (Llama-3's ``<|begin_of_text|>`` starts a document as well as a
chat).
"""

from __future__ import annotations

from typing import Any

from probebench.errors import SiteError
from probebench.models.builtin import document_separator
from probebench.models.loading import LoadedModel

#: spellings of the document separator in common pre-training setups, in the order
#: tried (GPT-2, SmolLM, StarCoder and Qwen: ``<|endoftext|>``; Llama-3:
#: ``<|end_of_text|>``; Llama-2 and Mistral: ``</s>``)
SEPARATOR_SPELLINGS = ("<|endoftext|>", "<|end_of_text|>", "</s>")


def _vocab_id(lm: LoadedModel, token: str, what: str) -> int:
    tok = lm.tokenizer
    found = tok.convert_tokens_to_ids(token)
    if not isinstance(found, int) or (found == tok.unk_token_id and token != tok.unk_token):
        raise SiteError(f"{what} {token!r} is not one token of model "
                        f"{lm.identity.name!r}'s vocabulary")
    return found


def chat_template_text(tokenizer: Any) -> str:
    """Every chat template of a tokenizer, as one text ("" when it has none)."""
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):
        return "\n".join(str(v) for v in template.values())
    if isinstance(template, list):  # [{"name": ..., "template": ...}, ...]
        return "\n".join(str(t.get("template", "")) for t in template if isinstance(t, dict))
    return template if isinstance(template, str) else ""


def _special_tokens(tokenizer: Any) -> set[str]:
    specials = set(getattr(tokenizer, "all_special_tokens", ()) or ())
    added = getattr(tokenizer, "get_added_vocab", None)
    if callable(added):
        specials |= set(added())
    return specials


def is_chat_marker(tokenizer: Any, token: str) -> bool:
    """Whether ``token`` appears literally in the tokenizer's chat template."""
    return bool(token) and token in chat_template_text(tokenizer)


def start_token_id(lm: LoadedModel, token: str | None = None) -> int:
    """The token a text is read after when it must be scored from its first token
    (the rule in the module docstring; ``token`` overrides it)."""
    if token is not None:
        return _vocab_id(lm, token, "start token")
    ident = lm.identity
    if ident.source in ("embedded", "hub"):
        named = document_separator(ident.name)
        if named is not None:
            return _vocab_id(lm, named, "the catalog's document separator")
    tok = lm.tokenizer
    default = next((int(c) for c in (tok.bos_token_id, tok.eos_token_id) if c is not None),
                   None)
    if default is None:
        raise SiteError(f"model {ident.name!r} has neither a BOS nor an EOS token to read "
                        "texts after; name one with start_token")
    if not is_chat_marker(tok, str(tok.convert_ids_to_tokens(default))):
        return default
    template = chat_template_text(tok)
    specials = _special_tokens(tok)
    for spelling in SEPARATOR_SPELLINGS:
        if spelling in specials and spelling not in template:
            return _vocab_id(lm, spelling, "document separator")
    return default


__all__ = ["SEPARATOR_SPELLINGS", "chat_template_text", "is_chat_marker", "start_token_id"]
