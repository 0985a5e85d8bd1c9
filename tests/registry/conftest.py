"""Fixtures of the registry-mirror tests: a small leaderboard built from the repository's
registry, signed with a throwaway key, and served on localhost; each test's own mirror
cache (``mirror_env``, which the mirror test modules make autouse)."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from probebench.leaderboard.build import build_leaderboard
from probebench.registry.mirror import MIRROR_CACHE_ENV, REGISTRY_ENV
from probebench.sources.http import OFFLINE_ENV
from probebench.tasks.catalog import TaskCatalog
from tests.registry_keys import KEYS_ENV, TestKey, make_key

REPO = Path(__file__).resolve().parents[2]
PROBE = "probebench/blimp-det-noun-smollm2-135m-l15-v1"
GUARD = "probebench/eval-awareness-guard-smollm2-135m-l15-v2"
SENTENCES = ["My sister bought those books.", "My sister bought that books."]


def _small_registry(root: Path) -> Path:
    """A registry with one task probe and the guard, copied from the repository's."""
    registry = root / "registry"
    for entry_id in (PROBE, GUARD):
        org, name = entry_id.split("/")
        (registry / "probes" / org).mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "registry/probes" / org / f"{name}.yaml",
                    registry / "probes" / org / f"{name}.yaml")
        shutil.copytree(REPO / "registry/artifacts" / name, registry / "artifacts" / name)
        shutil.copytree(REPO / "registry/results" / org / name,
                        registry / "results" / org / name)
    shutil.copy(REPO / "registry/guards.yaml", registry / "guards.yaml")
    for task in ("blimp_determiner_noun_agreement_1", "eval_awareness"):
        shutil.copytree(REPO / "registry/baselines" / task, registry / "baselines" / task)
    return registry


@pytest.fixture(scope="module")
def signer(tmp_path_factory: pytest.TempPathFactory) -> TestKey:
    """A throwaway registry key that the tests of this module trust."""
    return make_key(tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory, signer: TestKey) -> Path:
    root = tmp_path_factory.mktemp("mirror")
    registry = _small_registry(root)
    out = root / "leaderboard"
    build_leaderboard(registry, out, catalog=TaskCatalog.default(), n_resamples=20)
    signer.sign(out)
    return out


@pytest.fixture
def served(board: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(the URL of registry.json, the folder served: a copy of the leaderboard this test may
    change)."""
    folder = tmp_path / "served"
    shutil.copytree(board, folder)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))

    class Quiet(http.server.ThreadingHTTPServer):
        pass

    http.server.SimpleHTTPRequestHandler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = Quiet(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/registry.json", folder
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def mirror_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      signer: TestKey) -> Path:
    monkeypatch.setenv(MIRROR_CACHE_ENV, str(tmp_path / "mirrors"))
    monkeypatch.setenv(KEYS_ENV, str(signer.public_pem))
    monkeypatch.delenv(REGISTRY_ENV, raising=False)
    monkeypatch.delenv(OFFLINE_ENV, raising=False)
    # the tests' own process runs offline for the hub; the mirror is not the hub
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return tmp_path / "mirrors"
