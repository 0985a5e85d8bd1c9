"""What a result says about using the probe outside its task: how far it carries to
other models (transfer) and what running it costs (FLOPs per prompt and measured
latency). Binary and multi-class tasks share the cost and the latency; transfer is
defined for binary probes only.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

import numpy as np

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.evaluation.definitions import LATENCY_WARMUP, TRANSFER_IMPUTE
from probebench.evaluation.headline import Flat
from probebench.evaluation.results import CostOut, FlaggedOut
from probebench.evaluation.session import Session
from probebench.jsonsafe import load_json
from probebench.models.activations import run_extraction, tokenize
from probebench.models.cost import BlockShape, forward_flops, probe_flops
from probebench.prompts import Prompt
from probebench.sites import Site


def measure_transfer(session: Session, weights: ProbeWeights, task_id: str, flat: Flat,
                     site: Site, acts: np.ndarray) -> dict[str, FlaggedOut]:
    """Pearson r of the probe's logits on the declared transfer targets' activations
    against its own, over the test prompts (a target of another hidden size: None)."""
    targets = list(session.options.transfer_targets)
    if not targets:
        return {"undeclared": FlaggedOut(value=TRANSFER_IMPUTE, imputed=True,
                                         note="no transfer target declared")}
    own = weights.decision_function(acts)
    out = {}
    for target in targets:
        resolved = session.model(target)
        if resolved.identity.hidden_size != weights.n_features:
            out[target] = FlaggedOut(value=None, imputed=False,
                                     note=f"hidden size {resolved.identity.hidden_size} differs "
                                          f"from the probe's {weights.n_features}")
            continue
        other = weights.decision_function(
            session.activations(target, f"{task_id}/test", flat.prompts, site))
        r = float(np.corrcoef(own, other)[0, 1]) if own.std() and other.std() else 0.0
        out[target] = FlaggedOut(value=r, imputed=False,
                                 note="Pearson r of logits over the test prompts")
    return out


def measure_cost(session: Session, meta: ProbeMeta, weights: ProbeWeights, flat: Flat,
                 site: Site) -> CostOut:
    """FLOPs per prompt from the model's config and the tokenizer: machine-independent."""
    resolved = session.model(meta.model)
    config = load_json(resolved.path / "config.json")
    shape = BlockShape.of(config, causal=resolved.identity.architecture == "causal")
    lengths = [int(n) for n in tokenize(session.lm(meta.model), flat.prompts).lengths]
    mean_tokens = sum(lengths) / len(lengths)
    pooled = mean_tokens if site.position in ("token_avg", "attention_weighted") else 0.0
    flops = forward_flops(shape, layers=site.layer, tokens=lengths) + probe_flops(
        weights.n_features, weights.hidden_sizes, pooled_tokens=pooled,
        outputs=weights.n_outputs)
    return CostOut(flops_per_prompt=float(round(flops)), tokens_per_prompt=mean_tokens,
                   blocks=site.layer)


def measure_latency(session: Session, meta: ProbeMeta, weights: ProbeWeights,
                    prompts: Sequence[Prompt], site: Site) -> float:
    """Median milliseconds of one prompt's forward pass and probe, after a warm-up
    (this machine's number, unlike the cost)."""
    lm = session.lm(meta.model)
    sample = list(prompts[: session.options.latency_prompts])
    for prompt in sample[:LATENCY_WARMUP]:
        weights.predict_proba(run_extraction(lm, [prompt], [site], progress=False)[site])
    times = []
    for prompt in sample:
        start = time.perf_counter()
        weights.predict_proba(run_extraction(lm, [prompt], [site], progress=False)[site])
        times.append((time.perf_counter() - start) * 1000)
    return float(statistics.median(times))


__all__ = ["measure_cost", "measure_latency", "measure_transfer"]
