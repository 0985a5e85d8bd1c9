"""Shared fixtures: real embedded models, loaded once per session, and seeded RNGs."""

from __future__ import annotations

import atexit
import os
import random
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

# Under pytest-xdist (``make test``: TEST_JOBS workers) the workers share the cores: each
# runs its math on its share of them, as do the commands its tests start (set before numpy
# and torch read it). Thread counts change no stored number (the reproducibility contract).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, _share)

import numpy as np
import pytest

# Tests never reach the network: hub lookups use the local cache only.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Mirrors a test fetches go to a folder of this run (removed at exit), never to the user's
# ``~/.cache/probebench/mirrors``; tests that need their own set PROBEBENCH_MIRROR_CACHE.
if "PROBEBENCH_MIRROR_CACHE" not in os.environ:
    os.environ["PROBEBENCH_MIRROR_CACHE"] = tempfile.mkdtemp(prefix="pb-test-mirrors-")
    atexit.register(shutil.rmtree, os.environ["PROBEBENCH_MIRROR_CACHE"], True)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
#: for the few tests that rebuild a packaged file from its shared original: a checkout
#: without the shared data folder beside it (a contributor's clone) skips them, by name
needs_shared_data = pytest.mark.skipif(
    not SHARED_DATA.is_dir(),
    reason="the shared data folder (shared/data beside the repository) is not here")


#: end-to-end tests that the default run (``make test``, CI: at most 10 minutes on 2
#: cores) leaves to ``make test-slow``, each with what keeps its ground covered there
SLOW: dict[str, str] = {
    "tests/project/test_pr_simulation.py::test_a_pr_with_a_hostile_notebook_is_refused_at_review":
        "a cold registry evaluation; hostile notebooks: sandbox/test_*.py",
    "tests/project/test_pr_simulation.py::test_a_good_pr_goes_live":
        "a cold registry evaluation; the checks' refusals stay in the default run",
    "tests/project/test_pr_simulation.py::test_a_pr_whose_artifact_hash_mismatches_is_refused_at_check":
        "the evaluate job's refusal: test_a_pr_that_breaks_the_entry_schema_is_refused_at_"
        "check; the hash message: intake/test_check.py, cli/test_artifacts.py",
    "tests/project/test_pr_simulation.py::test_impersonating_the_maintainers_org_is_refused_at_confine":
        "the workflows' confine and check lines run on a stranger's probebench/ entry: "
        "intake/test_org_owners.py",
    "tests/project/test_pr_simulation.py::test_taking_over_a_reference_id_is_refused_at_check":
        "the evaluate job's refusal: the schema case; the id-path rule: intake/test_check.py",
    "tests/project/test_reference.py::test_review_passes_on_reference_entries":
        "two cold reviews of reference entries; review: intake/test_review.py",
    "tests/project/test_reference.py::test_repository_notebooks_reproduce_a_reference_probe":
        "notebooks: train/test_trainer.py::test_train_writes_a_valid_artifact_with_both_forms",
    "tests/train/test_trainer.py::test_cli_train_then_notebooks_reproduce_the_metrics":
        "train and submit: train/test_trainer.py::test_submit_reproduces_the_reported_metrics",
    "tests/evaluation/test_selectivity.py::test_selectivity_is_the_same_under_other_thread_counts[mlp]":
        "the linear case stays; evaluation/test_protocol_workers.py: pooled MLP fits equal "
        "sequential ones",
    "tests/evaluation/test_selectivity.py::test_selectivity_is_the_same_under_other_thread_counts[linear]":
        "evaluation/test_reproducibility.py: a linear entry's whole submission, selectivity "
        "included, is identical on 1 and 2 threads",
    "tests/evaluation/test_selectivity.py::test_mlp_selectivity_holds_within_the_retrained_tolerance":
        "the linear tolerance test stays",
    "tests/runs/test_reeval.py::test_plan_run_merge_on_three_groups_equals_the_unsharded_run":
        "the shard's other tests stay",
    "tests/evaluation/test_baselines.py::test_random_features_are_never_constant_on_a_registered_task":
        "every registered task's random-init control; one task: evaluation/test_session.py",
    "tests/project/test_researcher_path.py::test_a_researchers_task_and_probe_reach_the_site":
        "its parts: tasks/test_scaffold.py, train/test_trainer.py, leaderboard/test_*.py",
    "tests/evaluation/test_report.py::test_multiclass_report_has_no_blank_cells":
        "multi-class: evaluation/test_multiclass.py",
    "tests/intake/test_review.py::test_a_good_entry_passes_every_item":
        "a cold registry evaluation (the module's fixture); review's refusals: "
        "project/test_pr_simulation.py",
    "tests/intake/test_review.py::test_open_content_and_declared_licenses_pass":
        "the same fixture; licenses: vocabulary/test_licenses.py",
    "tests/intake/test_review.py::test_each_item_fails_for_the_right_reason":
        "the same fixture; each refusal: project/test_pr_simulation.py",
    "tests/intake/test_review.py::test_personal_data_in_a_test_set_is_reported_by_line":
        "the same fixture; personal data: tasks/test_pii.py, intake/test_proposal.py",
}


#: the test files that take longest in the default run (measured serially, 2026-11-26;
#: paths under tests/), started first so that no worker is left with one of them at the
#: end of the run
HEAVY_FIRST = [
    "evaluation/test_reproducibility.py", "sandbox/test_bwrap.py", "sandbox/test_limits.py",
    "train/test_trainer.py", "registry/test_guards.py", "runs/test_reeval.py",
    "runs/test_submit.py", "evaluation/test_session.py", "artifact/test_checks_hostile.py",
    "evaluation/test_lm_scores.py", "leaderboard/test_build_browser.py",
    "project/test_pr_simulation.py", "evaluation/test_selectivity.py", "tasks/test_catalog.py",
    "runs/test_reeval_sealed.py", "cli/test_main.py", "evaluation/test_report.py",
    "leaderboard/test_ranks.py", "tasks/families/test_base.py", "evaluation/test_multiclass.py",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = item.nodeid
        if name in SLOW or name.split("[")[0] in SLOW:
            item.add_marker(pytest.mark.slow)
    # heavy files first, each file's tests in their written order (a stable sort)
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    here = Path(__file__).parent
    items.sort(key=lambda item: rank.get(item.path.relative_to(here).as_posix(), len(rank)))


@pytest.fixture(autouse=True)
def _seed_everything() -> None:
    random.seed(0)
    np.random.seed(0)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return
    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _private_activation_cache(tmp_path_factory: pytest.TempPathFactory,
                              monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets an empty activation cache; converted models stay shared."""
    root = tmp_path_factory.mktemp("activations")
    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(root))
    return root


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One activation cache per test module (see ``share_module_cache``)."""
    return tmp_path_factory.mktemp("module-cache")


@pytest.fixture
def share_module_cache(module_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opt-in (``pytestmark = pytest.mark.usefixtures("share_module_cache")``): the
    module's tests share one activation cache because they read the same prompts."""
    monkeypatch.setenv("PROBEBENCH_ACTIVATION_CACHE", str(module_cache))


@pytest.fixture(scope="session")
def smollm() -> Iterator[object]:
    from probebench.models import load_model

    yield load_model("smollm2-135m", device="cpu", progress=False)


@pytest.fixture(scope="session")
def minilm() -> Iterator[object]:
    from probebench.models import load_model

    yield load_model("minilm-l6", device="cpu", progress=False)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP server on the host's loopback that records every connection it accepts."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except TimeoutError:
                continue
            accepted.append(addr)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()
