"""Fast iteration (issue 17, part 5): the model's own scores (the surprisal baseline, a
format's own protocol) and the distribution-shift pass come from the disk cache on a warm
run; ``--limit N`` is a quick look that the registry refuses; progress bars name their
stage; and running notebooks needs the ``review`` extra, which says so when it is missing.

Real model (smollm2-135m), real tasks and the real reference artifact."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open

from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.guards import no_guards
from probebench.evaluation.headline import Flat
from probebench.evaluation.latency import Contention, LatencyVerdict, judge_latency
from probebench.evaluation.report import render_report
from probebench.evaluation.results import LimitOut, Submission, read_submission
from probebench.evaluation.session import (
    ACTIVATIONS,
    BASELINES,
    CONTEXT_FILE,
    LATENCY,
    RANDOM_INIT,
    SELECTIVITY,
    SHIFT,
    SURPRISAL,
    Session,
    SubmitError,
    SubmitOptions,
    limit_note,
)
from probebench.evaluation.submit import submit
from probebench.evaluation.task_baselines import own_item_scores
from probebench.intake.reproduce import ReproducerRun
from probebench.intake.review import review_entry
from probebench.registry.baselines import store_baselines
from probebench.registry.guards import RegistryGuards
from probebench.registry.store import latest_results, store_submission
from probebench.runs.evaluate import evaluate_entry
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[2]
REGISTRY = REPO / "registry"
ENTRY = "probebench/verb-grammar-mlp-smollm2-135m-l20-v1"
REFERENCE = REGISTRY / "artifacts" / "verb-grammar-mlp-smollm2-135m-l20-v1"
TASK = "verb_grammar"
MODEL = "smollm2-135m"
SITE = Site(20, "token_avg")  # the reference MLP's site


def _steady(ms: float, contention: float = 0.0) -> LatencyVerdict:
    """A latency measurement as ``latency.judge_latency`` judges it, at a given load."""
    return judge_latency([[ms, ms, ms]], Contention(contention, "test"))


def _score_files(cache: Path) -> dict[Path, int]:
    """The cache's entries that hold model scores (not activations), with their length."""
    found = {}
    for path in sorted(cache.rglob("*.safetensors")):
        with safe_open(str(path), "np") as handle:
            if "scoring" in (handle.metadata() or {}):
                found[path] = len(handle.get_tensor("activations"))
    return found


def _shift_and_surprisal(limit: int) -> tuple[Session, np.ndarray, np.ndarray]:
    """The two stages of a verb-grammar submit that issue 17 saw recomputed, in a fresh
    session (as a second `probebench submit` would run them)."""
    session = Session(TaskCatalog.default(), SubmitOptions(limit=limit))
    prompts = Flat.of(session.task(TASK).test).prompts
    shifted = session.activations(MODEL, f"{TASK}/test", prompts, SITE,
                                  prefix=CONTEXT_FILE.read_text("utf-8"))
    surprisal = session.surprisal_scores(MODEL, TASK, prompts)
    return session, shifted, surprisal


