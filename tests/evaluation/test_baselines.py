"""The random-feature baseline carries information on every registered task."""

from __future__ import annotations

from typing import Any

import numpy as np

from probebench.evaluation.baselines import random_feature_scores
from probebench.evaluation.headline import Flat, labelled
from probebench.models import Site, extract
from probebench.models.activations import run_extraction
from probebench.models.loading import random_init_model
from probebench.tasks.catalog import TaskCatalog


def test_random_features_are_never_constant_on_a_registered_task(smollm: Any) -> None:
    """A random-init SmolLM2 read at the last token gives every task prompts of
    different scores, where the input embedding there (the old baseline's input) is
    one vector for all of verb grammar's test prompts."""
    catalog = TaskCatalog.default()
    site = Site(2, "last_token")
    embedding = Site(0, "last_token")
    random_lm = random_init_model(smollm, seed=0)
    constant_before = []
    for task_id in catalog.ids:
        data = catalog.load(task_id)
        # an even spread of at most 60 items per split keeps this quick
        test_items, train_items = data.test, data.splits["train"]
        test = Flat.of(test_items[:: max(1, len(test_items) // 60)]).prompts
        train = Flat.of(train_items[:: max(1, len(train_items) // 60)]).prompts
        t_idx, t_y = labelled(train)
        acts = run_extraction(random_lm, [*train, *test], [site], progress=False)[site]
        scores = random_feature_scores(acts[: len(train)][t_idx], t_y, acts[len(train):],
                                       seed=0)
        assert np.unique(np.round(scores, 6)).size > 1, task_id
        old = extract(smollm, test, [embedding], cache=False, progress=False)[embedding]
        if np.ptp(old, axis=0).max() == 0:
            constant_before.append(task_id)
    assert "verb_grammar" in constant_before


def test_the_random_init_model_is_seeded_and_leaves_the_rng_alone(minilm: Any) -> None:
    """On MiniLM (22M parameters: three copies of SmolLM2 take 10 s); the causal path
    builds SmolLM2's copy in every cold submit (test_fast_iteration.py)."""
    import torch

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a = random_init_model(minilm, seed=7)
    assert torch.equal(torch.rand(3), expected)
    b, c = random_init_model(minilm, seed=7), random_init_model(minilm, seed=8)
    wa, wb, wc = (next(iter(m.model.parameters())) for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)
    assert a.identity.weights_sha256 != minilm.identity.weights_sha256
