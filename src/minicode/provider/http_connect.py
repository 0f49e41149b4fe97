"""Connecting for minicode's own HTTP client: TCP (each address in turn), then TLS with the
given context (ALPN ``http/1.1``, server name checked). A stop ends the attempt: while the TCP
connection is made it is looked for every ``_CONNECT_POLL_SECONDS``, and the TLS handshake runs
on a socket claimed by whoever waits (a stop shuts it down). Standard library only.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import time
from typing import Callable, Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl

__all__ = ["CONNECT_TIMEOUT", "ConnectFailed", "Watch", "connect"]

CONNECT_TIMEOUT = 15.0
"""Seconds to connect (and finish the TLS handshake); the adapter's httpx timeouts are these."""
_CONNECT_POLL_SECONDS = 0.05
"""While connecting, how often a stop is looked for: a connection that gets no answer (a
filtered port, a full backlog) would otherwise hold a cancelled request for CONNECT_TIMEOUT."""


class ConnectFailed(Exception):
    """Connecting failed (DNS, refused, TLS handshake): nothing of the request was sent."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class Watch(Protocol):
    """Who a connection is made for (an exchange's ``transport.Link``, the early request)."""

    def stopped(self) -> bool: ...

    def claim(self, sock: socket.socket) -> None:
        """The socket: a stop shuts it down (at once if already stopped)."""


def connect(host: str, port: int, tls: ssl.SSLContext | None, server_name: str, *,
            link: Watch | None = None) -> socket.socket:
    """A connected socket (TLS-wrapped when ``tls``), or ``ConnectFailed``. With ``link`` (the
    exchange it is for) a stop ends the attempt within ``_CONNECT_POLL_SECONDS`` while the
    TCP connection is made, and at once during the TLS handshake (the socket is claimed for it:
    the stop shuts it down). Name resolution cannot be interrupted."""
    stopped = link.stopped if link is not None else _never
    try:
        sock = _connect_tcp(host, port, stopped)
    except OSError as e:
        raise ConnectFailed(e) from e
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            tls.set_alpn_protocols(["http/1.1"])
            sock = tls.wrap_socket(sock, server_hostname=server_name, do_handshake_on_connect=False)
            if link is not None:
                link.claim(sock)
            sock.do_handshake()
    except OSError as e:  # ssl.SSLError is an OSError
        sock.close()
        raise ConnectFailed(e) from e
    return sock


def _never() -> bool:
    return False


def _connect_tcp(host: str, port: int, stopped: Callable[[], bool]) -> socket.socket:
    """What ``socket.create_connection`` does (each address in turn, ``CONNECT_TIMEOUT`` for
    each), but looking for a stop while it waits. The socket comes back blocking, with
    ``CONNECT_TIMEOUT`` for what follows (the TLS handshake)."""
    error: OSError | None = None
    # An ASCII name goes as bytes: as a str, getaddrinfo runs it through the ``idna`` codec,
    # which loads encodings.idna, stringprep and unicodedata (~1.5 ms) to hand back the same bytes
    # (config.check_base_url has refused the names that codec would fail on).
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    for family, kind, proto, _, address in socket.getaddrinfo(name, port, 0, socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            _connect_within(sock, address, stopped)
        except OSError as e:
            sock.close()
            if isinstance(e, ConnectionAbortedError) and stopped():
                raise
            error = e
            continue
        sock.settimeout(CONNECT_TIMEOUT)
        return sock
    raise error if error is not None else OSError(f"no address found for {host}")


def _connect_within(sock: socket.socket, address: tuple[object, ...], stopped: Callable[[], bool]) -> None:
    sock.setblocking(False)
    code = sock.connect_ex(address)
    deadline = time.monotonic() + CONNECT_TIMEOUT
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    while code in (errno.EINPROGRESS, errno.EAGAIN):
        if stopped():
            raise ConnectionAbortedError("the request was stopped while connecting")
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        if poller.poll(min(left, _CONNECT_POLL_SECONDS) * 1000):
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if code:
        raise OSError(code, os.strerror(code))
