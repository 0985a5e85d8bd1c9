"""The causal test inside ``submit`` (``probebench.evaluation.causal_stage``, ``submit
--causal``): the block validates, goes through the disk cache (a hit gives the identical
block and runs no model), times its own stage, adds nothing to ``stages_skipped``, says
why it does not apply to an MLP probe or a task without a readout, and REPORT.md shows
its table and dose-response chart.

Real reference artifacts of the registry on the embedded SmolLM2, with a small grid and
few controls (``CausalMethod`` fields) so the default tests stay cheap; the whole
``submit`` with every stage is the slow test.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.artifact.checks import validate
from probebench.causal.effect import SUBMISSION_METHOD, causal_effect, causal_test
from probebench.cli import build_parser
from probebench.evaluation.causal_stage import CAUSAL, causal_blocks, max_items, to_block
from probebench.evaluation.report import causal_section, render_report
from probebench.evaluation.results import CausalOut
from probebench.evaluation.session import Session, SubmitError, SubmitOptions, limit_note
from probebench.evaluation.submit import submit
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog

ARTIFACTS = Path(__file__).resolve().parents[2] / "registry" / "artifacts"
LINEAR = ARTIFACTS / "verb-grammar-smollm2-135m-l15-v1"
MLP = ARTIFACTS / "verb-grammar-mlp-smollm2-135m-l20-v2"
NO_READOUT = ARTIFACTS / "blimp-det-noun-smollm2-135m-l15-v1"
NO_READOUT_TASK = "blimp_determiner_noun_agreement_1"
GUARD = ARTIFACTS / "eval-awareness-guard-smollm2-135m-l15-v2"
#: a small grid and two controls: the same code as the defaults, fewer passes
METHOD = dataclasses.replace(SUBMISSION_METHOD, alphas=(-2.0, 0.0, 2.0), n_controls=2)
LIMIT = 4


def _session(catalog: TaskCatalog, lm: Any = None, **options: Any) -> Session:
    opts = SubmitOptions(progress=False, bootstrap=100, causal_method=METHOD, **options)
    session = Session(catalog, opts)
    if lm is not None:  # the session-wide embedded model: no second load
        session.loaded["smollm2-135m"] = lm
    return session


def _blocks(session: Session, artifact: Path, task: str) -> dict[str, CausalOut] | None:
    report = validate(artifact, catalog=session.catalog)
    assert report.meta is not None and report.weights is not None
    assert report.bundle_sha256 is not None
    meta = report.meta
    return causal_blocks(session, [task], meta, report.weights,
                         Site(meta.layer, meta.position), report.bundle_sha256)


def _assert_chart(section: str, block: CausalOut, alphas: tuple[str, ...]) -> None:
    """The REPORT section draws the block's dose-response curve over ``alphas`` (mermaid
    chart and table) and states its effect with the interval."""
    curve = ", ".join(f"{v:.3f}" for v in block.curve)
    assert f'x-axis "alpha (standard deviations)" [{", ".join(alphas)}]' in section
    assert f"    line [{curve}]\n" in section
    for alpha, value in zip(alphas, block.curve, strict=True):
        assert f"| {alpha} | {value:.3f} |" in section
    assert block.ci is not None and block.effect is not None
    assert f"{block.effect:.3f} [{block.ci[0]:.3f}, {block.ci[1]:.3f}]" in section


@pytest.fixture(scope="module")
def catalog() -> TaskCatalog:
    return TaskCatalog.default()


def test_off_by_default_and_refused_without_its_method(catalog: TaskCatalog) -> None:
    assert SubmitOptions().causal is False
    assert _blocks(_session(catalog), LINEAR, "verb_grammar") is None
    # --causal without the test's method: refused before the model is resolved
    session = Session(catalog, SubmitOptions(progress=False, causal=True))
    with pytest.raises(SubmitError, match=re.escape("causal_method=probebench.causal.effect")):
        submit(LINEAR, ["verb_grammar"], session=session)
    assert session.resolved == {} and session.loaded == {}


def test_an_mlp_probe_and_a_task_without_readout_say_why(catalog: TaskCatalog) -> None:
    session = _session(catalog, causal=True)
    mlp = _blocks(session, MLP, "verb_grammar")
    blimp = _blocks(session, NO_READOUT, NO_READOUT_TASK)
    assert mlp is not None and blimp is not None
    assert not mlp["verb_grammar"].applicable
    assert (mlp["verb_grammar"].reason or "").startswith("not a linear probe")
    block = blimp[NO_READOUT_TASK]
    assert not block.applicable and "declares no readout" in (block.reason or "")
    assert block.effect is None and block.ablation is None and block.curve == []
    assert session.loaded == {}  # neither needed the model
    section = causal_section({"verb_grammar": mlp["verb_grammar"]})
    assert "### verb\\_grammar\n\nNot applicable: not a linear probe" in section
    assert "mermaid" not in section


def test_the_limit_bounds_the_items() -> None:
    for limit, expected in ((None, SUBMISSION_METHOD.max_items), (LIMIT, LIMIT),
                            (10_000, SUBMISSION_METHOD.max_items)):
        session = Session(TaskCatalog.default(), SubmitOptions(limit=limit))
        assert max_items(session, SUBMISSION_METHOD) == expected


def test_a_result_becomes_a_block_and_its_report_section() -> None:
    """The model-free core on a toy model whose readout is the activation along axis 0:
    its result, less the submission's keys, validates as a ``CausalOut`` and renders
    with the curve's and the table's numbers."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 6))
    labels = (x[:, 0] > 0).astype(int)

    def evaluate(add: np.ndarray | None, ablate: np.ndarray | None) -> np.ndarray:
        h = x + (0.0 if add is None else add)
        if ablate is not None:
            h = h - np.outer(h @ ablate, ablate)
        return np.asarray(h[:, 0])

    result = causal_effect(evaluate, direction=np.eye(6)[0], activations=x, labels=labels,
                           items=np.arange(40), alphas=(-1.0, 0.0, 1.0), n_controls=3,
                           n_resamples=100).to_dict()
    block = CausalOut.model_validate(to_block({**result, "cost": {"seconds": 1.0}}))
    assert block.applicable and block.effect == pytest.approx(np.std(x[:, 0], ddof=1))
    # projecting axis 0 out leaves a readout of 0: "label 0" for every unit
    assert block.ablation is not None
    assert block.ablation.accuracy_after == pytest.approx(np.mean(labels == 0), abs=1e-6)
    section = causal_section({"toy_task": block})
    assert "### toy\\_task" in section and "```mermaid\nxychart-beta\n" in section
    _assert_chart(section, block, ("-1", "0", "1"))
    before, after = block.ablation.accuracy_before, block.ablation.accuracy_after
    assert before == 1.0 and after is not None and f"1.000 → {after:.3f}" in section
    assert re.search(r"\(-?\d\.\d{3} to -?\d\.\d{3}, 3 controls\)", section)


