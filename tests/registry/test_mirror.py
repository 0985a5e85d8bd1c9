"""The published leaderboard is also a registry: ``registry.json`` and the files beside
it, read from a built leaderboard folder or over HTTP (a localhost server here), every file
checked against the index before anything loads it, offline from the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probebench.errors import InputError
from probebench.hashing import sha256_bytes
from probebench.leaderboard.files import compact_json, stored_result
from probebench.registry.mirror import (
    MIRROR_CACHE_ENV,
    REGISTRY_ENV,
    RegistryIndex,
    blob_path,
    open_registry,
    split_pin,
)
from probebench.sources.http import OFFLINE_ENV, OfflineError, check_url
from tests.registry.conftest import GUARD, PROBE, REPO, SENTENCES


@pytest.fixture(autouse=True)
def _own_mirror_cache(mirror_env: Path) -> Path:
    return mirror_env


def test_the_build_writes_an_index_of_every_file(board: Path) -> None:
    index = RegistryIndex.model_validate_json((board / "registry.json").read_bytes())
    assert {e.id for e in index.entries} == {PROBE, GUARD}
    assert index.guards == {"smollm2-135m": GUARD}
    probe = index.entry(PROBE)
    assert probe is not None and probe.artifact_files and probe.results
    assert "blimp_determiner_noun_agreement_1" in index.catalog
    for path, listed in index.files.items():
        data = (board / blob_path(listed.sha256)).read_bytes()
        assert (len(data), sha256_bytes(data)) == (listed.size, listed.sha256), path
        # the repository's own file, byte for byte
        expected = (REPO / path).read_bytes()
        if stored_result(path):  # a stored result: the same JSON, written compact
            expected = compact_json(expected)
        assert data == expected, path
    # what is on disk under registry/ is exactly the blobs of what the index lists, named
    # by content with no extension (a server never sends an artifact's file as a page)
    on_disk = {p.relative_to(board).as_posix() for p in (board / "registry").rglob("*")
               if p.is_file()}
    assert on_disk == {blob_path(f.sha256) for f in index.files.values()}
    assert all("." not in Path(p).name for p in on_disk)


def test_served_over_http_list_load_score_and_refuse_a_changed_byte(
        served: tuple[str, Path], tmp_path: Path, smollm: object,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import probebench
    from probebench.cli import main

    url, folder = served
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)  # no checkout anywhere above
    assert main(["registry", "list", "--registry", url]) == 0
    out = capsys.readouterr().out
    assert PROBE in out and GUARD in out and "2 live entries" in out
    probe = probebench.load_probe(PROBE, registry=url)
    scores = probe.score_texts(SENTENCES)
    assert scores[0] > 0.5 > scores[1]
    # the same probe from the repository scores the same
    local = probebench.load_probe(PROBE, registry=REPO / "registry")
    assert local.bundle_sha256 == probe.bundle_sha256
    # one changed byte in a served artifact file, with a cold cache: refused
    monkeypatch.setenv(MIRROR_CACHE_ENV, str(tmp_path / "cold"))
    index = RegistryIndex.model_validate_json((folder / "registry.json").read_bytes())
    entry = index.entry(PROBE)
    assert entry is not None
    name = next(p for p in entry.artifact_files if p.endswith(".safetensors"))
    weights = folder / blob_path(index.files[name].sha256)
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01
    weights.write_bytes(bytes(data))
    with pytest.raises(InputError, match="do not match the registry index"):
        probebench.load_probe(PROBE, registry=url)
    assert not any((tmp_path / "cold").rglob(Path(name).name))  # nothing half-written


def test_a_second_run_works_offline_from_the_cache(served: tuple[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import probebench

    url, _ = served
    first = probebench.load_probe(PROBE, registry=url)
    monkeypatch.setenv(OFFLINE_ENV, "1")
    again = probebench.load_probe(PROBE, registry=url)
    assert again.bundle_sha256 == first.bundle_sha256
    source = open_registry(url)
    assert "offline: the cached copy" in source.describe()
    # offline with nothing cached for another URL: a named error
    with pytest.raises(OfflineError, match="no copy of that registry index is cached"):
        open_registry(url.replace("registry.json", "other/registry.json"))


def test_the_index_can_be_pinned(served: tuple[str, Path], board: Path) -> None:
    url, folder = served
    digest = sha256_bytes((board / "registry.json").read_bytes())
    assert open_registry(f"{url}#sha256={digest}").index_sha256 == digest
    assert open_registry(url, sha256=digest).index_sha256 == digest
    with pytest.raises(InputError, match="pinned"):
        open_registry(url, sha256="0" * 64)
    with pytest.raises(InputError, match="disagree"):
        split_pin(f"{url}#sha256={digest}", "1" * 64)
    # a built leaderboard folder is read from disk, each file checked against its index
    local = open_registry(folder)
    assert local.kind == "leaderboard" and local.index_sha256 == digest
    assert local.index is not None
    entry = local.index.entry(PROBE)
    assert entry is not None
    local.ensure_entry(PROBE)
    assert (local.registry / "probes" / f"{PROBE}.yaml").is_file()
    blob = folder / blob_path(local.index.files[entry.entry_file].sha256)
    blob.write_text("tampered: true\n")
    fresh = open_registry(folder)
    (fresh.repo / entry.entry_file).unlink()  # not from the cache this time
    with pytest.raises(InputError, match="do not match the registry index"):
        fresh.ensure_entry(PROBE)


def test_only_https_or_localhost_and_budgets(tmp_path: Path) -> None:
    check_url("https://example.org/registry.json")
    check_url("http://localhost:8000/registry.json")
    for bad in ("http://example.org/registry.json", "ftp://x/registry.json",
                "https://user:pw@example.org/r.json", "https://exa mple.org/r.json"):
        with pytest.raises(InputError):
            check_url(bad)
    with pytest.raises(InputError, match="only https://"):
        open_registry("http://example.org/registry.json")
    with pytest.raises(InputError, match="not a registry"):
        open_registry(tmp_path)


def test_the_order_argument_environment_checkout_published(
        board: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(REGISTRY_ENV, str(board))
    assert open_registry().kind == "leaderboard"
    assert open_registry(REPO / "registry").kind == "folder"
    monkeypatch.delenv(REGISTRY_ENV)
    assert open_registry(start=REPO).registry == REPO / "registry"
    monkeypatch.setenv(OFFLINE_ENV, "1")  # the published leaderboard is never reached in tests
    with pytest.raises(OfflineError, match=r"the published registry"):
        open_registry()


def test_a_fresh_python_without_a_checkout_lists_and_loads(
        served: tuple[str, Path], tmp_path: Path) -> None:
    """The CLI in a subprocess whose folder is no checkout, the mirror from the server."""
    url, _ = served
    env = {**os.environ, MIRROR_CACHE_ENV: str(tmp_path / "sub-mirrors")}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run([sys.executable, "-m", "probebench", "registry", "show", PROBE,
                           "--registry", url], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"id: {PROBE}" in done.stdout and "result blimp_determiner_noun_agreement_1" in \
        done.stdout
    assert json.loads((Path(tmp_path / "sub-mirrors").glob("*/registry.json").__next__()
                       ).read_text())["entries"]


@pytest.mark.slow
def test_submit_without_a_checkout_gives_the_leaderboards_eval_aware_auroc(
        served: tuple[str, Path], board: Path, tmp_path: Path) -> None:
    """A pip user's ``submit`` of the downloaded artifact, with the guard and the task's
    published baselines from the served mirror, measures the eval-awareness-corrected
    AUROC the leaderboard shows."""
    import probebench
    from probebench.evaluation.reproducibility import VALUE_TOLERANCE

    url, _ = served
    folder = probebench.load_probe(PROBE, registry=url).folder
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, MIRROR_CACHE_ENV: str(tmp_path / "sub-mirrors")}
    env.pop("HF_HUB_OFFLINE", None)
    out = empty / "submission.json"
    done = subprocess.run([sys.executable, "-m", "probebench", "submit", str(folder),
                           "--tasks", "blimp_determiner_noun_agreement_1", "--registry", url,
                           "--latency-prompts", "2",
                           "--out", str(out), "--report", str(empty / "REPORT.md"),
                           "--quiet"], cwd=empty, env=env, capture_output=True, text=True,
                          timeout=3000)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    # the task's baselines are the mirror's published record for the same inputs, fetched
    # and checked against the index (registry/baselines/ of the repository, copied)
    where = result["timing"]["baselines_published"]["blimp_determiner_noun_agreement_1"]
    assert where.startswith(f"{url} (index sha256 ")
    assert ("registry/baselines/blimp_determiner_noun_agreement_1/"
            "smollm2-135m__15-last_token.json, record ") in where
    assert result["timing"]["registry"]["signed_by"] is not None
    mine = result["tasks"][0]["evalaware_auroc"]
    rows = json.loads((board / "leaderboard.json").read_text())["results"]
    (row,) = [r for r in rows if r["entry_id"] == PROBE]
    assert not mine["imputed"] and not row["evalaware_imputed"]
    assert abs(mine["value"] - row["evalaware_auroc"]) <= VALUE_TOLERANCE


def test_downloads_keep_to_their_budget(served: tuple[str, Path],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One command downloads at most MAX_DOWNLOAD_FILES files: past it, refused."""
    import probebench.registry.mirror as mirror

    url, _ = served
    monkeypatch.setattr(mirror, "MAX_DOWNLOAD_FILES", 2)
    with pytest.raises(InputError, match="more than 2 files"):
        open_registry(url).ensure_entry(PROBE)
