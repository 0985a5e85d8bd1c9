"""Stages a run may leave out (``SubmitOptions.skip``, ``submit --stages/--skip``) and the
quick profile (``--quick``): what a skipped stage leaves in submission.json and REPORT.md,
how the names are parsed and refused, that the registry refuses such a submission, that
``--limit`` bounds the shift pass and the latency, and ``submit_many``'s required hashes.

Real model (the embedded smollm2-135m, loaded once per session by ``tests/conftest.py``),
the real verb-grammar task and the registry's reference MLP artifact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from probebench.artifact.checks import validate
from probebench.cli import main
from probebench.errors import InputError
from probebench.evaluation.accounting import latency_sample
from probebench.evaluation.headline import Flat
from probebench.evaluation.report import render_report
from probebench.evaluation.results import Submission, read_submission
from probebench.evaluation.session import (
    ACTIVATIONS,
    CONTEXT_FILE,
    LATENCY,
    RANDOM_INIT,
    SELECTIVITY,
    SHIFT,
    STAGES,
    SURPRISAL,
    Session,
    SubmitError,
    SubmitOptions,
    stages_to_skip,
)
from probebench.evaluation.submit import submit, submit_many
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
LIMIT = 3  # three questions of three candidates: nine prompts


def _session(smollm: Any, **options: Any) -> Session:
    """A session that reuses the test run's loaded model (no second load)."""
    return Session(TaskCatalog.default(), SubmitOptions(progress=False, bootstrap=200,
                                                        **options),
                   loaded={MODEL: smollm})


@pytest.fixture(scope="module")
def quick(smollm: Any, module_cache: Path) -> Iterator[tuple[Session, Submission]]:
    # a module fixture is set up before the autouse private cache: its own empty one
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))
        session = _session(smollm, quick=True, limit=LIMIT)
        yield session, submit(REFERENCE, [TASK], session=session)


def test_the_quick_profile_runs_the_headline_and_leaves_the_rest_empty(
        quick: tuple[Session, Submission]) -> None:
    session, sub = quick
    (task,) = sub.tasks
    # the headline is there: AUROC with its CI, ECE, slices
    assert task.auroc.value is not None and task.auroc.ci_low is not None
    assert 0.0 <= task.ece <= 1.0 and task.slices
    assert task.n_items == LIMIT
    # every other stage: named, with why, and no number in its place
    assert sub.profile == "quick"
    assert set(sub.stages_skipped) == (set(STAGES) - {"activations"}) | {
        "control-recall", "generalisation"}
    assert all("--quick" in why for why in sub.stages_skipped.values())
    assert task.distshift_auroc.value is None and not task.distshift_auroc.imputed
    assert task.distshift_auroc.note.startswith("not run: the shift stage was skipped")
    assert task.selectivity is None
    # no published baselines for a limited test set's inputs: none at all, so no gap
    assert task.baselines == {} and task.baseline_gap is None
    assert task.beats_baselines is None and sub.baselines_sha256 == {}
    assert sub.generalisation is None
    assert sub.timing is not None
    assert sub.timing.latency_ms == {} and sub.timing.latency_withheld == {}
    assert sub.timing.latency_prompts == 0
    # the model ran for the activations only
    stages = sub.timing.stages
    assert stages[ACTIVATIONS].passes >= 1
    cpu = stages[ACTIVATIONS].cpu_seconds  # the process's CPU seconds, beside the wall's
    assert cpu is not None and cpu > 0
    for name in (SHIFT, SURPRISAL, RANDOM_INIT, SELECTIVITY, LATENCY):
        assert name not in stages or stages[name].passes == 0, name
    assert set(session.stage_passes) == {ACTIVATIONS}
    assert sub.limit is not None and sub.registry_problem() == sub.limit.note
    assert sub.model_copy(update={"limit": None}).registry_problem() is not None
    # the file says so, and so does the report
    back = Submission.model_validate_json(sub.to_json())
    assert back.stages_skipped == sub.stages_skipped and back.profile == "quick"
    report = render_report(sub)
    assert "The quick profile (`--quick`): not for the registry" in report
    assert "not run: the shift stage was skipped" in report
    assert "Latency not measured: the latency stage was skipped" in report


def test_stage_names_parse_and_are_refused_by_name() -> None:
    assert stages_to_skip() == frozenset()
    assert stages_to_skip(skip=["shift", "latency"]) == {"shift", "latency"}
    everything_else = set(STAGES) - {"activations", "shift"}
    assert stages_to_skip(["shift"]) == everything_else
    assert stages_to_skip(["activations", "shift"]) == everything_else  # named or not
    with pytest.raises(SubmitError, match="unknown stage 'shfit'; the stages are "
                                          "activations, shift"):
        stages_to_skip(skip=["shfit"])
    with pytest.raises(SubmitError, match="unknown stage 'nope'"):
        stages_to_skip(["nope"])
    with pytest.raises(SubmitError, match="activations stage cannot be skipped"):
        stages_to_skip(skip=["activations"])
    with pytest.raises(SubmitError, match="latency: named in both --stages and --skip"):
        stages_to_skip(["latency"], ["latency"])
    # the python API refuses the same, when the options are made
    with pytest.raises(SubmitError, match="activations stage cannot be skipped"):
        SubmitOptions(skip=frozenset({"activations"}))
    opts = SubmitOptions(skip=frozenset({"latency"}))
    assert not opts.runs("latency") and opts.runs("shift")
    assert opts.skipped() == {"latency": "the run's options, --skip latency"}


