"""``probebench submit``: re-evaluate probe artifacts on registered tasks.

Orchestration only; the numbers come from ``metrics``, ``scoring``, ``baselines`` and
``marks``. A ``Session`` shares what several submissions have in common: each model is
loaded at most once (and not at all when every activation is cached), each task is
loaded and verified once, and baselines and surprisals are computed once per task.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from probebench import __version__
from probebench.artifact.checks import validate
from probebench.artifact.spec import SPEC_VERSION, ProbeMeta
from probebench.artifact.weights import ProbeWeights
from probebench.errors import ProbebenchError, SiteError
from probebench.evaluation import baselines as bl
from probebench.evaluation.headline import (
    Flat,
    auroc_interval,
    headline,
    mean_interval,
    sub_seed,
)
from probebench.evaluation.marks import mark_definitions
from probebench.evaluation.metrics import (
    ECE_BINS,
    MetricError,
    auroc_score,
)
from probebench.evaluation.schema import (
    BaselineOut,
    FlaggedOut,
    IntervalOut,
    MarkOut,
    ProbeInfo,
    PromptScores,
    SliceOut,
    Submission,
    TaskResult,
    Timing,
)
from probebench.evaluation.scoring import ACCURACY_NAMES, group_by_slice, item_scores
from probebench.models.activations import Site
from probebench.models.loading import LoadedModel, ResolvedModel, load_model, resolve_model
from probebench.prompts import Prompt
from probebench.tasks.formats.base import TaskData

EVALAWARE_IMPUTE = 0.85
TRANSFER_IMPUTE = 0.5
CONTEXT_FILE = Path(__file__).with_name("context") / "declaration.txt"
MINIMAL_PAIR_FORMATS = ("verbs", "blimp", "syntaxgym")

DEFINITIONS = {
    "auroc": "sklearn.metrics.roc_auc_score over the labelled test prompts; ties count 1/2.",
    "ci": "95% percentile interval of an item bootstrap (items resampled with replacement, "
          "prompts weighted by their item's count); resamples missing a class are dropped.",
    "ece": f"{ECE_BINS} equal-width bins on P(positive); sum of bin share x |positive rate "
           "- mean P|.",
    "brier": "mean (P(positive) - label)^2.",
    "fpr_at_99tpr": "FPR at the first ROC threshold, highest first, whose TPR >= 0.99.",
    "latency_ms": "median ms per prompt, batch size 1, text to probability, after 3 warm-up "
                  "runs, on the evaluation device (kept in the timing block).",
    "distshift_auroc": "AUROC of the same test prompts read after a fixed 690-token "
                       "public-domain context (the US Declaration of Independence); positions "
                       "read the prompt's own tokens.",
    "evalaware_auroc": "AUROC on the quarter of items a registered eval-awareness guard for "
                       "the model rates least evaluation-like (both classes kept); without a "
                       f"guard, {EVALAWARE_IMPUTE} x AUROC, flagged imputed.",
    "transfer": "Pearson correlation of the probe's logits on the declared target model's "
                f"activations and on its own, over the test prompts; undeclared: "
                f"{TRANSFER_IMPUTE}, flagged imputed.",
    "accuracy": "mean item correctness: verbs = multiple-choice accuracy (highest P(correct) "
                "wins; ties share credit; ambiguous items not scored; classification lines "
                "P >= 0.5), blimp = pair accuracy, syntaxgym = every expected condition above "
                "every anomalous one, senteval = P >= 0.5 agrees.",
    "marks": "A-D per metric from marks.yaml; the mark is the worst range the 95% CI reaches.",
}


class SubmitError(ProbebenchError):
    """The artifact or the request cannot be evaluated (reported, exit code 1)."""

    exit_code = 1


@dataclass
class SubmitOptions:
    seed: int = 0
    bootstrap: int = 1000
    device: str = "auto"
    transfer_targets: Sequence[str] = ()
    guard: Path | None = None
    #: registry whose guards.yaml names each model's guard (used when ``guard`` is None)
    registry: Path | None = None
    repo: Path = Path()
    cache: bool = True
    progress: bool = True
    latency_prompts: int = 20


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("probebench", "torch", "transformers", "scikit-learn", "numpy"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


@dataclass
class Session:
    options: SubmitOptions
    resolved: dict[str, ResolvedModel] = field(default_factory=dict)
    loaded: dict[str, LoadedModel] = field(default_factory=dict)
    tasks: dict[str, TaskData] = field(default_factory=dict)
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    def say(self, message: str) -> None:
        if self.options.progress:
            print(f"probebench: {message}", file=sys.stderr, flush=True)

    def task(self, task_id: str) -> TaskData:
        from probebench.tasks.registry import load_task

        if task_id not in self.tasks:
            self.tasks[task_id] = load_task(task_id)
        return self.tasks[task_id]

    def model(self, name: str) -> ResolvedModel:
        if name not in self.resolved:
            self.resolved[name] = resolve_model(name, device=self.options.device,
                                                progress=self.options.progress)
        return self.resolved[name]

    def lm(self, name: str) -> LoadedModel:
        if name not in self.loaded:
            self.say(f"loading {name}")
            self.loaded[name] = load_model(self.model(name), progress=self.options.progress)
        return self.loaded[name]

    def activations(self, model: str, key: str, prompts: Sequence[Prompt], site: Site,
                    prefix: str | None = None) -> np.ndarray:
        from probebench.models.activations import extract

        memo_key = ("acts", model, key, site, prefix is not None)
        if memo_key not in self.memo:
            source: LoadedModel | ResolvedModel = self.loaded.get(model) or self.model(model)
            result = extract(source, prompts, [site], cache=self.options.cache,
                             prefix=prefix, progress=self.options.progress)
            if result.loaded is not None:  # a cache miss loaded the model: keep it
                self.loaded.setdefault(model, result.loaded)
            self.memo[memo_key] = result[site]
        value: np.ndarray = self.memo[memo_key]
        return value

    def guard(self, model: str) -> tuple[Path, str, str | None] | None:
        """(folder, name, bundle sha256) of the eval-awareness guard for ``model``."""
        from probebench.registry.guards import guard_for

        memo_key = ("guard", model)
        if memo_key not in self.memo:
            found: tuple[Path, str, str | None] | None = None
            if self.options.guard is not None:
                found = (self.options.guard, self.options.guard.name, None)
            elif self.options.registry is not None:
                g = guard_for(model, self.options.registry, self.options.repo)
                found = None if g is None else (g.folder, g.entry_id, g.bundle_sha256)
            self.memo[memo_key] = found
        value: tuple[Path, str, str | None] | None = self.memo[memo_key]
        return value

    def surprisal_scores(self, model: str, task_id: str, prompts: Sequence[Prompt]
                         ) -> np.ndarray:
        from probebench.models.surprisal import token_surprisals

        memo_key = ("surprisal", model, task_id)
        if memo_key not in self.memo:
            lm = self.lm(model)
            results = token_surprisals(lm, prompts, progress=self.options.progress)
            self.memo[memo_key] = -np.array([r.total for r in results])
        value: np.ndarray = self.memo[memo_key]
        return value


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
    head = headline(task_id, spec.format, items, probs, seed=session.options.seed,
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
    baselines = _baselines(session, meta, weights, task_id, data, flat, site, idx, y)

    marks: dict[str, MarkOut] = {}
    for metric, iv_out in (("auroc", auroc), ("mc_accuracy", accuracy)):
        if metric == "mc_accuracy" and spec.format != "verbs":
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
        accuracy_name=ACCURACY_NAMES[spec.format], auroc=auroc, accuracy=accuracy, ece=ece,
        brier=head.brier, fpr_at_99tpr=fpr, distshift_auroc=distshift,
        evalaware_auroc=evalaware, transfer=transfer, slices=slices, baselines=baselines,
        marks=marks,
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
    guard_path, guard_name, guard_bundle = guard
    if guard_bundle == bundle:
        return FlaggedOut(value=imputed, imputed=True,
                          note=f"this probe is the guard of {meta.model}; it does not correct "
                               f"itself: {EVALAWARE_IMPUTE} x AUROC")
    from probebench.artifact.forms import load_probe
    from probebench.artifact.spec import read_meta

    guard_meta = read_meta(guard_path / "meta.yaml")
    if guard_meta.model != meta.model:
        raise SubmitError(f"guard {guard_path} reads {guard_meta.model!r}, the probe reads "
                          f"{meta.model!r}; a guard must be for the same model")
    guard_weights = load_probe(guard_path)
    guard_site = Site(guard_meta.layer, guard_meta.position)
    g_acts = session.activations(meta.model, f"{task_id}/test", flat.prompts, guard_site)
    g = guard_weights.predict_proba(g_acts)[:, 1]
    n_items = int(flat.item_of.max()) + 1
    item_g = np.array([g[flat.item_of == i].mean() for i in range(n_items)])
    labelled_items = np.unique(flat.item_of[idx])
    order = labelled_items[np.argsort(item_g[labelled_items], kind="stable")]
    k = max(1, len(order) // 4)
    chosen = set(order[:k].tolist())
    # keep both classes: extend with the next least evaluation-like items if needed
    for extra in order[k:]:
        labels = {int(y[j]) for j, i in enumerate(flat.item_of[idx]) if i in chosen}
        if labels == {0, 1}:
            break
        chosen.add(int(extra))
    mask = np.isin(flat.item_of[idx], list(chosen))
    iv = _auroc(session, y[mask], probs[idx][mask], flat.item_of[idx][mask], task_id,
                "evalaware")
    return FlaggedOut(value=iv.value, ci_low=iv.ci_low, ci_high=iv.ci_high, imputed=False,
                      note=f"{len(chosen)} of {len(order)} items rated least evaluation-like "
                           f"by the guard {guard_name}")


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


def _baselines(session: Session, meta: ProbeMeta, weights: ProbeWeights, task_id: str,
               data: TaskData, flat: Flat, site: Site, idx: np.ndarray, y: np.ndarray
               ) -> dict[str, BaselineOut]:
    fmt = data.spec.format
    train_items = data.splits.get("train", [])
    train = Flat.of(train_items)
    out: dict[str, BaselineOut] = {}

    def score(name: str, s: np.ndarray, note: str, threshold: float | None = 0.5
              ) -> BaselineOut:
        try:
            auroc = _auroc(session, y, s[idx], flat.item_of[idx], task_id, "baseline", name)
        except MetricError:
            auroc = None
        acc = _accuracy(session, item_scores(fmt, data.test, s, flat.item_of, threshold),
                        task_id, "baseline", name, "accuracy")
        return BaselineOut(auroc=auroc, accuracy=acc, note=note)

    out["majority"] = score("majority", bl.majority_scores(train.prompts, flat.prompts),
                            "constant train positive rate")
    if train.prompts:
        seed = sub_seed(session.options.seed, task_id, "length")
        out["length"] = score("length", bl.length_scores(train.prompts, flat.prompts, seed),
                              "logistic regression on length in characters")
        key = ("random", meta.model, task_id, site.position, tuple(weights.hidden_sizes),
               weights.activation)
        if key not in session.memo:
            site0 = Site(0, site.position)
            t_idx, t_y = bl.labelled(train.prompts)
            train_x = session.activations(meta.model, f"{task_id}/train", train.prompts,
                                          site0)[t_idx]
            test_x = session.activations(meta.model, f"{task_id}/test", flat.prompts, site0)
            rf = bl.random_feature_scores(weights, train_x, t_y, test_x,
                                          sub_seed(session.options.seed, task_id, "random"))
            session.memo[key] = score("random_features", rf,
                                      "the probe's architecture on a random projection of "
                                      "layer-0 embeddings")
        out["random_features"] = session.memo[key]
    # surprisal needs a causal LM: an encoder (e.g. MiniLM) has no such baseline
    if fmt in MINIMAL_PAIR_FORMATS and \
            session.model(meta.model).identity.architecture == "causal":
        s = session.surprisal_scores(meta.model, task_id, flat.prompts)
        out["surprisal"] = score("surprisal", s, "minus the model's total surprisal (bits)",
                                 threshold=None)
    return out


def _latency(session: Session, meta: ProbeMeta, weights: ProbeWeights,
             prompts: Sequence[Prompt], site: Site) -> float:
    from probebench.models.activations import run_extraction

    lm = session.lm(meta.model)
    sample = list(prompts[: session.options.latency_prompts])
    for prompt in sample[:3]:
        weights.predict_proba(run_extraction(lm, [prompt], [site], progress=False)[site])
    times = []
    for prompt in sample:
        start = time.perf_counter()
        weights.predict_proba(run_extraction(lm, [prompt], [site], progress=False)[site])
        times.append((time.perf_counter() - start) * 1000)
    return float(statistics.median(times))


def submit(artifact: Path, tasks: Sequence[str], options: SubmitOptions | None = None, *,
           session: Session | None = None) -> Submission:
    """Validate an artifact, then re-evaluate it on ``tasks``; see DEFINITIONS."""
    session = session or Session(options or SubmitOptions())
    opts = session.options
    start = time.perf_counter()
    artifact = Path(artifact)
    report = validate(artifact)
    if not report.valid:
        failed = "; ".join(f"{c.name}: {c.message}" for c in report.failed())
        raise SubmitError(f"{artifact}: invalid artifact, nothing was run ({failed})")
    assert report.meta is not None and report.weights is not None
    assert report.bundle_sha256 is not None
    meta, weights = report.meta, report.weights
    if not tasks:
        raise SubmitError("no tasks given (see `probebench tasks list`)")
    site = Site(meta.layer, meta.position)
    from probebench.models.activations import check_sites

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
        bootstrap_resamples=opts.bootstrap, versions=_versions(), definitions=DEFINITIONS,
        tasks=results,
        timing=Timing(latency_ms=latency, latency_prompts=opts.latency_prompts,
                      wall_seconds=round(time.perf_counter() - start, 3)))


def submit_many(artifacts: Sequence[Path], tasks: Sequence[str],
                options: SubmitOptions | None = None) -> list[Submission]:
    """Several artifacts in one session: models, tasks and shared work are reused."""
    session = Session(options or SubmitOptions())
    return [submit(a, tasks, session=session) for a in artifacts]


__all__ = ["DEFINITIONS", "Session", "SubmitError", "SubmitOptions", "auroc_score", "submit",
           "submit_many"]
