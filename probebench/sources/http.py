"""Budgeted HTTP downloads: HTTPS only (plain HTTP to this machine alone), a size limit
checked against the declared length before the body and again while it streams, a
timeout, no redirects to another scheme or host, nothing written but whole files.

Used to read a published registry mirror (``probebench.registry.mirror``). ``urllib``
from the standard library does the transfer; proxies from the environment apply as
usual. Offline (``PROBEBENCH_OFFLINE`` or ``HF_HUB_OFFLINE`` set), nothing is fetched.
"""

from __future__ import annotations

import ipaddress
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from probebench.errors import InputError

OFFLINE_ENV = "PROBEBENCH_OFFLINE"
#: seconds to wait for a connection or a read
TIMEOUT = 30.0
_LOCAL_HOSTS = {"localhost"}


class OfflineError(InputError):
    """A download was needed while offline, or the server could not be reached."""


def offline() -> bool:
    """True when ``PROBEBENCH_OFFLINE`` or ``HF_HUB_OFFLINE`` asks for local caches only."""
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
               for name in (OFFLINE_ENV, "HF_HUB_OFFLINE"))


def is_local_host(host: str) -> bool:
    """``localhost`` or a loopback address."""
    if host.lower() in _LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: str, what: str = "URL") -> str:
    """``url`` when it may be fetched: ``https://HOST/...``, or ``http://`` to this
    machine (localhost, 127.0.0.0/8, ::1); no credentials in it, no other scheme.

    >>> check_url("https://example.org/registry.json")
    'https://example.org/registry.json'
    >>> check_url("http://127.0.0.1:8000/registry.json")
    'http://127.0.0.1:8000/registry.json'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise InputError(f"{what} {url!r}: holds a space or a control character")
    if parts.username is not None or parts.password is not None:
        raise InputError(f"{what} {url[:80]!r}: credentials in a URL are refused")
    if parts.scheme == "https" and host:
        return url
    if parts.scheme == "http" and host and is_local_host(host):
        return url
    raise InputError(f"{what} {url[:80]!r}: only https:// is accepted (http:// only to "
                     "localhost)")


@dataclass(frozen=True)
class Download:
    url: str
    data: bytes


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same scheme and host."""

    def redirect_request(self, req: urllib.request.Request, fp: object, code: int,
                         msg: str, headers: object, newurl: str
                         ) -> urllib.request.Request | None:
        old, new = urlsplit(req.full_url), urlsplit(newurl)
        if (old.scheme, old.hostname, old.port) != (new.scheme, new.hostname, new.port):
            raise InputError(f"{req.full_url}: redirected to another origin ({newurl[:80]}); "
                             "refused")
        return super().redirect_request(req, fp, code, msg, headers, newurl)  # type: ignore[arg-type]


def fetch(url: str, *, max_bytes: int, what: str = "file",
          timeout: float = TIMEOUT) -> Download:
    """The body of ``url``, at most ``max_bytes`` (a larger declared length is refused
    before the body is read; a body that runs past it is cut off and refused)."""
    check_url(url, what)
    if offline():
        raise OfflineError(f"{url}: offline ({OFFLINE_ENV} or HF_HUB_OFFLINE is set), so "
                           f"the {what} is not downloaded")
    opener = urllib.request.build_opener(_SameOrigin)
    request = urllib.request.Request(url, headers={"User-Agent": "probebench",
                                                   "Accept-Encoding": "identity"})
    try:
        with opener.open(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > max_bytes:
                raise InputError(f"{url}: the {what} is {int(length)} bytes; at most "
                                 f"{max_bytes} are read (refused before the download)")
            data = response.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        raise InputError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise OfflineError(f"{url}: cannot reach the server ({reason})") from None
    if len(data) > max_bytes:
        raise InputError(f"{url}: the {what} is over {max_bytes} bytes; refused")
    return Download(url, data)


__all__ = ["OFFLINE_ENV", "Download", "OfflineError", "check_url", "fetch", "is_local_host",
           "offline"]
