"""minicode's own transport: a plain endpoint's requests over ``early_http``, kept alive.

For a plain endpoint (``provider/plain_http.py``) every request of the run — the early first
one adopted, then each later one — goes over minicode's small HTTP/1.1 client on the
exchange's thread: no httpx, httpcore or h11 to import, none of their objects per request.
What goes on the wire is what httpx would send (``Host``, httpx's default fields and
``User-Agent``, minicode's own, the length; ``tests/provider/test_socket_transport.py``
compares them).

Connections: a response read to its end on a connection the server keeps alive
(``ResponseHead.keep_alive``, a framed body, nothing buffered beyond it) gives the connection
back to the pool; the next request takes it after checking that it is still open (a closed
one is readable: it is dropped) and idle for at most ``KEEPALIVE_EXPIRY_SECONDS``. A request that fails on a reused connection before any byte
of the response (the server closed it meanwhile) is sent once more on a fresh connection, as
httpcore does. Everything else fails as ``NetworkError`` with httpx's wording for the same
failure; the adapter retries it. TLS (https) uses the provider's context with ALPN
``http/1.1``; cookies are not kept (as curl or fetch without a jar).
"""

from __future__ import annotations

import select
import socket
import threading
import time
from typing import Callable, Iterable, Iterator, Protocol

