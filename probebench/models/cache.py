"""A content-addressed, on-disk cache of pooled activations.

One entry holds the activations of one site for one ordered list of prompts. Its key
is the SHA-256 of a canonical JSON record of everything that decides the numbers:

* the model identity (weights hash, tokenizer hash, dtype, layers, hidden size),
* the device kind (``cpu`` or ``cuda``: kernels differ in the last bits),
* every prompt's exact text and spans, in order,
* the site, and
* the versions of probebench, torch and transformers and the cache format.

In float32 batch sizes are not part of the key: they change results only by float
rounding. In bfloat16 and float16 they change results by more, so there the batch
budget (padded tokens, prompts) is part of the key too.

The same folder, keying and signing hold the language model's own scores (``scores_key``,
``cached_scores``): the surprisal baseline's ``log2 P(text)`` and a format's own protocol
(SyntaxGym's region predictions). Their key replaces the prompts and site with a
``scoring`` record of everything else the numbers depend on: the prompts' texts (or the
items' canonical records), the scoring rule and its BOS handling, with their versions.

The same folder, keying and signing hold results derived deterministically from cached
inputs (``result_key``, ``cached_json``): a task's baselines and a control probe's
selectivity, keyed by a record of every input (their hashes, the protocol and its
version, the seed) and the versions of the libraries that compute them; the JSON is
stored as bytes.

Entries are safetensors files written atomically (temporary file, fsync, rename). Each
carries an HMAC-SHA256 of its key and array bytes under a per-installation secret
(``$PROBEBENCH_HOME/activation-cache.key``, 32 random bytes, mode 0600, kept outside
the cache folder), checked on every read. An entry that fails the check (truncated,
edited, bit-flipped, or planted by anyone without the secret, such as a cache restored
from another machine or another CI job) is reported, deleted and rebuilt, never used.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from probebench import paths
from probebench.errors import CacheError
from probebench.hashing import atomic_writer, sha256_bytes, sha256_json
from probebench.models.loading import ModelIdentity
from probebench.prompts import Prompt
from probebench.sites import Site

FORMAT_VERSION = 1
_TENSOR = "activations"
KEY_FILE = "activation-cache.key"


def installation_key(home: Path | None = None) -> bytes:
    """This installation's cache secret, created on first use (0600, atomically).

    A key file that someone else could have written or read is refused, naming the fix:
    a key that is a link, not owned by the user, or with any group or other permission,
    or in a folder every user may write (without the sticky bit). The HMAC
    proves an entry was written by a holder of the key, so the key must be the user's
    alone (threat model: ``docs/models.md``, "The activation cache").
    """
    folder = home or paths.home()
    path = folder / KEY_FILE
    data = _read_key(path)
    if data is not None:
        return data
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _check_key_folder(folder)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, secrets.token_bytes(32))
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # the first writer wins; everyone then reads the same key
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    data = _read_key(path)
    if data is None:
        raise CacheError(f"{path}: vanished while it was being created; run again")
    return data


def _read_key(path: Path) -> bytes | None:
    """The key's 32 bytes, None when there is no key file yet."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise CacheError(f"{path}: the activation cache key is a symbolic link; "
                             f"delete it (rm {path}) and probebench makes a new one") \
                from None
        raise CacheError(f"cannot read the activation cache key {path} ({exc.strerror})") \
            from None
    try:
        info = os.fstat(fd)
        _check_key_file(path, info)
        data = os.read(fd, 33)
    finally:
        os.close(fd)
    _check_key_folder(path.parent)
    if len(data) != 32:
        raise CacheError(f"{path}: not an activation cache key (expected 32 bytes); delete "
                         "it and probebench makes a new one")
    return data


