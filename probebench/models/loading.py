"""Finding and loading models: embedded aliases, local folders and Hugging Face hub ids.

``resolve_model`` finds a model and computes its identity (``identity.py``: the tensors
and the tokenizer hashed, memoised by file state) without loading the model, so the
activation cache can answer without one; ``load_model`` loads it.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from probebench.errors import InputError, ModelError
from probebench.hashing import sha256_json
from probebench.jsonsafe import load_json
from probebench.models._hf import quiet_transformers
from probebench.models.batching import DTYPE_BYTES, weight_count
from probebench.models.builtin import BUILTIN_MODELS, BuiltinModel
from probebench.models.embedded import ensure_converted
from probebench.models.identity import IDENTITY_SCHEME, tokenizer_sha256, weights_sha256
from probebench.models.names import alias_typo, cached_hub_models, check_on_hub, did_you_mean
from probebench.paths import home, hub_offline

DTYPES = ("float32", "bfloat16", "float16")
DEVICES = ("auto", "cpu", "cuda")

_TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model",
    "chat_template.jinja", "chat_template.json",
)
_HUB_PATTERNS = ["*.json", "*.txt", "*.model", "*.jinja", "*.safetensors"]


@dataclass(frozen=True)
class ModelIdentity:
    """What a result was computed with: enough to tell two models (or two dtypes) apart."""

    name: str                 #: alias, hub id or folder name as the user gave it
    source: str               #: "embedded", "local" or "hub"
    revision: str | None      #: hub commit, or package==version for embedded models
    weights_sha256: str       #: the tensors' hash (names, dtypes, shapes, bytes; identity.py)
    tokenizer_sha256: str     #: the tokenizer files' hash, JSON files as canonical JSON
    dtype: str
    num_layers: int
    hidden_size: int
    architecture: str         #: "causal" or "encoder"
    model_type: str           #: the config's model_type, e.g. "llama", "bert"
    #: how the two hashes were made (``identity.IDENTITY_SCHEME``); identities stored
    #: without it hashed the files' bytes
    hash_scheme: str = IDENTITY_SCHEME

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ResolvedModel:
    """A model found on disk, with its identity, not yet loaded."""

    identity: ModelIdentity
    path: Path
    device: str               #: "cpu" or "cuda" (never "auto")
    max_positions: int | None


@dataclass
class LoadedModel:
    """A loaded model with its tokenizer; ``model`` is a transformers ``PreTrainedModel``."""

    resolved: ResolvedModel
    model: Any
    tokenizer: Any
    _layers: Any = field(default=None, repr=False)

    @property
    def identity(self) -> ModelIdentity:
        return self.resolved.identity

    @property
    def device(self) -> str:
        return self.resolved.device

    @property
    def is_causal(self) -> bool:
        return self.identity.architecture == "causal"

    @property
    def base(self) -> Any:
        """The transformer without its task head (the LM head is never run for activations)."""
        return self.model.base_model

    @property
    def layers(self) -> Any:
        """The ``nn.ModuleList`` of transformer blocks, in order."""
        if self._layers is None:
            self._layers = find_layers(self.base, self.identity.num_layers)
        return self._layers


def find_layers(base: Any, num_layers: int) -> Any:
    """The block list of a model: the ModuleList with as many entries as the config's layers.

    Architectures name it differently (``layers``, ``encoder.layer``, ``h``, ``blocks``);
    when several lists match, the shortest dotted name wins (the top-level stack).
    """
    import torch

    candidates = [
        (name.count("."), name, module)
        for name, module in base.named_modules()
        if isinstance(module, torch.nn.ModuleList) and len(module) == num_layers
    ]
    if not candidates:
        raise ModelError(f"cannot find the {num_layers} transformer blocks in "
                         f"{type(base).__name__}; this architecture is not supported")
    candidates.sort(key=lambda c: (c[0], c[1]))
    return candidates[0][2]


def _package_version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def resolve_device(device: str) -> str:
    if device not in DEVICES:
        raise ModelError(f"device must be one of {', '.join(DEVICES)}; found {device!r}")
    if device == "cpu":  # no torch import (seconds) where nothing asks CUDA
        return device
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ModelError("device 'cuda' was asked for but torch sees no CUDA device; "
                         "use --device cpu or auto")
    return device


#: the precision results are referenced in; ``auto`` means it on every device
REFERENCE_DTYPE = "float32"


def resolve_dtype(dtype: str, device: str) -> str:
    """``auto`` is float32 on every device: the reference precision, so a GPU result
    compares with a CPU one within the reproducibility contract. bfloat16 and float16
    are opt-in, and their results are checked against the float32 reference under the
    precision policy (``probebench.evaluation.precision``)."""
    if dtype == "auto":
        return REFERENCE_DTYPE
    if dtype not in DTYPES:
        raise ModelError(f"dtype must be auto or one of {', '.join(DTYPES)}; found {dtype!r}")
    return dtype


def _unknown_model(name: str, why: str) -> ModelError:
    return ModelError(
        f"unknown model {name!r}: not a local folder, not a built-in alias "
        f"({', '.join(BUILTIN_MODELS)}), and {why}.{did_you_mean(name)}"
    )


def _locate(name: str, revision: str | None, *, progress: bool,
            verbose: bool = False) -> tuple[Path, str, str | None]:
    """Return (folder, source, revision) for an alias, a local folder or a hub id."""
    builtin: BuiltinModel | None = BUILTIN_MODELS.get(name)
    if builtin is not None:
        if revision is not None:
            raise ModelError(f"model {name!r} is built in; --revision does not apply to it")
        folder = (ensure_converted(builtin, progress=progress, verbose=verbose)
                  if builtin.kind == "gguf"
                  else builtin.source_path())
        dist = builtin.distribution
        return folder, "embedded", f"{dist}=={_package_version(dist)}"
    local = Path(name).expanduser()
    if local.exists():
        if not (local / "config.json").is_file():
            raise ModelError(f"{local}: not a Hugging Face model folder (no config.json)")
        return local.resolve(), "local", revision
    if name.count("/") > 1 or name.startswith((".", "/", "~")):
        raise _unknown_model(name, "no such folder exists")
    if alias_typo(name) is not None and name not in cached_hub_models():
        raise _unknown_model(name, "it looks like a typo of a built-in alias, so the hub "
                             "was not asked")
    return _from_hub(name, revision)


def _from_hub(repo_id: str, revision: str | None) -> tuple[Path, str, str | None]:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    offline = hub_offline()
    try:
        if not offline and not _in_hub_cache(repo_id, revision):
            # one quick question first: the download retries for ~25 s when it fails
            check_on_hub(repo_id, revision)
        folder = Path(snapshot_download(repo_id, revision=revision,
                                        allow_patterns=_HUB_PATTERNS,
                                        local_files_only=offline))
    except LocalEntryNotFoundError:
        why = ("it is not in the local Hugging Face cache (HF_HUB_OFFLINE is set)"
               if offline else "the Hugging Face hub could not be reached and it is not cached")
        raise _unknown_model(repo_id, why) from None
    except (HfHubHTTPError, ValueError, OSError) as exc:
        raise _unknown_model(repo_id, f"the Hugging Face hub refused it ({exc})") from None
    # snapshot folders are named by the commit they hold
    return folder, "hub", folder.name


def _in_hub_cache(repo_id: str, revision: str | None) -> bool:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        snapshot_download(repo_id, revision=revision, allow_patterns=_HUB_PATTERNS,
                          local_files_only=True)
    except (LocalEntryNotFoundError, ValueError, OSError):
        return False
    return True


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        config = load_json(folder / "config.json")
    except InputError as exc:
        raise ModelError(f"cannot read the model config: {exc}") from None
    if not isinstance(config, dict):
        raise ModelError(f"{folder / 'config.json'}: expected a JSON object")
    return config


def _config_int(config: dict[str, Any], keys: tuple[str, ...], folder: Path) -> int:
    for source in (config, config.get("text_config") or {}):
        for key in keys:
            value = source.get(key)
            if isinstance(value, int):
                return value
    raise ModelError(f"{folder / 'config.json'}: none of {', '.join(keys)} is set")


def _architecture(config: dict[str, Any]) -> str:
    archs = config.get("architectures") or []
    causal_suffixes = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")
    return "causal" if any(str(a).endswith(causal_suffixes) for a in archs) else "encoder"


def resolve_model(name_or_path: str, *, revision: str | None = None, device: str = "auto",
                  dtype: str = "auto", progress: bool = True,
                  verbose: bool = False) -> ResolvedModel:
    """Find a model and compute its identity without loading its weights.

    ``name_or_path`` is a built-in alias (``smollm2-135m``, ``minilm-l6``), a local
    Hugging Face folder, or a hub id (downloaded unless ``HF_HUB_OFFLINE=1``, in which
    case only the local cache is used). Only safetensors weights are accepted: ``.bin``
    files are pickles and may run code. A built-in GGUF model converted on first use says
    so when ``progress``; transformers' own bars and warnings show only when ``verbose``.
    """
    folder, source, rev = _locate(name_or_path, revision, progress=progress, verbose=verbose)
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)
    config = _read_config(folder)
    weights = sorted(folder.glob("*.safetensors"))
    if not weights:
        raise ModelError(f"{folder}: no *.safetensors weights; probebench does not load "
                         "pickled .bin weights (they can run code when loaded)")
    tokenizer_files = [folder / f for f in _TOKENIZER_FILES if (folder / f).is_file()]
    if not tokenizer_files:
        raise ModelError(f"{folder}: no tokenizer files ({', '.join(_TOKENIZER_FILES[:3])}, ...)")
    max_pos = config.get("max_position_embeddings") or config.get("n_positions")
    identity = ModelIdentity(
        name=name_or_path,
        source=source,
        revision=rev,
        weights_sha256=weights_sha256(weights),
        tokenizer_sha256=tokenizer_sha256(tokenizer_files, folder),
        dtype=dtype,
        num_layers=_config_int(config, ("num_hidden_layers", "n_layer", "num_layers"), folder),
        hidden_size=_config_int(config, ("hidden_size", "n_embd", "d_model"), folder),
        architecture=_architecture(config),
        model_type=str(config.get("model_type", "unknown")),
    )
    return ResolvedModel(identity=identity, path=folder, device=device,
                         max_positions=int(max_pos) if isinstance(max_pos, int) else None)


def load_model(name_or_path: str | ResolvedModel, *, revision: str | None = None,
               device: str = "auto", dtype: str = "auto", progress: bool = True) -> LoadedModel:
    """Load a model and its (fast) tokenizer for extraction and surprisal.

    ``device="auto"`` picks CUDA when present; ``dtype="auto"`` is float32 everywhere.
    Causal LMs load with their LM head (needed for surprisal); encoders load as the
    bare model. A model whose weights do not fit the GPU's free memory is spread over
    the GPU, the CPU memory and disk by accelerate (``device_map="auto"``, offload
    folder under ``$PROBEBENCH_HOME/offload``): slower, but it runs.
    """
    resolved = (name_or_path if isinstance(name_or_path, ResolvedModel)
                else resolve_model(name_or_path, revision=revision, device=device, dtype=dtype,
                                   progress=progress))
    import torch
    from transformers import AutoModel, AutoModelForCausalLM

    ident = resolved.identity
    cls: Any = AutoModelForCausalLM if ident.architecture == "causal" else AutoModel
    placement: dict[str, Any] = {}
    if resolved.device != "cpu":
        free = int(torch.cuda.mem_get_info(torch.device(resolved.device))[0])
        if needs_offload(weight_count(resolved.path), ident.dtype, free):
            placement = {"device_map": "auto", "offload_folder": str(home() / "offload")}
    try:
        with quiet_transformers():
            model: Any = cls.from_pretrained(resolved.path, dtype=getattr(torch, ident.dtype),
                                             attn_implementation="sdpa", use_safetensors=True,
                                             **placement)
    except Exception as exc:  # transformers raises many types for a broken folder
        raise ModelError(f"{resolved.path}: cannot load the model ({exc})") from exc
    tokenizer = _load_tokenizer(resolved.path)
    model.eval()
    if not placement:
        model.to(resolved.device)
    return LoadedModel(resolved=resolved, model=model, tokenizer=tokenizer)


def _load_tokenizer(folder: Path) -> Any:
    """The folder's fast tokenizer (``ModelError`` for a slow one or a broken folder)."""
    from transformers import AutoTokenizer

    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(folder)
    except Exception as exc:  # transformers raises many types for a broken folder
        raise ModelError(f"{folder}: cannot load the tokenizer ({exc})") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"{folder}: the tokenizer is not a fast tokenizer; probebench "
                         "needs character offsets, which only fast tokenizers give")
    return tokenizer


