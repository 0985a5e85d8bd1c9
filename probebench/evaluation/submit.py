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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from probebench.artifact.checks import validate
from probebench.artifact.forms import load_probe
from probebench.artifact.meta import SPEC_VERSION, ProbeMeta, read_meta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import InputError, ProbebenchError, SiteError
from probebench.evaluation import baselines as bl
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
from probebench.jsonsafe import load_json
from probebench.models.activations import extract, run_extraction, tokenize
from probebench.models.cost import BlockShape, forward_flops, probe_flops
from probebench.models.loading import (
    LoadedModel,
    ResolvedModel,
    load_model,
    random_init_model,
    resolve_model,
)
from probebench.models.surprisal import sentence_log_probs
from probebench.prompts import Prompt
from probebench.provenance import hardware, probebench_commit, utc_now
from probebench.sites import Site, check_sites
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.formats import TaskData, group_by_slice
from probebench.version import __version__

CONTEXT_FILE = Path(__file__).with_name("context") / "declaration.txt"


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
    cache: bool = True
    progress: bool = True
    latency_prompts: int = LATENCY_PROMPTS
    #: padded tokens and prompts per extraction batch (None: sized from the device); in
    #: float32 another budget changes results only within the reproducibility contract
    batch_tokens: int | None = None
    max_batch_size: int | None = None


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
    #: forward passes of a model run for activations (disk-cache hits not counted)
    passes: int = 0

    def say(self, message: str) -> None:
        if self.options.progress:
            print(f"probebench: {message}", file=sys.stderr, flush=True)

    def task(self, task_id: str) -> TaskData:
        return self.catalog.load(task_id)

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
            source: LoadedModel | ResolvedModel = self.loaded.get(model) or self.model(model)
            result = extract(source, prompts, missing, cache=self.options.cache,
                             prefix=prefix, progress=self.options.progress,
                             batch_tokens=self.options.batch_tokens,
                             max_batch_size=self.options.max_batch_size)
            if result.loaded is not None:  # a cache miss loaded the model: keep it
                self.loaded.setdefault(model, result.loaded)
            if set(missing) - result.cached:
                self.passes += 1
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
            self._random_acts[memo] = run_extraction(
                self._random_lms[model], prompts, [site],
                batch_tokens=self.options.batch_tokens,
                max_batch_size=self.options.max_batch_size, progress=self.options.progress)[site]
        return self._random_acts[memo]

    def guard(self, model: str) -> Guard | None:
        """The eval-awareness guard of ``model`` (looked up once per session)."""
        if model not in self._guards:
            self._guards[model] = self.options.guards(model)
        return self._guards[model]

    def surprisal_scores(self, model: str, task_id: str, prompts: Sequence[Prompt]
                         ) -> np.ndarray:
        key = (model, task_id)
        if key not in self._surprisal:
            # every token scored after the model's BOS (EOS when it has none), as the
            # BLiMP paper and lm-evaluation-harness score minimal pairs
            self._surprisal[key] = sentence_log_probs(self.lm(model), prompts,
                                                      progress=self.options.progress)
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
    guard_weights = load_probe(guard.folder)
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
        lm = session.lm(model)
        own = fmt.model_item_scores(lm, data.test, progress=opts.progress)
        if own is not None:  # the format's own protocol (SyntaxGym: region predictions)
            out["surprisal"] = BaselineOut(auroc=None, accuracy=interval(own, "surprisal"),
                                           note=fmt.model_baseline_note)
        else:
            s = session.surprisal_scores(model, task_id, flat.prompts)
            out["surprisal"] = score("surprisal", s, threshold=None)
    session._baselines[key] = out
    return out


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
        weights.n_features, weights.hidden_sizes, pooled_tokens=pooled)
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
    ``probebench.evaluation.definitions`` for every metric."""
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
        run=run_info(session.model(meta.model).device))


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


__all__ = ["Session", "SubmitError", "SubmitOptions", "auroc_score", "run_info", "submit",
           "submit_many"]
