"""What a submission run shares: its options, and the ``Session`` that caches work across
several submissions.

A ``Session`` loads each model at most once (and not at all when every activation is
cached), loads and verifies each task once, and memoises activations, surprisals, the
tasks' baselines and the guards. Its ``auroc_ci`` and ``mean_ci`` are the headline's
intervals seeded from the run's seed and bootstrap count. Nothing here reads the
registry or the working directory: the task catalog and the guard lookup are the
caller's.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from probebench.errors import ProbebenchError
from probebench.evaluation.definitions import LATENCY_PROMPTS
from probebench.evaluation.guards import Guard, GuardLookup, no_guards
from probebench.evaluation.headline import auroc_interval, mean_interval, sub_seed
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.evaluation.results import BaselineOut, IntervalOut
from probebench.hashing import sha256_json
from probebench.models.activations import BATCH_TOKENS, extract, run_extraction
from probebench.models.cache import ActivationCache, cached_scores
from probebench.models.loading import (
    LoadedModel,
    ResolvedModel,
    load_model,
    random_init_model,
    resolve_model,
)
from probebench.models.surprisal import SCORING_VERSION, sentence_log_probs
from probebench.prompts import Prompt
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import TaskData

#: the fixed long neutral context of the distribution-shift pass
CONTEXT_FILE = Path(__file__).with_name("context") / "declaration.txt"
#: prompts per batch of the model's own scoring (surprisal); with BATCH_TOKENS the batch
#: budget, part of the scores' cache key in reduced precision
SCORING_BATCH = 32
#: the stages that run a model, as progress bars and ``Session.stage_passes`` name them
ACTIVATIONS = "activations"
SHIFT = "distribution-shift pass"
SURPRISAL = "surprisal baseline"
RANDOM_INIT = "random-init control"


class SubmitError(ProbebenchError):
    """The artifact or the request cannot be evaluated (reported, exit code 1)."""

    exit_code = 1


@dataclass
class SubmitOptions:
    """How a submission is evaluated; everything else comes from the artifact and tasks."""

    seed: int = 0
    bootstrap: int = N_RESAMPLES
    device: str = "auto"
    #: the model's precision; auto is float32, the reference (see evaluation/precision)
    dtype: str = "auto"
    transfer_targets: Sequence[str] = ()
    #: model -> its eval-awareness guard (``registry.guards.RegistryGuards`` reads
    #: registry/guards.yaml); the default has none, so corrections are imputed
    guards: GuardLookup = no_guards
    #: the on-disk cache of activations and of the model's own scores (surprisal)
    cache: bool = True
    progress: bool = True
    latency_prompts: int = LATENCY_PROMPTS
    #: padded tokens and prompts per extraction batch (None: sized from the device); in
    #: float32 another budget changes results only within the reproducibility contract
    batch_tokens: int | None = None
    max_batch_size: int | None = None
    #: evaluate only the first N items of each task's test set: a quick look, recorded
    #: in the result and refused by the registry (None: every item)
    limit: int | None = None


def limit_note(limit: int) -> str:
    """What a limited result says about itself, in submission.json and REPORT.md."""
    return f"limited to {limit} items per task: not for the registry"


@dataclass(frozen=True)
class _ActsKey:
    model: str
    prompts: str  #: which prompt list, e.g. "verb_grammar/test"
    site: Site
    shifted: bool


@dataclass
class Session:
    """What several submissions share: the task catalog, loaded models and tasks, and
    work that does not depend on the probe (activations, surprisals, the tasks' baselines,
    guards)."""

    catalog: TaskCatalog
    options: SubmitOptions = field(default_factory=SubmitOptions)
    resolved: dict[str, ResolvedModel] = field(default_factory=dict)
    loaded: dict[str, LoadedModel] = field(default_factory=dict)
    _acts: dict[_ActsKey, np.ndarray] = field(default_factory=dict)
    _surprisal: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    #: the tasks' baselines by (model, task, site), filled by ``task_baselines``
    baseline_memo: dict[tuple[str, str, Site], dict[str, BaselineOut]] = field(
        default_factory=dict)
    _random_lms: dict[str, LoadedModel] = field(default_factory=dict)
    _random_acts: dict[_ActsKey, np.ndarray] = field(default_factory=dict)
    _guards: dict[str, Guard | None] = field(default_factory=dict)
    _tasks: dict[str, TaskData] = field(default_factory=dict)
    #: forward passes of a model run for activations, shifted ones included (disk-cache
    #: hits not counted)
    passes: int = 0
    #: forward passes by stage (``ACTIVATIONS``, ``SHIFT``, ``SURPRISAL``, ``RANDOM_INIT``;
    #: one per prompt list that ran the model, disk-cache hits not counted). The random-
    #: init control is never disk-cached, where it could pass for the model, and the
    #: latency measurement, which times the model itself, is not counted.
    stage_passes: dict[str, int] = field(default_factory=dict)
    #: wall seconds of those passes by stage (a pass that loads the model counts the load)
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def say(self, message: str) -> None:
        if self.options.progress:
            print(f"probebench: {message}", file=sys.stderr, flush=True)

    def _ran(self, stage: str, since: float) -> None:
        """Count a forward pass of ``stage`` that began at ``since`` (perf_counter)."""
        self.stage_passes[stage] = self.stage_passes.get(stage, 0) + 1
        self.stage_seconds[stage] = (self.stage_seconds.get(stage, 0.0)
                                     + time.perf_counter() - since)

    def task(self, task_id: str) -> TaskData:
        """The task, its test set cut to its first ``options.limit`` items when set."""
        if task_id not in self._tasks:
            data = self.catalog.load(task_id)
            limit = self.options.limit
            if limit is not None:
                data = TaskData(data.spec, {**data.splits, "test": data.test[:limit]})
            self._tasks[task_id] = data
        return self._tasks[task_id]

    def model(self, name: str) -> ResolvedModel:
        if name not in self.resolved:
            self.resolved[name] = resolve_model(name, device=self.options.device,
                                                dtype=self.options.dtype,
                                                progress=self.options.progress)
        return self.resolved[name]

    def lm(self, name: str) -> LoadedModel:
        if name not in self.loaded:
            self.say(f"loading {name}")
            self.loaded[name] = load_model(self.model(name), progress=self.options.progress)
        return self.loaded[name]

    def activations(self, model: str, key: str, prompts: Sequence[Prompt], site: Site,
                    prefix: str | None = None) -> np.ndarray:
        return self.activations_at(model, key, prompts, [site], prefix)[site]

    def activations_at(self, model: str, key: str, prompts: Sequence[Prompt],
                       sites: Sequence[Site], prefix: str | None = None, *,
                       disk_cache: bool = True) -> dict[Site, np.ndarray]:
        """Activations at every one of ``sites``, from one forward pass over ``prompts``
        for the sites neither memoised nor in the disk cache (``passes`` counts the
        passes that ran the model). ``disk_cache=False`` keeps them in memory only (a
        sealed holdout's prompts leave nothing on disk)."""
        shifted = prefix is not None
        missing = [s for s in dict.fromkeys(sites)
                   if _ActsKey(model, key, s, shifted) not in self._acts]
        if missing:
            stage = SHIFT if shifted else ACTIVATIONS
            source: LoadedModel | ResolvedModel = self.loaded.get(model) or self.model(model)
            since = time.perf_counter()
            result = extract(source, prompts, missing,
                             cache=self.options.cache and disk_cache, prefix=prefix,
                             progress=self.options.progress,
                             batch_tokens=self.options.batch_tokens,
                             max_batch_size=self.options.max_batch_size,
                             desc=f"{stage} {key} @ {', '.join(map(str, missing))}")
            if result.loaded is not None:  # a cache miss loaded the model: keep it
                self.loaded.setdefault(model, result.loaded)
            if set(missing) - result.cached:
                self.passes += 1
                self._ran(stage, since)
            for s in missing:
                self._acts[_ActsKey(model, key, s, shifted)] = result[s]
        return {s: self._acts[_ActsKey(model, key, s, shifted)] for s in sites}

    def random_activations(self, model: str, key: str, prompts: Sequence[Prompt],
                           site: Site) -> np.ndarray:
        """Activations at ``site`` of a randomly initialised copy of ``model`` (seeded
        from the run's seed; never cached on disk, where it could pass for the model)."""
        memo = _ActsKey(model, key, site, False)
        if memo not in self._random_acts:
            if model not in self._random_lms:
                self._random_lms[model] = random_init_model(
                    self.lm(model), sub_seed(self.options.seed, "random-init"))
            since = time.perf_counter()
            self._random_acts[memo] = run_extraction(
                self._random_lms[model], prompts, [site],
                batch_tokens=self.options.batch_tokens,
                max_batch_size=self.options.max_batch_size, progress=self.options.progress,
                desc=f"{RANDOM_INIT} {key} @ {site}")[site]
            self._ran(RANDOM_INIT, since)
        return self._random_acts[memo]

    def guard(self, model: str) -> Guard | None:
        """The eval-awareness guard of ``model`` (looked up once per session)."""
        if model not in self._guards:
            self._guards[model] = self.options.guards(model)
        return self._guards[model]

    def lm_scores(self, model: str, scoring: Mapping[str, object], n: int,
                  compute: Callable[[LoadedModel], np.ndarray | None]) -> np.ndarray | None:
        """``n`` scores of ``model`` itself, through the on-disk cache (keyed by the
        model's identity, the device and ``scoring``: the inputs' hash and the rule with
        its version). On a hit the model is not loaded; a miss loads it and runs
        ``compute`` (counted as a ``SURPRISAL`` pass when it gives scores)."""
        resolved = self.model(model)
        ident = resolved.identity
        store = ActivationCache() if self.options.cache else None
        # in reduced precision the batch composition changes the numbers
        batching = None if ident.dtype == "float32" else (BATCH_TOKENS, SCORING_BATCH)

        def run() -> np.ndarray | None:
            lm = self.lm(model)
            since = time.perf_counter()
            scores = compute(lm)
            if scores is not None:
                self._ran(SURPRISAL, since)
            return scores

        scores, hit = cached_scores(store, ident, resolved.device, scoring, n, run,
                                    batching=batching)
        if hit:
            self.say(f"{SURPRISAL} of {model} ({scoring['kind']}): from the disk cache")
        return scores

    def surprisal_scores(self, model: str, task_id: str, prompts: Sequence[Prompt]
                         ) -> np.ndarray:
        """``log2 P(text)`` of each prompt under ``model`` (the surprisal baseline),
        through the on-disk cache."""
        key = (model, task_id)
        if key not in self._surprisal:
            # every token scored after the model's document start (models/start_token.py:
            # BOS, else EOS, a chat-turn marker giving way to the pre-training document
            # separator), as the BLiMP paper and lm-evaluation-harness score minimal pairs
            scoring = {"kind": "sentence_log_probs", "rule": SCORING_VERSION,
                       "start_token": None,
                       "texts_sha256": sha256_json([p.text for p in prompts])}
            scores = self.lm_scores(model, scoring, len(prompts), lambda lm: sentence_log_probs(
                lm, prompts, max_batch_size=SCORING_BATCH, progress=self.options.progress,
                desc=f"{SURPRISAL} {task_id}"))
            assert scores is not None
            self._surprisal[key] = scores
        return self._surprisal[key]

    def auroc_ci(self, y: np.ndarray, s: np.ndarray, item_of: np.ndarray,
                 *seed_parts: str) -> IntervalOut:
        """AUROC with its item-bootstrap CI, seeded from the run's seed and ``seed_parts``."""
        return auroc_interval(y, s, item_of, seed=self.options.seed,
                              n_resamples=self.options.bootstrap, parts=seed_parts)

    def mean_ci(self, values: Sequence[float | None], *seed_parts: str) -> IntervalOut:
        """The mean of item scores with its item-bootstrap CI, seeded likewise."""
        return mean_interval(values, seed=self.options.seed,
                             n_resamples=self.options.bootstrap, parts=seed_parts)


__all__ = ["ACTIVATIONS", "CONTEXT_FILE", "RANDOM_INIT", "SCORING_BATCH", "SHIFT", "SURPRISAL",
           "Session", "SubmitError", "SubmitOptions", "limit_note"]