def release_memory() -> None:
    """Hand memory that is no longer used back to the system: collect unreachable
    objects (a model's modules can sit in reference cycles), return CUDA's cached blocks
    when CUDA is in use, and on glibc trim the heap (``malloc_trim``), whose freed pages
    otherwise stay in the process's resident set."""
    import gc

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


@functools.cache
def _glibc() -> Any:
    """glibc as a ``ctypes`` library, or None (another C library, another system)."""
    import ctypes
    import ctypes.util

    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


#: share of a GPU's free memory the weights may take before the model is offloaded
#: (the rest holds the activations of a batch)
OFFLOAD_SHARE = 0.85


def needs_offload(parameters: int, dtype: str, free_bytes: int) -> bool:
    """Whether weights of ``parameters`` in ``dtype`` need accelerate's offload on a
    device with ``free_bytes`` free.

    >>> needs_offload(135_000_000, "float32", 80 * 2**30)
    False
    >>> needs_offload(70_000_000_000, "bfloat16", 80 * 2**30)
    True
    """
    return parameters * DTYPE_BYTES[dtype] > OFFLOAD_SHARE * free_bytes


def random_init_resolved(resolved: ResolvedModel, seed: int) -> ResolvedModel:
    """``resolved`` as its randomly initialised copy (``random_init_model``) would be
    identified, without loading anything: the weights hash is replaced by the hash of
    the model's config file and the seed, which with the torch and transformers versions
    (part of every cache key) decide the random weights. The activation cache keys the
    random-init control by it, so it never passes for the trained model."""
    import dataclasses

    config_sha = sha256_json(_read_config(resolved.path))
    identity = dataclasses.replace(
        resolved.identity, name=f"{resolved.identity.name} (random init, seed {seed})",
        weights_sha256=f"random-init:config-sha256={config_sha}:seed={seed}")
    return dataclasses.replace(resolved, identity=identity)


