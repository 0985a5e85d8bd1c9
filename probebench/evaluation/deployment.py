"""What a result says about using the probe outside its task: how far it carries to
other models (transfer, through a ridge map fitted on a neutral corpus:
``probebench.evaluation.transfer``) and what running it costs (FLOPs per prompt and
measured latency). Binary and multi-class tasks share the cost and the latency; transfer
is defined for binary probes only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, SiteError
from probebench.evaluation.definitions import LATENCY_WARMUP
from probebench.evaluation.headline import Flat, sub_seed
from probebench.evaluation.latency import (
    LatencyVerdict,
    matmul_gflops,
    rate_mismatch,
    time_prompts,
)
from probebench.evaluation.metrics import auroc_score
from probebench.evaluation.results import CostOut, FlaggedOut, TransferOut
from probebench.evaluation.session import CONTEXT_FILE, LATENCY, Session, SubmitError
from probebench.evaluation.transfer import (
    CORPUS_KEY,
    CORPUS_SHA256,
    TransferTarget,
    corpus_prompts,
    fit_transfer_map,
    held_out,
    parse_targets,
    transfer_ratio,
)
from probebench.hashing import sha256_json
from probebench.jsonsafe import load_json
from probebench.models.activations import run_extraction, tokenize
from probebench.models.cache import ActivationCache
from probebench.models.cost import BlockShape, forward_flops, probe_flops
from probebench.prompts import Prompt
from probebench.provenance import hardware, utc_now
from probebench.sites import Site


def measure_transfer(session: Session, model: str, weights: ProbeWeights, task_id: str,
                     flat: Flat, site: Site, acts: np.ndarray
                     ) -> dict[str, TransferOut | FlaggedOut]:
    """The probe read through a ridge map from each declared target
    (``options.transfer_targets``, ``MODEL@LAYER:POSITION``) over the test prompts:
    target AUROC, transfer ratio, the map's held-out R² and the shuffled-pair control
    (``probebench.evaluation.transfer``). No target declared: an empty mapping (ProbeScore
    imputes the axis)."""
    try:
        targets = parse_targets(session.options.transfer_targets)
    except InputError as exc:
        raise SubmitError(str(exc)) from None
    idx, y = flat.labelled()
    source_auroc = auroc_score(y, weights.predict_proba(acts)[idx, 1])
    # TaskResult.transfer's type: stored results of older versions hold FlaggedOut
    out: dict[str, TransferOut | FlaggedOut] = {
        str(t): transfer_to(session, model, weights, task_id, flat, site, t, source_auroc)
        for t in targets}
    return out


def transfer_to(session: Session, model: str, weights: ProbeWeights, task_id: str, flat: Flat,
                site: Site, target: TransferTarget, source_auroc: float, *,
                corpus: Sequence[Prompt] | None = None) -> TransferOut:
    """The transfer of the probe (on ``model`` at ``site``, own AUROC ``source_auroc``)
    to one ``target`` over the test prompts ``flat``, the map fitted on ``corpus``
    (default: the shipped neutral corpus, ``transfer.CORPUS_FILE``)."""
    name = str(target)
    corpus_sha256 = CORPUS_SHA256 if corpus is None else sha256_json([p.text for p in corpus])
    if site.span is not None:
        return TransferOut(
            target=name, auroc=None, source_auroc=source_auroc, transfer=None, map_r2=None,
            alpha=None, control_auroc=None, control_transfer=None, control_r2=None,
            corpus_sha256=corpus_sha256,
            note=f"not measured: the probe's position {site.position} reads the "
                 f"{site.span!r} span, which the transfer corpus's sentences do not have")
    corpus = corpus_prompts() if corpus is None else list(corpus)
    key = CORPUS_KEY if corpus_sha256 == CORPUS_SHA256 else f"{CORPUS_KEY} {corpus_sha256}"
    source = session.activations(model, key, corpus, site)
    mapped_from = session.activations(target.model, key, corpus, target.site)
    test = session.activations(target.model, f"{task_id}/test", flat.prompts, target.site)
    fitted = fit_transfer_map(mapped_from, source, weights.mean, weights.scale,
                              seed=sub_seed(session.options.seed, "transfer-control", name))
    idx, y = flat.labelled()
    probs = weights.predict_proba(fitted.fitted(test))[:, 1]
    auroc = session.ci("auroc", y, probs[idx], flat.item_of[idx], task_id, "transfer", name)
    control = float(np.mean([auroc_score(y, weights.predict_proba(c(test))[idx, 1])
                             for c in fitted.controls]))
    transfer = transfer_ratio(auroc.value, source_auroc)
    held = int(held_out(len(corpus)).sum())
    note = (f"ridge map from {name} ({test.shape[1]} features) to {model} at {site} "
            f"({weights.n_features}), fitted on {len(corpus)} neutral sentences; alpha and "
            f"R² on {held} held out; control: {len(fitted.controls)} shuffled-pair maps")
    if transfer is None:
        note += (f"; no transfer measured: the probe's own AUROC {source_auroc:.3f} is "
                 "not above 0.5")
    return TransferOut(
        target=name, auroc=auroc, source_auroc=source_auroc, transfer=transfer,
        map_r2=fitted.r2, alpha=fitted.alpha, control_auroc=control,
        control_transfer=transfer_ratio(control, source_auroc),
        control_r2=fitted.control_r2, corpus_sha256=corpus_sha256, note=note)


def check_transfer_targets(session: Session) -> None:
    """Refuse, before any model work, a target that does not parse or whose layer its
    model does not have (``SubmitError``)."""
    try:
        targets = parse_targets(session.options.transfer_targets)
    except InputError as exc:
        raise SubmitError(str(exc)) from None
    for target in targets:
        layers = session.model(target.model).identity.num_layers
        if target.site.layer > layers:
            raise SubmitError(f"transfer target {str(target)!r}: layer {target.site.layer} "
                              f"is out of range; {target.model} has layers 0..{layers} "
                              "(0 = embeddings output)")


#: the latency measurement's rule (what is timed, the warm-up, the repeats, the median):
#: part of a reused measurement's cache key, raised whenever what is timed changes. 2: the
#: fastest of ``latency.LATENCY_REPEATS`` repeats per prompt, withheld under load
LATENCY_VERSION = 2
#: the cost rule (``models.cost``): part of the cost's cache key
COST_VERSION = 1


@dataclass(frozen=True)
class Latency:
    """A task's latency: the median milliseconds (None when the measurement was
    withheld because the machine was loaded, ``note`` says why: ``latency.judge_latency``),
    when they were measured (UTC, ISO 8601), whether they were read from the disk
    cache instead of measured now, and the machine's matmul rate then and now
    (``latency.matmul_gflops``)."""

    ms: float | None
    measured_at: str
    reused: bool
    #: the machine's float32 matmul rate (GFLOP/s) read beside the measurement
    matmul_gflops: float
    #: the rate read in this run: the same reading as ``matmul_gflops`` unless ``reused``
    matmul_gflops_now: float
    note: str | None = None
    #: why a latency in the disk cache for the same inputs was not reused (the rate moved
    #: beyond ``latency.RATE_TOLERANCE``, or the record has no rate); None otherwise
    remeasured: str | None = None


def _probe_shape(weights: ProbeWeights) -> dict[str, object]:
    return {"n_features": weights.n_features, "hidden_sizes": list(weights.hidden_sizes),
            "n_outputs": weights.n_outputs}


def measure_cost(session: Session, meta: ProbeMeta, weights: ProbeWeights, flat: Flat,
                 site: Site) -> CostOut:
    """FLOPs per prompt from the model's config and the tokenizer: machine-independent,
    so deterministic and kept in the disk cache (keyed by the model's identity, the
    prompts, the site and the probe's shape); a miss loads the model's tokenizer."""
    resolved = session.model(meta.model)
    record = {"kind": "cost", "version": COST_VERSION,
              "model": resolved.identity.to_dict(), "site": str(site),
              "probe": _probe_shape(weights),
              "texts_sha256": sha256_json([p.text for p in flat.prompts])}

    def compute() -> dict[str, object]:
        config = load_json(resolved.path / "config.json")
        shape = BlockShape.of(config, causal=resolved.identity.architecture == "causal")
        lengths = [int(n) for n in tokenize(session.lm(meta.model), flat.prompts).lengths]
        mean_tokens = sum(lengths) / len(lengths)
        pooled = mean_tokens if site.position in ("token_avg", "attention_weighted") \
            else 0.0
        flops = forward_flops(shape, layers=site.layer, tokens=lengths) + probe_flops(
            weights.n_features, weights.hidden_sizes, pooled_tokens=pooled,
            outputs=weights.n_outputs)
        return CostOut(flops_per_prompt=float(round(flops)), tokens_per_prompt=mean_tokens,
                       blocks=site.layer).model_dump(mode="json")

    return CostOut.model_validate(session.cached_result(record, compute,
                                                        what=f"cost at {site}"))


def measure_latency(session: Session, meta: ProbeMeta, weights: ProbeWeights,
                    prompts: Sequence[Prompt], site: Site, *,
                    rate: Callable[[str], float] | None = None,
                    timer: Callable[[Session, ProbeMeta, ProbeWeights, Sequence[Prompt], Site],
                                    LatencyVerdict] | None = None) -> Latency:
    """Milliseconds of one prompt's forward pass and probe, after a warm-up (this
    machine's number, unlike the cost): the median over the timed prompts of each one's
    fastest repeat, withheld (None, with a note) when the machine was loaded while it was
    timed (``probebench.evaluation.latency``), with the machine's matmul rate read beside
    it (``rate(device)``, default ``latency.matmul_gflops``).

    A measurement is a timing, not a result, but what it times is fixed by its inputs:
    one made earlier on this machine for the same model, device, precision, site,
    probe shape, timed prompts, thread count and library versions is read from the disk
    cache (so a warm run need not load the model only to time it), with the time it was
    measured, but only while the rate read now is within ``latency.RATE_TOLERANCE`` of the
    rate recorded with it (a record without one is never reused); otherwise it is measured
    anew and, unless withheld, replaces the cached one. ``--no-cache`` (``options.cache``
    off) always measures anew, and so does the registry's evaluation
    (``options.reuse_latency`` off): what it stores is timed in the run that stores it. A
    withheld measurement is never cached. ``timer`` times the prompts (default: the model's
    forward pass and the probe, ``_latency``)."""
    with session.stage(LATENCY):
        import torch

        resolved = session.model(meta.model)
        sample = list(prompts[: session.options.latency_prompts])
        record = {"kind": "latency", "version": LATENCY_VERSION,
                  "model": resolved.identity.to_dict(), "device": resolved.device,
                  "hardware": hardware(resolved.device), "threads": torch.get_num_threads(),
                  "site": str(site), "probe": {"type": meta.probe_type,
                                               **_probe_shape(weights)},
                  "texts_sha256": sha256_json([p.text for p in sample]),
                  "warmup": LATENCY_WARMUP}  # the result key adds the library versions
        # read before the timing, in the thread count it runs in: the machine's state now
        now = float((rate or matmul_gflops)(resolved.device))
        opts = session.options
        store = ActivationCache() if opts.cache and opts.reuse_latency else None
        key = None if store is None else store.result_key(record)
        cached = None if store is None or key is None else _read_json(store, key)
        remeasured = None
        if cached is not None:
            then = _rate_of(cached)
            remeasured = rate_mismatch(then, now)
            if remeasured is None and then is not None:
                session.say(f"latency at {site}: {cached['ms']:.1f} ms as measured on this "
                            f"machine at {cached['measured_at']} at a matmul rate of "
                            f"{then:.1f} GFLOP/s ({now:.1f} now; --no-cache measures anew)")
                return Latency(ms=float(cached["ms"]), measured_at=str(cached["measured_at"]),
                               reused=True, matmul_gflops=then, matmul_gflops_now=now,
                               note=cached.get("note"))
            session.say(f"latency at {site}: measured anew, as {remeasured}")
        verdict = (timer or _latency)(session, meta, weights, sample, site)
        if verdict.note:
            session.say(f"latency at {site}: {verdict.note}")
        value = {"ms": verdict.ms, "measured_at": utc_now(), "note": verdict.note,
                 "matmul_gflops": now}
        if store is not None and key is not None and verdict.ms is not None:
            data = json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")
            store.put(key, np.frombuffer(data, dtype=np.uint8),
                      {"result": f"latency at {site}"}, np.uint8)
        return Latency(ms=verdict.ms, measured_at=str(value["measured_at"]), reused=False,
                       matmul_gflops=now, matmul_gflops_now=now, note=verdict.note,
                       remeasured=remeasured)


def _read_json(store: ActivationCache, key: str) -> Mapping[str, Any] | None:
    """The JSON object cached under ``key``; None on a miss or an entry that is not a
    JSON object with a latency (rebuilt by the measurement that follows)."""
    hit = store.get(key, None, np.uint8)
    if hit is None:
        return None
    try:
        value = json.loads(hit.tobytes().decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("ms"), int | float) \
            or "measured_at" not in value:
        return None
    return value


def _rate_of(record: Mapping[str, Any]) -> float | None:
    rate = record.get("matmul_gflops")
    return float(rate) if isinstance(rate, int | float) else None


def _latency(session: Session, meta: ProbeMeta, weights: ProbeWeights,
             sample: Sequence[Prompt], site: Site) -> LatencyVerdict:
    import torch

    lm = session.lm(meta.model)
    for prompt in sample[:LATENCY_WARMUP]:
        weights.predict_proba(run_extraction(lm, [prompt], [site], progress=False)[site])

    def run(i: int) -> None:
        weights.predict_proba(run_extraction(lm, [sample[i]], [site], progress=False)[site])

    return time_prompts(run, len(sample), own_threads=torch.get_num_threads())



def distribution_shift(session: Session, model: str, task_id: str, flat: Flat, site: Site,
                       score: Callable[[np.ndarray], np.ndarray], y: np.ndarray,
                       item_of: np.ndarray, note: str) -> FlaggedOut:
    """The task's headline AUROC again on the same test prompts read after the fixed long
    context (``session.CONTEXT_FILE``): ``score`` turns the shifted activations into what
    ``session.ci`` scores against ``y``. Null with the reason when the shift stage is
    skipped or the site cannot be read after the context."""
    opts = session.options
    if not opts.runs("shift"):
        return FlaggedOut(value=None, imputed=False, note=opts.not_run("shift"))
    try:
        shifted = session.activations(model, f"{task_id}/test", flat.prompts, site,
                                      prefix=CONTEXT_FILE.read_text("utf-8"))
    except SiteError as exc:
        return FlaggedOut(value=None, imputed=False, note=f"not measurable: {exc}")
    iv = session.ci("distshift_auroc", y, score(shifted), item_of, task_id, "distshift")
    return FlaggedOut(value=iv.value, ci_low=iv.ci_low, ci_high=iv.ci_high, imputed=False,
                      note=note)

__all__ = [
    "COST_VERSION",
    "LATENCY_VERSION",
    "Latency",
    "check_transfer_targets",
    "distribution_shift",
    "measure_cost",
    "measure_latency",
    "measure_transfer",
    "transfer_to",
]
