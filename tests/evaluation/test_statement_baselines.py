"""The model's own baselines of single statements (truth_facts): the surprisal baseline
(mean log-probability per token) and the own answer under the task's readout (Marks and
Tegmark's prompting baseline), each checked against a plain transformers forward pass."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from probebench.evaluation.baselines import BASELINES, best_baseline
from probebench.evaluation.headline import Flat
from probebench.evaluation.lm_scores import answer_log_odds
from probebench.evaluation.report import render_report
from probebench.evaluation.results import BaselineOut, Submission
from probebench.evaluation.session import SURPRISAL, Session, SubmitOptions
from probebench.evaluation.task_baselines import (
    baselines_inputs,
    compute_baselines,
    own_answer_scores,
)
from probebench.registry.store import latest_results
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.spec import ReadoutSpec

REPO = Path(__file__).resolve().parents[2]
TASK = "truth_facts"
SMOLLM = "smollm2-135m"
LIMIT = 6
#: SmolLM2-135M-Instruct's document start (its BOS <|im_start|> is a chat-turn marker;
#: METHODOLOGY.md, "The document start, per model")
DOCUMENT_START = "<|endoftext|>"
READOUT = ReadoutSpec(kind="answer", suffix=" This statement is", positive=" True",
                      negative=" False")


def _options(**kw: Any) -> SubmitOptions:
    return SubmitOptions(limit=LIMIT, bootstrap=200, progress=False, **kw)


def _statements() -> list[Any]:
    """The first LIMIT test statements of truth_facts, as a limited submit reads them."""
    data = TaskCatalog.default().load(TASK)
    return Flat.of(data.test[:LIMIT]).prompts


def _next_token_log_probs(lm: Any, ids: list[int]) -> Any:
    """log_softmax of the logits of one unpadded sequence, (tokens, vocabulary)."""
    import torch

    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
    return torch.log_softmax(logits.float(), dim=-1)


def _plain_answer(lm: Any, text: str, readout: ReadoutSpec) -> float:
    """log P(positive) - log P(negative) after the document start, the text and the
    suffix: one-token answers read at the last position of one pass; otherwise one pass
    per answer, summing its tokens' log-probabilities."""
    tok = lm.tokenizer
    context = [tok.convert_tokens_to_ids(DOCUMENT_START),
               *tok(text + readout.suffix, add_special_tokens=False)["input_ids"]]
    answers = [tok(a, add_special_tokens=False)["input_ids"]
               for a in (readout.positive, readout.negative)]
    if all(len(a) == 1 for a in answers):
        last = _next_token_log_probs(lm, context)[-1]
        return float(last[answers[0][0]] - last[answers[1][0]])
    total = []
    for ids in answers:
        lp = _next_token_log_probs(lm, context + ids)
        total.append(sum(float(lp[len(context) - 1 + j, t]) for j, t in enumerate(ids)))
    return total[0] - total[1]


def _plain_mean_log2p(lm: Any, text: str) -> float:
    """The mean log2 P per token of the text, every token read after the document start."""
    tok = lm.tokenizer
    ids = [tok.convert_tokens_to_ids(DOCUMENT_START),
           *tok(text, add_special_tokens=False)["input_ids"]]
    lp = _next_token_log_probs(lm, ids)
    per_token = [float(lp[k, ids[k + 1]]) for k in range(len(ids) - 1)]
    return float(np.mean(per_token)) / math.log(2.0)


@pytest.fixture(scope="module")
def smollm_baselines(module_cache: Path) -> tuple[Session, dict[str, BaselineOut]]:
    """truth_facts's baselines on SmolLM2 at 15:last_token, first LIMIT items of each
    split, computed once for the module into its activation cache (the test without a
    readout reads the model's scores and the random-init control from there)."""
    session = Session(TaskCatalog.default(), _options())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))
        return session, compute_baselines(session, SMOLLM, TASK, Site(15, "last_token"))


def test_an_answer_of_several_tokens_sums_their_log_probabilities(smollm: Any) -> None:
    """The one-token path is checked through the session below; here an answer of two
    tokens, each read after the one before, against one plain pass per answer."""
    texts = [p.text for p in _statements()[:2]]
    two = READOUT.model_copy(update={"positive": " absolutely true"})
    assert len(smollm.tokenizer(two.positive, add_special_tokens=False)["input_ids"]) == 2
    batched = answer_log_odds(smollm, texts, two, progress=False)
    np.testing.assert_allclose(batched, [_plain_answer(smollm, t, two) for t in texts],
                               rtol=0, atol=1e-4)
    # not the one-token answer's score: the second token counts
    assert not np.allclose(batched, answer_log_odds(
        smollm, texts, READOUT.model_copy(update={"positive": " absolutely"}),
        progress=False), atol=1e-3)


