"""Shared fixtures: real embedded models, loaded once per session, and seeded RNGs."""

from __future__ import annotations

import os
import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

# Tests never reach the network: hub lookups use the local cache only.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


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