@pytest.mark.slow
def test_the_block_is_cached_timed_and_reported(catalog: TaskCatalog, smollm: Any) -> None:
    """The real test on the linear verb-grammar probe: the block is the direct
    ``causal_test``'s less the keys the submission holds elsewhere; a second session
    reads it from the disk cache, byte for byte, without running the model."""
    first = _session(catalog, smollm, causal=True, limit=LIMIT)
    blocks = _blocks(first, LINEAR, "verb_grammar")
    assert blocks is not None
    block = blocks["verb_grammar"]
    assert block.applicable and block.alphas == [-2.0, 0.0, 2.0]
    assert len(block.controls) == 2 and block.items["max_items"] == LIMIT
    assert block.ablation is not None and block.ci is not None
    direct = causal_test(LINEAR, task="verb_grammar", lm=smollm, alphas=METHOD.alphas,
                         n_controls=2, seed=0, max_items=LIMIT, n_resamples=100).to_dict()
    assert block.effect == pytest.approx(direct["effect"], abs=1e-5)
    assert block.curve == pytest.approx(direct["curve"], abs=1e-5)
    assert block.control_percentile == direct["control_percentile"]
    # its time is a stage of its own, with the steered passes (1 + 2 x 3 + 1)
    assert first.stage_passes[CAUSAL] == 1 + (len(METHOD.alphas) - 1) * 3 + 1
    assert first.stage_seconds[CAUSAL] > 0

    again = _session(catalog, causal=True, limit=LIMIT)  # no model given: none loaded
    hit = _blocks(again, LINEAR, "verb_grammar")
    assert hit is not None and again.loaded == {} and CAUSAL not in again.stage_passes
    assert hit["verb_grammar"].model_dump_json() == block.model_dump_json()

    section = causal_section(blocks)
    assert "## Causal test" in section and "```mermaid\nxychart-beta\n" in section
    _assert_chart(section, block, ("-2", "0", "2"))
    assert block.ablation.accuracy_before is not None
    assert block.ablation.accuracy_after is not None
    assert (f"{block.ablation.accuracy_before:.3f} → "
            f"{block.ablation.accuracy_after:.3f}") in section
    assert re.search(r"\(-?\d\.\d{3} to -?\d\.\d{3}, 2 controls\)", section)


