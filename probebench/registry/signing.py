"""Signed registry indexes: who published a ``registry.json``, which one, and until when.

The workflow that builds and deploys the leaderboard signs the registry mirror's index
(``probebench registry sign SITE --key -``): it writes ``registry.json.sig`` beside
``registry.json``, a small JSON document holding a **signed statement**

* ``index_sha256`` and ``index_bytes``: exactly which ``registry.json`` is meant (the index
  in turn names the SHA-256 and size of every file of the mirror: entries, artifacts,
  results, baselines, guards);
* ``version``: a counter that only goes up (by default the UTC time of signing in seconds,
  so it keeps rising across key rotations);
* ``expires``: the UTC time after which the statement is refused (by default 30 days; the
  workflow re-signs weekly);
* ``key_id``: the SHA-256 of the signing key's raw Ed25519 public key;

and an Ed25519 ``signature`` (``cryptography``) over the statement's canonical JSON.

A reader (``probebench.registry.mirror``) verifies the statement **before** it parses the
index: against the public keys the package ships (``trusted_keys.json`` beside this module)
and those named by ``$PROBEBENCH_REGISTRY_KEYS`` (a file of PEM public keys, for a registry
of one's own; tests use it with throwaway keys). It refuses, each with its own error
class: an index without a signature (``UnsignedIndexError``), a signature by no trusted
key or over other bytes (``BadSignatureError``), an expired statement
(``ExpiredIndexError``), and a version lower than the highest one this machine has
verified in the key's trust domain, or that version with other bytes (``RollbackError``;
the package's keys share one domain across rotations, each ``$PROBEBENCH_REGISTRY_KEYS``
key has its own; kept in ``VERSIONS_FILE`` of the mirror cache, ``$PROBEBENCH_MIRROR_CACHE``
or ``$PROBEBENCH_HOME/mirrors/``: deleting the cache resets it, and then expiry alone bounds
a replay to 30 days). From a URL the statement is checked before the index is downloaded,
and bounds the download to the size it signs. The threat model, and why this is enough
without TUF, is in docs/registry.md ("A signed index").

Key rotation: a release adds the next public key to ``trusted_keys.json``; the workflow
signs with the new key (its versions continue, being times); a later release removes the
old key, or lists it under ``revoked`` at once if it leaked.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from probebench.errors import InputError, field_problem
from probebench.hashing import atomic_write_bytes, sha256_bytes

SIGNATURE_SUFFIX = ".sig"
SIGNATURE_FORMAT: Literal["probebench-registry-signature/1"] = \
    "probebench-registry-signature/1"
#: the largest signature file read
MAX_SIGNATURE_BYTES = 4096
KEYS_ENV = "PROBEBENCH_REGISTRY_KEYS"
#: the public keys the package trusts (see the module docstring on rotation)
TRUSTED_KEYS_FILE = Path(__file__).with_name("trusted_keys.json")
#: how long a signature holds unless ``--expires-in-days`` says otherwise
DEFAULT_VALIDITY_DAYS = 30
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class SignatureError(InputError):
    """A registry index that is not what the maintainers published."""


class UnsignedIndexError(SignatureError):
    """The index has no signature (or it could not be read)."""


class BadSignatureError(SignatureError):
    """The signature is by no trusted key, or does not cover these bytes."""


class ExpiredIndexError(SignatureError):
    """The signed statement has expired (a frozen mirror)."""


class RollbackError(SignatureError):
    """The index is older than one this machine has already verified."""


class SignedStatement(BaseModel):
    """What the signature covers."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["probebench-registry-signature/1"] = SIGNATURE_FORMAT
    index_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    index_bytes: int = Field(ge=0)
    version: int = Field(ge=1, description="Only goes up: a lower one than already seen "
                         "is a rollback.")
    expires: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$",
                         description="UTC, ISO 8601 with Z.")
    key_id: str = Field(pattern=r"^[0-9a-f]{64}$")

    def payload(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True,
                          separators=(",", ":")).encode("utf-8")

    def expires_at(self) -> datetime:
        return datetime.strptime(self.expires, _TIME_FORMAT).replace(tzinfo=UTC)


class SignatureFile(BaseModel):
    """``registry.json.sig``."""

    model_config = ConfigDict(extra="forbid")

    signed: SignedStatement
    signature: str = Field(pattern=r"^[A-Za-z0-9+/]{86}==$", description="Ed25519, base64.")

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Verified:
    """A verified index: by which key, which version, until when."""

    key_id: str
    version: int
    expires: str
    index_sha256: str

    def describe(self) -> str:
        return (f"signed by key {self.key_id[:16]}..., version {self.version}, "
                f"expires {self.expires}")


# --- keys ---------------------------------------------------------------------------

