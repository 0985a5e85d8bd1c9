"""Throwaway registry signing keys for tests (never the maintainers' key): a key pair,
its public key written to a PEM file that ``$PROBEBENCH_REGISTRY_KEYS`` names, and a
helper that signs a built leaderboard with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from probebench.registry.mirror import sign_site
from probebench.registry.signing import KEYS_ENV


@dataclass(frozen=True)
class TestKey:
    __test__ = False

    private: Ed25519PrivateKey
    public_pem: Path

    def sign(self, site: Path, version: int | None = None) -> Path:
        return sign_site(site, self.private, version=version)

    def private_pem(self) -> bytes:
        return self.private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())


def make_key(folder: Path, name: str = "registry") -> TestKey:
    """A fresh Ed25519 key, its public half in ``folder/<name>.pub``."""
    key = Ed25519PrivateKey.generate()
    folder.mkdir(parents=True, exist_ok=True)
    pub = folder / f"{name}.pub"
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    return TestKey(key, pub)


__all__ = ["KEYS_ENV", "TestKey", "make_key"]