def test_a_warm_session_never_loads_the_model_for_surprisal_or_shift(
        _private_activation_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cold, shifted, surprisal = _shift_and_surprisal(limit=4)
    assert cold.stage_passes == {SHIFT: 1, SURPRISAL: 1} and MODEL in cold.loaded
    assert cold.passes == 1  # the shifted pass is an activation pass; surprisal is not
    bars = capsys.readouterr().err  # the progress bars name their stage
    assert f"{SHIFT} {TASK}/test @ {SITE}" in bars and f"{SURPRISAL} {TASK}" in bars
    assert len(shifted) == len(surprisal) == 12  # 4 questions of 3 candidates
    assert (surprisal < 0).all()

    warm, shifted_again, surprisal_again = _shift_and_surprisal(limit=4)
    assert warm.stage_passes == {} and warm.passes == 0
    assert warm.loaded == {}  # not even loaded: both came from the disk cache
    np.testing.assert_array_equal(shifted_again, shifted)
    np.testing.assert_array_equal(surprisal_again, surprisal)  # float64, bit for bit
    assert f"{SURPRISAL} of {MODEL} (sentence_log_probs): from the disk cache" in \
        capsys.readouterr().err

    # the key holds the prompts' texts: other prompts are scored afresh
    other, _, fewer = _shift_and_surprisal(limit=3)
    assert other.stage_passes == {SHIFT: 1, SURPRISAL: 1}
    np.testing.assert_allclose(fewer, surprisal[:9], rtol=0, atol=1e-3)

    # the entries are signed like activations: a flipped byte is caught and rebuilt
    (entry,) = [p for p, n in _score_files(_private_activation_cache).items() if n == 12]
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0x01
    entry.write_bytes(bytes(data))
    rebuilt, _, surprisal_rebuilt = _shift_and_surprisal(limit=4)
    assert rebuilt.stage_passes == {SURPRISAL: 1}
    np.testing.assert_array_equal(surprisal_rebuilt, surprisal)


def test_a_formats_own_protocol_is_cached_too() -> None:
    """SyntaxGym's region predictions run the model in `submit`'s baselines: cached."""
    suite = "syntaxgym_number_prep"

    def run() -> tuple[Session, list[float | None] | None]:
        session = Session(TaskCatalog.default(), SubmitOptions(limit=4, progress=False))
        return session, own_item_scores(session, MODEL, suite)

    cold, scores = run()
    assert cold.stage_passes == {SURPRISAL: 1}
    assert scores is not None and len(scores) == 4
    assert all(v in (0.0, 1.0) for v in scores)
    warm, again = run()
    assert warm.stage_passes == {} and warm.loaded == {} and again == scores


def _limited_submission(limit: int = 5) -> Submission:
    """A real stored result of the reference entry, as a limited submission."""
    record = latest_results(REGISTRY, ENTRY)[TASK]
    return Submission(spec_version="0.0.1", probebench_version="0.1.0", probe=record.probe,
                      model=record.model, device=record.device, seed=record.seed,
                      bootstrap_resamples=record.bootstrap_resamples,
                      versions=record.versions, definitions={}, tasks=[record.result],
                      run=record.run, limit=LimitOut(items=limit, note=limit_note(limit)))


def test_a_limited_result_says_so_and_the_registry_refuses_it(tmp_path: Path) -> None:
    limited = _limited_submission()
    note = "limited to 5 items per task: not for the registry"
    assert limited.limit is not None and limited.limit.note == note
    path = tmp_path / "submission.json"
    path.write_text(limited.to_json())
    assert json.loads(path.read_text())["limit"] == {"items": 5, "note": note}
    assert read_submission(path).limit == limited.limit
    head = render_report(limited).splitlines()[:4]
    assert any(note in line for line in head), head  # at the top of REPORT.md

    with pytest.raises(InputError, match=f"{ENTRY}: this submission is {note}"):
        store_submission(tmp_path, ENTRY, limited)
    with pytest.raises(InputError, match="only baselines of every stage on whole test sets"):
        store_baselines(tmp_path, limited)
    assert not (tmp_path / "results").exists() and not (tmp_path / "baselines").exists()
    # `registry evaluate` (and publish, review) refuse a limited session before any work
    session = Session(TaskCatalog.default(), SubmitOptions(limit=5, progress=False))
    with pytest.raises(InputError, match=r"covers whole test sets.*leave out --limit"):
        evaluate_entry(ENTRY, REGISTRY, REPO, session)
    assert session.resolved == {} and session.loaded == {}
    # review judges a reproducer against a whole re-evaluation only
    value = limited.tasks[0].auroc.value
    run = ReproducerRun(entry=ENTRY, notebook="train.ipynb", ran=True, error=None,
                        metrics={TASK: {"auroc": value}}, problems=[])
    review = review_entry(ENTRY, REGISTRY, REPO, catalog=TaskCatalog.default(),
                          reproduced=run, evaluation=limited)
    (item,) = [i for i in review.items if i.name == "notebook"]
    assert not item.passed and note in item.detail
    unlimited = limited.model_copy(update={"limit": None})
    review = review_entry(ENTRY, REGISTRY, REPO, catalog=TaskCatalog.default(),
                          reproduced=run, evaluation=unlimited)
    assert [i.passed for i in review.items if i.name == "notebook"] == [True]


def test_a_submission_that_skipped_stages_is_refused_by_every_store(tmp_path: Path) -> None:
    """A whole test set but a stage not run (``--quick``, ``--skip``): results, baselines
    and generalisation stores and review refuse it, naming the stages."""
    from probebench.registry.store import store_generalisation

    skipped = _limited_submission().model_copy(update={
        "limit": None, "stages_skipped": {"shift": "skipped (--skip shift)"}})
    assert skipped.registry_problem() == "without the stage shift: not for the registry"
    with pytest.raises(InputError, match=f"{ENTRY}: this submission is without the stage "
                                         "shift: not for the registry"):
        store_submission(tmp_path, ENTRY, skipped)
    with pytest.raises(InputError, match="without the stage shift"):
        store_baselines(tmp_path, skipped)
    with_block = skipped.model_copy(update={"generalisation": {}})
    with pytest.raises(InputError, match="without the stage shift"):
        store_generalisation(tmp_path, ENTRY, with_block)
    assert not (tmp_path / "results").exists() and not (tmp_path / "baselines").exists()
    record = skipped.tasks[0]
    run = ReproducerRun(entry=ENTRY, notebook="train.ipynb", ran=True, error=None,
                        metrics={TASK: {"auroc": record.auroc.value}}, problems=[])
    review = review_entry(ENTRY, REGISTRY, REPO, catalog=TaskCatalog.default(),
                          reproduced=run, evaluation=skipped)
    (item,) = [i for i in review.items if i.name == "notebook"]
    assert not item.passed and "without the stage shift" in item.detail


def test_report_shows_the_matmul_rate_beside_the_latency() -> None:
    """REPORT.md names the rate when the latency was measured and now, and why a cached
    latency was measured again."""
    from probebench.evaluation.results import Timing

    base = _limited_submission().model_copy(update={"limit": None})
    timing = Timing(latency_ms={TASK: 41.0}, latency_prompts=20, wall_seconds=1.0,
                    latency_matmul_gflops={TASK: {"measured": 180.5, "now": 95.25}},
                    latency_remeasured={TASK: "the rate moved"})
    text = render_report(base.model_copy(update={"timing": timing}))
    assert (f"when the latency was measured / in this run: {TASK} 180.5 / 95.2" in text
            or f"when the latency was measured / in this run: {TASK} 180.5 / 95.3" in text)
    assert "within a factor of 1.25" in text
    assert f"Measured again instead of reused: {TASK} (the rate moved)" in text
    plain = render_report(base.model_copy(update={"timing": timing.model_copy(update={
        "latency_matmul_gflops": {}, "latency_remeasured": {}})}))
    assert "matmul rate" not in plain and "Measured again" not in plain


def test_limit_must_be_a_positive_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["submit", str(REFERENCE), "--tasks", TASK, "--limit", "0"])
    assert exit_info.value.code == 2
    assert "--limit: must be at least 1, found 0" in capsys.readouterr().err