def test_statement_baselines_equal_independent_scores_and_sklearns_auroc(
        smollm: Any, smollm_baselines: tuple[Session, dict[str, BaselineOut]]) -> None:
    session, out = smollm_baselines
    assert TaskCatalog.default().spec(TASK).readout == READOUT
    assert list(out) == list(BASELINES)  # in the order reports show them
    prompts = _statements()
    labels = np.array([p.label for p in prompts])
    assert set(labels.tolist()) == {0, 1}

    answer, surprisal = out["own_answer"], out["surprisal"]
    assert answer.scores is not None and surprisal.scores is not None
    plain_answer = np.array([_plain_answer(smollm, p.text, READOUT) for p in prompts])
    plain_mean = np.array([_plain_mean_log2p(smollm, p.text) for p in prompts])
    np.testing.assert_allclose(answer.scores, plain_answer, rtol=0, atol=1e-4)
    np.testing.assert_allclose(surprisal.scores, plain_mean, rtol=0, atol=1e-4)
    assert (plain_mean < 0).all()

    # AUROCs as they come (higher -> label 1, never flipped), with an interval
    for baseline, plain in ((answer, plain_answer), (surprisal, plain_mean)):
        assert baseline.auroc is not None and baseline.auroc.value is not None
        assert baseline.auroc.value == pytest.approx(roc_auc_score(labels, plain), abs=2e-6)
        assert baseline.auroc.ci_low is not None and baseline.auroc.ci_high is not None
        assert baseline.auroc.ci_low <= baseline.auroc.value <= baseline.auroc.ci_high
    # the own answer is right where the model prefers the right answer; a
    # log-probability has no threshold, so the surprisal baseline has no accuracy
    assert answer.accuracy is not None and answer.accuracy.value == pytest.approx(
        float(np.mean((plain_answer >= 0) == (labels == 1))), abs=1e-6)
    assert surprisal.accuracy is None or surprisal.accuracy.value is None
    assert "mean log-probability per token" in surprisal.note
    assert "log P(positive) - log P(negative)" in answer.note
    # both count for the gap like any baseline with an AUROC
    aurocs = {n: b.auroc.value for n, b in out.items() if b.auroc and b.auroc.value is not None}
    assert best_baseline(out) == max(aurocs, key=lambda n: (aurocs[n], -BASELINES.index(n)))
    assert session.stage_passes[SURPRISAL] == 2  # mean log-probs, then the own answer


def test_own_answer_scores_are_read_from_the_disk_cache() -> None:
    prompts = _statements()
    cold = Session(TaskCatalog.default(), _options())
    first = own_answer_scores(cold, SMOLLM, TASK, prompts)
    assert cold.stage_passes == {SURPRISAL: 1} and SMOLLM in cold.loaded
    warm = Session(TaskCatalog.default(), _options())
    again = own_answer_scores(warm, SMOLLM, TASK, prompts)
    assert warm.stage_passes == {} and warm.loaded == {}  # the model is not even loaded
    np.testing.assert_array_equal(again, first)


def test_an_encoder_reports_the_own_answer_not_applicable(minilm: Any) -> None:
    session = Session(TaskCatalog.default(), _options(cache=False))
    out = compute_baselines(session, "minilm-l6", TASK, Site(4, "token_avg"))
    assert "surprisal" not in out  # no LM head, no surprisal
    answer = out["own_answer"]
    assert answer.auroc is None and answer.accuracy is None and answer.scores is None
    assert answer.note.startswith("not applicable: ")
    assert "encoder model with no LM head" in answer.note
    assert best_baseline(out) in ("majority", "length", "random_features")

    # REPORT.md: a column beside the others, and the reason under the table
    report = render_report(_submission(out))
    assert "| own_answer AUROC |" in report
    assert f"- {TASK}: own_answer {answer.note}" in report.replace("\\_", "_")


def test_a_task_without_readout_has_no_own_answer_baseline(
        smollm_baselines: tuple[Session, dict[str, BaselineOut]],
        share_module_cache: None) -> None:
    catalog = TaskCatalog.default()
    spec = catalog.spec(TASK)
    bare = TaskCatalog(catalog.path, {TASK: spec.model_copy(update={"readout": None})},
                       packaged=True)
    session = Session(bare, _options())
    site = Site(15, "last_token")
    out = compute_baselines(session, SMOLLM, TASK, site)
    assert "own_answer" not in out and "surprisal" in out
    # every other baseline as with the readout (the model's scores read from the cache)
    with_answer = smollm_baselines[1]
    assert {n: b.scores for n, b in out.items()} == {
        n: b.scores for n, b in with_answer.items() if n != "own_answer"}
    # the readout is an input of the baselines: their record is another one
    with_readout = Session(catalog, _options(cache=False))
    assert "readout" in baselines_inputs(with_readout, SMOLLM, TASK, site)
    assert "readout" not in baselines_inputs(session, SMOLLM, TASK, site)
    # and a minimal-pair task's inputs are as before (its published baselines still apply)
    other = baselines_inputs(with_readout, SMOLLM, "verb_grammar", site)
    assert not {"readout", "statement_surprisal"} & set(other)


def _submission(baselines: dict[str, BaselineOut]) -> Submission:
    """A stored result of a reference entry, its baselines replaced (for the report)."""
    record = next(iter(latest_results(REPO / "registry",
                                      "probebench/verb-grammar-mlp-smollm2-135m-l20-v1").values()))
    task = record.result.model_copy(update={"id": TASK, "baselines": baselines,
                                            "baseline_gap": None, "beats_baselines": None})
    return Submission(spec_version="0.0.1", probebench_version="0.1.0", probe=record.probe,
                      model=record.model, device=record.device, seed=record.seed,
                      bootstrap_resamples=record.bootstrap_resamples,
                      versions=record.versions, definitions={}, tasks=[task],
                      run=record.run)
