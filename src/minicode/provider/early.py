"""The early first request: sent on a thread at start-up, adopted later only if identical.

A one-shot or pipe run knows its first request as soon as the arguments, the configuration
and the first task are known (``cli/early_start.py`` builds it with the adapter's own code).
Importing asyncio, httpx, the agent loop and the session takes longer than most of what comes
after, so the request goes out first (``EarlyRequest.start``: a daemon thread, the
``early_http`` client) and the server thinks while the rest loads. The adapter's first send
``take``s it and adopts it only when the request it built is the same on the wire — scheme,
host, port, target, every header and every body byte (``matches``); otherwise it is
``close``d and the normal request goes out (``provider/adopted.py``).

At most one is pending per process (``offer``/``take``); an early request nobody adopts is
closed with the process. The API key is in ``Wire.headers`` only: ``Wire`` has no repr of them.
Standard library only; no asyncio, no httpx.
"""

from __future__ import annotations

import socket
import sys
import threading

from minicode.provider.early_http import (
    WRITE_TIMEOUT,
    READ_TIMEOUT,
    BodyReader,
    ResponseHead,
    read_head,
)
from minicode.provider.http_connect import ConnectFailed, connect
from minicode.provider.sockets import shut_down

_Socket = socket.socket  # the class's ``socket`` property hides the module inside it

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl

__all__ = ["HEAD_START_SECONDS", "SHORT_SWITCH_SECONDS", "EarlyRequest", "Wire", "offer", "take"]

HEAD_START_SECONDS = 0.002
"""How long ``start`` waits for the request to be written before the caller goes on."""
SHORT_SWITCH_SECONDS = 0.0005
"""The GIL switch interval while the request is not yet written (Python's default: 5 ms)."""


class Wire:
    """One request as it goes on the wire: where to (``host`` without IPv6 brackets), the
    target, the header fields in order (raw bytes) and the body."""

    __slots__ = ("body", "headers", "host", "port", "scheme", "target")

    def __init__(self, scheme: str, host: str, port: int, target: str,
                 headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
        self.headers = headers
        self.body = body

    def same(self, other: Wire) -> bool:
        return (self.scheme, self.host, self.port, self.target, self.headers, self.body) == (
            other.scheme, other.host, other.port, other.target, other.headers, other.body)

    def head_bytes(self) -> bytes:
        lines = [b"POST " + self.target.encode("ascii") + b" HTTP/1.1"]
        lines.extend(name + b": " + value for name, value in self.headers)
        return b"\r\n".join(lines) + b"\r\n\r\n"

    def __repr__(self) -> str:  # never the headers: one of them holds the API key
        return f"Wire({self.scheme}://{self.host}:{self.port}{self.target}, {len(self.body)} body bytes)"


class EarlyRequest:
    """One request sent on a daemon thread; ``outcome`` waits for its response head."""

    def __init__(self, wire: Wire, tls: ssl.SSLContext | None = None) -> None:
        self.wire = wire
        self._tls = tls
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._out = threading.Event()  # written, or failed before
        self._interval = 0.005
        self._sock: socket.socket | None = None
        self._aborted = False
        self.sent = False
        """Some of the request went out (a failure after this may have reached the server)."""
        self.written = False
        """All of it went out: a timeout now is a read timeout."""
        self.head: ResponseHead | None = None
        self.body: BodyReader | None = None
        self.error: BaseException | None = None
        """Why there is no head: ``ConnectFailed`` (nothing sent), or a failure after sending."""
        self._thread = threading.Thread(target=self._run, name="minicode-early", daemon=True)

    def start(self) -> None:
        """Send on the daemon thread. The main thread goes on importing, and a thread waits
        for the GIL up to the switch interval (5 ms) at each of its steps (connect, send): until
        the request is out the interval is short, and the caller gives it a moment
        (``HEAD_START_SECONDS``) — on loopback that is all it takes to be sent."""
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._interval, SHORT_SWITCH_SECONDS))
        self._thread.start()
        self._out.wait(HEAD_START_SECONDS)

    def matches(self, wire: Wire) -> bool:
        return self.wire.same(wire)

    def outcome(self, timeout: float | None = None) -> bool:
        """Wait for the response head or the failure; False if ``timeout`` passed first."""
        return self._done.wait(timeout)

    @property
    def socket(self) -> socket.socket | None:
        with self._lock:
            return self._sock

    def abort(self) -> None:
        """Shut the connection down at once (a blocked read wakes); safe from any thread."""
        with self._lock:
            self._aborted = True
            sock = self._sock
        if sock is not None:
            shut_down(sock)

    def stopped(self) -> bool:
        """``http_connect.Watch``: connecting gives up once aborted."""
        with self._lock:
            return self._aborted

    def claim(self, sock: _Socket) -> None:
        """``http_connect.Watch``: the socket of a TLS handshake under way, shut down by ``abort``."""
        with self._lock:
            self._sock = sock
            aborted = self._aborted
        if aborted:
            shut_down(sock)

    def close(self) -> None:
        """Abort and release the socket."""
        self.abort()
        with self._lock:
            sock = self._sock
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def _run(self) -> None:
        try:
            host, port = self.wire.host, self.wire.port
            sock = connect(host, port, self._tls, host, link=self)
            with self._lock:
                aborted = self._aborted
                if not aborted:
                    self._sock = sock
            if aborted:  # closed while connecting: nobody else will close this socket
                sock.close()
                raise ConnectFailed(OSError("aborted"))
            sock.settimeout(WRITE_TIMEOUT)
            self.sent = True
            sock.sendall(self.wire.head_bytes())
            sock.sendall(self.wire.body)
            self.written = True
            self._request_out()
            sock.settimeout(READ_TIMEOUT)
            self.head, self.body = read_head(sock)
        except BaseException as e:  # the top of the thread: the adopter decides what it means
            self.error = e
        finally:
            self._request_out()
            self._done.set()

    def _request_out(self) -> None:
        if not self._out.is_set():
            self._out.set()
            sys.setswitchinterval(self._interval)


_pending: EarlyRequest | None = None
_slot_lock = threading.Lock()


def offer(early: EarlyRequest) -> None:
    """Make ``early`` the request the adapter's first send may adopt (replacing none)."""
    global _pending
    with _slot_lock:
        previous, _pending = _pending, early
    if previous is not None:
        previous.close()


def take() -> EarlyRequest | None:
    """The pending early request, once (the caller adopts or closes it)."""
    global _pending
    with _slot_lock:
        early, _pending = _pending, None
    return early
