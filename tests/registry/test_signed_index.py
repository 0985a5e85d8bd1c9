"""A registry index a pip user can trust: a localhost mirror signed with a throwaway key
the test trusts (``$PROBEBENCH_REGISTRY_KEYS``), and a hostile mirror's changes refused,
each with its named error."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from probebench.errors import InputError
from probebench.hashing import sha256_bytes
from probebench.registry.guards import GuardRefusedError, RegistryGuards, guard_for
from probebench.registry.mirror import (
    MIRROR_CACHE_ENV,
    RegistryIndex,
    RegistrySource,
    blob_path,
    open_registry,
)
from probebench.registry.signing import (
    BadSignatureError,
    ExpiredIndexError,
    RollbackError,
    UnsignedIndexError,
    highest_version,
    parse_signature,
    sign_index,
    trusted_keys,
    verify_index,
)
from probebench.sources.http import OFFLINE_ENV
from tests.registry.conftest import GUARD, PROBE, REPO
from tests.registry_keys import TestKey, make_key


@pytest.fixture(autouse=True)
def _own_mirror_cache(mirror_env: Path) -> Path:
    return mirror_env


BASELINES = ("registry/baselines/blimp_determiner_noun_agreement_1/"
             "smollm2-135m__15-last_token.json")


def _index(folder: Path) -> RegistryIndex:
    return RegistryIndex.model_validate_json((folder / "registry.json").read_bytes())


def _replace_file(folder: Path, path: str, data: bytes) -> None:
    """What a hostile mirror does: new bytes for ``path``, listed in a rewritten index
    (the signature file is left as it was)."""
    index = _index(folder)
    digest = sha256_bytes(data)
    (folder / blob_path(digest)).write_bytes(data)
    doc = index.model_dump(mode="json")
    doc["files"][path] = {"sha256": digest, "size": len(data)}
    (folder / "registry.json").write_text(RegistryIndex.model_validate(doc).to_json())


def test_an_honest_signed_mirror_is_verified_and_works_offline(
        served: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, signer: TestKey) -> None:
    url, folder = served
    source = open_registry(url)
    assert source.verified is not None and "signed by key" in source.describe()
    assert source.verified.key_id in trusted_keys()
    assert source.reference()["index_sha256"] == sha256_bytes(
        (folder / "registry.json").read_bytes())
    source.ensure_entry(PROBE)
    monkeypatch.setenv(OFFLINE_ENV, "1")
    again = open_registry(url)
    assert again.verified == source.verified and "offline" in again.why
    again.ensure_entry(PROBE)  # every file from the cache
    # a cached copy whose signature was removed is not trusted offline either
    sig = Path(again.repo) / "registry.json.sig"
    sig.unlink()
    with pytest.raises(UnsignedIndexError, match="no signature"):
        open_registry(url)


def test_an_unsigned_index_is_refused(served: tuple[str, Path]) -> None:
    url, folder = served
    (folder / "registry.json.sig").unlink()
    with pytest.raises(UnsignedIndexError, match=r"HTTP 404.*unsigned registry index is "
                                                 r"refused"):
        open_registry(url)


def test_a_forged_baselines_record_is_refused(served: tuple[str, Path]) -> None:
    """The audit's attack: an extra record with the run's public inputs and the
    random-features baseline at 0.5. The index must change to list it, and the signature
    no longer covers the index."""
    url, folder = served
    listed = _index(folder).files[BASELINES]
    doc = json.loads((folder / blob_path(listed.sha256)).read_bytes())
    forged = json.loads(json.dumps(doc["history"][-1]))
    forged["baselines"]["random_features"]["auroc"]["value"] = 0.5
    doc["history"].append(forged)
    _replace_file(folder, BASELINES, json.dumps(doc).encode())
    with pytest.raises(BadSignatureError, match="signature is for another index"):
        open_registry(url)
    # nor does re-signing with a key of the mirror's own help
    make_key(folder.parent / "mirror-keys").sign(folder)
    with pytest.raises(BadSignatureError, match="not a trusted registry key"):
        open_registry(url)


def test_a_swapped_guard_is_refused(served: tuple[str, Path], tmp_path: Path) -> None:
    """A mirror naming a task probe (BLiMP) as the model's guard: refused by the
    signature; and even where the files are trusted (a folder, or a signed index that
    declares another guard) a guard that is no live eval_awareness entry is refused."""
    url, folder = served
    index = _index(folder)
    assert index.guards_file is not None
    swapped = yaml.safe_dump({"smollm2-135m": PROBE}).encode()
    _replace_file(folder, index.guards_file, swapped)
    doc = _index(folder).model_dump(mode="json")
    doc["guards"] = {"smollm2-135m": PROBE}
    (folder / "registry.json").write_text(RegistryIndex.model_validate(doc).to_json())
    with pytest.raises(BadSignatureError):
        open_registry(url)
    # a folder whose guards.yaml names a task probe
    registry = tmp_path / "registry"
    (registry / "probes" / "probebench").mkdir(parents=True)
    name = PROBE.split("/")[1]
    (registry / "probes" / "probebench" / f"{name}.yaml").write_bytes(
        (REPO / "registry" / "probes" / f"{PROBE}.yaml").read_bytes())
    (registry / "guards.yaml").write_bytes(swapped)
    with pytest.raises(GuardRefusedError, match="a guard is a live entry of the task "
                                               "eval_awareness"):
        guard_for("smollm2-135m", registry, REPO)
    # guards.yaml and the index's declaration must agree
    lookup = RegistryGuards(REPO / "registry", REPO, declared={"smollm2-135m": PROBE})
    with pytest.raises(GuardRefusedError, match="the registry index declares"):
        lookup("smollm2-135m")
    assert RegistryGuards(REPO / "registry", REPO,
                          declared={"smollm2-135m": GUARD})("smollm2-135m") is not None


def test_expired_and_rolled_back_indexes_are_refused(
        served: tuple[str, Path], signer: TestKey, tmp_path: Path) -> None:
    url, folder = served
    data = (folder / "registry.json").read_bytes()
    sig = folder / "registry.json.sig"
    past = datetime.now(UTC) - timedelta(days=40)
    sig.write_text(sign_index(data, signer.private, now=past,
                              expires=past + timedelta(days=30)).to_json())
    with pytest.raises(ExpiredIndexError, match=r"expired at .* may be frozen"):
        open_registry(url)
    # version 50 verified, then the mirror serves version 40 of the same key
    signer.sign(folder, version=50)
    assert open_registry(url).verified is not None
    key = parse_signature(sig.read_bytes(), "x").signed.key_id
    assert highest_version(key, tmp_path / "mirrors") == 50
    signer.sign(folder, version=40)
    with pytest.raises(RollbackError, match="version 40 is older than version 50"):
        open_registry(url)
    signer.sign(folder, version=50)  # the same version again is no rollback
    assert open_registry(url).verified is not None


def test_a_local_leaderboard_is_verified_when_signed_and_says_when_unsigned(
        board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    copy = tmp_path / "site"
    shutil.copytree(board, copy)
    assert "signed by key" in open_registry(copy).describe()
    data = (copy / "registry.json").read_bytes()
    (copy / "registry.json").write_bytes(data + b" ")  # one more byte, the same JSON
    with pytest.raises(BadSignatureError):
        open_registry(copy)
    (copy / "registry.json.sig").unlink()
    described = open_registry(copy).describe()
    assert "read unsigned" in described
    folder = open_registry(REPO / "registry")
    assert folder.verified is None and "read unsigned" in folder.describe()
    # the commands say so on stderr: a built leaderboard without a signature, a folder
    from probebench.cli import main
    from tests.registry.conftest import _small_registry

    small = _small_registry(tmp_path / "src")
    for given in (copy, small):
        assert main(["registry", "list", "--registry", str(given)]) == 0
        err = capsys.readouterr().err
        assert "read unsigned: a local folder" in err, err


def test_signature_parsing_and_keys(signer: TestKey, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"x": 1}\n'
    good = sign_index(data, signer.private, version=7)
    assert verify_index(data, good.to_json().encode(), "t", cache=None).version == 7
    # the signed statement is what is verified: a changed version breaks the signature
    doc = json.loads(good.to_json())
    doc["signed"]["version"] = 8
    with pytest.raises(BadSignatureError, match="does not verify"):
        verify_index(data, json.dumps(doc).encode(), "t", cache=None)
    for bad in (b"", b"{}", b"not json", b"x" * 10_000):
        with pytest.raises(UnsignedIndexError, match="not a registry signature"):
            verify_index(data, bad, "t", cache=None)
    # without the test's key, only the package's keys are trusted
    monkeypatch.delenv("PROBEBENCH_REGISTRY_KEYS")
    with pytest.raises(BadSignatureError, match="not a trusted registry key"):
        verify_index(data, good.to_json().encode(), "t", cache=None)
    shipped = trusted_keys()
    assert len(shipped) == 1  # the maintainers' key; the private half is no test's
    bad_keys = tmp_path / "bad.pub"
    bad_keys.write_text("not a key")
    monkeypatch.setenv("PROBEBENCH_REGISTRY_KEYS", str(bad_keys))
    with pytest.raises(InputError, match="no PEM public key"):
        trusted_keys()


def test_the_cli_signs_from_stdin_and_refuses_a_bad_key(
        board: Path, signer: TestKey, tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    site = tmp_path / "site"
    shutil.copytree(board, site)
    (site / "registry.json.sig").unlink()
    env = {**os.environ, MIRROR_CACHE_ENV: str(tmp_path / "m")}
    done = subprocess.run([sys.executable, "-m", "probebench", "registry", "sign", str(site),
                           "--key", "-", "--version", "3"], input=signer.private_pem(),
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"version 3" in done.stdout
    assert open_registry(site).verified is not None
    done = subprocess.run([sys.executable, "-m", "probebench", "registry", "sign", str(site),
                           "--key", "-"], input=b"-----BEGIN PRIVATE KEY-----\nAAAA\n",
                          capture_output=True, env=env, timeout=120)
    assert done.returncode != 0 and b"not an unencrypted PKCS#8 PEM private key" in \
        done.stderr and b"AAAA" not in done.stderr


def test_the_run_policy_reads_guard_and_baselines_from_the_verified_index(
        served: tuple[str, Path], tmp_path: Path) -> None:
    """What ``submit --registry URL`` is given: the guard declared by the signed index, and
    baselines records that name the index they came from."""
    from probebench.registry.baselines import BaselineHistory
    from probebench.runs.submit import resolve_policy

    url, folder = served
    policy = resolve_policy(registry=url, repo=tmp_path, quiet=True)
    source = policy.source
    assert source is not None and source.verified is not None
    assert isinstance(policy.guards, RegistryGuards)
    assert policy.guards.declared == {"smollm2-135m": GUARD}
    listed = _index(folder).files[BASELINES]
    history = BaselineHistory.model_validate_json(
        (folder / blob_path(listed.sha256)).read_bytes())
    latest = history.history[-1]
    assert latest.inputs_sha256 is not None
    found = policy.published_baselines("blimp_determiner_noun_agreement_1", "smollm2-135m",
                                       "15:last_token", latest.inputs_sha256)
    assert found is not None
    digest = sha256_bytes((folder / "registry.json").read_bytes())
    assert found.where.startswith(f"{url} (index sha256 {digest[:16]}..., signed version ")


def test_submission_json_and_report_name_the_index(served: tuple[str, Path]) -> None:
    """``runs.submit.with_registry`` on a stored reference result (no model run): the
    registry's URL, digest and verified signature in ``timing.registry`` and REPORT.md."""
    from probebench.evaluation.report import render_report
    from probebench.evaluation.results import Submission, Timing
    from probebench.registry.store import latest_results
    from probebench.runs.submit import with_registry

    url, folder = served
    stored = latest_results(REPO / "registry", PROBE)["blimp_determiner_noun_agreement_1"]
    plain = Submission(
        spec_version="0.3.0", probebench_version="0.1.0", probe=stored.probe,
        model=stored.model, device=stored.device, seed=stored.seed,
        bootstrap_resamples=stored.bootstrap_resamples, versions=stored.versions,
        definitions={}, tasks=[stored.result], run=stored.run,
        timing=Timing(latency_ms={}, latency_prompts=2, wall_seconds=1.0))
    source = open_registry(url)
    assert source.verified is not None
    result = with_registry(plain, source)
    doc = json.loads(result.to_json())["timing"]["registry"]
    digest = sha256_bytes((folder / "registry.json").read_bytes())
    assert doc == {"source": url, "kind": "url", "index_sha256": digest,
                   "signed_by": source.verified.key_id,
                   "index_version": source.verified.version,
                   "expires": source.verified.expires}
    assert f"Registry read (guard and published baselines): {url} (url, index sha256 " \
           f"{digest}, signature verified: key {source.verified.key_id[:16]}" \
           in render_report(result)
    assert "Registry read" not in render_report(plain)
    folder_ref = with_registry(plain, open_registry(REPO / "registry"))
    assert folder_ref.timing is not None and folder_ref.timing.registry is not None
    assert folder_ref.timing.registry.signed_by is None
    assert "read unsigned, a local folder" in render_report(folder_ref)


