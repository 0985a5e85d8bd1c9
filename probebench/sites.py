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
"""

from __future__ import annotations

from collections.abc import Sequence
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


@dataclass(frozen=True, order=True)
class Site:
    """Where a probe reads: a layer (0 = embeddings output) and a position."""

    layer: int
    position: str

    def __post_init__(self) -> None:
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


__all__ = ["POSITIONS", "SPAN_OF_POSITION", "Position", "Site", "check_sites"]
