"""Minimal pairs scored as their authors define them: BLiMP after the model's document
start (BOS, else EOS, a chat-turn marker giving way to the pre-training document
separator), SyntaxGym's own region predictions without BOS, and ``probebench score-lm``.

Real model (smollm2-135m) and real data (the packaged BLiMP and SyntaxGym tasks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError, SiteError
from probebench.evaluation.lm_scores import score_lm
from probebench.models.activations import tokenize
from probebench.models.start_token import start_token_id
from probebench.models.surprisal import sentence_log_probs, token_surprisals
from probebench.prompts import Prompt
from probebench.tasks.anatomy import Item
from probebench.tasks.catalog import TaskCatalog
from probebench.tasks.families.syntaxgym.format import score_items

#: BLiMP's only_npi_licensor_present: "Only Bill would ever complain." against
#: "Even Bill would ever complain.": every pair differs in its first word alone
FIRST_WORD = "blimp_only_npi_licensor_present"
SUITE = "syntaxgym_number_prep"  # 8 test items of 4 conditions
#: test pairs of FIRST_WORD the fast tests score (its whole test split: 480)
N_PAIRS = 60
#: lines of FIRST_WORD's file in the small catalog the fast score_lm test reads
SAMPLE_LINES = 60


@pytest.fixture(scope="module")
def catalog() -> TaskCatalog:
    return TaskCatalog.default()


@pytest.fixture(scope="module")
def pairs(catalog: TaskCatalog) -> list[Item]:
    return catalog.load(FIRST_WORD).test[:N_PAIRS]


def _good_bad(pairs: list[Item]) -> tuple[list[Prompt], list[Prompt]]:
    good = [next(p for p in item.prompts if p.label == 1) for item in pairs]
    bad = [next(p for p in item.prompts if p.label == 0) for item in pairs]
    return good, bad


def test_the_paradigm_differs_in_the_first_token_only(smollm: Any, pairs: list[Item]) -> None:
    good, bad = _good_bad(pairs)
    for g, b in zip(good, bad, strict=True):
        assert g.text.split()[1:] == b.text.split()[1:]
        g_ids, b_ids = (smollm.tokenizer(p.text)["input_ids"] for p in (g, b))
        assert g_ids[0] != b_ids[0] and g_ids[1:] == b_ids[1:], (g.text, b.text)


@pytest.fixture(scope="module")
def scored(smollm: Any, pairs: list[Item]) -> dict[str, Any]:
    """Token surprisals of the good then the bad sentences, under both protocols."""
    good, bad = _good_bad(pairs)
    texts = [p.text for p in good + bad]
    return {"texts": texts, "n": len(good),
            "plain": token_surprisals(smollm, texts, progress=False),
            "bos": token_surprisals(smollm, texts, prepend_bos=True, progress=False)}


def test_bos_protocol_scores_the_first_word(smollm: Any, scored: dict[str, Any]) -> None:
    plain, bos, n = scored["plain"], scored["bos"], scored["n"]
    # without BOS the first word's own probability never enters: unscored, 0 bits
    assert all(not ts.scored[0] and ts.surprisal[0] == 0.0 for ts in plain)
    # after BOS it is scored, and the two first words have different probabilities
    assert all(ts.scored.all() and ts.surprisal[0] > 0 for ts in bos)
    first = np.array([ts.surprisal[0] for ts in bos])
    assert (first[:n] != first[n:]).all()
    bos_total = np.array([ts.total for ts in bos])
    assert (bos_total[:n] != bos_total[n:]).all()  # no pair is a tie
    # the first word's probability decides pairs: the two protocols disagree on some
    plain_total = np.array([ts.total for ts in plain])
    assert ((plain_total[:n] < plain_total[n:]) != (bos_total[:n] < bos_total[n:])).any()
    # sentence_log_probs is minus the BOS totals (a few texts, another batching)
    few = scored["texts"][:8]
    np.testing.assert_allclose(sentence_log_probs(smollm, few, progress=False),
                               -bos_total[:8], rtol=0, atol=1e-3)


def test_without_bos_a_one_token_pair_cannot_be_told_apart(smollm: Any) -> None:
    # "Only" and "Even" are one token each: the no-BOS protocol scores nothing of either
    texts = ["Only", "Even"]
    assert [len(smollm.tokenizer(t)["input_ids"]) for t in texts] == [1, 1]
    plain = token_surprisals(smollm, texts, progress=False)
    assert [ts.total for ts in plain] == [0.0, 0.0]
    logp = sentence_log_probs(smollm, texts, progress=False)
    assert logp[0] != logp[1] and (logp < 0).all()


def test_start_token_is_the_document_start_or_the_one_named(smollm: Any, minilm: Any) -> None:
    tok = smollm.tokenizer
    # SmolLM2-Instruct's BOS <|im_start|> is a chat-turn marker: its document separator
    assert start_token_id(smollm) == tok.convert_tokens_to_ids("<|endoftext|>")
    assert start_token_id(smollm, "<|im_start|>") == tok.bos_token_id
    with pytest.raises(SiteError, match="not one token"):
        start_token_id(smollm, "<|no such token|>")
    # a named start token changes what the first word is read after
    a = sentence_log_probs(smollm, ["Only Bill would ever complain."], progress=False)
    b = sentence_log_probs(smollm, ["Only Bill would ever complain."],
                           start_token="<|im_start|>", progress=False)
    assert a[0] != b[0]
    # BERT's tokenizer has neither BOS nor EOS, and puts [CLS] first itself: naming it
    # as the start token must not add a second one
    with pytest.raises(SiteError, match="neither a BOS nor an EOS"):
        start_token_id(minilm)
    prompts = [Prompt("the cat sat")]
    own = tokenize(minilm, prompts)
    named = tokenize(minilm, prompts, prepend_bos=True, start_token="[CLS]")
    assert named.ids == own.ids and named.offsets == own.offsets


@pytest.fixture(scope="module")
def suite_scores(smollm: Any, catalog: TaskCatalog) -> Any:
    return score_lm(smollm, [SUITE], catalog=catalog, seed=0, n_resamples=500,
                    progress=False)


def test_score_lm_syntaxgym_is_the_suite_s_own_prediction_accuracy(
        smollm: Any, catalog: TaskCatalog, suite_scores: Any) -> None:
    (task,) = suite_scores.tasks
    items = catalog.load(SUITE).test
    outcomes = score_items(smollm, items)["sum"]  # no BOS, first token unscored
    expected = float(np.mean([all(preds) for preds in outcomes]))
    acc = task.accuracy
    assert task.n_items == len(items) and task.format == "syntaxgym"
    assert acc.value == pytest.approx(expected, abs=1e-9)
    assert 0.0 <= acc.ci_low <= acc.value <= acc.ci_high <= 1.0
    assert suite_scores.start_token is None  # no BOS protocol was used
    assert suite_scores.macro_mean == pytest.approx(acc.value)
    # deterministic for a seed; another seed resamples other items, same point value
    again = score_lm(smollm, [SUITE], catalog=catalog, seed=0, n_resamples=500,
                     progress=False)
    assert again.to_json() == suite_scores.to_json()
    other = score_lm(smollm, [SUITE], catalog=catalog, seed=1, n_resamples=500,
                     progress=False)
    assert other.tasks[0].accuracy.value == acc.value


@pytest.fixture(scope="module")
def sample_catalog(tmp_path_factory: pytest.TempPathFactory,
                   catalog: TaskCatalog) -> TaskCatalog:
    """A catalog of one task: the first SAMPLE_LINES pairs of FIRST_WORD's file, real data
    registered with the same split rule (its test pairs are the registered ones among
    them), with the hashes the tooling computes."""
    root = tmp_path_factory.mktemp("sample-catalog")
    spec = catalog.spec(FIRST_WORD)
    lines = catalog.files_of(spec)["data"].read_text("utf-8").splitlines(keepends=True)
    (root / "data").mkdir()
    (root / "data" / "sample.jsonl").write_text("".join(lines[:SAMPLE_LINES]), "utf-8")

    def write(files_sha256: dict[str, str], test_sha256: str) -> TaskCatalog:
        doc = spec.model_dump(mode="json")
        doc.update(files={"data": "data/sample.jsonl"}, files_sha256=files_sha256,
                   test_sha256=test_sha256, holdouts=[])
        (root / "tasks.yaml").write_text(yaml.safe_dump({"version": 1, "tasks": [doc]}))
        return TaskCatalog.from_file(root / "tasks.yaml")

    files_sha256, test_sha256 = write({"data/sample.jsonl": "0" * 64},
                                      "0" * 64).current_hashes(FIRST_WORD)
    return write(files_sha256, test_sha256)


def _blimp_checks(result: Any, smollm: Any, n_test: int, scored: dict[str, Any],
                  pairs: list[Item]) -> None:
    (task,) = result.tasks
    acc = task.accuracy
    assert task.n_items == n_test and task.format == "blimp"
    assert acc.value is not None and acc.ci_low is not None and acc.ci_high is not None
    assert 0.0 <= acc.ci_low <= acc.value <= acc.ci_high <= 1.0
    assert None not in task.item_scores
    assert acc.value == pytest.approx(np.mean(np.array(task.item_scores, dtype=float)),
                                      abs=1e-6)
    assert result.start_token == "<|endoftext|>"
    # each pair's outcome is log P(good) > log P(bad) after BOS, computed directly
    # (pairs closer than float noise across batchings left out)
    n = scored["n"]
    total = np.array([ts.total for ts in scored["bos"]])
    direct = dict(zip([item.id for item in pairs], (total[:n] < total[n:]).astype(float),
                      strict=True))
    clear = dict(zip([item.id for item in pairs], np.abs(total[:n] - total[n:]) > 1e-3,
                     strict=True))
    shared = [i for i in task.item_ids if i in direct and clear[i]]
    assert len(shared) > 0.9 * min(n, len(task.item_ids))
    by_id = dict(zip(task.item_ids, task.item_scores, strict=True))
    assert [by_id[i] for i in shared] == [direct[i] for i in shared]


def test_score_lm_blimp_is_pair_accuracy_after_bos(
        smollm: Any, sample_catalog: TaskCatalog, scored: dict[str, Any],
        pairs: list[Item]) -> None:
    result = score_lm(smollm, [FIRST_WORD], catalog=sample_catalog, seed=0,
                      n_resamples=500, progress=False)
    test = sample_catalog.load(FIRST_WORD).test
    assert {i.id for i in test} <= {i.id for i in pairs}  # the registered test pairs
    _blimp_checks(result, smollm, len(test), scored, pairs)
    again = score_lm(smollm, [FIRST_WORD], catalog=sample_catalog, seed=0,
                     n_resamples=500, progress=False)
    assert again.to_json() == result.to_json()


@pytest.mark.slow
def test_score_lm_blimp_on_the_registered_test_split(
        smollm: Any, catalog: TaskCatalog, scored: dict[str, Any], pairs: list[Item]) -> None:
    result = score_lm(smollm, [FIRST_WORD], catalog=catalog, seed=0, n_resamples=500,
                      progress=False)
    _blimp_checks(result, smollm, len(catalog.load(FIRST_WORD).test), scored, pairs)


def test_score_lm_refuses_what_it_cannot_score(smollm: Any, catalog: TaskCatalog) -> None:
    with pytest.raises(InputError, match="no protocol for format 'senteval'"):
        score_lm(smollm, ["eval_awareness"], catalog=catalog, progress=False)
    with pytest.raises(InputError, match="did you mean"):
        score_lm(smollm, ["blimp_only_npi_licensor_presnt"], catalog=catalog,
                 progress=False)
    with pytest.raises(InputError, match="split must be one of"):
        score_lm(smollm, [SUITE], catalog=catalog, split="train", progress=False)


def test_cli_score_lm_writes_the_library_s_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], suite_scores: Any) -> None:
    out = tmp_path / "lm.json"
    code = main(["score-lm", "smollm2-135m", "--tasks", SUITE, "--bootstrap", "500",
                 "--json-out", str(out), "--device", "cpu", "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert SUITE in printed and "macro mean over 1 task(s)" in printed
    doc = json.loads(out.read_text())
    assert doc["model"]["name"] == "smollm2-135m" and doc["seed"] == 0
    assert doc["tasks"][0]["accuracy"] == suite_scores.tasks[0].accuracy.model_dump()
    assert "syntaxgym" in doc["protocols"]


def test_cli_score_lm_refuses_an_encoder(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score-lm", "minilm-l6", "--tasks", SUITE, "--device", "cpu", "--quiet"])
    assert code != 0
    err = capsys.readouterr().err
    assert "needs a causal language model" in err and "encoder" in err