@pytest.mark.slow
def test_submission_names_the_index_it_read(served: tuple[str, Path], smollm: object,
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``submit --registry URL``: the guard and the published baselines come from the
    verified index, and ``timing.registry`` names it (URL, digest, key, version)."""
    import probebench
    from probebench.evaluation.session import SubmitOptions

    url, folder = served
    monkeypatch.chdir(tmp_path)
    artifact = probebench.load_probe(PROBE, registry=url).folder
    result = probebench.submit(artifact, ["blimp_determiner_noun_agreement_1"],
                               SubmitOptions(bootstrap=50, progress=False, latency_prompts=2,
                                             limit=20), registry=url)
    assert result.timing is not None and result.timing.registry is not None
    ref = result.timing.registry
    source: RegistrySource = open_registry(url)
    assert ref.source == url and ref.kind == "url"
    assert ref.index_sha256 == sha256_bytes((folder / "registry.json").read_bytes())
    assert source.verified is not None and ref.signed_by == source.verified.key_id
    assert ref.index_version == source.verified.version
    assert GUARD in result.tasks[0].evalaware_auroc.note
    assert json.loads(result.to_json())["timing"]["registry"]["index_sha256"] == \
        ref.index_sha256
    from probebench.evaluation.report import render_report

    report = render_report(result)
    assert ref.signed_by is not None
    assert f"Registry read (guard and published baselines): {url} (url, index sha256 " \
           f"{ref.index_sha256}, signature verified: key {ref.signed_by[:16]}" in report


def test_rotation_keeps_one_sequence_and_a_version_names_one_index(
        served: tuple[str, Path], signer: TestKey, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The package's keys share one sequence of versions: an index signed by the old key
    with a lower version is a rollback after the new key's; and one version names one
    index."""
    import probebench.registry.signing as signing

    url, folder = served
    old, new = make_key(tmp_path / "old"), make_key(tmp_path / "new")
    shipped = {"keys": [{"key_id": signing.key_id(k.private.public_key()),
                         "public_key_pem": k.public_pem.read_text()} for k in (old, new)],
               "revoked": []}
    keys_file = tmp_path / "trusted_keys.json"
    keys_file.write_text(json.dumps(shipped))
    monkeypatch.setattr(signing, "TRUSTED_KEYS_FILE", keys_file)
    new.sign(folder, version=200)
    assert open_registry(url).verified is not None
    old.sign(folder, version=100)  # a replay of an index from before the rotation
    with pytest.raises(RollbackError, match="version 100 is older than version 200"):
        open_registry(url)
    # version 200 again, over other bytes
    data = (folder / "registry.json").read_bytes()
    (folder / "registry.json").write_bytes(data + b" ")
    new.sign(folder, version=200)
    with pytest.raises(RollbackError, match="verified before with other content"):
        open_registry(url)
    # a test key of $PROBEBENCH_REGISTRY_KEYS has a sequence of its own
    (folder / "registry.json").write_bytes(data)
    signer.sign(folder, version=5)
    assert open_registry(url).verified is not None


def test_a_corrupt_versions_record_fails_closed(served: tuple[str, Path],
                                                mirror_env: Path) -> None:
    url, _ = served
    open_registry(url)
    (mirror_env / "trusted-versions.json").write_text("{bad")
    with pytest.raises(InputError, match="record of verified registry versions; refused"):
        open_registry(url)


def test_a_bad_signature_on_a_default_registry_is_not_called_unreachable(
        served: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``submit`` with the registry from ``$PROBEBENCH_REGISTRY``: an unsigned index is
    refused, not turned into an imputed guard as if the server were down."""
    from probebench.registry.mirror import REGISTRY_ENV
    from probebench.runs.submit import resolve_policy

    url, folder = served
    (folder / "registry.json.sig").unlink()
    monkeypatch.setenv(REGISTRY_ENV, url)
    with pytest.raises(UnsignedIndexError):
        resolve_policy(repo=tmp_path, quiet=True)


def test_require_signed_and_a_linked_signature(board: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    from probebench.cli import main

    site = tmp_path / "site"
    shutil.copytree(board, site)
    assert main(["registry", "list", "--registry", str(site), "--require-signed"]) == 0
    sig = site / "registry.json.sig"
    moved = tmp_path / "elsewhere.sig"
    sig.rename(moved)
    sig.symlink_to(moved)
    with pytest.raises(InputError, match="a symbolic link; a registry signature is a plain"):
        open_registry(site)
    sig.unlink()
    capsys.readouterr()
    assert main(["registry", "list", "--registry", str(site), "--require-signed"]) == 2
    assert "--require-signed asks for a verified registry.json.sig" in capsys.readouterr().err
