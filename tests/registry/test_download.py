"""A registry id wherever an artifact is taken (``registry download``, ``validate``,
``submit``), and a leaderboard's site root wherever a registry URL is: all against a
signed mirror served on localhost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from probebench.errors import InputError
from probebench.hashing import sha256_bytes
from probebench.registry.entry import read_entry
from probebench.registry.mirror import (
    MIRROR_CACHE_ENV,
    RegistryIndex,
    blob_path,
    download_artifact,
    index_url,
    open_registry,
)
from probebench.registry.signing import UnsignedIndexError
from tests.registry.conftest import PROBE, REPO

NAME = PROBE.split("/")[1]
#: the entry's registered bundle hash and artifact, read from the repository itself
ENTRY = read_entry(REPO / "registry/probes" / f"{PROBE}.yaml")
ARTIFACT = REPO / ENTRY.artifact_url


@pytest.fixture(autouse=True)
def _own_mirror_cache(mirror_env: Path) -> Path:
    return mirror_env


def _root(served: tuple[str, Path]) -> str:
    """The site root of the served leaderboard: ``http://127.0.0.1:PORT/``."""
    url = served[0]
    assert url.endswith("/registry.json")
    return url[: -len("registry.json")]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_site_root_reads_its_registry_json(served: tuple[str, Path], board: Path) -> None:
    root = _root(served)
    digest = sha256_bytes((board / "registry.json").read_bytes())
    for given in (root, root.rstrip("/"), served[0], f"{root}#sha256={digest}"):
        source = open_registry(given)
        assert source.given == served[0] and source.index_sha256 == digest, given
    assert index_url("https://x.org/board")[0] == "https://x.org/board/registry.json"
    # no leaderboard there: the error names the URL that was tried
    tried = f"{root}nothing/registry.json"
    with pytest.raises(UnsignedIndexError, match=re.escape(tried)) as caught:
        open_registry(f"{root}nothing/")
    assert "HTTP 404" in str(caught.value) and "give the URL of its registry.json" in \
        str(caught.value)


def test_download_by_site_root_into_an_empty_folder(
        served: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import probebench
    from probebench.cli import main

    root = _root(served)
    work = tmp_path / "work"
    out = work / "det-noun"
    out.mkdir(parents=True)  # an empty folder is filled
    monkeypatch.chdir(work)  # no checkout here
    assert main(["registry", "download", PROBE, "--registry", root, "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert f"wrote {out}" in printed.out and ENTRY.artifact_sha256 in printed.out
    assert "signed" in printed.err
    # what was written is the registered artifact, byte for byte, and validates with the
    # entry's hash
    assert _files(out) == _files(ARTIFACT)
    report = probebench.validate(out, expected_sha256=ENTRY.artifact_sha256)
    assert report.valid and report.bundle_sha256 == ENTRY.artifact_sha256
    # a folder that is not empty is never overwritten
    (out / "NOTES.txt").write_text("mine\n")
    before = _files(out)
    assert main(["registry", "download", PROBE, "--registry", root, "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert _files(out) == before
    # the default folder is ./NAME; no temporary sibling is left behind
    assert main(["registry", "download", PROBE, "--registry", root, "--quiet"]) == 0
    assert _files(work / NAME) == _files(ARTIFACT)
    assert sorted(p.name for p in work.iterdir()) == sorted(["det-noun", NAME])


def test_a_changed_blob_writes_nothing(served: tuple[str, Path], tmp_path: Path) -> None:
    _, folder = served
    index = RegistryIndex.model_validate_json((folder / "registry.json").read_bytes())
    entry = index.entry(PROBE)
    assert entry is not None
    name = next(p for p in entry.artifact_files if p.endswith("meta.yaml"))
    blob = folder / blob_path(index.files[name].sha256)
    data = bytearray(blob.read_bytes())
    data[-2] ^= 0x01  # one bit of one byte: the same size, other bytes
    blob.write_bytes(bytes(data))
    out = tmp_path / "out"
    with pytest.raises(InputError, match="do not match the registry index"):
        download_artifact(PROBE, out, registry=_root(served))
    assert not out.exists() and list(tmp_path.glob(".out.*")) == []


def test_validate_a_registry_id_by_site_root(served: tuple[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from probebench.cli import main

    root = _root(served)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", PROBE, "--registry", root, "--json"]) == 0
    printed = capsys.readouterr()
    report = json.loads(printed.out)
    assert report["valid"] and report["bundle_sha256"] == ENTRY.artifact_sha256
    # the entry's hash was required: the bundle-hash check ran against it
    (bundle,) = [c for c in report["checks"] if c["name"] == "bundle_hash"]
    assert bundle["status"] == "pass" and "matches the expected hash" in bundle["message"]
    assert f"{PROBE}: the artifact of the registry entry" in printed.err
    # a --sha256 that is not the entry's is refused, naming both
    assert main(["validate", PROBE, "--registry", root, "--sha256", "0" * 64]) == 2
    assert "disagrees with the artifact_sha256" in capsys.readouterr().err
    # a site root without registry.json: the error names <url>/registry.json
    assert main(["validate", PROBE, "--registry", f"{root}nothing"]) == 2
    err = capsys.readouterr().err
    assert f"{root}nothing/registry.json" in err and "read as a registry id" in err
    # an unknown id says it is neither a folder here nor an entry, with close ids
    assert main(["validate", PROBE[:-1] + "9", "--registry", root]) == 2
    err = capsys.readouterr().err
    assert "no such folder here" in err and f"did you mean {PROBE}" in err


def test_submit_resolves_a_registry_id_before_any_model_work(
        served: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The id is found and checked against its entry's hash; an unknown task then stops
    the run before a model is loaded (the fast half of the test below)."""
    from probebench.cli import main

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code = main(["submit", PROBE, "--registry", _root(served), "--tasks", "no_such_task",
                 "--no-guard", "--limit", "5"])
    err = capsys.readouterr().err
    assert code == 2 and "no_such_task" in err
    assert f"{PROBE}: the artifact of the registry entry" in err
    assert list(work.iterdir()) == []


@pytest.mark.slow
def test_submit_a_registry_id_by_site_root_from_an_empty_folder(
        served: tuple[str, Path], tmp_path: Path, smollm: object,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from probebench.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.setenv(MIRROR_CACHE_ENV, str(tmp_path / "cold"))
    task = ENTRY.tasks[0]
    assert main(["submit", PROBE, "--registry", _root(served), "--tasks", task,
                 "--limit", "5", "--latency-prompts", "2", "--no-generalisation",
                 "--quiet"]) == 0
    result = json.loads((empty / "submission.json").read_text())
    assert result["probe"]["bundle_sha256"] == ENTRY.artifact_sha256
    assert [t["id"] for t in result["tasks"]] == [task]
    assert result["timing"]["registry"]["source"] == served[0]
    assert result["timing"]["registry"]["signed_by"] is not None
    assert (empty / "REPORT.md").is_file()
