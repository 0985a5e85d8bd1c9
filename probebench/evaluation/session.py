"""What a submission run shares: its options, and the ``Session`` that caches work across
several submissions.

A ``Session`` loads each model at most once (and not at all when every activation is
cached), loads and verifies each task once, and memoises activations, surprisals, the
tasks' baselines and the guards. Its ``ci`` and ``mean_ci`` are the headline's
intervals (``headline.metric_interval``) seeded from the run's seed and bootstrap count.
Nothing here reads the registry or the working directory: the task catalog and the guard
lookup are the caller's.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from probebench.artifact.meta import ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import ProbebenchError
from probebench.evaluation.definitions import LATENCY_PROMPTS
from probebench.evaluation.guards import Guard, GuardLookup, no_guards
from probebench.evaluation.headline import (
    mean_interval,
    metric_interval,
    recall_at_control,
    sub_seed,
)
from probebench.evaluation.metrics import N_RESAMPLES
from probebench.evaluation.published import BaselineLookup, no_published_baselines
from probebench.evaluation.results import BaselineOut, ControlSetOut, IntervalOut, TaskResult
from probebench.hashing import sha256_json
from probebench.models.activations import BATCH_TOKENS, extract
from probebench.models.cache import ActivationCache, cached_json, cached_scores
from probebench.models.loading import (
    LoadedModel,
    ResolvedModel,
    load_model,
    random_init_model,
    random_init_resolved,
    release_memory,
    resolve_model,
)
from probebench.models.surprisal import SCORING_VERSION, sentence_log_probs
from probebench.prompts import Prompt
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families import TaskData

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
#: the stages that fit or resample without a model, as ``Session.stage_seconds`` names them
BASELINES = "task baselines"
SELECTIVITY = "selectivity"
#: the latency measurement (loading the model when nothing before needed it)
LATENCY = "latency"
#: the stages a run may leave out (``SubmitOptions.skip``, ``submit --stages/--skip``):
#: command-line name -> the stage's name in ``timing.stages``. ``activations`` is the
#: headline's own pass and cannot be left out; ``baselines`` is computing the task
#: baselines (the registry's published ones are still read, they cost nothing);
#: ``surprisal`` and ``random-init`` are the model passes of two of them
STAGES: dict[str, str] = {"activations": ACTIVATIONS, "shift": SHIFT, "surprisal": SURPRISAL,
                          "random-init": RANDOM_INIT, "baselines": BASELINES,
                          "selectivity": SELECTIVITY, "latency": LATENCY}
#: ``Submission.profile`` of the quick profile (``SubmitOptions.quick``)
QUICK = "quick"


class CausalRun(Protocol):
    """The causal test of one task (``probebench.causal.effect.submission_run``): the
    ``CausalResult.to_dict()`` of the validated probe's direction on ``task``, loading the
    model through ``load`` only when the test applies."""

    def __call__(self, *, meta: ProbeMeta, weights: ProbeWeights, bundle_sha256: str,
                 task: str, catalog: TaskCatalog, load: Callable[[], LoadedModel],
                 alphas: Sequence[float], n_controls: int, seed: int, max_items: int,
                 n_resamples: int) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CausalMethod:
    """How ``submit`` runs the causal test (``evaluation.causal_stage``). The test lives
    in ``probebench.causal``, a floor above this one, so it comes in through the options
    (``probebench.causal.effect.SUBMISSION_METHOD``), as the guard lookup does."""

    run: CausalRun
    #: the test's code version (part of the cache record)
    version: str
    #: the steering grid, in standard deviations along the direction
    alphas: tuple[float, ...]
    #: random control directions per task
    n_controls: int
    #: items of each task's test split read (``--limit N`` bounds it further)
    max_items: int


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
    #: read a latency measured earlier on this machine for the same inputs from the disk
    #: cache (``timing.latency_reused`` says so) instead of timing the model again;
    #: ``runs.evaluate`` turns it off, so the latency the registry keeps is its run's
    reuse_latency: bool = True
    #: the registry's published task baselines (``evaluation.published``): a task's
    #: baselines stored for exactly this run's inputs are read, not computed again
    #: (``timing.baselines_published`` says so); ``runs.evaluate`` turns it off, so the
    #: baselines the registry keeps are computed in its run
    published_baselines: BaselineLookup = no_published_baselines
    #: padded tokens and prompts per extraction batch (None: sized from the device); in
    #: float32 another budget changes results only within the reproducibility contract
    batch_tokens: int | None = None
    max_batch_size: int | None = None
    #: evaluate only the first N items of each split of each task (test, train and
    #: validation) and the first N prompts of its control set, in file order: a quick
    #: look, recorded in the result and refused by the registry (None: every item)
    limit: int | None = None
    #: also read the probe on every other registered task of its tasks' family (the
    #: generalisation block: ``probebench.evaluation.generalisation``); reported apart
    #: from the tasks' results, never ranked
    generalisation: bool = True
    #: the stages not to run, by their command-line names (``STAGES``; ``submit --skip``
    #: or ``--stages``, see ``stages_to_skip``): their fields are left empty (None, or a
    #: note saying they did not run), ``Submission.stages_skipped`` names them, and the
    #: registry refuses the submission, as it refuses a limited one
    skip: frozenset[str] = frozenset()
    #: the quick profile (``submit --quick``): test AUROC with its CI, ECE, the per-slice
    #: accuracies and the registry's published baselines where they apply; every other
    #: stage is skipped and so is the generalisation block (``Submission.profile``)
    quick: bool = False
    #: also run the causal test of the probe's direction on each task
    #: (``evaluation.causal_stage``, ``submit --causal``): opt-in, not one of ``STAGES``,
    #: so a run without it is complete; ``Submission.causal``, reported, never ranked
    causal: bool = False
    #: the test ``causal`` runs (``probebench.causal.effect.SUBMISSION_METHOD``;
    #: ``probebench submit --causal`` supplies it): required when ``causal`` is on
    causal_method: CausalMethod | None = None

    def __post_init__(self) -> None:
        self.skip = frozenset(self.skip)
        check_skip(self.skip)

    def skipped(self) -> dict[str, str]:
        """The stages this run leaves out (command-line name -> why), in ``STAGES``
        order, then ``control-recall`` and ``generalisation`` when the quick profile
        leaves them out (a pass over a task's control prompts, and the sibling tasks)."""
        check_skip(self.skip)
        out = {}
        for name in STAGES:
            if self.quick and name != "activations":
                out[name] = "the quick profile, --quick"
            elif name in self.skip:
                out[name] = f"the run's options, --skip {name}"
        if self.quick:
            out["control-recall"] = "the quick profile, --quick"
            out["generalisation"] = "the quick profile, --quick"
        return out

    def runs(self, stage: str) -> bool:
        """Whether the stage ``stage`` (a command-line name of ``STAGES``) runs."""
        if stage not in STAGES:
            raise SubmitError(f"unknown stage {stage!r}; the stages are "
                              f"{', '.join(STAGES)}")
        return stage not in self.skipped()

    def not_run(self, stage: str) -> str:
        """The note a field of the skipped ``stage`` carries instead of a number."""
        return f"not run: the {stage} stage was skipped ({self.skipped()[stage]})"


def check_skip(skip: frozenset[str] | set[str]) -> None:
    """Refuse an unknown stage name or skipping ``activations`` (``SubmitError``)."""
    unknown = sorted(set(skip) - set(STAGES))
    if unknown:
        raise SubmitError(f"unknown stage{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(map(repr, unknown))}; the stages are "
                          f"{', '.join(STAGES)}")
    if "activations" in skip:
        raise SubmitError("the activations stage cannot be skipped: every other number "
                          "reads its activations (skip the others, or use --quick)")


def stages_to_skip(stages: Sequence[str] | None = None, skip: Sequence[str] = ()
                   ) -> frozenset[str]:
    """The stages to leave out, from the stages to run (``--stages``: None runs every
    stage; ``activations`` always runs, named or not) and those to leave out
    (``--skip``). A stage both named and skipped, an unknown name and skipping
    ``activations`` are refused (``SubmitError``).

    >>> sorted(stages_to_skip(["shift"], ["latency"]))
    ['baselines', 'latency', 'random-init', 'selectivity', 'surprisal']
    """
    names = [*(stages or ()), *skip]
    check_skip(set(names) - {"activations"})  # unknown names first
    check_skip(set(skip))
    both = sorted(set(stages or ()) & set(skip))
    if both:
        raise SubmitError(f"{', '.join(both)}: named in both --stages and --skip")
    out = set(skip)
    if stages is not None:
        out |= set(STAGES) - set(stages) - {"activations"}
    return frozenset(out)


def limit_note(limit: int) -> str:
    """What a limited result says about itself, in submission.json and REPORT.md."""
    return f"limited to {limit} items per task: not for the registry"


#: a moment as ``_now`` reads it: (wall seconds, the process's CPU seconds)
_Clock = tuple[float, float]


def _now() -> _Clock:
    return time.perf_counter(), time.process_time()


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
    #: (model, task, site) -> the SHA-256 of every input of its baselines, and where
    #: the registry's record was read from when they were not computed
    baselines_sha256: dict[tuple[str, str, Site], str] = field(default_factory=dict)
    baselines_published: dict[tuple[str, str, Site], str] = field(default_factory=dict)
    _random_lms: dict[str, LoadedModel] = field(default_factory=dict)
    _random_acts: dict[_ActsKey, np.ndarray] = field(default_factory=dict)
    #: model -> (the lookup that answered, its guard): a session whose ``options.guards``
    #: changes (``options_for``) asks the new lookup
    _guards: dict[str, tuple[GuardLookup, Guard | None]] = field(default_factory=dict)
    _tasks: dict[str, TaskData] = field(default_factory=dict)
    #: forward passes of a model run for activations, shifted ones included (disk-cache
    #: hits not counted)
    passes: int = 0
    #: forward passes by stage (``ACTIVATIONS``, ``SHIFT``, ``SURPRISAL``, ``RANDOM_INIT``;
    #: one per prompt list that ran the model, disk-cache hits not counted). The random-
    #: init control is disk-cached under its own identity (``random_init_resolved``), so
    #: it never passes for the model; the latency measurement, which times the model
    #: itself, is not counted.
    stage_passes: dict[str, int] = field(default_factory=dict)
    #: wall seconds by stage, cache reads included (a pass that loads the model counts
    #: the load); ``BASELINES`` and ``SELECTIVITY`` count their fits and resamples
    stage_seconds: dict[str, float] = field(default_factory=dict)
    #: tokens the model read by stage (``ExtractionResult.tokens``; surprisal: the
    #: prompts' tokens)
    stage_tokens: dict[str, int] = field(default_factory=dict)
    #: the process's CPU seconds by stage (every thread: ``time.process_time``), counted
    #: as ``stage_seconds`` are
    stage_cpu_seconds: dict[str, float] = field(default_factory=dict)
    #: wall and CPU seconds timed by stages inside the current ``stage`` block
    _inner: float = 0.0
    _inner_cpu: float = 0.0

    def say(self, message: str) -> None:
        if self.options.progress:
            print(f"probebench: {message}", file=sys.stderr, flush=True)

    def _ran(self, stage: str, since: _Clock, tokens: int = 0) -> None:
        """Count a forward pass of ``stage`` that began at ``since`` (``_now``) and
        read ``tokens`` tokens."""
        self.stage_passes[stage] = self.stage_passes.get(stage, 0) + 1
        self.stage_tokens[stage] = self.stage_tokens.get(stage, 0) + tokens
        self.timed(stage, since)

    def timed(self, stage: str, since: _Clock) -> None:
        """Add the wall and CPU time since ``since`` (``_now``) to ``stage``."""
        wall, cpu = (now - then for now, then in zip(_now(), since, strict=True))
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + wall
        self.stage_cpu_seconds[stage] = self.stage_cpu_seconds.get(stage, 0.0) + cpu
        self._inner += wall
        self._inner_cpu += cpu

    @contextmanager
    def options_for(self, **changes: Any) -> Iterator[SubmitOptions]:
        """Run the block with ``options`` changed as ``changes`` say (a copy: the
        caller's ``SubmitOptions`` object is never written), then put the old ones back,
        whatever the block raised. What the session memoises from an option follows it:
        the guards (``guard``: per lookup) and the task baselines (``task_baselines``
        drops those read from published records when the lookup is off)."""
        saved = self.options
        self.options = replace(saved, **changes)
        try:
            yield self.options
        finally:
            self.options = saved

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as ``name``, less the stages timed inside it (a baseline's
        random-init pass counts as ``RANDOM_INIT``, not twice)."""
        start, outer, outer_cpu = _now(), self._inner, self._inner_cpu
        self._inner = self._inner_cpu = 0.0
        try:
            yield
        finally:
            wall, cpu = (now - then for now, then in zip(_now(), start, strict=True))
            self.stage_seconds[name] = (self.stage_seconds.get(name, 0.0)
                                        + wall - self._inner)
            self.stage_cpu_seconds[name] = (self.stage_cpu_seconds.get(name, 0.0)
                                            + cpu - self._inner_cpu)
            self._inner = outer + wall
            self._inner_cpu = outer_cpu + cpu

    def task(self, task_id: str) -> TaskData:
        """The task; with ``options.limit``, every split cut to its first ``limit``
        items (test, train and validation: every stage is bounded)."""
        if task_id not in self._tasks:
            data = self.catalog.load(task_id)
            limit = self.options.limit
            if limit is not None:
                data = TaskData(data.spec, {name: items[:limit]
                                            for name, items in data.splits.items()})
            self._tasks[task_id] = data
        return self._tasks[task_id]

    def control(self, task_id: str) -> list[Prompt]:
        """The task's verified control prompts (``TaskSpec.control``), in file order;
        with ``options.limit``, the first ``limit`` of them."""
        self.task(task_id)  # loading the task verifies its control set
        prompts = self.catalog.load_control(task_id)
        limit = self.options.limit
        return prompts if limit is None else prompts[:limit]

    def cached_result(self, record: Mapping[str, object], compute: Callable[[], Any], *,
                      what: str) -> Any:
        """A JSON value derived deterministically from ``record``'s inputs, through the
        on-disk cache unless ``options.cache`` is off (``models.cache.cached_json``)."""
        store = ActivationCache() if self.options.cache else None
        value, hit = cached_json(store, record, compute, what=what)
        if hit:
            self.say(f"{what}: from the disk cache")
        return value

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
                       disk_cache: bool = True, stage: str | None = None
                       ) -> dict[Site, np.ndarray]:
        """Activations at every one of ``sites``, from one forward pass over ``prompts``
        for the sites neither memoised nor in the disk cache (``passes`` counts the
        passes that ran the model). ``disk_cache=False`` keeps them in memory only (a
        sealed holdout's prompts leave nothing on disk). ``stage`` names the stage a pass
        counts in (default ``ACTIVATIONS``, or ``SHIFT`` after a prefix)."""
        shifted = prefix is not None
        missing = [s for s in dict.fromkeys(sites)
                   if _ActsKey(model, key, s, shifted) not in self._acts]
        if missing:
            stage = stage or (SHIFT if shifted else ACTIVATIONS)
            source: LoadedModel | ResolvedModel = self.loaded.get(model) or self.model(model)
            since = _now()
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
                self._ran(stage, since, result.tokens)
            else:
                self.timed(stage, since)
            for s in missing:
                self._acts[_ActsKey(model, key, s, shifted)] = result[s]
        return {s: self._acts[_ActsKey(model, key, s, shifted)] for s in sites}

    def release(self, model: str, *, random_init: bool = False) -> None:
        """Let the loaded ``model`` go (with ``random_init``, its random-init copy
        instead) and hand the freed memory back to the system (``release_memory``); the
        next pass that needs it loads it again. Memoised activations and scores stay."""
        held = (self._random_lms if random_init else self.loaded).pop(model, None)
        if held is not None:
            del held
            release_memory()

    def random_activations(self, model: str, key: str, prompts: Sequence[Prompt],
                           site: Site) -> np.ndarray:
        """Activations at ``site`` of a randomly initialised copy of ``model`` (seeded
        from the run's seed), through the disk cache under the copy's own identity
        (``random_init_resolved``: the config's hash and the seed), so they never pass
        for the model's. On a hit neither model is loaded. On a miss the trained model is
        released while the copy exists (``release``): a run holds one model's weights at
        a time; the caller releases the copy when its prompts are read
        (``release(model, random_init=True)``)."""
        memo = _ActsKey(model, key, site, False)
        if memo not in self._random_acts:
            seed = sub_seed(self.options.seed, "random-init")

            def load() -> LoadedModel:
                if model not in self._random_lms:
                    # one model's weights at a time: the trained model gives way to its
                    # copy (built from the folder's config) and is loaded again, the
                    # same weights, when next needed
                    self.release(model)
                    self._random_lms[model] = random_init_model(self.model(model), seed)
                return self._random_lms[model]

            source = self._random_lms.get(model) or random_init_resolved(self.model(model),
                                                                         seed)
            since = _now()
            result = extract(source, prompts, [site], cache=self.options.cache, load=load,
                             progress=self.options.progress,
                             batch_tokens=self.options.batch_tokens,
                             max_batch_size=self.options.max_batch_size,
                             desc=f"{RANDOM_INIT} {key} @ {site}")
            if site in result.cached:
                self.timed(RANDOM_INIT, since)
            else:
                self._ran(RANDOM_INIT, since, result.tokens)
            self._random_acts[memo] = result[site]
        return self._random_acts[memo]

    def guard(self, model: str) -> Guard | None:
        """The eval-awareness guard of ``model`` (looked up once per guard lookup)."""
        lookup = self.options.guards
        held = self._guards.get(model)
        if held is None or held[0] is not lookup:
            held = self._guards[model] = (lookup, lookup(model))
        return held[1]

    def lm_scores(self, model: str, scoring: Mapping[str, object], n: int,
                  compute: Callable[[LoadedModel], np.ndarray | None],
                  texts: Sequence[str] = ()) -> np.ndarray | None:
        """``n`` scores of ``model`` itself, through the on-disk cache (keyed by the
        model's identity, the device and ``scoring``: the inputs' hash and the rule with
        its version). On a hit the model is not loaded; a miss loads it and runs
        ``compute`` (counted as a ``SURPRISAL`` pass when it gives scores, with the tokens
        of ``texts`` and a start token each as the pass's tokens)."""
        resolved = self.model(model)
        ident = resolved.identity
        store = ActivationCache() if self.options.cache else None
        # in reduced precision the batch composition changes the numbers
        batching = None if ident.dtype == "float32" else (BATCH_TOKENS, SCORING_BATCH)

        def run() -> np.ndarray | None:
            lm = self.lm(model)
            since = _now()
            scores = compute(lm)
            if scores is not None:
                ids = lm.tokenizer(list(texts), add_special_tokens=False)["input_ids"] \
                    if texts else []
                self._ran(SURPRISAL, since, sum(len(i) + 1 for i in ids))
            return scores

        since = _now()

        scores, hit = cached_scores(store, ident, resolved.device, scoring, n, run,
                                    batching=batching)
        if hit:
            self.timed(SURPRISAL, since)
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
                desc=f"{SURPRISAL} {task_id}"), texts=[p.text for p in prompts])
            assert scores is not None
            self._surprisal[key] = scores
        return self._surprisal[key]

    def ci(self, metric: str, y: np.ndarray, s: np.ndarray, item_of: np.ndarray,
           *seed_parts: str) -> IntervalOut:
        """``metric`` of labels ``y`` and scores ``s`` (an AUROC: ``auroc``,
        ``distshift_auroc``, ``evalaware_auroc``) as its ``MetricDef`` computes it, with its
        item-bootstrap CI, seeded from the run's seed and ``seed_parts``."""
        return metric_interval(metric, y, s, item_of=item_of, seed=self.options.seed,
                               n_resamples=self.options.bootstrap, parts=seed_parts)

    def mean_ci(self, values: Sequence[float | None], *seed_parts: str) -> IntervalOut:
        """The mean of item scores with its item-bootstrap CI, seeded likewise."""
        return mean_interval(values, seed=self.options.seed,
                             n_resamples=self.options.bootstrap, parts=seed_parts)

    def with_control_recall(self, result: TaskResult, model: str, weights: ProbeWeights,
                            site: Site) -> TaskResult:
        """``result`` with its ``recall_at_1pct_fpr`` where its task declares a control
        set and is binary: the control prompts (``control``, bounded by ``--limit``) read
        at the probe's site through the same extraction and cache as the test prompts,
        scored by the probe, the CI seeded from the run's seed (``recall_at_control``)."""
        data = self.task(result.id)
        control = data.spec.control
        if control is None or result.classes is not None or self.options.quick:
            return result  # the quick profile reads no control prompts (stages_skipped)
        test = [p for item in data.test for p in item.prompts]  # memoised by then
        probs = weights.predict_proba(self.activations(model, f"{result.id}/test", test,
                                                       site))[:, 1]
        controls = self.control(result.id)
        control_probs = weights.predict_proba(
            self.activations(model, f"{result.id}/control", controls, site))[:, 1]
        info = ControlSetOut(task_id=result.id, file=control.file, sha256=control.sha256,
                             description=control.description)
        recall = recall_at_control(result.id, data.test, probs, control_probs, info,
                                   seed=self.options.seed, n_resamples=self.options.bootstrap)
        return result.model_copy(update={"recall_at_1pct_fpr": recall})


__all__ = ["ACTIVATIONS", "BASELINES", "CONTEXT_FILE", "LATENCY", "QUICK", "RANDOM_INIT",
           "SCORING_BATCH", "SELECTIVITY", "SHIFT", "STAGES", "SURPRISAL", "CausalMethod",
           "CausalRun", "Session", "SubmitError", "SubmitOptions", "check_skip", "limit_note",
           "stages_to_skip"]