def random_init_model(base: LoadedModel | ResolvedModel, seed: int) -> LoadedModel:
    """A model of ``base``'s architecture and config with freshly initialised weights
    (``torch`` seeded with ``seed``; the caller's RNG state is left as it was): the
    random-feature baseline's model (Hewitt and Liang 2019 discuss random-init
    baselines). Its identity says so, so no cache confuses it with the trained model.

    ``base`` is the loaded model (its config and tokenizer are shared) or only its
    resolved folder (the config and the tokenizer are read from the folder, the trained
    weights never): the same weights either way, so a caller can let the trained model
    go before building its copy and hold one model's weights at a time."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    resolved = base if isinstance(base, ResolvedModel) else base.resolved
    ident = resolved.identity
    cls: Any = AutoModelForCausalLM if ident.architecture == "causal" else AutoModel
    if isinstance(base, LoadedModel):
        config, tokenizer = base.model.config, base.tokenizer
    else:
        try:
            with quiet_transformers():
                config = AutoConfig.from_pretrained(resolved.path)
        except Exception as exc:  # transformers raises many types for a broken folder
            raise ModelError(f"{resolved.path}: cannot read the model config ({exc})") \
                from exc
        tokenizer = _load_tokenizer(resolved.path)
    with torch.random.fork_rng(devices=[]), quiet_transformers():
        torch.manual_seed(seed)
        model: Any = cls.from_config(config, dtype=getattr(torch, ident.dtype),
                                     attn_implementation="sdpa")
    model.eval()
    model.to(resolved.device)
    return LoadedModel(resolved=random_init_resolved(resolved, seed), model=model,
                       tokenizer=tokenizer)