#: runs probebench with nbclient and ipykernel unimportable, as without the extra
_WITHOUT_REVIEW_EXTRA = textwrap.dedent("""
    import sys

    class WithoutReviewExtra:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {"nbclient", "ipykernel"}:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, WithoutReviewExtra())
    from probebench.intake.reproduce import MissingExtraError, require_notebook_runner
    try:
        require_notebook_runner()
    except MissingExtraError as exc:
        print("CHECK:", exc)
    from probebench.cli import main
    code = main(sys.argv[1:])
    assert "nbclient" not in sys.modules and "ipykernel" not in sys.modules
    raise SystemExit(code)
""")


def _without_review_extra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT_REVIEW_EXTRA, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)


def test_reproduce_and_review_name_the_missing_extra(tmp_path: Path) -> None:
    hint = "pip install 'probebench[review]'"
    out = tmp_path / "reproduced.json"
    done = _without_review_extra("registry", "reproduce", ENTRY, "--out", str(out))
    assert done.returncode == 1, done.stderr
    assert "CHECK: running a reproducer notebook needs nbclient, ipykernel" in done.stdout
    assert "optional extra `review`" in done.stdout and hint in done.stdout
    assert "Traceback" not in done.stderr
    report = json.loads(out.read_text())
    assert report["ran"] is False and hint in report["error"]

    review_json = tmp_path / "review.json"
    done = _without_review_extra("review", ENTRY, "--markdown", str(tmp_path / "c.md"),
                                 "--json-out", str(review_json))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (item,) = [i for i in json.loads(review_json.read_text())["items"]
               if i["name"] == "notebook"]
    assert item["passed"] is False and hint in item["detail"]
    assert r"pip install 'probebench\[review\]'" in (tmp_path / "c.md").read_text()