def key_id(public: Ed25519PublicKey) -> str:
    """The SHA-256 of the raw 32-byte public key, hex."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256_bytes(raw)


def _pem_public_keys(data: bytes, where: str) -> list[Ed25519PublicKey]:
    keys = []
    marker = b"-----END PUBLIC KEY-----"
    for block in data.split(marker)[:-1]:
        try:
            key = serialization.load_pem_public_key(block.strip() + b"\n" + marker + b"\n")
        except ValueError:
            raise InputError(f"{where}: a PEM block is not a public key") from None
        if not isinstance(key, Ed25519PublicKey):
            raise InputError(f"{where}: only Ed25519 public keys sign registry indexes")
        keys.append(key)
    if not keys:
        raise InputError(f"{where}: no PEM public key (-----BEGIN PUBLIC KEY-----) in it")
    return keys


def trusted_keys() -> dict[str, Ed25519PublicKey]:
    """key id -> public key: the package's ``trusted_keys.json`` (less its ``revoked``
    ids), and the PEM keys of the file ``$PROBEBENCH_REGISTRY_KEYS`` names."""
    doc = json.loads(TRUSTED_KEYS_FILE.read_text("utf-8"))
    revoked = set(doc.get("revoked", []))
    out: dict[str, Ed25519PublicKey] = {}
    for item in doc["keys"]:
        (key,) = _pem_public_keys(item["public_key_pem"].encode("ascii"),
                                  str(TRUSTED_KEYS_FILE))
        if key_id(key) != item["key_id"]:
            raise InputError(f"{TRUSTED_KEYS_FILE}: key_id {item['key_id'][:16]}... is not "
                             "the SHA-256 of its public key")
        if key_id(key) not in revoked:
            out[key_id(key)] = key
    extra = os.environ.get(KEYS_ENV, "").strip()
    if extra:
        path = Path(extra).expanduser()
        try:
            data = path.read_bytes()[: 1 << 20]
        except OSError as exc:
            raise InputError(f"${KEYS_ENV}={extra}: cannot read ({exc.strerror})") from None
        for key in _pem_public_keys(data, f"${KEYS_ENV} ({path})"):
            if key_id(key) not in revoked:
                out[key_id(key)] = key
    return out


def read_private_key(data: bytes, where: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from PKCS#8 PEM; errors never quote the key."""
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise InputError(f"{where}: not an unencrypted PKCS#8 PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{where}: not an Ed25519 private key")
    return key


# --- signing --------------------------------------------------------------------------

def _utc(when: datetime) -> str:
    return when.astimezone(UTC).strftime(_TIME_FORMAT)


def sign_index(data: bytes, key: Ed25519PrivateKey, *, version: int | None = None,
               expires: datetime | None = None, now: datetime | None = None
               ) -> SignatureFile:
    """The signature file of the index ``data``: ``version`` defaults to ``now`` in UTC
    seconds, ``expires`` to ``now`` + 30 days."""
    now = now or datetime.now(UTC)
    statement = SignedStatement(
        index_sha256=sha256_bytes(data), index_bytes=len(data),
        version=version if version is not None else int(now.timestamp()),
        expires=_utc(expires or now + timedelta(days=DEFAULT_VALIDITY_DAYS)),
        key_id=key_id(key.public_key()))
    if statement.expires_at() <= now:
        raise InputError(f"expires {statement.expires} is not after now ({_utc(now)})")
    signature = base64.b64encode(key.sign(statement.payload())).decode("ascii")
    return SignatureFile(signed=statement, signature=signature)


def sign_file(index: Path, key: Ed25519PrivateKey, *, max_bytes: int,
              version: int | None = None, expires: datetime | None = None,
              now: datetime | None = None) -> Path:
    """Sign the index file ``index`` (at most ``max_bytes``) into ``<index>.sig``
    (atomically); returns the signature file."""
    from probebench.jsonsafe import read_capped

    data = read_capped(index, max_bytes, "registry index")
    signed = sign_index(data, key, version=version, expires=expires, now=now)
    out = index.with_name(index.name + SIGNATURE_SUFFIX)
    atomic_write_bytes(out, signed.to_json().encode("utf-8"))
    return out


# --- verifying ------------------------------------------------------------------------

def parse_signature(data: bytes | None, where: str) -> SignatureFile:
    if data is None:
        raise UnsignedIndexError(f"{where}: the registry index has no signature "
                                 f"({where}{SIGNATURE_SUFFIX} is missing); refused")
    try:
        return SignatureFile.model_validate_json(data[:MAX_SIGNATURE_BYTES + 1])
    except ValidationError as exc:
        raise UnsignedIndexError(f"{where}{SIGNATURE_SUFFIX}: not a registry signature "
                                 f"({field_problem(exc, '')}); refused") from None


#: the highest version verified per trust domain, in the mirror cache (``mirrors_dir()``)
VERSIONS_FILE = "trusted-versions.json"
#: the trust domain of the package's keys: one sequence of versions across rotations
PACKAGE_DOMAIN = "package"


def trust_domain(key: str) -> str:
    """Whose sequence of versions a key signs in: every key the package ships shares one
    (the maintainers' registry, across rotations); a key of ``$PROBEBENCH_REGISTRY_KEYS``
    has its own."""
    doc = json.loads(TRUSTED_KEYS_FILE.read_text("utf-8"))
    shipped = {item["key_id"] for item in doc["keys"]}
    return PACKAGE_DOMAIN if key in shipped else key


