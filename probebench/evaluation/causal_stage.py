"""The causal test inside ``submit``: does moving the model along the probe's direction
move the model's own behaviour? (``probebench.causal``, docs/causal.md)

Opt-in (``SubmitOptions.causal``, ``submit --causal``) and not one of the skip-able
``STAGES``: a run without it is a complete submission, and ``stages_skipped`` never names
it. For each task, ``causal_blocks`` runs the test on the session's catalog and model
(loaded only when the test applies and the disk cache does not hold the block) and gives
``Submission.causal``: task -> ``CausalOut``, reported, never ranked.

The test's code lives a floor above this one (``probebench.causal`` reads the probe
through ``probebench.probe``), so it comes in as ``SubmitOptions.causal_method``
(``probebench.causal.effect.SUBMISSION_METHOD``), as the guard lookup does.

Each block is a deterministic function of its inputs and goes through the on-disk result
cache (``Session.cached_result``) under a record of all of them: the bundle hash, the
task's version, test-set hash and declared readouts, the model's identity and device, the
site, the grid, the controls, the seed, the item cap, the bootstrap and the test's code
version; a hit gives the identical block and loads no model. Its wall and CPU seconds are
the ``CAUSAL`` stage of ``timing.stages`` (its passes: the steered upper passes), never
part of the block.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from probebench.evaluation.results import CausalOut
from probebench.evaluation.session import CausalMethod, Session, SubmitError

if TYPE_CHECKING:
    from probebench.artifact.meta import ProbeMeta
    from probebench.artifact.weights import ProbeWeights
    from probebench.sites import Site

#: the stage the causal test's time counts in (``timing.stages``)
CAUSAL = "causal"
#: the keys of ``CausalResult.to_dict()`` that ``CausalOut`` leaves out: the submission
#: names the probe, model and site once, the task is the block's key, the cost is timing
_NOT_IN_BLOCK = ("probe", "task", "model", "site", "cost")


def causal_method(session: Session) -> CausalMethod | None:
    """The method the options carry, None when ``causal`` is off; ``SubmitError`` when
    it is on without one (``submit`` asks before any model work)."""
    method = session.options.causal_method
    if not session.options.causal:
        return None
    if method is None:
        raise SubmitError("SubmitOptions(causal=True) needs causal_method="
                          "probebench.causal.effect.SUBMISSION_METHOD (the causal test "
                          "lives a floor above probebench.evaluation); `probebench submit "
                          "--causal` supplies it")
    return method


def max_items(session: Session, method: CausalMethod) -> int:
    """Items of each task's test split the test reads: the method's cap, and with
    ``--limit N`` at most N."""
    limit = session.options.limit
    return method.max_items if limit is None else min(limit, method.max_items)


def to_block(result: dict[str, Any]) -> dict[str, Any]:
    """``CausalResult.to_dict()`` as the JSON of a ``CausalOut``: without the keys the
    submission holds elsewhere, no ablation block when none was measured, and through a
    JSON round trip (a cache hit gives the same bytes as the miss that stored it)."""
    out = {k: v for k, v in result.items() if k not in _NOT_IN_BLOCK}
    if not out.get("ablation"):
        out["ablation"] = None
    return dict(json.loads(json.dumps(out, sort_keys=True)))


def causal_block(session: Session, task_id: str, meta: ProbeMeta, weights: ProbeWeights,
                 site: Site, bundle_sha256: str) -> CausalOut:
    """The causal test of the probe on one task, through the disk cache."""
    method, opts = session.options.causal_method, session.options
    if method is None:
        raise SubmitError("no causal method given (SubmitOptions.causal_method)")
    spec = session.catalog.spec(task_id)
    resolved = session.model(meta.model)
    cap = max_items(session, method)
    record = {"kind": "causal", "version": method.version, "bundle_sha256": bundle_sha256,
              "task": task_id, "task_version": spec.version,
              "test_sha256": spec.test_sha256,
              "readouts": spec.model_dump(mode="json",
                                          include={"readout", "steering_readout"}),
              "model": resolved.identity.to_dict(), "device": resolved.device,
              "site": str(site), "alphas": [float(a) for a in method.alphas],
              "n_controls": method.n_controls, "seed": opts.seed, "max_items": cap,
              "n_resamples": opts.bootstrap}

    def compute() -> dict[str, Any]:
        result = method.run(meta=meta, weights=weights, bundle_sha256=bundle_sha256,
                            task=task_id, catalog=session.catalog,
                            load=lambda: session.lm(meta.model), alphas=method.alphas,
                            n_controls=method.n_controls, seed=opts.seed, max_items=cap,
                            n_resamples=opts.bootstrap)
        passes = int(result.get("cost", {}).get("upper_passes", 0))
        session.stage_passes[CAUSAL] = session.stage_passes.get(CAUSAL, 0) + passes
        return to_block(result)

    stored = session.cached_result(record, compute, what=f"causal test of {task_id} at {site}")
    return CausalOut.model_validate(stored)


def causal_blocks(session: Session, tasks: Sequence[str], meta: ProbeMeta,
                  weights: ProbeWeights, site: Site, bundle_sha256: str
                  ) -> dict[str, CausalOut] | None:
    """``Submission.causal``: task -> its causal block, timed as the ``CAUSAL`` stage;
    None when ``options.causal`` is off. Runs in the quick profile too (asked for)."""
    if causal_method(session) is None:
        return None
    out: dict[str, CausalOut] = {}
    with session.stage(CAUSAL):
        for task_id in tasks:
            session.say(f"causal test of {task_id} at {site}")
            out[task_id] = causal_block(session, task_id, meta, weights, site,
                                        bundle_sha256)
    return out


__all__ = ["CAUSAL", "causal_block", "causal_blocks", "causal_method", "max_items",
           "to_block"]