def test_the_cli_flag_parses_and_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["submit", "x", "--tasks", "verb_grammar", "--causal"])
    assert args.causal is True
    assert parser.parse_args(["submit", "x", "--tasks", "verb_grammar"]).causal is False
    with pytest.raises(SystemExit):
        parser.parse_args(["submit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needed in ("--causal", "docs/causal.md", "200 test items",
                   "16 random control directions", "104 passes", "not a skipped stage"):
        assert needed in text, needed


@pytest.mark.slow
def test_submit_with_causal_is_a_complete_submission(smollm: Any, tmp_path: Path) -> None:
    """A real ``submit(..., SubmitOptions(causal=True, limit=...))`` of the eval-awareness
    guard with every stage: the block validates, nothing is skipped, the only registry
    problem is the limit, a second run reads the identical block from the cache, and
    REPORT.md holds the section and the chart with the curve's numbers."""
    limit = 20  # both labels among the first items
    opts = dict(progress=False, bootstrap=100, latency_prompts=2, limit=limit)
    catalog = TaskCatalog.default()

    def run(**extra: Any) -> Any:
        session = Session(catalog, SubmitOptions(**opts, **extra))  # type: ignore[arg-type]
        session.loaded["smollm2-135m"] = smollm
        return submit(GUARD, ["eval_awareness"], session=session)

    first = run(causal=True, causal_method=METHOD)
    assert first.causal is not None and first.stages_skipped == {}
    assert first.registry_problem() == limit_note(limit)  # the limit only
    assert first.model_copy(update={"limit": None}).registry_problem() is None
    block = first.causal["eval_awareness"]
    assert block.applicable and block.readout is not None
    assert block.readout["kind"] == "answer" and block.items["n_items"] == limit
    CausalOut.model_validate(json.loads(first.to_json())["causal"]["eval_awareness"])
    assert first.timing is not None and first.timing.stages[CAUSAL].passes > 0
    second = run(causal=True, causal_method=METHOD)
    assert second.causal is not None
    assert second.causal["eval_awareness"].model_dump_json() == block.model_dump_json()
    assert second.timing is not None and second.timing.stages[CAUSAL].passes == 0
    assert first.deterministic_json() == second.deterministic_json()
    report = render_report(first)
    causal_at = report.index("## Causal test")
    assert causal_at < report.index("## Timing")
    assert f"    line [{', '.join(f'{v:.3f}' for v in block.curve)}]" in report
    assert np.isfinite(block.effect or np.nan)
    off = run()
    assert off.causal is None and "## Causal test" not in render_report(off)
    assert CAUSAL not in (off.timing.stages if off.timing else {})