def test_a_warm_limited_submit_runs_no_model_pass_and_no_fit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A second `submit` of the reference verb MLP reads everything deterministic from
    the disk cache: the activations, the shifted pass, the surprisal baseline, the
    random-init control (under its own identity), the task's baselines and the re-trained
    selectivity; ``--limit`` bounds every split, so the cold run is short too
    (benchmarks/submit_stages.py times the full one)."""
    import probebench.evaluation.deployment as deployment
    import probebench.evaluation.selectivity as selectivity_module
    import probebench.evaluation.task_baselines as baselines_module

    catalog = TaskCatalog.default()
    # the latency as an idle machine measures it: one timed on a loaded one (as a test
    # run's often is) is withheld and never cached (test_latency.py), and the warm run
    # would time it again
    monkeypatch.setattr(deployment, "_latency", lambda *args: _steady(12.5))
    # and the machine as fast as when it was timed (a real reading moves with the load)
    monkeypatch.setattr(deployment, "matmul_gflops", lambda device: 100.0)

    def run() -> tuple[Session, Submission]:
        options = SubmitOptions(bootstrap=200, latency_prompts=2, progress=False, limit=10,
                                guards=RegistryGuards(REGISTRY, REPO, catalog=catalog))
        session = Session(catalog, options)
        return session, submit(REFERENCE, [TASK], session=session)

    cold, first = run()
    # every split is cut to 10 items: train and validation too
    assert all(len(items) <= 10 for items in cold.task(TASK).splits.values())
    # one pass each: the test prompts (the guard's site read in the same pass), the
    # train and validation prompts; the random-init copy over its train sample and test
    assert cold.stage_passes == {ACTIVATIONS: 3, SHIFT: 1, SURPRISAL: 1, RANDOM_INIT: 2}
    assert first.timing is not None
    stages = first.timing.stages
    for name, passes in cold.stage_passes.items():
        assert stages[name].passes == passes and stages[name].tokens > 0, name
    assert {BASELINES, SELECTIVITY, LATENCY} <= set(stages)
    test_tokens = stages[SHIFT].tokens  # the shifted pass reads the test prompts + prefix
    assert stages[ACTIVATIONS].tokens > test_tokens - 600

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("recomputed on a warm run")

    monkeypatch.setattr(selectivity_module, "fit_protocols", refuse)
    monkeypatch.setattr(baselines_module, "_compute", refuse)
    monkeypatch.setattr("probebench.evaluation.session.random_init_model", refuse)
    monkeypatch.setattr("probebench.evaluation.session.load_model", refuse)
    warm, second = run()
    assert warm.stage_passes == {} and warm.passes == 0
    assert warm.loaded == {}  # the latency too is this machine's earlier measurement
    assert second.timing is not None and first.timing.latency_reused == {}
    assert second.timing.latency_ms == first.timing.latency_ms
    assert set(second.timing.latency_reused) == {TASK}
    assert all(s.passes == 0 and s.tokens == 0 for s in second.timing.stages.values())
    assert first.deterministic_json() == second.deterministic_json()
    assert second.limit == LimitOut(items=10, note=limit_note(10))
    assert second.tasks[0].n_items == 10
    assert second.tasks[0].selectivity == first.tasks[0].selectivity


def test_the_random_init_control_is_cached_apart_from_the_model(smollm: Any) -> None:
    """The random-init copy's activations are keyed by its own identity (the config's
    hash and the seed): never the model's key, another seed another key."""
    from probebench.models.cache import ActivationCache, prompts_sha256
    from probebench.models.loading import random_init_resolved

    resolved = smollm.resolved
    a, b = random_init_resolved(resolved, 1), random_init_resolved(resolved, 2)
    assert a.identity.weights_sha256.startswith("random-init:config-sha256=")
    assert a.identity.weights_sha256.endswith(":seed=1")
    store = ActivationCache()
    digest = prompts_sha256([])
    keys = {store.key(r.identity, "cpu", digest, SITE) for r in (resolved, a, b)}
    assert len(keys) == 3
    assert random_init_resolved(resolved, 1) == a  # a function of config and seed alone


