"""``probebench submit``: re-evaluate probe artifacts on registered tasks.

Orchestration only; the numbers come from ``metrics``, the task formats (item
correctness), ``baselines`` and ``marks``. A ``Session`` shares what several submissions
have in common: each model is loaded at most once (and not at all when every activation
is cached), each task is loaded and verified once, and baselines and surprisals are
computed once per task. The task catalog and the guard lookup are the caller's: nothing
here reads the registry or the working directory.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from probebench.artifact.checks import validate
from probebench.artifact.forms import load_weights
from probebench.artifact.meta import SPEC_VERSION, ProbeMeta, read_meta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, ProbebenchError, SiteError
from probebench.evaluation import baselines as bl
from probebench.evaluation import multiclass as mc
from probebench.evaluation.definitions import (
    EVALAWARE_IMPUTE,
    EVALAWARE_SHARE,
    LATENCY_PROMPTS,
    LATENCY_WARMUP,
    TRANSFER_IMPUTE,
    metric_definitions,
)
from probebench.evaluation.guards import Guard, GuardLookup, no_guards
from probebench.evaluation.headline import (
    Flat,
    auroc_interval,
    headline,
    labelled,
    mean_interval,
    sub_seed,
)
from probebench.evaluation.marks import mark_definitions
from probebench.evaluation.metrics import N_RESAMPLES, MetricError, auroc_score
from probebench.evaluation.protocol import DEFAULT_HIDDEN, labelled_prompts, train_val_items
from probebench.evaluation.results import (
    BaselineOut,
    CostOut,
    FlaggedOut,
    IntervalOut,
    LimitOut,
    MarkOut,
    ProbeInfo,
    PromptScores,
    RunInfo,
    SelectivityOut,
    SliceOut,
    Submission,
    TaskResult,
    Timing,
)
from probebench.evaluation.selectivity import ControlData, selectivity
from probebench.hashing import sha256_json
from probebench.jsonsafe import load_json
from probebench.models.activations import BATCH_TOKENS, extract, run_extraction, tokenize
from probebench.models.cache import ActivationCache, cached_scores
from probebench.models.cost import BlockShape, forward_flops, probe_flops
from probebench.models.loading import (
    LoadedModel,
    ResolvedModel,
    load_model,
    random_init_model,
    resolve_model,
)
from probebench.models.surprisal import SCORING_VERSION, sentence_log_probs
from probebench.prompts import Prompt
from probebench.provenance import hardware, probebench_commit, utc_now
from probebench.sites import Site, check_sites
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import TaskData, group_by_slice
from probebench.version import __version__

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


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("probebench", "torch", "transformers", "scikit-learn", "numpy"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


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
    _baselines: dict[tuple[str, str, Site], dict[str, BaselineOut]] = field(
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
                       sites: Sequence[Site], prefix: str | None = None
                       ) -> dict[Site, np.ndarray]:
        """Activations at every one of ``sites``, from one forward pass over ``prompts``
        for the sites neither memoised nor in the disk cache (``passes`` counts the
        passes that ran the model)."""
        shifted = prefix is not None
        missing = [s for s in dict.fromkeys(sites)
                   if _ActsKey(model, key, s, shifted) not in self._acts]
        if missing:
            stage = SHIFT if shifted else ACTIVATIONS
            source: LoadedModel | ResolvedModel = self.loaded.get(model) or self.model(model)
            since = time.perf_counter()
            result = extract(source, prompts, missing, cache=self.options.cache,
                             prefix=prefix, progress=self.options.progress,
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
            # every token scored after the model's BOS (EOS when it has none), as the
            # BLiMP paper and lm-evaluation-harness score minimal pairs
            scoring = {"kind": "sentence_log_probs", "rule": SCORING_VERSION,
                       "start_token": None,
                       "texts_sha256": sha256_json([p.text for p in prompts])}
            scores = self.lm_scores(model, scoring, len(prompts), lambda lm: sentence_log_probs(
                lm, prompts, max_batch_size=SCORING_BATCH, progress=self.options.progress,
                desc=f"{SURPRISAL} {task_id}"))
            assert scores is not None
            self._surprisal[key] = scores
        return self._surprisal[key]


def _auroc(session: Session, y: np.ndarray, s: np.ndarray, item_of: np.ndarray,
           *seed_parts: str) -> IntervalOut:
    return auroc_interval(y, s, item_of, seed=session.options.seed,
                          n_resamples=session.options.bootstrap, parts=seed_parts)


def _accuracy(session: Session, values: Sequence[float | None], *seed_parts: str
              ) -> IntervalOut:
    return mean_interval(values, seed=session.options.seed,
                         n_resamples=session.options.bootstrap, parts=seed_parts)


def _mark(metric: str, iv: IntervalOut) -> MarkOut | None:
    if iv.value is None:
        return None
    low = iv.ci_low if iv.ci_low is not None else iv.value
    high = iv.ci_high if iv.ci_high is not None else iv.value
    mark, straddles = mark_definitions()[metric].mark(iv.value, low, high)
    return MarkOut(mark=mark, straddles=straddles)


def _evaluate_task(session: Session, task_id: str, meta: ProbeMeta, weights: ProbeWeights,
                   site: Site, bundle: str) -> tuple[TaskResult, float]:
    data = session.task(task_id)
    classes = data.format.classes(data)
    if classes is not None:
        return _evaluate_multiclass(session, task_id, meta, weights, site, classes)
    if not weights.is_binary:
        raise SubmitError(f"task {task_id} is binary; the probe has {weights.n_classes} "
                          f"classes {list(weights.classes)}")
    spec = data.spec
    items = data.test
    flat = Flat.of(items)
    session.say(f"{task_id}: {len(items)} items, {len(flat.prompts)} prompts at {site}")
    acts = session.activations(meta.model, f"{task_id}/test", flat.prompts, site)
    probs = weights.predict_proba(acts)[:, 1]
    idx, y = flat.labelled()
    if len(set(y.tolist())) < 2:
        raise SubmitError(f"task {task_id}: the test set needs both labels to score AUROC")
    item_of = flat.item_of[idx]
    fmt = data.format
    head = headline(task_id, fmt, items, probs, seed=session.options.seed,
                    n_resamples=session.options.bootstrap)
    auroc, accuracy, scores = head.auroc, head.accuracy, head.item_scores

    slices = {
        name: {value: SliceOut(n_items=len(vals),
                               accuracy=_accuracy(session, list(vals), task_id, "slice", name,
                                                  value))
               for value, vals in groups.items()}
        for name, groups in group_by_slice(items, scores, spec.slices).items()}

    # distribution shift: the same prompts after a long neutral context
    try:
        shifted = session.activations(meta.model, f"{task_id}/test", flat.prompts, site,
                                      prefix=CONTEXT_FILE.read_text("utf-8"))
        p_shift = weights.predict_proba(shifted)[:, 1]
        iv = _auroc(session, y, p_shift[idx], item_of, task_id, "distshift")
        distshift = FlaggedOut(value=iv.value, ci_low=iv.ci_low, ci_high=iv.ci_high,
                               imputed=False, note="measured after the fixed context")
    except SiteError as exc:
        distshift = FlaggedOut(value=None, imputed=False, note=f"not measurable: {exc}")

    evalaware = _evalaware(session, meta, bundle, task_id, flat, probs, idx, y, auroc)
    transfer = _transfer(session, meta, weights, task_id, flat, site, acts)
    baselines = _baselines(session, meta.model, task_id, site)
    control = _selectivity(session, meta, weights, task_id, site)

    marks: dict[str, MarkOut] = {}
    # the accuracy gets a mark when marks.yaml defines ranges for this format's accuracy
    for metric, iv_out in (("auroc", auroc), (fmt.accuracy_name, accuracy)):
        if metric not in mark_definitions():
            continue
        mark = _mark(metric, iv_out)
        if mark is not None:
            marks[metric] = mark
    ece, fpr = head.ece, head.fpr_at_99tpr
    assert fpr is not None  # a binary headline always has it
    for metric, point in (("ece", ece), ("fpr_at_99tpr", fpr)):
        m, straddles = mark_definitions()[metric].mark(point, point, point)
        marks[metric] = MarkOut(mark=m, straddles=straddles)
    latency = _latency(session, meta, weights, flat.prompts, site)
    result = TaskResult(
        id=spec.id, version=spec.version, format=spec.format, test_sha256=spec.test_sha256,
        n_items=len(items), n_prompts=len(flat.prompts), n_labelled_prompts=int(idx.size),
        accuracy_name=fmt.accuracy_name, auroc=auroc, accuracy=accuracy, ece=ece,
        brier=head.brier, fpr_at_99tpr=fpr, distshift_auroc=distshift,
        evalaware_auroc=evalaware, transfer=transfer, slices=slices, baselines=baselines,
        marks=marks, cost=_cost(session, meta, weights, flat, site), selectivity=control,
        predictions=PromptScores(
            prompt_ids=[flat.prompts[i].id or str(i) for i in idx.tolist()],
            items=[int(i) for i in flat.item_of[idx]], labels=[int(v) for v in y],
            probs=[float(p) for p in probs[idx]]))
    return result, latency


def _evaluate_multiclass(session: Session, task_id: str, meta: ProbeMeta,
                         weights: ProbeWeights, site: Site, classes: tuple[str, ...]
                         ) -> tuple[TaskResult, float]:
    """A multi-class task: accuracy and macro AUROC (``multiclass``), per-class slices,
    the shifted macro AUROC and the majority and length baselines. The eval-awareness
    correction, transfer and control-task selectivity are defined for binary probes
    only and are left out, saying so."""
    data = session.task(task_id)
    spec, items = data.spec, data.test
    if [str(c) for c in weights.classes] != list(classes):
        raise SubmitError(f"task {task_id} has the classes {list(classes)}; the probe's "
                          f"outputs are {list(weights.classes)} (they must be the same, in "
                          "the same sorted order)")
    flat = Flat.of(items)
    session.say(f"{task_id}: {len(items)} items, {len(flat.prompts)} prompts, "
                f"{len(classes)} classes at {site}")
    acts = session.activations(meta.model, f"{task_id}/test", flat.prompts, site)
    proba = weights.predict_proba(acts)
    fmt = data.format
    y = mc.class_indices(fmt, flat.prompts, classes, f"task {task_id} test")
    opts = session.options
    head = mc.multiclass_headline(task_id, fmt, items, classes, proba, seed=opts.seed,
                                  n_resamples=opts.bootstrap)
    slices = {
        name: {value: SliceOut(n_items=len(vals),
                               accuracy=_accuracy(session, list(vals), task_id, "slice", name,
                                                  value))
               for value, vals in groups.items()}
        for name, groups in group_by_slice(items, head.item_scores, spec.slices).items()}
    try:
        shifted = session.activations(meta.model, f"{task_id}/test", flat.prompts, site,
                                      prefix=CONTEXT_FILE.read_text("utf-8"))
        iv = mc.macro_auroc_interval(y, weights.predict_proba(shifted), flat.item_of,
                                     seed=opts.seed, n_resamples=opts.bootstrap,
                                     parts=(task_id, "distshift"))
        distshift = FlaggedOut(value=iv.value, ci_low=iv.ci_low, ci_high=iv.ci_high,
                               imputed=False, note="macro AUROC after the fixed context")
    except SiteError as exc:
        distshift = FlaggedOut(value=None, imputed=False, note=f"not measurable: {exc}")
    binary_only = "defined for binary probes only"
    result = TaskResult(
        id=spec.id, version=spec.version, format=spec.format, test_sha256=spec.test_sha256,
        n_items=len(items), n_prompts=len(flat.prompts), n_labelled_prompts=len(flat.prompts),
        accuracy_name=fmt.accuracy_name, auroc=head.auroc, accuracy=head.accuracy,
        ece=head.ece, brier=head.brier, fpr_at_99tpr=None, distshift_auroc=distshift,
        evalaware_auroc=FlaggedOut(value=None, imputed=False,
                                   note=f"the eval-awareness correction is {binary_only}"),
        transfer={}, slices=slices,
        baselines=_multiclass_baselines(session, task_id, classes), marks={},
        cost=_cost(session, meta, weights, flat, site), selectivity=None, classes=list(classes),
        predictions=PromptScores(
            prompt_ids=[p.id or str(i) for i, p in enumerate(flat.prompts)],
            items=[int(i) for i in flat.item_of], labels=[int(v) for v in y],
            probs=[float(proba[i, k]) for i, k in enumerate(y.tolist())],
            class_probs=[[float(v) for v in row] for row in proba]))
    return result, _latency(session, meta, weights, flat.prompts, site)


def _multiclass_baselines(session: Session, task_id: str, classes: tuple[str, ...]
                          ) -> dict[str, BaselineOut]:
    """The majority class and a multinomial regression on length (train split)."""
    data = session.task(task_id)
    fmt, opts = data.format, session.options
    flat = Flat.of(data.test)
    y = mc.class_indices(fmt, flat.prompts, classes, f"task {task_id} test")
    train = Flat.of(data.splits.get("train", [])).prompts
    if not train:
        return {}
    y_train = mc.class_indices(fmt, train, classes, f"task {task_id} train")
    out = {}
    for name, proba in (
            ("majority", mc.majority_class_proba(y_train, len(flat.prompts), len(classes))),
            ("length", mc.length_class_proba(train, y_train, flat.prompts, len(classes),
                                             sub_seed(opts.seed, task_id, "length")))):
        try:
            auroc: IntervalOut | None = mc.macro_auroc_interval(
                y, proba, flat.item_of, seed=opts.seed, n_resamples=opts.bootstrap,
                parts=(task_id, "baseline", name))
        except MetricError:
            auroc = None
        accuracy = _accuracy(session, mc.item_correctness(data.test, proba, y), task_id,
                             "baseline", name, "accuracy")
        note = {"majority": "the most frequent train class",
                "length": "multinomial logistic regression on length in characters"}[name]
        out[name] = BaselineOut(auroc=auroc, accuracy=accuracy, note=note)
    return out


def _evalaware(session: Session, meta: ProbeMeta, bundle: str, task_id: str, flat: Flat,
               probs: np.ndarray, idx: np.ndarray, y: np.ndarray, auroc: IntervalOut
               ) -> FlaggedOut:
    guard = session.guard(meta.model)
    imputed = None if auroc.value is None else EVALAWARE_IMPUTE * auroc.value
    if guard is None:
        return FlaggedOut(value=imputed, imputed=True,
                          note=f"no eval-awareness guard for {meta.model}: "
                               f"{EVALAWARE_IMPUTE} x AUROC")
    if guard.bundle_sha256 == bundle:
        return FlaggedOut(value=imputed, imputed=True,
                          note=f"this probe is the guard of {meta.model}; it does not correct "
                               f"itself: {EVALAWARE_IMPUTE} x AUROC")
    guard_meta = read_meta(guard.folder / "meta.yaml")
    if guard_meta.model != meta.model:
        raise SubmitError(f"guard {guard.folder} reads {guard_meta.model!r}, the probe reads "
                          f"{meta.model!r}; a guard must be for the same model")
    guard_weights = load_weights(guard.folder)
    guard_site = Site(guard_meta.layer, guard_meta.position)
    g_acts = session.activations(meta.model, f"{task_id}/test", flat.prompts, guard_site)
    g = guard_weights.predict_proba(g_acts)[:, 1]
    n_items = int(flat.item_of.max()) + 1
    item_g = np.array([g[flat.item_of == i].mean() for i in range(n_items)])
    labelled_items = np.unique(flat.item_of[idx])
    chosen = stratified_least(labelled_items, item_g, _item_classes(flat, idx, y))
    order = labelled_items[np.argsort(item_g[labelled_items], kind="stable")]
    # keep both classes: extend with the next least evaluation-like items if needed
    for extra in order:
        labels = {int(y[j]) for j, i in enumerate(flat.item_of[idx]) if i in chosen}
        if labels == {0, 1}:
            break
        chosen.add(int(extra))
    mask = np.isin(flat.item_of[idx], list(chosen))
    iv = _auroc(session, y[mask], probs[idx][mask], flat.item_of[idx][mask], task_id,
                "evalaware")
    return FlaggedOut(value=iv.value, ci_low=iv.ci_low, ci_high=iv.ci_high, imputed=False,
                      note=f"{len(chosen)} of {len(order)} items rated least evaluation-like "
                           f"by the guard {guard.name} (the least quarter of each class)")


def _item_classes(flat: Flat, idx: np.ndarray, y: np.ndarray) -> dict[int, tuple[int, ...]]:
    """item -> the labels of its labelled prompts (a minimal pair is (0, 1))."""
    out: dict[int, set[int]] = {}
    for j, item in enumerate(flat.item_of[idx].tolist()):
        out.setdefault(int(item), set()).add(int(y[j]))
    return {item: tuple(sorted(labels)) for item, labels in out.items()}


def stratified_least(items: np.ndarray, rating: np.ndarray,
                     classes: Mapping[int, tuple[int, ...]]) -> set[int]:
    """The least evaluation-like ``1/EVALAWARE_SHARE`` of the items of each class
    (items grouped by the labels they hold), at least one per class: the spec's
    "stratified bottom-quartile split", so the correction keeps the class balance.

    >>> sorted(stratified_least(np.arange(8), np.arange(8.0),
    ...                         {i: (i % 2,) for i in range(8)}))
    [0, 1]
    """
    chosen: set[int] = set()
    for cls in sorted(set(classes.values())):
        members = np.array([i for i in items.tolist() if classes[int(i)] == cls],
                           dtype=np.int64)
        ordered = members[np.argsort(rating[members], kind="stable")]
        chosen |= set(ordered[: max(1, len(ordered) // EVALAWARE_SHARE)].tolist())
    return chosen


def _transfer(session: Session, meta: ProbeMeta, weights: ProbeWeights, task_id: str,
              flat: Flat, site: Site, acts: np.ndarray) -> dict[str, FlaggedOut]:
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


def _baselines(session: Session, model: str, task_id: str, site: Site
               ) -> dict[str, BaselineOut]:
    """The task's baselines on ``model`` at ``site``: computed once per (task, model,
    site) and identical for every entry there, whatever its architecture (see
    ``baselines``)."""
    key = (model, task_id, site)
    if key in session._baselines:
        return session._baselines[key]
    data = session.task(task_id)
    fmt = data.format
    flat = Flat.of(data.test)
    idx, y = flat.labelled()
    opts = session.options
    out: dict[str, BaselineOut] = {}

    def interval(values: Sequence[float | None], name: str) -> IntervalOut:
        return _accuracy(session, values, task_id, "baseline", name, "accuracy")

    def score(name: str, s: np.ndarray, threshold: float | None = 0.5) -> BaselineOut:
        try:
            auroc = _auroc(session, y, s[idx], flat.item_of[idx], task_id, "baseline", name)
        except MetricError:
            auroc = None
        acc = interval(fmt.item_scores(data.test, s, flat.item_of, threshold), name)
        return BaselineOut(auroc=auroc, accuracy=acc, note=bl.NOTES[name])

    train_items = data.splits.get("train", [])
    train = Flat.of(train_items)
    out["majority"] = score("majority", bl.majority_scores(train.prompts, flat.prompts))
    if train.prompts:
        seed = sub_seed(opts.seed, task_id, "length")
        out["length"] = score("length", bl.length_scores(train.prompts, flat.prompts, seed))
        # an even spread of the train items, at most RANDOM_FEATURES_PROMPTS prompts:
        # the random model's forward pass is the cost, and a baseline needs no more
        step = -(-len(train.prompts) // bl.RANDOM_FEATURES_PROMPTS)
        sample = Flat.of(train_items[::step])
        t_idx, t_y = labelled(sample.prompts)
        if len(set(t_y.tolist())) == 2:
            train_x = session.random_activations(model, f"{task_id}/train-sample",
                                                 sample.prompts, site)[t_idx]
            test_x = session.random_activations(model, f"{task_id}/test", flat.prompts, site)
            rf = bl.random_feature_scores(train_x, t_y, test_x,
                                          sub_seed(opts.seed, task_id, "random"))
            out["random_features"] = score("random_features", rf)
    # the model's own score needs a causal LM: an encoder (e.g. MiniLM) has none
    if fmt.minimal_pairs and session.model(model).identity.architecture == "causal":
        own = _own_item_scores(session, model, task_id)
        if own is not None:  # the format's own protocol (SyntaxGym: region predictions)
            out["surprisal"] = BaselineOut(auroc=None, accuracy=interval(own, "surprisal"),
                                           note=fmt.model_baseline_note)
        else:
            s = session.surprisal_scores(model, task_id, flat.prompts)
            out["surprisal"] = score("surprisal", s, threshold=None)
    session._baselines[key] = out
    return out


def _own_item_scores(session: Session, model: str, task_id: str) -> list[float | None] | None:
    """The format's own protocol on ``model`` (``TaskFormat.model_item_scores``),
    through the on-disk cache; None when the format has none (then the surprisal
    baseline applies). A missing item score is stored as NaN."""
    data = session.task(task_id)
    fmt, items = data.format, data.test
    scoring = {"kind": "model_item_scores", "format": fmt.name,
               "version": fmt.model_scores_version, "rule": SCORING_VERSION,
               "items_sha256": sha256_json([item.record() for item in items])}

    def compute(lm: LoadedModel) -> np.ndarray | None:
        own = fmt.model_item_scores(lm, items, progress=session.options.progress)
        return None if own is None else np.array(
            [np.nan if v is None else v for v in own], dtype=np.float64)

    scores = session.lm_scores(model, scoring, len(items), compute)
    if scores is None:
        return None
    return [None if np.isnan(v) else float(v) for v in scores.tolist()]


def _cost(session: Session, meta: ProbeMeta, weights: ProbeWeights, flat: Flat,
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


def _selectivity(session: Session, meta: ProbeMeta, weights: ProbeWeights, task_id: str,
                 site: Site) -> SelectivityOut | None:
    """Control-task selectivity of the entry's architecture at its site (None when the
    task has no train split to fit on)."""
    data = session.task(task_id)
    try:
        train_items, val_items, _ = train_val_items(data)
    except InputError:
        return None
    train, val = labelled_prompts(train_items), labelled_prompts(val_items)
    flat = Flat.of(data.test)
    idx, _ = flat.labelled()
    if not train or not val:
        return None
    x_test = session.activations(meta.model, f"{task_id}/test", flat.prompts, site)[idx]
    control = ControlData(
        train=train, x_train=session.activations(meta.model, f"{task_id}/train-labelled",
                                                 train, site),
        val=val, x_val=session.activations(meta.model, f"{task_id}/val-labelled", val, site),
        test=[flat.prompts[i] for i in idx.tolist()], x_test=x_test,
        test_items=flat.item_of[idx])
    hidden = weights.hidden_sizes[0] if weights.hidden_sizes else DEFAULT_HIDDEN
    return selectivity(control, probe_type=meta.probe_type, hidden=hidden,
                       seed=session.options.seed, n_resamples=session.options.bootstrap,
                       parts=(task_id,))


def _latency(session: Session, meta: ProbeMeta, weights: ProbeWeights,
             prompts: Sequence[Prompt], site: Site) -> float:
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


def submit(artifact: Path, tasks: Sequence[str], options: SubmitOptions | None = None, *,
           catalog: TaskCatalog | None = None, session: Session | None = None,
           expected_sha256: str | None = None) -> Submission:
    """Validate an artifact (requiring the bundle hash ``expected_sha256`` when given),
    then re-evaluate it on ``tasks`` of ``catalog`` (default: the packaged tasks); see
    ``probebench.evaluation.definitions`` for every metric.

    Nothing runs when the artifact fails a check or a task cannot be read at its site
    (``SubmitError``). ``session`` shares loaded models, tasks and activations between
    several submissions (its catalog and options are used then, not ``catalog`` and
    ``options``).

    Returns:
        a ``Submission``: ``to_json()`` is ``submission.json``, ``to_dict()`` the same
        as a dict; each task's ``predictions`` holds the probe's per-prompt
        probabilities (``probebench.load_probe(...).score_texts`` reproduces them).
    """
    if session is None:
        session = Session(catalog or TaskCatalog.default(), options or SubmitOptions())
    opts = session.options
    start = time.perf_counter()
    artifact = Path(artifact)
    report = validate(artifact, catalog=session.catalog, expected_sha256=expected_sha256)
    if not report.valid:
        failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
        raise SubmitError(f"{artifact}: invalid artifact, nothing was run ({failed})")
    assert report.meta is not None and report.weights is not None
    assert report.bundle_sha256 is not None
    meta, weights = report.meta, report.weights
    if not tasks:
        raise SubmitError("no tasks given (see `probebench tasks list`)")
    if opts.limit is not None and opts.limit < 1:
        raise SubmitError(f"limit must be at least 1 item per task; found {opts.limit}")
    site = Site(meta.layer, meta.position)
    for task_id in tasks:  # refuse unknown, drifted or unreadable tasks before model work
        data = session.task(task_id)
        try:
            check_sites([site], session.model(meta.model).identity.num_layers,
                        [p for item in data.test for p in item.prompts])
        except SiteError as exc:
            raise SubmitError(f"the probe cannot be evaluated on task {task_id}: {exc}") \
                from None
    results, latency = [], {}
    for task_id in tasks:
        result, ms = _evaluate_task(session, task_id, meta, weights, site,
                                    report.bundle_sha256)
        results.append(result)
        latency[task_id] = round(ms, 3)
    ident = session.model(meta.model).identity
    return Submission(
        spec_version=SPEC_VERSION, probebench_version=__version__,
        probe=ProbeInfo(id=artifact.resolve().name, bundle_sha256=report.bundle_sha256,
                        probe_type=meta.probe_type, model=meta.model, layer=meta.layer,
                        position=meta.position, license=meta.license),
        model=ident.to_dict(), device=session.model(meta.model).device, seed=opts.seed,
        bootstrap_resamples=opts.bootstrap, versions=_versions(),
        definitions=metric_definitions(), tasks=results,
        timing=Timing(latency_ms=latency, latency_prompts=opts.latency_prompts,
                      wall_seconds=round(time.perf_counter() - start, 3)),
        run=run_info(session.model(meta.model).device),
        limit=None if opts.limit is None else LimitOut(items=opts.limit,
                                                       note=limit_note(opts.limit)))


def run_info(device: str) -> RunInfo:
    """This run's provenance (see ``probebench.provenance``)."""
    return RunInfo(evaluated_at=utc_now(), probebench_commit=probebench_commit(),
                   hardware=hardware(device), python=platform.python_version())


def submit_many(artifacts: Sequence[Path], tasks: Sequence[str],
                options: SubmitOptions | None = None, *,
                catalog: TaskCatalog | None = None) -> list[Submission]:
    """Several artifacts in one session: models, tasks and shared work are reused."""
    session = Session(catalog or TaskCatalog.default(), options or SubmitOptions())
    return [submit(a, tasks, session=session) for a in artifacts]


__all__ = ["Session", "SubmitError", "SubmitOptions", "auroc_score", "limit_note", "run_info",
           "submit", "submit_many"]
