from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from probebench.errors import ModelError
from probebench.models import ActivationCache, Site, extract, load_model, resolve_model
from probebench.models.builtin import BUILTIN_MODELS

PROMPTS = ["The cat sleeps.", "Dogs were barking all night long.", "She will sing tomorrow."]
SITES = [Site(2, "last_token"), Site(6, "token_avg")]


def _entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.safetensors"))


def test_round_trip_returns_identical_bytes(minilm: Any, tmp_path: Path) -> None:
    cache = ActivationCache(tmp_path)
    first = extract(minilm, PROMPTS, SITES, cache=cache, progress=False)
    assert first.cached == set()
    assert len(_entries(tmp_path)) == len(SITES)
    second = extract(minilm, PROMPTS, SITES, cache=cache, progress=False)
    assert second.cached == set(SITES)
    for site in SITES:
        assert second[site].tobytes() == first[site].tobytes()


def test_key_changes_with_prompts_spans_site_and_dtype(minilm: Any, tmp_path: Path) -> None:
    cache = ActivationCache(tmp_path)
    extract(minilm, PROMPTS, SITES[:1], cache=cache, progress=False)
    changed = extract(minilm, [*PROMPTS[:2], "She will sing today."], SITES[:1], cache=cache,
                      progress=False)
    assert changed.cached == set()
    other_site = extract(minilm, PROMPTS, [Site(3, "last_token")], cache=cache, progress=False)
    assert other_site.cached == set()
    ident = minilm.identity
    base = cache.key(ident, "cpu", "p", SITES[0])
    from dataclasses import replace
    assert cache.key(replace(ident, dtype="bfloat16"), "cpu", "p", SITES[0]) != base
    assert cache.key(ident, "cuda", "p", SITES[0]) != base
    assert cache.key(ident, "cpu", "q", SITES[0]) != base


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_entry_is_detected_and_rebuilt(minilm: Any, tmp_path: Path, damage: str,
                                               caplog: pytest.LogCaptureFixture) -> None:
    cache = ActivationCache(tmp_path)
    good = extract(minilm, PROMPTS, SITES[:1], cache=cache, progress=False)[SITES[0]]
    (entry,) = _entries(tmp_path)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[-5] ^= 0x40  # one bit inside the float payload
    else:
        data = bytearray(b"not a safetensors file")
    entry.write_bytes(bytes(data))
    again = extract(minilm, PROMPTS, SITES[:1], cache=cache, progress=False)
    assert again.cached == set(), "a corrupt entry must never be used"
    assert cache.stats.corrupt == 1
    assert "corrupt" in caplog.text
    np.testing.assert_array_equal(again[SITES[0]], good)
    # rebuilt: the next read is a verified hit
    third = extract(minilm, PROMPTS, SITES[:1], cache=cache, progress=False)
    assert third.cached == {SITES[0]}


def test_a_planted_entry_is_refused(minilm: Any, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    caplog: pytest.LogCaptureFixture) -> None:
    """Planted under the real key with a correct SHA-256 (the old in-file checksum), but
    written by another installation (another key): refused, rebuilt from the model."""
    from safetensors.numpy import save

    from probebench.hashing import sha256_bytes

    monkeypatch.setenv("PROBEBENCH_HOME", str(tmp_path / "home"))
    cache = ActivationCache(tmp_path / "cache")
    good = extract(minilm, PROMPTS, SITES[:1], cache=cache, progress=False)[SITES[0]]
    (entry,) = _entries(tmp_path / "cache")
    key = entry.stem
    planted = np.full_like(good, 0.5)
    entry.write_bytes(save({"activations": planted},
                           metadata={"key": key, "sha256": sha256_bytes(planted.tobytes())}))
    again = extract(minilm, PROMPTS, SITES[:1], cache=ActivationCache(tmp_path / "cache"),
                    progress=False)
    assert again.cached == set() and "not signed by this installation" in caplog.text
    np.testing.assert_array_equal(again[SITES[0]], good)
    # another installation (another secret) cannot read this one's entries either
    other = ActivationCache(tmp_path / "cache")
    other._secret = b"x" * 32
    assert other.get(key, good.shape) is None
    assert (tmp_path / "home" / "activation-cache.key").stat().st_mode & 0o777 == 0o600


def test_no_cache_writes_nothing(minilm: Any, tmp_path: Path,
                                 _private_activation_cache: Path) -> None:
    extract(minilm, PROMPTS, SITES, cache=False, progress=False)
    assert _entries(_private_activation_cache) == []


def test_hit_does_not_load_the_model(tmp_path: Path) -> None:
    """With every site cached, extraction must answer without loading weights.

    The model folder's weights are deleted after the identity is computed: any load
    would fail, so success proves none happened.
    """
    folder = tmp_path / "model"
    shutil.copytree(BUILTIN_MODELS["minilm-l6"].source_path(), folder)
    resolved = resolve_model(str(folder), device="cpu")
    cache = ActivationCache(tmp_path / "cache")
    first = extract(resolved, PROMPTS, SITES, cache=cache, progress=False)
    (folder / "model.safetensors").unlink()
    second = extract(resolved, PROMPTS, SITES, cache=cache, progress=False)
    assert second.cached == set(SITES)
    np.testing.assert_array_equal(second[SITES[0]], first[SITES[0]])
    # and a miss really does need the model (the test above could not pass vacuously)
    with pytest.raises(ModelError):
        extract(resolved, PROMPTS, [Site(1, "last_token")], cache=cache, progress=False)
    with pytest.raises(ModelError):
        load_model(resolved)


@pytest.mark.parametrize(("prepare", "message"), [
    (lambda key: key.chmod(0o644), "chmod 600"),
    (lambda key: key.chmod(0o620), "chmod 600"),
    (lambda key: os.chown(key, 65534, -1), "not to you"),
])
def test_a_key_others_could_touch_is_refused(tmp_path: Path, prepare: Any,
                                             message: str) -> None:
    """Whoever can write the key can sign planted activations: a key that is not the
    user's alone is refused, naming the fix, and never used or replaced."""
    from probebench.errors import CacheError
    from probebench.models.cache import KEY_FILE, installation_key

    home = tmp_path / "home"
    first = installation_key(home)
    key = home / KEY_FILE
    if "not to you" in message and os.getuid() != 0:
        pytest.skip("giving a file away needs root")  # CI runs as root
    prepare(key)
    with pytest.raises(CacheError, match=message):
        installation_key(home)
    assert key.read_bytes() == first  # refused, not silently replaced


def test_a_linked_key_and_an_open_folder_are_refused(tmp_path: Path) -> None:
    from probebench.errors import CacheError
    from probebench.models.cache import KEY_FILE, installation_key

    home = tmp_path / "home"
    home.mkdir()
    planted = tmp_path / "planted.key"
    planted.write_bytes(b"k" * 32)
    planted.chmod(0o600)
    (home / KEY_FILE).symlink_to(planted)
    with pytest.raises(CacheError, match="symbolic link"):
        installation_key(home)
    (home / KEY_FILE).unlink()
    home.chmod(0o777)
    with pytest.raises(CacheError, match="every user may write"):
        installation_key(home)
    assert not (home / KEY_FILE).exists()
    home.chmod(0o1777)  # sticky, like /tmp: others cannot replace the user's files
    assert len(installation_key(home)) == 32