@pytest.mark.parametrize("args, message", [
    (["--skip", "activations"], "the activations stage cannot be skipped"),
    (["--skip", "shift,warp"], "unknown stage 'warp'"),
    (["--stages", "shift", "--quick"], "--quick and --stages contradict each other"),
])
def test_the_command_line_refuses_bad_stages_before_any_work(
        args: list[str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "submission.json"
    code = main(["submit", str(REFERENCE), "--tasks", TASK, "--out", str(out),
                 "--report", str(tmp_path / "REPORT.md"), "--no-guard", "--quiet", *args])
    assert code != 0 and not out.exists()
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("options", [{"quick": True}, {"skip": frozenset({"latency"})}])
def test_a_registry_evaluation_refuses_skipped_stages(options: dict[str, Any]) -> None:
    session = Session(TaskCatalog.default(), SubmitOptions(progress=False, **options))
    with pytest.raises(InputError, match="a registry evaluation runs every stage; this "
                                         "session is without the stage"):
        evaluate_entry(ENTRY, REGISTRY, REPO, session, store=False)
    assert session.loaded == {} and session.passes == 0  # refused before any work


def test_submit_many_requires_each_artifacts_hash() -> None:
    right = validate(REFERENCE).bundle_sha256
    assert right is not None
    wrong = "0" * 64
    for given in ([wrong], {REFERENCE: wrong}, {str(REFERENCE): wrong}):
        with pytest.raises(SubmitError, match="invalid artifact, nothing was run"):
            submit_many([REFERENCE], [TASK], SubmitOptions(progress=False),
                        expected_sha256=given)
    with pytest.raises(SubmitError, match="2 hashes for 1 artifacts"):
        submit_many([REFERENCE], [TASK], expected_sha256=[right, right])
    with pytest.raises(SubmitError, match="not among the artifacts given"):
        submit_many([REFERENCE], [TASK], expected_sha256={REFERENCE.parent: right})
    with pytest.raises(SubmitError, match="one hash per artifact"):
        submit_many([REFERENCE], [TASK], expected_sha256=right)


@pytest.mark.slow  # a shift pass after the long context, and the latency's timed runs
def test_limit_bounds_the_shift_pass_and_the_latency(smollm: Any) -> None:
    limit = 2
    session = _session(smollm, limit=limit, latency_prompts=5,
                       skip=frozenset({"surprisal", "random-init", "selectivity"}),
                       generalisation=False)
    sub = submit(REFERENCE, [TASK], session=session)
    (task,) = sub.tasks
    full = Flat.of(TaskCatalog.default().load(TASK).test).prompts
    limited = Flat.of(session.task(TASK).test).prompts
    assert task.n_prompts == len(limited) < len(full)
    # the shift pass ran once, over the limited prompts only (a memo hit now: no pass)
    assert sub.timing is not None and sub.timing.stages[SHIFT].passes == 1
    passes = session.passes
    shifted = session.activations(MODEL, f"{TASK}/test", limited, SITE,
                                  prefix=CONTEXT_FILE.read_text("utf-8"))
    assert session.passes == passes and shifted.shape[0] == len(limited)
    assert task.distshift_auroc.value is not None
    # the latency times at most `limit` prompts, measured (or withheld, on a loaded
    # machine, saying so)
    assert sub.timing.latency_prompts == limit
    assert len(latency_sample(session, limited)) == limit
    assert (TASK in sub.timing.latency_ms) != (TASK in sub.timing.latency_withheld)
    # the cheap baselines ran; the skipped ones hold no numbers and say why; no gap
    assert task.baselines["majority"].auroc is not None
    assert task.baselines["length"].auroc is not None
    for name, stage in (("random_features", "random-init"), ("surprisal", "surprisal")):
        assert task.baselines[name].auroc is None, name
        assert task.baselines[name].note.startswith(f"not run: the {stage} stage"), name
    assert task.baseline_gap is None and sub.baselines_sha256 == {}
    assert task.selectivity is None
    assert set(sub.stages_skipped) == {"surprisal", "random-init", "selectivity"}
    assert sub.profile is None


@pytest.mark.slow  # two runs of the command line's quick profile
def test_the_command_line_and_python_give_the_same_quick_submission(
        tmp_path: Path) -> None:
    import probebench

    out = tmp_path / "cli.json"
    assert main(["submit", str(REFERENCE), "--tasks", TASK, "--quick", "--limit", "2",
                 "--bootstrap", "200", "--out", str(out), "--report",
                 str(tmp_path / "REPORT.md"), "--no-guard", "--registry", str(REGISTRY),
                 "--quiet"]) == 0
    api = probebench.submit(REFERENCE, [TASK], SubmitOptions(quick=True, limit=2,
                                                             bootstrap=200,
                                                             progress=False),
                            guard=None, registry=REGISTRY)
    assert read_submission(out).deterministic_json() == api.deterministic_json()
