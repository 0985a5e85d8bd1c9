"""Hidden-state extraction: pooled activations at sites (see ``probebench.sites``).

One forward pass serves every site of a batch: forward pre-hooks on the blocks catch
the hidden states, pool them at once (only pooled vectors are kept, never whole layers)
and stop the pass after the deepest layer needed. The LM head never runs. Prompts are
sorted by length and grouped under a token budget, right-padded with an attention mask
(right padding keeps position ids correct for causal models without extra work).

The batch budget is sized from the device (``probebench.models.batching``) unless a
caller gives one. In float32, batching changes results only by float rounding: a row's
numbers depend on the kernel shapes chosen for its batch, by about one float32 ulp of
each value. SmolLM2 has "massive activations" (values near 8000 on the first token,
where one ulp is 5e-4), so comparisons use ``atol=1e-4`` plus ``rtol=1e-5``. In
bfloat16 or float16 the batch composition moves values by far more (issue 16 measured
a cosine of 0.9989 between two batchings on an H100), so there the budget is part of
the activation cache key, and results in reduced precision are compared with the
float32 reference under the precision policy (``probebench.evaluation.precision``).

Pooled vectors stay on the device until the last batch is done: one transfer per site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from probebench.errors import SiteError
from probebench.models.batching import BATCH_TOKENS, Budget, batch_budget
from probebench.models.cache import ActivationCache, prompts_sha256
from probebench.models.chat import is_templated, rendered
from probebench.models.loading import LoadedModel, ResolvedModel, load_model, resolve_model
from probebench.models.prefix_attention import prefix_attention, supports
from probebench.models.start_token import start_token_id
from probebench.prompts import Prompt, as_prompts
from probebench.sites import SPAN_OF_POSITION, Site, check_sites

if TYPE_CHECKING:
    import torch

__all__ = ["BATCH_TOKENS", "ExtractionResult", "cache_keys", "extract", "run_extraction"]


@dataclass
class ExtractionResult:
    """Activations per site, each ``(n_prompts, hidden_size)`` float32, in prompt order."""

    arrays: dict[Site, np.ndarray]
    model: ResolvedModel
    cached: set[Site] = field(default_factory=set)
    #: the model, when this call had to load it (so callers can reuse it)
    loaded: LoadedModel | None = None
    #: tokens the model read for this call (the prompts' own, plus a shared prefix once;
    #: 0 when every site came from the cache)
    tokens: int = 0

    def __getitem__(self, site: Site) -> np.ndarray:
        return self.arrays[site]


def extract(model: str | ResolvedModel | LoadedModel, prompts: Sequence[Prompt | str],
            sites: Sequence[Site], *, cache: ActivationCache | bool = True,
            device: str = "auto", dtype: str = "auto", batch_tokens: int | None = None,
            max_batch_size: int | None = None, prefix: str | None = None,
            progress: bool = True, desc: str | None = None,
            load: Callable[[], LoadedModel] | None = None) -> ExtractionResult:
    """Pooled hidden states of ``prompts`` at every site, through the activation cache.

    ``model`` is a name (alias, folder or hub id), a resolved model, or a loaded one.
    When the cache holds every site, the model is not loaded at all. ``cache=False``
    bypasses the cache both ways. ``batch_tokens`` and ``max_batch_size`` shape the
    batches (see ``length_batches``); left out, they are sized from the device
    (``probebench.models.batching``). ``prefix`` puts the same text before every prompt
    (see ``run_extraction``); positions still read the prompt's own tokens. ``desc``
    names the stage on the progress bar (default: ``extract <model>``). ``load`` gives the
    model to run on a miss when ``model`` is a resolved one that ``load_model`` should not
    load (the random-init control: ``models.loading.random_init_resolved``).
    """
    prompt_list = as_prompts(prompts)
    site_list = list(dict.fromkeys(sites))
    if not prompt_list:
        raise SiteError("no prompts to extract")
    if not site_list:
        raise SiteError("no sites to extract")
    if isinstance(model, LoadedModel):
        loaded: LoadedModel | None = model
        resolved = model.resolved
    elif isinstance(model, ResolvedModel):
        loaded, resolved = None, model
    else:
        loaded, resolved = None, resolve_model(model, device=device, dtype=dtype,
                                               progress=progress)
    ident = resolved.identity
    check_sites(site_list, ident.num_layers, prompt_list)
    budget = batch_budget(resolved.path, device=resolved.device, dtype=ident.dtype,
                          hidden=ident.hidden_size, tokens=batch_tokens, rows=max_batch_size)

    store = ActivationCache() if cache is True else (cache or None)
    arrays: dict[Site, np.ndarray] = {}
    keys: dict[Site, str] = {}
    if store is not None:
        keys = cache_keys(store, resolved, prompts_sha256(prompt_list, prefix), site_list,
                          budget)
        for site in site_list:
            hit = store.get(keys[site], (len(prompt_list), ident.hidden_size))
            if hit is not None:
                arrays[site] = hit
    cached = set(arrays)
    missing = [s for s in site_list if s not in arrays]
    fresh_load: LoadedModel | None = None
    stats: dict[str, int] = {}
    if missing:
        if loaded is None:
            fresh_load = load() if load is not None else load_model(resolved,
                                                                     progress=progress)
        lm = loaded if loaded is not None else fresh_load
        assert lm is not None
        fresh = run_extraction(lm, prompt_list, missing, batch_tokens=budget.tokens,
                               max_batch_size=budget.rows, prefix=prefix,
                               progress=progress, desc=desc, stats=stats)
        for site, array in fresh.items():
            arrays[site] = array
            if store is not None:
                store.put(keys[site], array, {"site": str(site), "model": ident.name})
    return ExtractionResult(arrays={s: arrays[s] for s in site_list}, model=resolved,
                            cached=cached, loaded=fresh_load, tokens=stats.get("tokens", 0))


def cache_keys(store: ActivationCache, resolved: ResolvedModel, prompts_digest: str,
               sites: Sequence[Site], budget: Budget) -> dict[Site, str]:
    """The cache key of each site's activations of one prompt list (``prompts_digest``).

    In float32 the batch budget is not part of the key: batching changes the numbers only
    by float rounding, inside the reproducibility contract. In reduced precision the
    batch composition changes them beyond it, so the budget is part of the key.
    """
    ident = resolved.identity
    batching = None if ident.dtype == "float32" else (budget.tokens, budget.rows)
    return {site: store.key(ident, resolved.device, prompts_digest, site, batching=batching)
            for site in sites}


# --- the forward pass ------------------------------------------------------------------


class _StopForwardError(Exception):
    """Raised by the hook of the deepest needed layer to end the forward pass early."""


@dataclass
class Tokenized:
    """Prompts tokenized once, without padding, with character offsets."""

    ids: list[list[int]]
    offsets: list[list[tuple[int, int]]]
    #: the prompts as the model read them (chat exchanges rendered by its template)
    prompts: list[Prompt] = field(default_factory=list)

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter((len(x) for x in self.ids), dtype=np.int64, count=len(self.ids))


def tokenize(lm: LoadedModel, prompts: Sequence[Prompt], *, prepend_bos: bool = False,
             start_token: str | None = None, add_special_tokens: bool = True,
             reserved: int = 0) -> Tokenized:
    """Tokenize with the model's own special tokens and check the length limit
    (``reserved`` tokens, e.g. a cached prefix, count against it too).

    ``prepend_bos`` puts ``start_token_id(lm, start_token)`` (the model's document start:
    ``probebench.models.start_token``) in front of every prompt with empty offsets,
    unless the tokenizer already put that very token first (Llama-2 style tokenizers add
    their BOS themselves)."""
    prompts = rendered(lm.tokenizer, prompts)
    templated = [is_templated(lm.tokenizer, p) for p in prompts]
    ids: list[list[int]] = [[] for _ in prompts]
    offsets: list[list[tuple[int, int]]] = [[] for _ in prompts]
    # a chat template writes its own special tokens: those prompts get none added
    for group in (False, True):
        rows = [k for k, t in enumerate(templated) if t == group]
        if not rows:
            continue
        enc = lm.tokenizer([prompts[k].text for k in rows],
                           add_special_tokens=add_special_tokens and not group,
                           return_offsets_mapping=True, return_attention_mask=False)
        for k, x, o in zip(rows, enc["input_ids"], enc["offset_mapping"], strict=True):
            ids[k] = list(map(int, x))
            offsets[k] = [(int(a), int(b)) for a, b in o]
    if prepend_bos:
        start = start_token_id(lm, start_token)
        for k, (x, o) in enumerate(zip(ids, offsets, strict=True)):
            if not (x and x[0] == start and o[0][1] <= o[0][0]):
                ids[k] = [start, *x]
                offsets[k] = [(0, 0), *o]
    limit = lm.resolved.max_positions
    for prompt, tokens in zip(prompts, ids, strict=True):
        if not tokens:
            raise SiteError(f"prompt {prompt.label_name} tokenizes to no tokens")
        if limit is not None and len(tokens) + reserved > limit:
            extra = f" after a {reserved}-token prefix" if reserved else ""
            raise SiteError(f"prompt {prompt.label_name} has {len(tokens)} tokens{extra}; model "
                            f"{lm.identity.name!r} reads at most {limit} (no silent truncation)")
    return Tokenized(ids=ids, offsets=offsets, prompts=prompts)


def span_token_indices(offsets: Sequence[tuple[int, int]], span: tuple[int, int]) -> list[int]:
    """Indices of the tokens whose characters overlap ``span`` (special tokens excluded)."""
    start, end = span
    return [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]


def _marker_index(prompt: Prompt, offsets: Sequence[tuple[int, int]], position: str) -> int:
    span_name = SPAN_OF_POSITION[position]
    tokens = span_token_indices(offsets, prompt.spans[span_name])
    if not tokens:
        raise SiteError(f"prompt {prompt.label_name}: span {span_name!r} "
                        f"{list(prompt.spans[span_name])} covers no token")
    return tokens[(len(tokens) - 1) // 2] if position == "mid_think" else tokens[-1]


def length_batches(lengths: np.ndarray, *, batch_tokens: int,
                   max_batch_size: int) -> list[np.ndarray]:
    """Group prompt indices by length (longest first) so batches waste little padding.

    A batch holds at most ``max_batch_size`` prompts and ``batch_tokens`` padded tokens
    (a single prompt longer than the budget gets a batch of its own).
    """
    if batch_tokens < 1 or max_batch_size < 1:
        raise SiteError("batch_tokens and max_batch_size must be >= 1")
    order = np.argsort(-lengths, kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        longest = int(lengths[order[start]])
        size = max(1, min(max_batch_size, batch_tokens // max(longest, 1)))
        batches.append(order[start:start + size])
        start += size
    return batches


def pad_batch(tok: Tokenized, rows: np.ndarray,
              pad_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Right-padded ``(ids, mask, lengths)`` arrays for the prompts ``rows``.

    Right padding keeps every real token at its natural position id in causal models.
    """
    lengths = tok.lengths[rows]
    ids = np.full((len(rows), int(lengths.max())), pad_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, i in enumerate(rows):
        ids[r, : lengths[r]] = tok.ids[i]
        mask[r, : lengths[r]] = 1
    return ids, mask, lengths


def pad_id_of(lm: LoadedModel) -> int:
    pad = lm.tokenizer.pad_token_id
    return int(pad) if pad is not None else 0


@dataclass
class _Batch:
    rows: np.ndarray                 #: indices into the prompt list
    index: torch.Tensor              #: the same indices, on the device
    lengths: torch.Tensor            #: (B,) real tokens per row
    mask: torch.Tensor               #: (B, T) 1 for real tokens
    marker: dict[str, torch.Tensor]  #: position -> (B,) token index
    attention: dict[int, torch.Tensor] = field(default_factory=dict)  #: layer -> (B,H,T,T)


def _rows(h: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    import torch

    return h[torch.arange(h.shape[0], device=h.device), index]


def _pool_last(h: torch.Tensor, b: _Batch, site: Site) -> torch.Tensor:
    return _rows(h, b.lengths - 1)


def _pool_avg(h: torch.Tensor, b: _Batch, site: Site) -> torch.Tensor:
    return (h * b.mask[..., None]).sum(1) / b.lengths[:, None].to(h.dtype)


def _pool_marker(h: torch.Tensor, b: _Batch, site: Site) -> torch.Tensor:
    return _rows(h, b.marker[site.position])


def _pool_attention(h: torch.Tensor, b: _Batch, site: Site) -> torch.Tensor:
    import torch

    probs = b.attention[site.layer]  # (B, heads, T, prefix + T)
    rows = torch.arange(h.shape[0], device=h.device)
    # with a cached prefix only the weights on the prompt's own tokens are used
    weights = probs[rows, :, b.lengths - 1, -h.shape[1]:].mean(1).to(h.dtype) * b.mask
    weights = weights / weights.sum(1, keepdim=True)
    return (weights[..., None] * h).sum(1)


_POOLERS: dict[str, Callable[[Any, _Batch, Site], Any]] = {
    "last_token": _pool_last,
    "token_avg": _pool_avg,
    "end_question": _pool_marker,
    "mid_think": _pool_marker,
    "end_think": _pool_marker,
    "end_answer": _pool_marker,
    "attention_weighted": _pool_attention,
}


#: positions whose pooling picks one token per row (no arithmetic over tokens)
_SELECTING = frozenset({"last_token", "end_question", "mid_think", "end_think", "end_answer"})


def _attention_module(block: Any, layer: int) -> Any:
    for name, module in block.named_modules():
        if name and type(module).__name__.endswith("Attention"):
            return module
    raise SiteError(f"cannot find the attention module of block {layer} "
                    f"({type(block).__name__}) for attention_weighted")


def _prefix_cache(lm: LoadedModel, prefix: str, layers: int) -> tuple[list[Any], int]:
    """The key/value states of a shared prefix in the first ``layers`` blocks (the ones a
    pass that stops at block ``layers`` reads), computed once: a list of one-row
    ``(keys, values)`` per block and the prefix's length (causal models only)."""
    import torch
    from transformers import DynamicCache

    if not lm.is_causal:
        raise SiteError(f"a shared prefix needs a causal model; {lm.identity.name!r} is an "
                        f"{lm.identity.architecture} (its tokens would see the prompt too)")
    ids = lm.tokenizer(prefix, add_special_tokens=True)["input_ids"]
    cache = DynamicCache()
    handle = None
    if layers < lm.identity.num_layers:  # the blocks from ``layers`` on are never read
        def stop(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            raise _StopForwardError
        handle = lm.layers[layers].register_forward_pre_hook(stop, with_kwargs=True)
    try:
        with torch.inference_mode():
            lm.base(input_ids=torch.tensor([ids], device=lm.device),
                    **{_cache_kwarg(lm): cache}, use_cache=True)
    except _StopForwardError:
        pass
    finally:
        if handle is not None:
            handle.remove()
    states = [(layer.keys, layer.values) for layer in cast(list[Any], cache.layers)[:layers]]
    return states, len(ids)


def _batch_cache(states: list[Any], rows: int) -> Any:
    """A key/value cache that gives each of ``rows`` rows the shared prefix's states as a
    broadcast view (no copy: each block's own concatenation is the one copy)."""
    from transformers import DynamicCache

    cache = DynamicCache(ddp_cache_data=[(k[:, :, :0], v[:, :, :0]) for k, v in states])
    for layer, (k, v) in zip(cast(list[Any], cache.layers), states, strict=True):
        layer.keys = k.expand(rows, -1, -1, -1)
        layer.values = v.expand(rows, -1, -1, -1)
    return cache


#: ``_cache_kwarg`` per model class, read from its signature once
_CACHE_PARAM: dict[type, str] = {}


def _cache_kwarg(lm: LoadedModel) -> str:
    """The forward argument that takes a key/value cache: ``cache`` in recent
    transformers, ``past_key_values`` before (deprecated since)."""
    import inspect

    cls = type(lm.base)
    if cls not in _CACHE_PARAM:
        params = inspect.signature(lm.base.forward).parameters
        _CACHE_PARAM[cls] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_PARAM[cls]


def run_extraction(lm: LoadedModel, prompts: Sequence[Prompt], sites: Sequence[Site], *,
                   batch_tokens: int | None = None, max_batch_size: int | None = None,
                   prefix: str | None = None, progress: bool = True,
                   desc: str | None = None, stats: dict[str, int] | None = None,
                   shared_prefix_attention: bool = True) -> dict[Site, np.ndarray]:
    """Run the model over ``prompts`` and pool every site (no cache); the batch budget
    is sized from the device unless given.

    With ``prefix``, every prompt is read after the same text: the prefix's tokens
    (with the tokenizer's special tokens) are followed by the prompt's own tokens
    (without them). The prefix runs once and its key/value cache is shared, so a long
    context costs little per prompt; positions and pooling read the prompt's tokens.
    Where the architecture allows it (``prefix_attention.supports``) and no site pools by
    attention weights, each batch attends to the prefix's states held once
    (``probebench.models.prefix_attention``) and the batches count only the prompts' own
    tokens; ``shared_prefix_attention=False`` keeps the plain path (every row is given
    the prefix's cache, and the prefix counts in every row's length), the reference the
    tests compare the shared path with.
    ``desc`` names the stage on the progress bar (default: ``extract <model>``).
    ``stats`` gets ``tokens``: the prompts' tokens plus the prefix's, once.
    """
    import torch
    from tqdm.auto import tqdm

    ident = lm.identity
    check_sites(sites, ident.num_layers, prompts)
    budget = lm_budget(lm, batch_tokens, max_batch_size)
    deepest = max(s.layer for s in sites)
    prefix_states, prefix_len = (_prefix_cache(lm, prefix, min(deepest, ident.num_layers))
                                 if prefix else ([], 0))
    tok = tokenize(lm, prompts, add_special_tokens=not prefix, reserved=prefix_len)
    if stats is not None:
        stats["tokens"] = stats.get("tokens", 0) + int(np.sum(tok.lengths)) + prefix_len
    markers = {s.position for s in sites if s.position in SPAN_OF_POSITION}
    marker_idx = {
        pos: np.array([_marker_index(p, o, pos) for p, o in zip(tok.prompts, tok.offsets,
                                                                  strict=True)])
        for pos in markers
    }
    num_layers = ident.num_layers
    by_layer: dict[int, list[Site]] = {}
    for site in sites:
        by_layer.setdefault(site.layer, []).append(site)
    attn_layers = sorted({s.layer for s in sites if s.position == "attention_weighted"})
    device = lm.device
    # pooled vectors are gathered on the device and copied to the host once per site
    # (on the CPU the tensors are views of the returned arrays: no copy at all)
    host = {s: np.empty((len(prompts), ident.hidden_size), dtype=np.float32) for s in sites}
    gathered = {s: (torch.from_numpy(a) if device == "cpu"
                    else torch.empty(a.shape, dtype=torch.float32, device=device))
                for s, a in host.items()}
    current: list[_Batch] = []

    def pool(layer: int, hidden: torch.Tensor) -> None:
        batch = current[0]
        for site in by_layer[layer]:
            # positions that pick one token per row select before widening to float32
            h = hidden if site.position in _SELECTING else hidden.float()
            gathered[site][batch.index] = _POOLERS[site.position](h, batch, site).float()

    def make_pre_hook(layer: int) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            pool(layer, args[0] if args else kwargs["hidden_states"])
            if layer == deepest:
                raise _StopForwardError
        return hook

    def make_attn_hook(layer: int) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...], output: Any) -> None:
            probs = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if probs is None or probs.dim() != 4:
                raise SiteError(f"block {layer}'s attention returned no attention weights")
            current[0].attention[layer] = probs
        return hook

    handles = []
    previous_attn = lm.model.config._attn_implementation
    try:
        for layer in by_layer:
            if layer < num_layers:
                handles.append(lm.layers[layer].register_forward_pre_hook(
                    make_pre_hook(layer), with_kwargs=True))
        if attn_layers:
            # sdpa kernels never materialise attention probabilities; eager ones do.
            lm.model.set_attn_implementation("eager")
            for layer in attn_layers:
                module = _attention_module(lm.layers[layer - 1], layer)
                handles.append(module.register_forward_hook(make_attn_hook(layer)))
        pad_id = pad_id_of(lm)
        shared = (bool(prefix) and shared_prefix_attention and not attn_layers
                  and supports(lm.model.config))
        # on the plain path every row attends over (and copies the cache of) the prefix
        # too: it counts against the token budget (5 GB -> 1.4 GB and 2x faster for a
        # 690-token prefix over the verb-grammar test set; see BENCHMARKS.md). The shared
        # path holds the prefix once, so only the prompts' own tokens count.
        counted = tok.lengths if shared or not prefix else tok.lengths + prefix_len
        batches = length_batches(counted, batch_tokens=budget.tokens,
                                 max_batch_size=budget.rows)
        with ExitStack() as stack:
            if shared:
                stack.enter_context(prefix_attention(lm.model, prefix_states))
            bar = stack.enter_context(tqdm(total=len(prompts), disable=not progress,
                                           desc=desc or f"extract {ident.name}",
                                           unit="prompt", leave=False))
            stack.enter_context(torch.inference_mode())
            for rows in batches:
                ids, mask, lengths = pad_batch(tok, rows, pad_id)
                mask_t = torch.from_numpy(mask).to(device)
                extra: dict[str, Any] = {}
                if shared:
                    positions = torch.arange(prefix_len, prefix_len + ids.shape[1],
                                             device=device)
                    extra = {"position_ids": positions[None]}
                elif prefix:
                    ones = torch.ones((len(rows), prefix_len), dtype=mask_t.dtype, device=device)
                    extra = {_cache_kwarg(lm): _batch_cache(prefix_states, len(rows)),
                             "attention_mask": torch.cat([ones, mask_t], dim=1),
                             "use_cache": True}
                current[:] = [_Batch(
                    rows=rows,
                    index=torch.from_numpy(rows).to(device),
                    lengths=torch.from_numpy(lengths).to(device),
                    mask=mask_t,
                    marker={p: torch.from_numpy(v[rows]).to(device)
                            for p, v in marker_idx.items()},
                )]
                try:
                    kwargs = {"attention_mask": mask_t, "use_cache": False, **extra}
                    result = lm.base(input_ids=_to_device(ids, device), **kwargs)
                except _StopForwardError:
                    pass
                else:
                    pool(num_layers, result[0])
                bar.update(len(rows))
    finally:
        for handle in handles:
            handle.remove()
        if attn_layers:
            lm.model.set_attn_implementation(previous_attn)
        current.clear()
    if device != "cpu":
        for site, tensor in gathered.items():
            host[site][...] = tensor.cpu().numpy()
    return host


def lm_budget(lm: LoadedModel, tokens: int | None, rows: int | None) -> Budget:
    """The batch budget of a loaded model: ``batch_budget`` for its folder and device."""
    return batch_budget(lm.resolved.path, device=lm.device, dtype=lm.identity.dtype,
                        hidden=lm.identity.hidden_size, tokens=tokens, rows=rows)


def _to_device(array: np.ndarray, device: str) -> torch.Tensor:
    """A host array on ``device``: through pinned memory and without blocking the host
    on a GPU (the copy overlaps the previous batch's kernels)."""
    import torch

    tensor = torch.from_numpy(array)
    if device == "cpu":
        return tensor
    return tensor.pin_memory().to(device, non_blocking=True)

