"""Sites: where a probe reads a model, ``(layer, position)``.

Vocabulary shared by every layer of probebench (artifacts, tasks, models, registry),
so it lives here, beside no torch code.

Layer numbering follows ``output_hidden_states`` of Hugging Face transformers: layer 0
is the embeddings output (the input of the first block), layer ``i`` is the output of
block ``i``, and layer ``num_layers`` is what HF returns last (for Llama-style models
that is after the final norm; for BERT it is the last block's output).

Positions (how a site turns a prompt's ``T`` token states into one vector):

==================== =====================================================================
``last_token``       the last token the tokenizer produced (special tokens included, so
                     ``[SEP]`` for BERT)
``token_avg``        the mean over all the prompt's tokens (special tokens included)
``end_question``     the last token overlapping the prompt's ``question`` span
``mid_think``        the middle token (index ``(k-1)//2`` of ``k``) overlapping ``think``
``end_think``        the last token overlapping the ``think`` span
``end_answer``       the last token overlapping the ``answer`` span
``attention_weighted`` the states weighted by the attention of the last token in block
                     ``layer`` (the block whose output the site reads), averaged over
                     heads; needs ``layer >= 1``
==================== =====================================================================

A prompt without the span a position needs is an error that names the prompt; there
is no fallback to another position.

TransformerLens names the same residual stream by hooks, with blocks counted from 0:
``blocks.b.hook_resid_pre`` (the input of block ``b``) is layer ``b`` here,
``blocks.b.hook_resid_post`` (its output) is layer ``b + 1``, and
``blocks.b.hook_resid_mid`` (between its attention and its MLP) has no Hugging Face
hidden state at all. A hook name given where a site or layer is expected is answered
with the equivalent (``transformerlens_hint``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from probebench.errors import SiteError
from probebench.prompts import Prompt

#: The positions a site can read (the ``position`` field of meta.yaml and entries).
Position = Literal["last_token", "token_avg", "end_question", "mid_think", "end_think",
                   "end_answer", "attention_weighted"]
POSITIONS: tuple[str, ...] = get_args(Position)
#: The span each marker position reads.
SPAN_OF_POSITION = {"end_question": "question", "mid_think": "think", "end_think": "think",
                    "end_answer": "answer"}


_TRANSFORMERLENS_HOOK = re.compile(
    r"\s*(?P<hook>blocks\.(?P<block>\d+)\.hook_resid_(?P<kind>pre|mid|post))"
    r"\s*(?::\s*(?P<position>\w+))?\s*")


def transformerlens_hint(text: str, *, yaml_fields: bool = False) -> str | None:
    """What a TransformerLens residual-stream hook name is in probebench's terms, or None
    when ``text`` is not one. ``yaml_fields`` words the answer as meta.yaml's ``layer``
    field instead of a ``LAYER:POSITION`` site.

    >>> hint = transformerlens_hint("blocks.15.hook_resid_post")
    >>> hint.startswith("blocks.15.hook_resid_post is TransformerLens's name for the output")
    True
    >>> "write 16:<position>" in hint
    True
    >>> "write 0:last_token" in transformerlens_hint("blocks.0.hook_resid_pre:last_token")
    True
    """
    match = _TRANSFORMERLENS_HOOK.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    hook, block, kind = match["hook"], int(match["block"]), match["kind"]
    position = match["position"] or "<position>"

    def write(layer: int) -> str:
        return f"layer: {layer}" if yaml_fields else f"{layer}:{position}"

    counting = ("(TransformerLens counts blocks from 0; probebench's layers follow Hugging "
                "Face's output_hidden_states: 0 is the embeddings output and b + 1 the output "
                "of block b)")
    if kind == "post":
        return (f"{hook} is TransformerLens's name for the output of block {block} "
                f"{counting}: write {write(block + 1)} (for a model's last block, Hugging "
                "Face's last layer is taken after the final norm where the model has one, "
                "TransformerLens's hook before it)")
    if kind == "pre":
        before = ("the embeddings output" if block == 0
                  else f"the output of block {block - 1}")
        return (f"{hook} is TransformerLens's name for the input of block {block}, which is "
                f"{before} {counting}: write {write(block)}")
    return (f"{hook} is TransformerLens's residual stream inside block {block}, between its "
            "attention and its MLP; Hugging Face's hidden states, which probebench reads, "
            f"have no equivalent, so no site reads it {counting}. The nearest are "
            f"{write(block)} (the block's input) and {write(block + 1)} (its output)")


def transformerlens_fields(data: Mapping[str, object]) -> list[str]:
    """``field 'layer': <hint>`` for each field of a YAML mapping that holds a
    TransformerLens hook name (meta.yaml, registry entries)."""
    out = []
    for key, value in data.items():
        hint = transformerlens_hint(value, yaml_fields=True) if isinstance(value, str) \
            else None
        if hint is not None:
            out.append(f"field {key!r}: {hint}")
    return out


@dataclass(frozen=True, order=True)
class Site:
    """Where a probe reads: a layer (0 = embeddings output) and a position."""

    layer: int
    position: str

    def __post_init__(self) -> None:
        hint = transformerlens_hint(self.layer) if isinstance(self.layer, str) else None
        if hint is not None:
            raise SiteError(f"site layer {self.layer!r}: {hint}")
        if not isinstance(self.layer, int) or isinstance(self.layer, bool) or self.layer < 0:
            raise SiteError(f"site layer must be an integer >= 0, found {self.layer!r}")
        if self.position not in POSITIONS:
            raise SiteError(f"site position must be one of {', '.join(POSITIONS)}; "
                            f"found {self.position!r}")
        if self.position == "attention_weighted" and self.layer == 0:
            raise SiteError("position attention_weighted needs layer >= 1: layer 0 is the "
                            "embeddings output, which no attention produced")

    @classmethod
    def parse(cls, text: str) -> Site:
        """Parse ``LAYER:POSITION``, e.g. ``15:last_token``."""
        hint = transformerlens_hint(text)
        if hint is not None:
            raise SiteError(f"site {text!r}: {hint}")
        layer, sep, position = text.partition(":")
        if not sep or not layer.strip().isdigit():
            raise SiteError(f"site {text!r}: expected LAYER:POSITION, e.g. 15:last_token "
                            f"(positions: {', '.join(POSITIONS)})")
        return cls(int(layer), position.strip())

    def __str__(self) -> str:
        return f"{self.layer}:{self.position}"

    @property
    def tensor_name(self) -> str:
        """The name of this site's tensor in an activations file."""
        return f"layer{self.layer}.{self.position}"

    @property
    def span(self) -> str | None:
        """The prompt span this site's position reads (None for span-free positions)."""
        return SPAN_OF_POSITION.get(self.position)


def check_sites(sites: Sequence[Site], num_layers: int, prompts: Sequence[Prompt]) -> None:
    """Refuse out-of-range layers and prompts missing a needed span, before any model runs."""
    for site in sites:
        if site.layer > num_layers:
            raise SiteError(f"site {site}: layer {site.layer} is out of range; this model has "
                            f"layers 0..{num_layers} (0 = embeddings output)")
        span = site.span
        if span is None:
            continue
        for index, prompt in enumerate(prompts):
            if span not in prompt.spans:
                raise SiteError(
                    f"site {site}: prompt {prompt.label_name} (#{index}) has no {span!r} span, "
                    f"which position {site.position} needs"
                )


__all__ = ["POSITIONS", "SPAN_OF_POSITION", "Position", "Site", "check_sites",
           "transformerlens_fields", "transformerlens_hint"]
