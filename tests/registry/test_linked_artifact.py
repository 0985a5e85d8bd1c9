"""An artifact hosted elsewhere is linked by the registry mirror, not copied: the index
gives its ``artifact_url`` (format 2) and no file, the entry page links the URL, and
``registry download`` fetches it there (a real git repository served as GitHub through
``PROBEBENCH_GITHUB_BASE``) and checks its bundle hash against the signed index."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import io
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from probebench.cli import main
from probebench.errors import InputError
from probebench.leaderboard.build import build_leaderboard, page_name
from probebench.registry.mirror import (
    INDEX_FORMAT,
    INDEX_FORMAT_LINKED,
    ArtifactMismatchError,
    RegistryIndex,
    blob_path,
    download_artifact,
    parse_index,
)
from probebench.tasks.catalog import TaskCatalog
from tests.registry.conftest import PROBE, REPO, _small_registry
from tests.registry_keys import TestKey

NAME = PROBE.split("/")[1]
ARTIFACT = REPO / "registry" / "artifacts" / NAME


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """lab/probes on a file:// "GitHub": the entry's artifact at one commit, and a later
    commit whose copy of it has one byte more in its README (the tampered one)."""
    root = tmp_path_factory.mktemp("github")
    source = root / "lab" / "probes"
    shutil.copytree(ARTIFACT, source / "artifacts" / "det-noun")
    _git(source, "init", "-q", "-b", "main")
    _git(source, "config", "uploadpack.allowFilter", "true")
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "the probe")
    good = _git(source, "rev-parse", "HEAD")
    readme = source / "artifacts" / "det-noun" / "README.md"
    readme.write_bytes(readme.read_bytes() + b"!")
    _git(source, "commit", "-qam", "changed")
    return {"base": f"file://{root}/", "good": good,
            "tampered": _git(source, "rev-parse", "HEAD")}


def _url(commit: object) -> str:
    return f"https://github.com/lab/probes/tree/{commit}/artifacts/det-noun"


@pytest.fixture(autouse=True)
def _github(hosted: dict[str, object], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
            mirror_env: Path) -> None:
    monkeypatch.setenv("PROBEBENCH_GITHUB_BASE", str(hosted["base"]))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("PROBEBENCH_ARTIFACT_CACHE", str(tmp_path / "artifacts"))


@pytest.fixture(scope="module")
def linked_board(tmp_path_factory: pytest.TempPathFactory, hosted: dict[str, object],
                 signer: TestKey) -> Path:
    """The small registry with the task probe's artifact on GitHub only, built (the build
    fetches nothing: no network, no GitHub base is set here) and signed."""
    root = tmp_path_factory.mktemp("linked")
    registry = _small_registry(root)
    shutil.rmtree(registry / "artifacts" / NAME)
    path = registry / "probes" / f"{PROBE}.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["artifact_url"] = _url(hosted["good"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = root / "leaderboard"
    build_leaderboard(registry, out, catalog=TaskCatalog.default(), n_resamples=20)
    signer.sign(out)
    return out


@contextlib.contextmanager
def _serve(folder: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/registry.json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_site_links_the_artifact_and_holds_no_copy(
        linked_board: Path, hosted: dict[str, object]) -> None:
    index = parse_index((linked_board / "registry.json").read_bytes(), "registry.json")
    assert index.format == INDEX_FORMAT_LINKED
    entry = index.entry(PROBE)
    assert entry is not None and entry.artifact_url == _url(hosted["good"])
    assert entry.artifact_files == []
    guard = next(e for e in index.entries if e.id != PROBE)
    assert guard.artifact_url is None and guard.artifact_files  # a local one is copied
    # no file of the artifact is in the site (but those the local guard shares with it)
    shared = {hashlib.sha256(data).hexdigest() for data in _files(
        REPO / "registry" / "artifacts" / guard.id.split("/")[1]).values()}
    own = {hashlib.sha256(data).hexdigest() for data in _files(ARTIFACT).values()} - shared
    assert len(own) >= 3
    for digest in own:
        assert not (linked_board / blob_path(digest)).exists(), digest
    html = (linked_board / page_name(PROBE)).read_text()
    assert f'<a href="{_url(hosted["good"])}" rel="nofollow noopener">' in html
    # an entry without artifact_url is written as format 1 writes it (no null field)
    raw = json.loads((linked_board / "registry.json").read_text())
    assert "artifact_url" not in next(e for e in raw["entries"] if e["id"] != PROBE)


def test_registry_download_fetches_the_linked_artifact_and_checks_it(
        linked_board: Path, tmp_path: Path) -> None:
    with _serve(linked_board) as url:
        out = tmp_path / "det-noun"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert main(["registry", "download", PROBE, "--registry", url,
                         "--out", str(out)]) == 0
    assert _files(out) == _files(ARTIFACT)


def test_a_tampered_remote_artifact_is_refused(linked_board: Path, tmp_path: Path,
                                               hosted: dict[str, object],
                                               signer: TestKey) -> None:
    """The index (signed) links a commit whose artifact is not the registered bundle."""
    folder = tmp_path / "served"
    shutil.copytree(linked_board, folder)
    doc = json.loads((folder / "registry.json").read_text())
    entry = next(e for e in doc["entries"] if e["id"] == PROBE)
    entry["artifact_url"] = _url(hosted["tampered"])
    (folder / "registry.json").write_text(json.dumps(doc))
    signer.sign(folder)
    with _serve(folder) as url, pytest.raises(ArtifactMismatchError) as caught:
        download_artifact(PROBE, tmp_path / "out", registry=url)
    message = str(caught.value)
    assert f"fetched from {_url(hosted['tampered'])}" in message
    assert "bundle sha256" in message and "refused" in message
    assert not (tmp_path / "out").exists()


def test_a_format_1_index_links_no_artifact(linked_board: Path) -> None:
    doc = json.loads((linked_board / "registry.json").read_text())
    doc["format"] = INDEX_FORMAT
    with pytest.raises(InputError, match=r"entries\[\d\]\.artifact_url: an index of format "
                                         r"probebench-registry/1 links no artifact"):
        parse_index(json.dumps(doc).encode(), "registry.json")
    entry = next(e for e in doc["entries"] if e["id"] == PROBE)
    doc["format"] = INDEX_FORMAT_LINKED
    entry["artifact_files"] = ["registry/probes/" + PROBE + ".yaml"]
    with pytest.raises(InputError, match=r"artifact_files: an artifact linked by "
                                         r"artifact_url lists no file"):
        parse_index(json.dumps(doc).encode(), "registry.json")
    entry["artifact_files"], entry["artifact_url"] = [], "registry/artifacts/x"
    with pytest.raises(InputError, match=r"artifact_url: expected the Hugging Face Hub or "
                                         r"GitHub at a commit"):
        parse_index(json.dumps(doc).encode(), "registry.json")
    assert RegistryIndex.model_fields["format"].default == INDEX_FORMAT
