"""Steering on the embedded SmolLM2: the hook at alpha = 0 changes nothing, the cached
lower layers give the full forward pass's log-probabilities, and readouts read what the
model's own forward pass says."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import torch

from probebench.causal import readouts
from probebench.causal.readouts import Row, _tree_row, build_plan
from probebench.causal.steer import SteeringRunner, hf_stack, steering_hook
from probebench.models.activations import pad_id_of
from probebench.prompts import Prompt
from probebench.sites import Site
from probebench.tasks.anatomy import Item
from probebench.tasks.spec import CandidatesReadout, OpeningsReadout, ReadoutSpec

TEXTS = ["The city of Paris is in France.", "The city of Lima is in Japan.",
         "Two plus two is five."]
TRUTH = ReadoutSpec(kind="answer", suffix=" This statement is", positive=" True",
                    negative=" False")


def _items(texts: list[str]) -> list[Item]:
    return [Item(id=f"i{k}", prompts=(Prompt(t, id=f"p{k}", label=k % 2),))
            for k, t in enumerate(texts)]


def _full_log_probs(lm: Any, ids: Sequence[int], reads: Sequence[int] | range,
                    targets: Sequence[Sequence[int]], hook: Any = None) -> np.ndarray:
    with torch.inference_mode():
        if hook is None:
            logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
        else:
            with hook:
                logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
    lp = torch.log_softmax(logits.float(), dim=-1)[list(reads)]
    return np.asarray(lp.gather(-1, torch.tensor(targets)).double().numpy())


def test_the_hook_at_alpha_zero_leaves_every_logit_bit_identical(smollm) -> None:  # type: ignore[no-untyped-def]
    ids = torch.tensor([smollm.tokenizer(TEXTS[0])["input_ids"]])
    u = np.random.default_rng(0).standard_normal(smollm.identity.hidden_size)
    with torch.inference_mode():
        plain = smollm.model(input_ids=ids).logits
        for layer in (0, 15, smollm.identity.num_layers):
            with steering_hook(smollm, layer, 0.0 * u):
                zero = smollm.model(input_ids=ids).logits
            assert torch.equal(zero, plain), layer
        with steering_hook(smollm, 15, 4.0 * u):  # the hook does act
            moved = smollm.model(input_ids=ids).logits
    assert not torch.allclose(moved, plain, atol=1e-3)


def test_cached_lower_layers_match_the_full_forward_steered_or_not(smollm) -> None:  # type: ignore[no-untyped-def]
    site = Site(21, "last_token")
    plan = build_plan(smollm, _items(TEXTS[:2]), TRUTH, site)
    runner = SteeringRunner(hf_stack(smollm, site.layer), plan.rows, pad_id=pad_id_of(smollm))
    v = 3.0 * np.random.default_rng(1).standard_normal(smollm.identity.hidden_size)
    # the positions before the last prompt token are reused from the unsteered pass
    assert runner.split_batches == len(runner._batches) > 0
    plain, steered = runner.log_probs(), runner.log_probs(add=v)
    assert runner.passes == 2
    for row, got, got_v in zip(plan.rows, plain, steered, strict=True):
        # the prompt's last token is the site's; the suffix follows it
        assert row.steer == (len(row.ids) - len(smollm.tokenizer(TRUTH.suffix,
                             add_special_tokens=False)["input_ids"]) - 1,)
        ref = _full_log_probs(smollm, row.ids, row.reads, row.targets)
        mask = np.zeros((1, len(row.ids)))
        mask[0, list(row.steer)] = 1
        ref_v = _full_log_probs(smollm, row.ids, row.reads, row.targets,
                                steering_hook(smollm, site.layer, v, mask))
        np.testing.assert_allclose(got, ref, atol=1e-4, rtol=1e-5)
        np.testing.assert_allclose(got_v, ref_v, atol=1e-4, rtol=1e-5)
        assert np.abs(got_v - got).max() > 1e-3  # steering moved the readout
    values = plan.values(plain)
    np.testing.assert_allclose(values, [r[0, 0] - r[0, 1] for r in plain])


def test_candidates_and_openings_read_the_models_own_probabilities(smollm) -> None:  # type: ignore[no-untyped-def]
    before = "Yesterday my grandmother"
    item = Item(id="walk", prompts=tuple(
        Prompt(f"{before} {verb} home.", spans={"answer": (len(before) + 1,
                                                           len(before) + 1 + len(verb))},
               label=int(verb == "walked"), id=verb) for verb in ("walked", "walks")))
    lonely = Item(id="one", prompts=(Prompt("Alone.", label=1),))
    plan = build_plan(smollm, [item, lonely], CandidatesReadout(kind="candidates"),
                      Site(15, "token_avg"))
    assert plan.skipped == {"items of one prompt": 1} and len(plan.units) == 1
    prefix = smollm.tokenizer(before)["input_ids"]
    assert all(r.steer == tuple(range(len(prefix))) for r in plan.rows)
    runner = SteeringRunner(hf_stack(smollm, 15), plan.rows)
    got = plan.values(runner.log_probs())[0]

    def log_p(cont: str) -> float:
        c = smollm.tokenizer(cont, add_special_tokens=False)["input_ids"]
        ids = prefix + c
        lp = _full_log_probs(smollm, ids, range(len(prefix) - 1, len(ids) - 1),
                             [[t] for t in c])
        return float(lp.sum())

    assert got == pytest.approx(log_p(" walked") - log_p(" walks"), abs=1e-4)

    openings = OpeningsReadout(kind="openings", openings=["I'm sorry", "I cannot", "Sorry"])
    plan = build_plan(smollm, _items(TEXTS[:1]), openings, Site(20, "last_token"))
    value = plan.values(SteeringRunner(hf_stack(smollm, 20), plan.rows).log_probs())[0]
    firsts = sorted({smollm.tokenizer(o, add_special_tokens=False)["input_ids"][0]
                     for o in openings.openings})
    ids = list(plan.rows[0].ids)
    p = np.exp(_full_log_probs(smollm, ids, [len(ids) - 1], [firsts])).sum()
    assert value == pytest.approx(np.log(p) - np.log1p(-p), abs=1e-4)


def test_a_tree_row_sees_its_shared_tokens_and_its_own_branch() -> None:
    # "a b" shared, then candidate [x, y, z] (x, y run) and candidate [w] (nothing run)
    row = _tree_row([10, 11], (0, 1), [[20, 21, 22], [30]])
    assert row.ids == (10, 11, 20, 21)
    assert row.parents == (-1, 0, 1, 2)
    assert row.reads == (1, 2, 3, 1) and row.targets == ((20,), (21,), (22,), (30,))
    two = _tree_row([10, 11], (0, 1), [[20, 21], [30, 31]])
    assert two.ids == (10, 11, 20, 30) and two.positions() == (0, 1, 2, 2)
    np.testing.assert_array_equal(two.sees(), [[1, 0, 0, 0], [1, 1, 0, 0],
                                               [1, 1, 1, 0], [1, 1, 0, 1]])
    plain = Row((1, 2, 3), (0,), (2,), ((5,),))
    assert plain.positions() == (0, 1, 2)
    np.testing.assert_array_equal(plain.sees(), np.tril(np.ones((3, 3), dtype=bool)))


def test_candidates_in_one_tree_row_read_what_one_row_each_reads(smollm, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    before = "Every morning the old dog"
    verbs = ("walks", "has walked slowly", "walk", "were walking")
    items = [Item(id=f"dog{k}", prompts=tuple(
        Prompt(f"{before} {verb} to the park.",
               spans={"answer": (len(before) + 1, len(before) + 1 + len(verb))},
               label=int(verb == verbs[k]), id=verb) for verb in verbs))
        for k in range(len(verbs))]
    items.append(Item(id="short", prompts=tuple(
        Prompt(f"She {verb} home.", spans={"answer": (4, 4 + len(verb))},
               label=int(verb == "runs"), id=verb) for verb in ("runs", "run"))))
    v = 4.0 * np.random.default_rng(2).standard_normal(smollm.identity.hidden_size)
    # token_avg steers every token before the blank; last_token (clipped to the text
    # before the blank) only its last, so those runs reuse the tokens before it
    for position, split in (("last_token", True), ("token_avg", False)):
        site = Site(15, position)
        monkeypatch.setattr(readouts, "TREE_MODEL_TYPES", frozenset({"llama"}))
        tree = build_plan(smollm, items, CandidatesReadout(kind="candidates"), site)
        assert len(tree.rows) == len(items)
        assert all(r.parents is not None for r in tree.rows)
        monkeypatch.setattr(readouts, "TREE_MODEL_TYPES", frozenset())
        flat = build_plan(smollm, items, CandidatesReadout(kind="candidates"), site)
        assert len(flat.rows) == 4 * 4 + 2 and all(r.parents is None for r in flat.rows)
        assert sum(len(r.ids) for r in tree.rows) < sum(len(r.ids) for r in flat.rows) / 2
        runs = {}
        for name, plan in (("tree", tree), ("flat", flat)):
            runner = SteeringRunner(hf_stack(smollm, 15), plan.rows,
                                    pad_id=pad_id_of(smollm))
            assert (runner.split_batches > 0) == split, (position, name)
            runs[name] = [plan.values(runner.log_probs(**kw)) for kw in
                          ({}, {"add": v}, {"ablate": v / np.linalg.norm(v)})]
        for got, ref in zip(runs["tree"], runs["flat"], strict=True):
            np.testing.assert_allclose(got, ref, atol=2e-4)
        assert np.abs(runs["tree"][1] - runs["tree"][0]).max() > 1e-2  # steering acts

    prefix = smollm.tokenizer(before)["input_ids"]

    def log_p(cont: str) -> float:
        c = smollm.tokenizer(cont, add_special_tokens=False)["input_ids"]
        ids = prefix + c
        return float(_full_log_probs(smollm, ids, range(len(prefix) - 1, len(ids) - 1),
                                     [[t] for t in c]).sum())

    expected = [log_p(f" {verb}") for verb in verbs]
    for k in range(len(verbs)):  # item k expects verbs[k]
        others = [e for j, e in enumerate(expected) if j != k]
        assert runs["tree"][0][k] == pytest.approx(expected[k] - np.mean(others), abs=2e-4)