def _read_versions(path: Path) -> dict[str, dict[str, object]]:
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("version"), int)
            and isinstance(v.get("index_sha256"), str) for v in doc.values()):
        raise InputError(f"{path}: not this machine's record of verified registry versions; "
                         "refused rather than trusting any version (delete it only if you "
                         "accept any unexpired signed index again)")
    return doc


def highest_version(key: str, cache: Path) -> int:
    """The highest version this machine has verified in ``key``'s trust domain (0: none),
    as kept in ``cache`` (the mirror cache folder)."""
    entry = _read_versions(cache / VERSIONS_FILE).get(trust_domain(key))
    return int(entry["version"]) if entry else 0  # type: ignore[call-overload]


def _check_and_remember(signed: SignedStatement, where: str, cache: Path, *,
                        remember: bool) -> None:
    """Refuse a version lower than the domain's highest, or the same version with other
    bytes; with ``remember``, record this one (under a lock, never lowering it)."""
    import fcntl

    path = cache / VERSIONS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    domain = trust_domain(signed.key_id)
    with path.with_name(VERSIONS_FILE + ".lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        doc = _read_versions(path)
        seen = doc.get(domain)
        if seen is not None:
            version = int(seen["version"])  # type: ignore[call-overload]
            if signed.version < version:
                raise RollbackError(f"{where}: index version {signed.version} is older than "
                                    f"version {version}, already verified on this machine; "
                                    "refused (a rolled-back mirror)")
            if signed.version == version and seen["index_sha256"] != signed.index_sha256:
                raise RollbackError(f"{where}: index version {signed.version} was verified "
                                    "before with other content; refused (one version, one "
                                    "index)")
        if remember and (seen is None or signed.version > int(seen["version"])):  # type: ignore[call-overload]
            doc[domain] = {"version": signed.version, "index_sha256": signed.index_sha256}
            atomic_write_bytes(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n")
                               .encode("utf-8"))


def check_statement(signature: bytes | None, where: str, *, cache: Path | None,
                    now: datetime | None = None) -> SignedStatement:
    """The signed statement of ``signature``, checked before the index it names is read:
    a trusted key, a valid signature, not expired, no rollback (nothing is recorded).

    Raises:
        UnsignedIndexError, BadSignatureError, ExpiredIndexError, RollbackError.
    """
    doc = parse_signature(signature, where)
    signed = doc.signed
    keys = trusted_keys()
    key = keys.get(signed.key_id)
    if key is None:
        raise BadSignatureError(f"{where}: signed by key {signed.key_id[:16]}..., which is "
                                f"not a trusted registry key (the package's and "
                                f"${KEYS_ENV}'s: {len(keys)}); refused")
    try:
        key.verify(base64.b64decode(doc.signature), signed.payload())
    except InvalidSignature:
        raise BadSignatureError(f"{where}: the signature does not verify with key "
                                f"{signed.key_id[:16]}...; refused") from None
    now = now or datetime.now(UTC)
    if signed.expires_at() <= now:
        raise ExpiredIndexError(f"{where}: the registry index expired at {signed.expires} "
                                f"(now {_utc(now)}); a mirror that serves it may be frozen; "
                                "refused (fetch it again from the leaderboard online)")
    if cache is not None:
        _check_and_remember(signed, where, cache, remember=False)
    return signed


def verify_index(data: bytes, signature: bytes | None, where: str, *, cache: Path | None,
                 now: datetime | None = None) -> Verified:
    """Check ``signature`` (the bytes of ``registry.json.sig``, None when absent) over
    the index ``data`` read from ``where``: ``check_statement``, and these exact bytes.
    With ``cache`` (the mirror cache folder), the version then becomes the lowest one
    this machine accepts in that key's trust domain, and no other index may carry it
    (None: no rollback check, nothing kept).

    Raises:
        UnsignedIndexError, BadSignatureError, ExpiredIndexError, RollbackError.
    """
    signed = check_statement(signature, where, cache=cache, now=now)
    digest = sha256_bytes(data)
    if signed.index_sha256 != digest or signed.index_bytes != len(data):
        raise BadSignatureError(f"{where}: the signature is for another index (sha256 "
                                f"{signed.index_sha256[:16]}..., {signed.index_bytes} bytes; "
                                f"this one is {digest[:16]}..., {len(data)} bytes); refused")
    if cache is not None:
        _check_and_remember(signed, where, cache, remember=True)
    return Verified(signed.key_id, signed.version, signed.expires, digest)


__all__ = [
    "DEFAULT_VALIDITY_DAYS",
    "KEYS_ENV",
    "PACKAGE_DOMAIN",
    "SIGNATURE_FORMAT",
    "SIGNATURE_SUFFIX",
    "VERSIONS_FILE",
    "BadSignatureError",
    "ExpiredIndexError",
    "RollbackError",
    "SignatureError",
    "SignatureFile",
    "SignedStatement",
    "UnsignedIndexError",
    "Verified",
    "check_statement",
    "highest_version",
    "key_id",
    "parse_signature",
    "read_private_key",
    "sign_file",
    "sign_index",
    "trust_domain",
    "trusted_keys",
    "verify_index",
]
