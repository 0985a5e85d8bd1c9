"""Budgeted HTTP downloads: HTTPS only (plain HTTP to this machine alone), a size limit
checked against the declared length before the body and again while it streams, a
timeout per connection and read, a **deadline** for the whole download, no redirects to
another scheme or host, nothing written but whole files.

The deadline bounds the wall time of one download from the first byte sent to the last
received (the connection, TLS, the headers and the body, every redirect): a server that
sends one byte a second never lets a per-read timeout expire, so a watchdog thread shuts
the download's sockets down at the deadline and the download ends with a
``DeadlineError``. ``DEADLINE`` (300 s) is the default, read when ``fetch`` is called;
callers with a budget of their own (a registry mirror's downloads for one command) pass
less.

Used to read a published registry mirror (``probebench.registry.mirror``). ``urllib``
from the standard library does the transfer; proxies from the environment apply as
usual. Offline (``PROBEBENCH_OFFLINE`` or ``HF_HUB_OFFLINE`` set), nothing is fetched.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from probebench.errors import InputError

OFFLINE_ENV = "PROBEBENCH_OFFLINE"
#: seconds to wait for a connection or a read
TIMEOUT = 30.0
#: seconds one whole download may take (connection, headers and body): a file of
#: MAX_FILE_BYTES (64 MiB) needs about 220 KiB/s to arrive in time
DEADLINE = 300.0
#: bytes read from the response at a time (the body is never asked for at once)
_CHUNK = 1 << 20
#: how often the watchdog looks again for a socket opened after the deadline
_RECHECK = 0.05
_LOCAL_HOSTS = {"localhost"}


class OfflineError(InputError):
    """A download was needed while offline, or the server could not be reached."""


class DeadlineError(OfflineError):
    """A download (or a command's downloads) ran past its deadline: a server that sends
    too slowly is treated as one that cannot be reached."""


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


class _Watchdog:
    """Ends a download at its deadline: a thread that, once ``seconds`` have passed,
    shuts down the socket of every connection the download opened (and of any opened
    later, until the download is over), so that whatever read is waiting returns at
    once. ``expired`` tells the download why its read failed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._done = threading.Event()
        self._connections: list[http.client.HTTPConnection] = []
        #: each connection's socket once connected: urllib lets go of the connection's
        #: ``sock`` as soon as the headers are in, and the body is read through it still
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._watch, name="probebench-deadline",
                                        daemon=True)

    def wrap(self, http_class: Callable[..., http.client.HTTPConnection]
             ) -> Callable[..., http.client.HTTPConnection]:
        """A connection factory for ``urllib``'s ``do_open`` that remembers each
        connection."""
        def make(host: str, **kwargs: Any) -> http.client.HTTPConnection:
            connection = http_class(host, **kwargs)
            connect = connection.connect

            def connect_and_keep() -> None:
                connect()
                if connection.sock is not None:
                    self._sockets.append(connection.sock)

            connection.connect = connect_and_keep  # type: ignore[method-assign]
            self._connections.append(connection)
            return connection
        return make

    def _watch(self) -> None:
        if self._done.wait(self.seconds):
            return
        self.expired = True
        while True:  # until the download gives up: a socket may appear after the deadline
            # a connection's own socket while it connects (TLS included), then the kept one
            live = [c.sock for c in list(self._connections) if c.sock is not None]
            for sock in [*live, *list(self._sockets)]:
                # not connected yet, or closed already: nothing to end
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            if self._done.wait(_RECHECK):
                return

    def __enter__(self) -> _Watchdog:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()


class _WatchedHTTP(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self.watchdog = watchdog

    def do_open(self, http_class: Any, req: urllib.request.Request,
                **http_conn_args: Any) -> http.client.HTTPResponse:
        return super().do_open(self.watchdog.wrap(http_class), req, **http_conn_args)


class _WatchedHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self.watchdog = watchdog

    def do_open(self, http_class: Any, req: urllib.request.Request,
                **http_conn_args: Any) -> http.client.HTTPResponse:
        return super().do_open(self.watchdog.wrap(http_class), req, **http_conn_args)


def _read_body(response: http.client.HTTPResponse, max_bytes: int) -> bytes:
    """At most ``max_bytes + 1`` bytes of the body, a chunk at a time (so that a large
    limit never asks for its whole size at once)."""
    data = bytearray()
    while len(data) <= max_bytes:
        piece = response.read(min(_CHUNK, max_bytes + 1 - len(data)))
        if not piece:
            break
        data += piece
    return bytes(data)


def fetch(url: str, *, max_bytes: int, what: str = "file", timeout: float = TIMEOUT,
          deadline: float | None = None) -> Download:
    """The body of ``url``, at most ``max_bytes`` (a larger declared length is refused
    before the body is read; a body that runs past it is cut off and refused).

    ``timeout`` bounds each connection and read; ``deadline`` (seconds, default
    ``DEADLINE``) the whole download: past it the download ends with a
    ``DeadlineError``, whatever the server still sends."""
    check_url(url, what)
    if offline():
        raise OfflineError(f"{url}: offline ({OFFLINE_ENV} or HF_HUB_OFFLINE is set), so "
                           f"the {what} is not downloaded")
    seconds = DEADLINE if deadline is None else deadline
    if seconds <= 0:
        raise DeadlineError(f"{url}: no time is left to download the {what} (its "
                            "deadline has passed); refused")
    watchdog = _Watchdog(seconds)
    opener = urllib.request.build_opener(_SameOrigin, _WatchedHTTP(watchdog),
                                         _WatchedHTTPS(watchdog))
    request = urllib.request.Request(url, headers={"User-Agent": "probebench",
                                                   "Accept-Encoding": "identity"})
    started = time.monotonic()
    try:
        with watchdog, opener.open(request, timeout=min(timeout, seconds)) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > max_bytes:
                raise InputError(f"{url}: the {what} is {int(length)} bytes; at most "
                                 f"{max_bytes} are read (refused before the download)")
            data = _read_body(response, max_bytes)
            if watchdog.expired:  # a read cut short at the deadline can look like the end
                raise DeadlineError("")
    except urllib.error.HTTPError as exc:
        raise InputError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError,
            DeadlineError) as exc:
        if watchdog.expired:
            raise DeadlineError(
                f"{url}: the {what} did not arrive within its deadline of {seconds:g} s "
                f"(the whole download, headers and body; stopped after "
                f"{time.monotonic() - started:.1f} s); refused") from None
        if isinstance(exc, http.client.HTTPException | ValueError) and \
                not isinstance(exc, ConnectionError):
            # a malformed status line, header or chunk: http.client's own errors
            raise InputError(f"{url}: not a usable HTTP response ({type(exc).__name__}: "
                             f"{str(exc)[:120]!r}); refused") from None
        reason = getattr(exc, "reason", exc)
        raise OfflineError(f"{url}: cannot reach the server ({reason})") from None
    if len(data) > max_bytes:
        raise InputError(f"{url}: the {what} is over {max_bytes} bytes; refused")
    if length is not None and length.isdigit() and len(data) != int(length):
        raise InputError(f"{url}: the {what} was cut short: {len(data)} of the "
                         f"{int(length)} bytes its Content-Length declares; refused")
    return Download(url, data)


__all__ = ["DEADLINE", "OFFLINE_ENV", "TIMEOUT", "DeadlineError", "Download", "OfflineError",
           "check_url", "fetch", "is_local_host", "offline"]