def test_a_latency_is_reused_only_for_the_same_inputs_on_the_same_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The latency is a timing, not a result: reused from the disk cache only for the
    same model, site, probe shape, timed prompts, hardware and threads, and measured
    anew with ``--no-cache``."""
    import probebench.evaluation.deployment as deployment
    from probebench.artifact.checks import validate

    report = validate(REFERENCE)
    assert report.meta is not None and report.weights is not None
    meta, weights = report.meta, report.weights
    timed: list[float] = []
    loaded = False

    def fake_latency(session: Session, meta: object, weights: object,
                     sample: list[object], site: Site) -> LatencyVerdict:
        timed.append(float(len(timed) + 1))
        return _steady(timed[-1] * 10.0, contention=0.5 if loaded else 0.0)

    monkeypatch.setattr(deployment, "_latency", fake_latency)
    # the machine's matmul rate held steady: reuse is decided by the inputs alone here
    # (test_latency_rate.py varies the rate)
    monkeypatch.setattr(deployment, "matmul_gflops", lambda device: 100.0)

    def measure(*, cache: bool = True, prompts: int = 4, site: Site = SITE,
                reuse: bool = True) -> deployment.Latency:
        session = Session(TaskCatalog.default(),
                          SubmitOptions(progress=False, cache=cache, latency_prompts=prompts,
                                        reuse_latency=reuse))
        flat = Flat.of(session.task(TASK).test)
        return deployment.measure_latency(session, meta, weights, flat.prompts, site)

    first = measure()
    assert (first.ms, first.reused) == (10.0, False)
    again = measure()
    assert (again.ms, again.reused, again.measured_at) == (10.0, True, first.measured_at)
    no_cache = measure(cache=False)
    assert (no_cache.ms, no_cache.reused) == (20.0, False)
    assert measure(cache=False).ms == 30.0  # --no-cache times every run
    assert measure().ms == 10.0  # and stores nothing
    assert measure(reuse=False).ms == 40.0  # the registry's evaluation times its own run
    assert measure().ms == 10.0
    assert measure(prompts=5).ms == 50.0  # other timed prompts
    assert measure(site=Site(19, "token_avg")).ms == 60.0  # another site
    monkeypatch.setattr(deployment, "hardware", lambda device: "another CPU (2 cores)")
    assert measure().reused is False  # another machine
    # a measurement withheld on a loaded machine is never cached: the next run times anew
    monkeypatch.setattr(deployment, "hardware", lambda device: "a loaded CPU (2 cores)")
    loaded = True
    withheld = measure()
    assert withheld.ms is None and withheld.note is not None and "loaded" in withheld.note
    loaded = False
    assert (measure().ms, measure().reused) == (90.0, True)


def test_the_registry_stores_a_latency_timed_in_its_own_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``registry evaluate`` never reuses a cached latency, and leaves the session's
    option as it found it."""
    import probebench.runs.evaluate as evaluate_module

    seen: list[bool] = []

    def fake_submit(*args: object, session: Session, **kwargs: object) -> None:
        seen.append(session.options.reuse_latency)
        raise RuntimeError("stop here")

    monkeypatch.setattr(evaluate_module, "submit", fake_submit)
    options = SubmitOptions(progress=False)
    session = Session(TaskCatalog.default(), options)
    with pytest.raises(RuntimeError, match="stop here"):
        evaluate_entry(ENTRY, REGISTRY, REPO, session, store=False)
    assert seen == [False] and session.options.reuse_latency is True
    # the run changed a copy: the caller's object was never written, and it is back
    assert session.options is options and options.guards is no_guards


def test_a_changed_guard_lookup_is_asked_again() -> None:
    """The guard memo follows ``options.guards``: a session that ran without a registry
    and then evaluates an entry under the registry's lookup asks that lookup."""
    asked: list[str] = []

    class Lookup:
        def __init__(self, name: str) -> None:
            self.name = name

        def __call__(self, model: str) -> None:
            asked.append(f"{self.name}:{model}")

        def missing(self, model: str) -> str:
            return "none"

    first, second = Lookup("first"), Lookup("second")
    session = Session(TaskCatalog.default(), SubmitOptions(progress=False, guards=first))
    session.guard("m")
    session.guard("m")
    with session.options_for(guards=second):
        session.guard("m")
        session.guard("m")
    session.guard("m")
    assert asked == ["first:m", "second:m", "first:m"]


def test_options_for_changes_a_copy_and_puts_the_old_options_back() -> None:
    options = SubmitOptions(progress=False, seed=3)
    session = Session(TaskCatalog.default(), options)
    with session.options_for(seed=7, skip={"latency"}) as changed:
        assert session.options is changed and changed is not options
        assert (changed.seed, changed.skip, changed.progress) == (7, frozenset({"latency"}), False)
        assert options.seed == 3 and options.skip == frozenset()
    assert session.options is options
    with pytest.raises(KeyError), session.options_for(seed=9):
        raise KeyError("inside")
    assert session.options is options and options.seed == 3
    with pytest.raises(SubmitError, match="unknown stage"), session.options_for(skip={"x"}):
        pass
    assert session.options is options
