"""The leaderboard's size at scale: a stored result is stored once, as the same JSON
written compact, shared by its entry page's link and the registry mirror, and a reader of
the mirror gets the same results as from the repository; every other file stays byte for
byte (an artifact's bytes are what its bundle hash covers).

Real files: the reference entry of the repository's registry, mirrored by
``write_mirror`` and read back through ``open_registry``/``show_entry``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probebench.hashing import sha256_bytes
from probebench.leaderboard.files import LeaderboardFiles, compact_json, stored_result
from probebench.leaderboard.mirror import write_mirror
from probebench.registry.entry import entry_path, read_entry
from probebench.registry.mirror import (
    INDEX_FILE,
    MIRROR_CACHE_ENV,
    RegistryIndex,
    blob_path,
    show_entry,
)
from probebench.registry.store import latest_results, result_path
from probebench.tasks.catalog import TaskCatalog

REPO = Path(__file__).resolve().parents[2]
PROBE = "probebench/blimp-det-noun-smollm2-135m-l15-v1"


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RegistryIndex]:
    out = tmp_path_factory.mktemp("size") / "site"
    entry = read_entry(entry_path(REPO / "registry", PROBE))
    index, left_out = write_mirror(out, REPO / "registry", [entry],
                                   catalog=TaskCatalog.default(), spec_version="0.3.0")
    assert left_out == []
    return out, index


def test_stored_results_are_compact_and_the_rest_byte_for_byte(
        mirrored: tuple[Path, RegistryIndex]) -> None:
    out, index = mirrored
    written = RegistryIndex.model_validate_json((out / INDEX_FILE).read_bytes())
    assert written == index
    entry = index.entry(PROBE)
    assert entry is not None and entry.results
    results = set(entry.results.values())
    for path, listed in index.files.items():
        data = (out / blob_path(listed.sha256)).read_bytes()
        assert (len(data), sha256_bytes(data)) == (listed.size, listed.sha256), path
        repo_bytes = (REPO / path).read_bytes()
        assert stored_result(path) == (path in results), path
        if path in results:
            # the same document, keys in the same order, every number the same float
            assert json.loads(data) == json.loads(repo_bytes), path
            assert list(json.loads(data)) == list(json.loads(repo_bytes))
            assert data.endswith(b"}\n") and b"\n" not in data[:-1] and b'": ' not in data
            assert len(data) < 0.8 * len(repo_bytes), path  # the indentation is gone
        else:
            assert data == repo_bytes, path


def test_the_entry_page_links_the_mirrors_blob(mirrored: tuple[Path, RegistryIndex]) -> None:
    out, index = mirrored
    entry = index.entry(PROBE)
    assert entry is not None
    blobs_before = sorted((out / "registry" / "blobs").iterdir())
    files = LeaderboardFiles(out, REPO)
    for task, path in entry.results.items():
        link = files.repository_file(result_path(REPO / "registry", PROBE, task),
                                     f"files/x/results/{task}.json")
        assert link is not None and link.href == blob_path(index.files[path].sha256)
        assert link.size == index.files[path].size and link.download == f"{task}.json"
    # one copy for both: the page's links wrote no blob the mirror had not
    assert sorted((out / "registry" / "blobs").iterdir()) == blobs_before


def test_a_reader_of_the_mirror_gets_the_repositorys_results(
        mirrored: tuple[Path, RegistryIndex], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = mirrored
    monkeypatch.setenv(MIRROR_CACHE_ENV, str(tmp_path / "cache"))
    source, entry, stored = show_entry(PROBE, out)
    assert source.kind == "leaderboard" and entry.id == PROBE
    expected = latest_results(REPO / "registry", PROBE)
    assert stored.keys() == expected.keys()
    for task in stored:
        assert stored[task].model_dump() == expected[task].model_dump(), task


def test_compact_json_keeps_what_is_not_json() -> None:
    assert compact_json(b"not json {") == b"not json {"
    text = '{\n "x": [\n  0.1,\n  3\n ],\n "name": "caf\\u00e9 \\u202e"\n}\n'
    compact = compact_json(text.encode())
    assert json.loads(compact) == json.loads(text)
    assert compact == '{"x":[0.1,3],"name":"café \u202e"}\n'.encode()
    # a stored result lies at <registry>/results/<org>/<name>/<task>.json, nothing else
    assert stored_result("registry/results/lab/p-v1/verb_grammar.json")
    assert not stored_result("registry/results/lab/p-v1/verb_grammar.yaml")
    assert not stored_result("registry/artifacts/p/results/a/b.json")
    assert not stored_result("registry/baselines/verb_grammar/smollm2.json")
