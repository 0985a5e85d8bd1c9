"""The causal test's numbers on a toy model with one planted direction (no download).

The toy: token embeddings, then residual MLP blocks whose updates are projected off a
known unit direction ``u``, then a head whose logits 0 and 1 are ``+h.u`` and ``-h.u``.
So the readout ``log P(0) - log P(1) = 2 h.u`` moves by exactly ``2 * alpha * std`` when
``alpha * std * u`` is added at the read position, and not at all for a direction
orthogonal to ``u``; ablating ``u`` makes it 0.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from probebench.causal.effect import causal_effect, control_directions, grid_slopes
from probebench.causal.readouts import ReadoutPlan, Row, Unit
from probebench.causal.steer import Stack, SteeringRunner
from probebench.errors import InputError
from probebench.tasks.spec import ReadoutSpec

D, VOCAB, T, N = 12, 6, 5, 16


class _Block(torch.nn.Module):
    def __init__(self, off_u: torch.Tensor, gen: torch.Generator) -> None:
        super().__init__()
        self.w1 = torch.randn(D, D, generator=gen) * 0.3
        self.w2 = torch.randn(D, D, generator=gen) * 0.3
        self.off_u = off_u

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + (torch.tanh(h @ self.w1) @ self.w2) @ self.off_u


def _toy(seed: int = 3) -> tuple[Stack, np.ndarray, torch.nn.Embedding]:
    gen = torch.Generator().manual_seed(seed)
    u = torch.randn(D, generator=gen)
    u = u / u.norm()
    off_u = torch.eye(D) - torch.outer(u, u)
    emb = torch.nn.Embedding(VOCAB, D)
    with torch.no_grad():
        emb.weight.copy_(torch.randn(VOCAB, D, generator=gen))
    head = torch.nn.Linear(D, VOCAB, bias=False)
    with torch.no_grad():
        other = torch.randn(VOCAB, D, generator=gen) @ off_u
        other[0], other[1] = u, -u
        head.weight.copy_(other)
    blocks = [_Block(off_u, gen) for _ in range(2)]
    stack = Stack(lower=lambda ids, mask: (emb(ids), {}), blocks=blocks, norm=None, head=head)
    return stack, u.double().numpy(), emb


def _plan(rng: np.random.Generator) -> tuple[ReadoutPlan, list[list[int]]]:
    seqs = [rng.integers(0, VOCAB, size=T).tolist() for _ in range(N)]
    rows = [Row(tuple(s), (T - 1,), (T - 1,), ((0, 1),)) for s in seqs]
    units = [Unit((k,), f"item-{k // 2}", 0) for k in range(N)]
    readout = ReadoutSpec(kind="answer", suffix=" is", positive=" a", negative=" b")
    return ReadoutPlan(readout, rows, units), seqs


@pytest.fixture(scope="module")
def toy() -> tuple[SteeringRunner, ReadoutPlan, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    stack, u, _ = _toy()
    plan, _ = _plan(rng)
    runner = SteeringRunner(stack, plan.rows)
    base = plan.values(runner.log_probs())
    labels = (base > 0).astype(np.int64)  # the unsteered toy is right on every unit
    plan.units = [Unit(x.rows, x.item, int(lab)) for x, lab in zip(plan.units, labels,
                                                                   strict=True)]
    # activations with 3x the spread along u as along any other direction
    basis = np.linalg.qr(np.column_stack([u, rng.standard_normal((D, D - 1))]))[0]
    scales = np.r_[3.0, np.ones(D - 1)]
    x = (rng.standard_normal((400, D)) * scales) @ basis.T
    return runner, plan, u, x, base


def _evaluate(runner: SteeringRunner, plan: ReadoutPlan):  # type: ignore[no-untyped-def]
    return lambda add, ablate: plan.values(runner.log_probs(add=add, ablate=ablate))


def test_the_planted_direction_has_the_effect_the_toy_implies(toy) -> None:  # type: ignore[no-untyped-def]
    runner, plan, u, x, base = toy
    result = causal_effect(_evaluate(runner, plan), direction=u, activations=x,
                           labels=plan.labels, items=plan.items, n_controls=16, seed=1,
                           alphas=(-2.0, 0.0, 2.0))
    expected = 2.0 * float(np.std(x @ u, ddof=1))  # d readout / d alpha, alpha in stds
    assert result.effect is not None and result.effect == pytest.approx(expected, rel=1e-4)
    assert result.ci is not None and result.ci[0] <= result.effect <= result.ci[1]
    assert result.wrong_sign_effect == pytest.approx(-expected, rel=1e-4)
    assert result.curve == pytest.approx([expected * a for a in result.alphas], rel=1e-3,
                                         abs=1e-4)
    # every control mixes u with weaker directions, so each moves the readout less
    assert len(result.controls) == 16
    assert max(result.controls) < result.effect and result.control_percentile == 100.0
    # ablating u zeroes 2 h.u: every unit reads 0 up to float rounding (a coin's sign)
    assert result.ablation["accuracy_before"] == 1.0
    assert (result.ablation["accuracy_after"] or 0.0) < 1.0
    assert result.ablation["mean_readout_change"] == pytest.approx(-float(base.mean()),
                                                                   abs=1e-4)


def test_an_orthogonal_direction_does_nothing_and_the_wrong_sign_reverses(toy) -> None:  # type: ignore[no-untyped-def]
    runner, plan, u, x, _ = toy
    v = np.random.default_rng(5).standard_normal(D)
    v -= (v @ u) * u
    v /= np.linalg.norm(v)
    evaluate = _evaluate(runner, plan)
    ortho = causal_effect(evaluate, direction=v, activations=x, labels=plan.labels,
                          items=plan.items, n_controls=0, seed=1, alphas=(-1.0, 0.0, 1.0))
    assert abs(ortho.effect or 0.0) < 1e-4
    plus = causal_effect(evaluate, direction=u, activations=x, labels=plan.labels,
                         items=plan.items, n_controls=0, seed=1, alphas=(-1.0, 0.0, 1.0))
    minus = causal_effect(evaluate, direction=-u, activations=x, labels=plan.labels,
                          items=plan.items, n_controls=0, seed=1, alphas=(-1.0, 0.0, 1.0))
    assert plus.effect is not None and plus.effect > 1.0
    assert minus.effect == pytest.approx(-plus.effect, rel=1e-5)


def test_the_result_is_deterministic_for_a_seed_and_serialises(toy) -> None:  # type: ignore[no-untyped-def]
    runner, plan, u, x, _ = toy
    evaluate = _evaluate(runner, plan)
    kw = {"direction": u, "activations": x, "labels": plan.labels, "items": plan.items,
          "n_controls": 4, "alphas": (-1.0, 0.0, 1.0)}
    a = causal_effect(evaluate, seed=7, **kw).to_dict()
    b = causal_effect(evaluate, seed=7, **kw).to_dict()
    c = causal_effect(evaluate, seed=8, **kw).to_dict()
    assert a == b and a["controls"] != c["controls"]
    assert {"effect", "ci", "control_percentile", "controls", "ablation", "alphas",
            "readout", "items"} <= set(a)
    with pytest.raises(InputError, match="alphas must hold 0"):
        causal_effect(evaluate, seed=7, **{**kw, "alphas": (1.0, 2.0)})


def test_control_directions_follow_the_activations_covariance() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 4)) * np.array([5.0, 1.0, 1.0, 0.1])
    dirs = control_directions(x, 2000, np.random.default_rng(1))
    assert np.allclose(np.linalg.norm(dirs, axis=1), 1.0)
    # drawn from N(0, cov), normalised: the mean squared loading follows the variances
    loading = (dirs ** 2).mean(axis=0)
    assert loading[0] > 0.6 and loading[0] > loading[1] > loading[3] and loading[3] < 0.01
    assert grid_slopes(np.array([[1.0], [3.0]]), [0.0, 2.0]).tolist() == [1.0]


@pytest.mark.slow
def test_the_truth_reference_probe_end_to_end(smollm) -> None:  # type: ignore[no-untyped-def]
    from probebench.causal.effect import causal_test

    artifact = (Path(__file__).resolve().parents[2] / "registry" / "artifacts"
                / "truth-cities-smollm2-135m-l21-v1")
    first = causal_test(artifact, lm=smollm, max_items=16, seed=3)
    again = causal_test(artifact, lm=smollm, max_items=16, seed=3)
    a, b = first.to_dict(), again.to_dict()
    a.pop("cost"), b.pop("cost")
    assert a == b  # deterministic for a seed
    assert first.applicable and first.task == "truth_cities" and first.site == "21:last_token"
    assert len(first.controls) == 16 and first.items["n_units"] == 16
    assert first.ci is not None and first.ci[0] <= (first.effect or 0.0) <= first.ci[1]
    assert first.control_percentile is not None and 0.0 <= first.control_percentile <= 100.0
    # steering towards "true" raises the model's own P(True) - P(False)
    assert first.effect is not None and first.effect > 0
    assert first.cost["upper_passes"] == 1 + 6 * 17 + 1


def test_an_encoder_probe_is_not_applicable_not_an_error(minilm) -> None:  # type: ignore[no-untyped-def]
    """A probe on an encoder (all-MiniLM-L6-v2) reads a property, but the model has no
    next token to steer towards: a result that says so, not an exception that would stop
    a whole ``registry evaluate --causal`` run."""
    from probebench.causal.effect import causal_test

    artifact = (Path(__file__).resolve().parents[2] / "registry" / "artifacts"
                / "truth-cities-minilm-l6-l5-v1")
    result = causal_test(artifact, lm=minilm, max_items=2)
    assert not result.applicable and result.effect is None
    assert result.reason is not None and "not a causal language model" in result.reason