from minicode.provider.early_http import (
    READ_TIMEOUT,
    WRITE_TIMEOUT,
    BodyReader,
    HTTPFailure,
    NoResponse,
    ResponseHead,
    read_head,
)
from minicode.provider.http_connect import ConnectFailed, Watch, connect
from minicode.provider.plain_http import Endpoint, client_headers, endpoint
from minicode.provider.transport import (
    BadEndpoint,
    ConnectFailure,
    Headers,
    Link,
    NetworkError,
    Opener,
    Response,
    TimedOut,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ssl

    from minicode.provider.early import EarlyRequest

__all__ = ["KEEPALIVE_EXPIRY_SECONDS", "MAX_IDLE_CONNECTIONS", "SocketTransport"]

MAX_IDLE_CONNECTIONS = 4
"""Idle keep-alive connections kept for later requests (one is normal: requests come in turn)."""
KEEPALIVE_EXPIRY_SECONDS = 5.0
"""An idle connection older than this is not reused (httpcore's default): a connection a NAT or
a server dropped without a word would swallow the request until the read timeout."""
_ONE_SEGMENT_BYTES = 64 * 1024
"""A body up to this size goes out in the same ``send`` as the head."""
_EARLY_POLL_SECONDS = 0.02
"""While the early request still connects (no socket to shut down yet), how often an abort is
looked for."""


class Dial(Protocol):
    def __call__(self, host: str, port: int, tls: ssl.SSLContext | None, server_name: str, *,
                 link: Watch | None = None) -> socket.socket:
        """A connected socket, or ``ConnectFailed``; ``link``'s stop ends the attempt."""
        ...


class SocketTransport:
    """The requests to ``point`` (scheme, host, port), over ``tls`` when https. ``dial``
    makes a connection (``http_connect.connect``; tests dial a loopback server instead)."""

    def __init__(self, point: Endpoint, tls: ssl.SSLContext | None, user_agent: str, *,
                 dial: Dial | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._point = point
        self._tls = tls if point.scheme == "https" else None
        self._user_agent = user_agent
        self._dial = dial or connect
        self._clock = clock
        self._idle: list[tuple[socket.socket, float]] = []  # and since when
        self._lock = threading.Lock()
        self._closed = False

    def opener(self, method: str, url: str, headers: dict[str, str], body: Iterable[bytes] | None, *,
               early: EarlyRequest | None = None) -> Opener:
        target = endpoint(url)
        if target is None or (target.scheme, target.host, target.port) != (
                self._point.scheme, self._point.host, self._point.port):
            raise BadEndpoint(f"not a plain URL of {self._point!r}")  # the adapter builds only those
        fields = [(b"Host", target.netloc.encode("ascii"))]
        fields += [(k.encode("ascii"), v.encode("ascii")) for k, v in client_headers(headers, self._user_agent)]
        chunks = list(body) if body is not None else []
        if early is not None and not self._same_as(early, target, fields, chunks, method):
            early.close()
            early = None
        head = method.encode("ascii") + b" " + target.path.encode("ascii") + b" HTTP/1.1\r\n"
        head += b"".join(name + b": " + value + b"\r\n" for name, value in fields) + b"\r\n"
        adopted = early

        def open_response(link: Link) -> Response:
            if adopted is not None:
                response = self._adopt(adopted, link)
                if response is not None:
                    return response
            return self._send(link, head, chunks)

        return open_response

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for sock, _ in idle:
            _close(sock)

    # --- sending ------------------------------------------------------------------------

    def _send(self, link: Link, head: bytes, chunks: list[bytes]) -> Response:
        """Send on an idle connection or a new one; once more on a new one when a reused
        connection turned out closed before any byte of the response."""
        fresh = False  # after a reused connection failed: a new one, not another idle one
        while True:
            sock = None if fresh else self._take_idle()
            reused = sock is not None
            if sock is None:
                sock = self._connect(link)
            link.claim(sock)
            written = False
            try:
                write_error = _write_or_error(sock, head, chunks)
                written = write_error is None
                sock.settimeout(READ_TIMEOUT)
                try:
                    response_head, reader = read_head(sock)
                except (HTTPFailure, OSError):
                    if write_error is not None:
                        raise write_error from None
                    raise
            except (HTTPFailure, OSError) as e:
                _close(sock)
                if reused and _never_answered(e, written) and not link.stopped():
                    fresh = True
                    continue  # the server closed the idle connection meanwhile: a fresh one
                raise _translated(e, written=written) from e
            return SocketResponse(self, link, sock, response_head, reader, reusable=written)

    def _connect(self, link: Link) -> socket.socket:
        point = self._point
        try:
            return self._dial(point.host, point.port, self._tls, point.host, link=link)
        except ConnectFailed as e:
            cause = e.cause
            if isinstance(cause, TimeoutError):
                raise TimedOut("timed out", "ConnectTimeout") from cause
            raise ConnectFailure(str(cause) or type(cause).__name__, "ConnectError") from cause

    def _take_idle(self) -> socket.socket | None:
        while True:
            with self._lock:
                if not self._idle:
                    return None
                sock, since = self._idle.pop()
            if self._clock() - since <= KEEPALIVE_EXPIRY_SECONDS and _still_open(sock):
                return sock
            _close(sock)

    def keep(self, sock: socket.socket) -> None:
        """A connection whose response was read to its end: kept for the next request."""
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append((sock, self._clock()))
                return
        _close(sock)

    # --- the early first request ------------------------------------------------------------

    @staticmethod
    def _same_as(early: EarlyRequest, target: Endpoint, fields: list[tuple[bytes, bytes]], chunks: list[bytes],
                 method: str) -> bool:
        from minicode.provider.early import Wire

        wire = Wire(target.scheme, target.host, target.port, target.path, fields, b"".join(chunks))
        return method == "POST" and early.matches(wire)

    def _adopt(self, early: EarlyRequest, link: Link) -> Response | None:
        """The early request's response; None when it never left (send normally instead);
        its failure after it was sent as this attempt's (the adapter retries it)."""
        claimed = False
        while not early.outcome(None if claimed else _EARLY_POLL_SECONDS):
            sock = early.socket
            if sock is not None and not claimed:
                link.claim(sock)  # an abort now shuts it down, which ends the wait
                claimed = True
            elif link.stopped():
                early.abort()
        sock = early.socket
        if early.head is not None and early.body is not None and sock is not None:
            if not claimed:
                link.claim(sock)
            return SocketResponse(self, link, sock, early.head, early.body)
        error = early.error
        early.close()
        if link.stopped():
            raise NetworkError("aborted")  # not reported: the exchange was stopped
        if isinstance(error, ConnectFailed) or not early.sent:
            return None
        raise _translated(error, written=early.written) from error


class SocketResponse:
    """A response read from ``sock`` (``transport.Response``). The connection goes back to
    the transport as soon as the body's last byte is read — before that last piece is handed
    on, so the request the consumer sends next finds it — when the server allows it; ``close``
    closes it otherwise."""

    def __init__(self, transport: SocketTransport, link: Link, sock: socket.socket, head: ResponseHead,
                 body: BodyReader, *, reusable: bool = True) -> None:
        self._transport = transport
        self._reusable = reusable  # False: the request was not all sent (the server answered early)
        self._link = link
        self._sock: socket.socket | None = sock
        self._head = head
        self._body = body
        self.status_code = head.status
        self.reason_phrase = head.reason.decode("ascii", "ignore")
        self.headers = Headers((_text(k), _text(v)) for k, v in head.headers)

    def iter_bytes(self) -> Iterator[bytes]:
        try:
            for piece in self._body:
                if self._body.complete:
                    self.close()
                yield piece
        except (HTTPFailure, OSError) as e:
            raise _translated(e, written=True) from e
        self.close()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        body = self._body
        if self._reusable and body.complete and body.framed and not body.leftover and self._head.keep_alive:
            self._link.release(sock)  # no longer the exchange's to shut down
            self._transport.keep(sock)
        else:
            _close(sock)


def _write_or_error(sock: socket.socket, head: bytes, chunks: list[bytes]) -> OSError | None:
    """Send the request; a failure to write (not a timeout) is returned, not raised: the server
    may have answered before reading it all and closed (a 413, a 401 for a large body), and its
    answer is read next, as httpcore does. None when all of it went out."""
    sock.settimeout(WRITE_TIMEOUT)
    try:
        _write(sock, head, chunks)
    except TimeoutError:
        raise
    except OSError as e:
        return e
    return None


def _write(sock: socket.socket, head: bytes, chunks: list[bytes]) -> None:
    if len(chunks) == 1 and len(chunks[0]) <= _ONE_SEGMENT_BYTES:
        sock.sendall(head + chunks[0])
        return
    sock.sendall(head)
    for chunk in chunks:
        sock.sendall(chunk)


def _never_answered(error: BaseException, written: bool) -> bool:
    """The request failed before any byte of a response: the connection ended before the
    response began, or broke while the request was being written."""
    return isinstance(error, NoResponse) or (not written and isinstance(error, ConnectionError))


def _still_open(sock: socket.socket) -> bool:
    """An idle connection has nothing to read: readable means closed by the server (or data
    nobody asked for), either way unusable."""
    try:
        if sock.fileno() < 0 or getattr(sock, "pending", lambda: 0)():  # TLS data already decrypted
            return False
        poller = select.poll()  # not select(): any descriptor number
        poller.register(sock, select.POLLIN)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


def _translated(error: BaseException | None, *, written: bool) -> NetworkError:
    """httpx's wording for the same failure (what the adapter shows and retries)."""
    if isinstance(error, TimeoutError):
        return TimedOut("timed out", "ReadTimeout" if written else "WriteTimeout")
    if isinstance(error, HTTPFailure):
        return NetworkError(str(error), "RemoteProtocolError")
    if isinstance(error, OSError):
        return NetworkError(str(error) or type(error).__name__, "ReadError" if written else "WriteError")
    return NetworkError(f"the request failed: {type(error).__name__}", "RemoteProtocolError")


def _text(raw: bytes) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def _close(sock: socket.socket) -> None:
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
