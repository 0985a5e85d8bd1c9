"""A run holds one model's weights at a time: the trained model gives way to its
random-init copy, the copy is let go once its prompts are read, and the numbers are
those of a run that held both (benchmarks/memory.py measures the peak this saves)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import torch

from probebench.evaluation.headline import Flat, sub_seed
from probebench.evaluation.session import Session, SubmitOptions
from probebench.evaluation.task_baselines import compute_baselines
from probebench.models.activations import run_extraction
from probebench.models.loading import random_init_model, release_memory
from probebench.sites import Site
from probebench.tasks.catalog import TaskCatalog

MODEL = "minilm-l6"  # 22M parameters: a copy is built in well under a second
SITE = Site(4, "token_avg")
TASK = "verb_grammar"


def _options() -> SubmitOptions:
    return SubmitOptions(progress=False, device="cpu", cache=False, limit=4, bootstrap=50)


def test_the_copy_built_from_the_folder_equals_the_copy_of_the_loaded_model(
        minilm: Any) -> None:
    """Reading only the folder's config (the trained weights never loaded) gives the
    same random weights, tokenizer and identity as copying the loaded model."""
    from_loaded = random_init_model(minilm, seed=5)
    from_folder = random_init_model(minilm.resolved, seed=5)
    assert from_folder.identity == from_loaded.identity
    assert from_folder.identity.weights_sha256 != minilm.identity.weights_sha256
    a, b = from_loaded.model.state_dict(), from_folder.model.state_dict()
    assert list(a) == list(b)
    for name in a:
        assert torch.equal(a[name], b[name]), name
    text = "The keys to the cabinet are on the table."
    assert from_folder.tokenizer(text)["input_ids"] == minilm.tokenizer(text)["input_ids"]


def test_the_trained_model_gives_way_to_its_copy_and_the_copy_is_released(
        minilm: Any) -> None:
    session = Session(TaskCatalog.default(), _options())
    prompts = Flat.of(session.task(TASK).test).prompts
    trained = weakref.ref(session.lm(MODEL).model)

    random_acts = session.random_activations(MODEL, f"{TASK}/test", prompts, SITE)
    gc.collect()
    assert MODEL not in session.loaded and trained() is None  # not held beside the copy
    copy = weakref.ref(session._random_lms[MODEL].model)
    assert copy() is not None

    session.release(MODEL, random_init=True)
    gc.collect()
    assert session._random_lms == {} and copy() is None
    # the numbers are the copy's, built here from the loaded model as before
    seed = sub_seed(session.options.seed, "random-init")
    expected = run_extraction(random_init_model(minilm, seed), prompts, [SITE],
                              progress=False)[SITE]
    np.testing.assert_allclose(random_acts, expected, rtol=1e-5, atol=1e-5)
    # the trained model loads again when next needed, with its own numbers
    acts = session.activations(MODEL, f"{TASK}/test", prompts, SITE)
    assert MODEL in session.loaded
    np.testing.assert_allclose(
        acts, run_extraction(minilm, prompts, [SITE], progress=False)[SITE],
        rtol=1e-5, atol=1e-5)


def test_computing_the_baselines_releases_the_random_init_copy(minilm: Any) -> None:
    session = Session(TaskCatalog.default(), _options())
    out = compute_baselines(session, MODEL, TASK, SITE)
    assert out["random_features"].auroc is not None  # the copy did run
    assert session._random_lms == {}
    release_memory()  # nothing held: a no-op that must not fail