def _check_key_file(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise CacheError(f"{path}: the activation cache key is not a regular file")
    if info.st_uid != os.getuid():
        raise CacheError(f"{path}: the activation cache key belongs to uid {info.st_uid}, "
                         f"not to you (uid {os.getuid()}): anyone who can write it can "
                         "sign planted activations. Delete it (probebench makes a new one) "
                         "or set PROBEBENCH_HOME to a folder of your own")
    if info.st_mode & 0o077:
        raise CacheError(f"{path}: the activation cache key has mode "
                         f"{stat.S_IMODE(info.st_mode):o}; it must be yours alone: "
                         f"chmod 600 {path}")


def _check_key_folder(folder: Path) -> None:
    # group-writable is common and harmless under user-private groups (umask 002); a
    # folder every user may write (without the sticky bit) is not
    info = folder.stat()
    if info.st_mode & 0o002 and not info.st_mode & stat.S_ISVTX:
        raise CacheError(f"{folder}: every user may write this folder, so anyone could "
                         "replace the activation cache key in it: chmod o-w "
                         f"{folder} (or set PROBEBENCH_HOME to a folder of your own)")


def _mac(secret: bytes, key: str, array: np.ndarray) -> str:
    digest = hmac.new(secret, key.encode("ascii"), "sha256")
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()
log = logging.getLogger(__name__)


def _versions(*extra: str) -> dict[str, str]:
    """Installed versions of probebench, torch, transformers and ``extra``."""
    out = {}
    for dist in ("probebench", "torch", "transformers", *extra):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


def prompts_sha256(prompts: Sequence[Prompt], prefix: str | None = None) -> str:
    """Hash of the prompts' texts and spans (and of a shared prefix, when there is one)."""
    records: list[object] = [p.canonical() for p in prompts]
    if prefix:
        records.append({"prefix": prefix})
    return sha256_json(records)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    corrupt: int = 0


class ActivationCache:
    """The cache folder (default ``$PROBEBENCH_HOME/activations``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.activation_cache_dir()
        self.stats = CacheStats()
        self._secret: bytes | None = None

    @property
    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = installation_key()
        return self._secret

    def key(self, identity: ModelIdentity, device: str, prompts_hash: str, site: Site, *,
            batching: tuple[int, int] | None = None) -> str:
        record: dict[str, object] = {
            "format": FORMAT_VERSION,
            "model": identity.to_dict(),
            "device": device,
            "prompts_sha256": prompts_hash,
            "site": {"layer": site.layer, "position": site.position},
            "versions": _versions(),
        }
        if batching is not None:
            record["batching"] = list(batching)
        return sha256_json(record)

    def scores_key(self, identity: ModelIdentity, device: str, scoring: Mapping[str, object],
                   *, batching: tuple[int, int] | None = None) -> str:
        """The key of a language model's scores: ``key``'s record with ``scoring`` (the
        inputs' hash, the rule and its version: everything else the numbers depend on)
        in place of the prompts and the site."""
        record: dict[str, object] = {
            "format": FORMAT_VERSION,
            "kind": "lm-scores",
            "model": identity.to_dict(),
            "device": device,
            "scoring": dict(scoring),
            "versions": _versions(),
        }
        if batching is not None:
            record["batching"] = list(batching)
        return sha256_json(record)

    def result_key(self, record: Mapping[str, object]) -> str:
        """The key of a result derived from ``record`` (every input and rule it depends
        on, with their versions); scikit-learn and numpy's versions join the others."""
        return sha256_json({"format": FORMAT_VERSION, "kind": "result",
                            "record": dict(record),
                            "versions": _versions("scikit-learn", "numpy", "scipy")})

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.safetensors"

    def get(self, key: str, shape: tuple[int, ...] | None,
            dtype: type[np.generic] = np.float32) -> np.ndarray | None:
        """The cached array, or None on a miss or a corrupt entry (which is deleted);
        ``shape`` None accepts any one-dimensional array."""
        path = self.path(key)
        if not path.is_file():
            self.stats.misses += 1
            return None
        problem = self._check(path, key, shape, self.secret, np.dtype(dtype))
        if isinstance(problem, np.ndarray):
            self.stats.hits += 1
            return problem
        log.warning("activation cache entry %s is corrupt (%s); rebuilding it", path, problem)
        self.stats.corrupt += 1
        self.stats.misses += 1
        with contextlib.suppress(OSError):
            path.unlink()
        return None

    @staticmethod
    def _check(path: Path, key: str, shape: tuple[int, ...] | None, secret: bytes,
               dtype: np.dtype[Any]) -> np.ndarray | str:
        from safetensors import SafetensorError
        from safetensors.numpy import load

        try:
            data = path.read_bytes()
            arrays = load(data)
            meta = _metadata(data)
        except (OSError, SafetensorError, ValueError) as exc:
            return f"unreadable: {exc}"
        array = arrays.get(_TENSOR)
        if array is None:
            return "no activations tensor"
        if meta.get("key") != key:
            return "stored key differs from its file name"
        if (array.ndim != 1 if shape is None else tuple(array.shape) != shape) \
                or array.dtype != dtype:
            return f"shape {array.shape} {array.dtype}, expected {shape} {dtype}"
        if sha256_bytes(np.ascontiguousarray(array).tobytes()) != meta.get("sha256"):
            return "checksum mismatch"
        if not hmac.compare_digest(_mac(secret, key, array), str(meta.get("mac", ""))):
            return "not signed by this installation's cache key"
        return array

    def put(self, key: str, array: np.ndarray, info: dict[str, str] | None = None,
            dtype: type[np.generic] = np.float32) -> Path:
        from safetensors.numpy import save

        array = np.ascontiguousarray(array, dtype=dtype)
        meta = {**(info or {}), "key": key, "sha256": sha256_bytes(array.tobytes()),
                "mac": _mac(self.secret, key, array)}
        path = self.path(key)
        try:
            with atomic_writer(path) as handle:
                handle.write(save({_TENSOR: array}, metadata=meta))
        except OSError as exc:
            raise CacheError(f"cannot write the activation cache at {self.root} ({exc}); "
                             "set PROBEBENCH_ACTIVATION_CACHE or use --no-cache") from exc
        return path


def cached_scores(store: ActivationCache | None, identity: ModelIdentity, device: str,
                  scoring: Mapping[str, object], n: int,
                  compute: Callable[[], np.ndarray | None], *,
                  batching: tuple[int, int] | None = None) -> tuple[np.ndarray | None, bool]:
    """``n`` float64 scores of a language model from ``store``, else ``compute()``'s
    (stored, unless None: nothing to keep). Returns the scores and whether they came
    from the cache; ``store=None`` always computes."""
    key = None
    if store is not None:
        key = store.scores_key(identity, device, scoring, batching=batching)
        hit = store.get(key, (n,), np.float64)
        if hit is not None:
            return hit, True
    scores = compute()
    if scores is not None and key is not None and store is not None:
        store.put(key, scores, {"scoring": str(scoring.get("kind", "")),
                                "model": identity.name}, np.float64)
    return scores, False


def cached_json(store: ActivationCache | None, record: Mapping[str, object],
                compute: Callable[[], Any], *, what: str,
                keep: Callable[[Any], bool] | None = None) -> tuple[Any, bool]:
    """The JSON value derived from ``record`` (``result_key``) from ``store``, else
    ``compute()``'s (stored unless ``keep`` says no: a latency withheld under load);
    returns it and whether it came from the cache. ``what`` names the entry in its
    metadata. ``store=None`` always computes."""
    key = None
    if store is not None:
        key = store.result_key(record)
        hit = store.get(key, None, np.uint8)
        if hit is not None:
            try:
                return json.loads(hit.tobytes().decode("utf-8")), True
            except ValueError:
                log.warning("result cache entry %s is not JSON; rebuilding it",
                            store.path(key))
    value = compute()
    if key is not None and store is not None and (keep is None or keep(value)):
        data = json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")
        store.put(key, np.frombuffer(data, dtype=np.uint8), {"result": what}, np.uint8)
    return value, False


def _metadata(data: bytes) -> dict[str, Any]:
    """The ``__metadata__`` of a safetensors file held in memory."""
    if len(data) < 8:
        raise ValueError("file shorter than its header")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise ValueError("header longer than the file")
    header = json.loads(data[8:8 + size])
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict):
        raise ValueError("metadata is not an object")
    return meta
