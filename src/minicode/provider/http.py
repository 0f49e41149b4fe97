"""The provider's HTTP client: one ``httpx2.Client`` per provider, driven from the exchange threads.

httpx2 is minicode's one HTTP stack (the MCP SDK's too): unlike httpx 0.2x, importing it loads no
command-line client (click, rich, pygments), so the pipe and one-shot modes stay without them.

``HttpClient`` owns the client (timeouts, the CA bundle of ``ca_bundle``, proxies as httpx2 reads
them from the environment, ``User-Agent: minicode/<version>``; connections kept alive between
requests) and the sockets it opened (``SocketRegistry``). ``opener`` gives what sends one request
on an exchange's thread (``provider/exchange.py``) and returns its ``Response``: the decoded body
a piece per network read. A stop must wake that thread at once, wherever it blocks, so the
opener tells the exchange each socket as soon as httpcore2 reports it (``Link.claim``): at
connect, through a copy for the TLS handshake, and for a reused connection with the response.

``paced_reads`` lets the reader thread wait before each network read of a body (not before each
piece httpx2 hands out: it yields a chunked body one HTTP chunk at a time, from what one read
brought in), so the chunks that arrive meanwhile wait in the kernel and come in one read.

Failures leave this module as ``NetworkError`` (and kin) with httpx2's message and the httpx2 error
as the cause, or ``ConfigError`` for what the configuration must fix (a proxy httpx2 cannot use,
a URL it cannot request). With ``server_window`` and ``ca_bundle`` the only provider modules that
import httpx2 (tests/test_architecture.py).
"""

from __future__ import annotations

import re
import socket
import ssl
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol

import httpx2

from minicode import __version__
from minicode.errors import ConfigError
from minicode.provider import ca_bundle, content_coding

__all__ = [
    "ACCEPT_ENCODING",
    "TIMEOUT",
    "USER_AGENT",
    "ConnectFailure",
    "HttpClient",
    "Link",
    "NetworkError",
    "Opener",
    "Response",
    "SocketRegistry",
    "TimedOut",
    "paced_reads",
    "shut_down",
]

TIMEOUT = httpx2.Timeout(connect=15.0, read=300.0, write=60.0, pool=15.0)
"""``read`` bounds the silence between two chunks: thinking models may pause for minutes."""
USER_AGENT = f"minicode/{__version__}"
ACCEPT_ENCODING = "gzip, deflate"
"""What ``content_coding`` undoes in bounded pieces. Not httpx2's default, which adds ``br`` and
``zstd`` when brotli or zstandard happen to be importable: their decoders inflate a whole read
at once, and what the server may send would depend on the packages installed."""
_PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")


class NetworkError(Exception):
    """The connection failed or broke; ``reason`` is the short why a retry notice shows."""

    reason = "network error"

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name or type(self).__name__
        """httpx2's error type name: what ``net_errors`` and the proxy lookup go by."""

    @property
    def detail(self) -> str:
        return str(self) or self.name


class ConnectFailure(NetworkError):
    reason = "cannot connect"


class TimedOut(NetworkError):
    reason = "timed out"


class Link(Protocol):
    """What an opener asks of the exchange it runs for (``Exchange`` is one)."""

    def claim(self, sock: socket.socket) -> None:
        """The connection's socket: a stop shuts it down (at once if already stopped)."""

    def release(self, sock: socket.socket) -> None:
        """The socket is the exchange's no more."""


class Response:
    """An ``httpx2.Response`` as the reader thread reads it: ``iter_bytes`` is the body with its
    ``Content-Encoding`` undone by ``content_coding`` — never more than 256 KiB a step, so a
    compressed bomb (7 KB of ``gzip, gzip`` for 4 GiB of zeros) ends at the 4 MiB event cap or
    the error body's limit, and a stop acts between steps; httpx2's own decoders inflate a whole
    read at once. Failures as ``NetworkError``."""

    def __init__(self, response: httpx2.Response, *, paced: bool = False) -> None:
        self._response = response
        self.status_code = response.status_code
        self.reason_phrase = response.reason_phrase
        self.headers = response.headers
        self.paced = paced
        """Its network reads run this thread's ``paced_reads`` hook (False: a body that does not
        come from a socket, as tests' mock transports give)."""

    def iter_bytes(self) -> Iterator[bytes]:
        try:
            if self._response.is_stream_consumed:  # a body given whole (tests' mock transports)
                yield from self._response.iter_bytes()
                return
            decoding = content_coding.decoding(self.headers.get("content-encoding", ""))
            raw = self._response.iter_raw()
            if not decoding:
                yield from raw
                return
            for data in raw:
                yield from decoding.pieces(data)
            yield from decoding.end()
        except content_coding.BadCoding as e:  # httpx2's verdict and wording for a broken coding
            raise _translated(httpx2.DecodingError(str(e))) from e
        except httpx2.HTTPError as e:
            raise _translated(e) from e

    def close(self) -> None:
        self._response.close()


Opener = Callable[[Link], Response]
"""Runs on the exchange's thread: sends the request and returns the response once its head is in."""


class HttpClient:
    """The httpx2 client of one provider (``client``: the caller's own — tests' mock
    transports — never closed here) and the sockets it opened.

    ``url`` is the endpoint every request goes to (or next to): one httpx2 cannot request is a
    ``ConfigError`` naming ``[model].base_url`` now, not a failure at the first request."""

    def __init__(self, url: str, env: Mapping[str, str], client: httpx2.Client | None = None) -> None:
        self._owns = client is None
        self.client = client if client is not None else _make_client(env, https=url.lower().startswith("https:"))
        self.sockets = SocketRegistry()
        try:
            parsed = self.client.build_request("GET", url).url
            usable = parsed.scheme in ("http", "https") and bool(parsed.host)  # ``host`` decodes xn--
        except (httpx2.InvalidURL, ValueError) as e:  # ValueError: idna's, for a broken encoded name
            self.close()
            raise ConfigError(f"[model].base_url cannot be requested: {e}; fix it in the configuration") from e
        if not usable:
            self.close()
            raise ConfigError("[model].base_url must be an http:// or https:// URL with a host")

    def opener(self, method: str, url: str, headers: Mapping[str, str], body: Iterable[bytes] | None) -> Opener:
        request = self.client.build_request(method, url, content=body, headers=headers)
        client = self.client

        def open_response(link: Link) -> Response:
            handshake = _Handshake(link)

            def trace(event: str, info: dict[str, Any]) -> None:
                # httpcore2 reports each new connection (and its TLS upgrade) with the stream it made.
                if event.endswith("connect_tcp.complete"):
                    handshake.connected(_claim(link, info.get("return_value")))
                elif event.endswith(("start_tls.complete", "start_tls.failed")):
                    handshake.over()
                    _claim(link, info.get("return_value"))

            request.extensions["trace"] = trace
            try:
                response = client.send(request, stream=True)
            except httpx2.HTTPError as e:
                raise _translated(e) from e
            finally:
                handshake.over()
            stream = response.extensions.get("network_stream")
            _claim(link, stream)  # a reused keep-alive connection
            return Response(response, paced=_pace(stream))

        return open_response

    def close(self) -> None:
        if self._owns:
            self.client.close()  # only idle connections are left: closing them does not block


_reads = threading.local()
"""``before``: what the reader thread runs before each network read of a body (``paced_reads``)."""
_paced_streams: weakref.WeakSet[Any] = weakref.WeakSet()


@contextmanager
def paced_reads(before: Callable[[], None]) -> Iterator[None]:
    """While in this block, this thread calls ``before`` (which may wait) before each read from
    the network of a response it reads (``Response.paced``) — once per read, however many chunks
    the read brings: when it is called, everything read so far has been handed out."""
    _reads.before = before
    try:
        yield
    finally:
        _reads.before = None


def _pace(stream: Any) -> bool:
    """Route the reads of ``stream`` (httpcore2's ``network_stream`` of the connection, kept for
    its next requests) through this thread's ``paced_reads`` hook, once per stream; False when
    there is no such stream."""
    if stream is None or not callable(getattr(stream, "read", None)):
        return False
    if stream in _paced_streams:
        return True
    read = stream.read

    def paced_read(max_bytes: int, timeout: float | None = None) -> bytes:
        before = getattr(_reads, "before", None)
        if before is not None:
            before()
        data: bytes = read(max_bytes, timeout)
        return data

    stream.read = paced_read
    _paced_streams.add(stream)
    return True


def _make_client(env: Mapping[str, str], *, https: bool) -> httpx2.Client:
    """The client: proxies from the environment as httpx2 reads them (one it cannot use is a
    ConfigError naming the variables, never their values: they may hold a password).

    The CA bundle is parsed (tens of milliseconds on the way to the first request) only for an
    https endpoint: for an http:// one the client's context verifies nothing it ever meets —
    redirects are not followed, and the TLS to an https proxy is httpcore2's own — so it gets a
    context that trusts no certificate, which would fail closed if it were ever used."""
    verify = ca_bundle.context(env) if https else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        return httpx2.Client(timeout=TIMEOUT, verify=verify,
                            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING})
    except (httpx2.InvalidURL, ValueError, ImportError) as e:
        names = ", ".join(n for n in _PROXY_VARIABLES if env.get(n)) or "the proxy variables"
        why = ("socks proxies need the socksio package (pip install 'httpx2[socks]')" if isinstance(e, ImportError)
               else re.sub(r"//[^/@\s]*@", "//…@", str(e)) or type(e).__name__)
        raise ConfigError(f"the proxy set in {names} cannot be used: {why}; fix or unset it") from e


def _translated(error: httpx2.HTTPError) -> NetworkError | ConfigError:
    """The error the adapter acts on for an httpx2 error: the same message, its kind."""
    if isinstance(error, (httpx2.UnsupportedProtocol, httpx2.InvalidURL)):
        return ConfigError(f"[model].base_url cannot be requested: {error}")
    kind = TimedOut if isinstance(error, httpx2.TimeoutException) else (
        ConnectFailure if isinstance(error, httpx2.ConnectError) else NetworkError)
    return kind(str(error), type(error).__name__)


def _claim(link: Link, stream: Any) -> socket.socket | None:
    sock = stream.get_extra_info("socket") if stream is not None and hasattr(stream, "get_extra_info") else None
    if isinstance(sock, socket.socket):
        link.claim(sock)
        return sock
    return None


class _Handshake:
    """A copy of a new connection's TCP socket, claimed until TLS is set up over it.

    ``SSLContext.wrap_socket`` detaches the socket httpcore2 connected (its descriptor becomes
    −1), so shutting that one down reaches nothing and a stop during the handshake waited for
    the exchange's close timeout (the handshake itself for up to the connect timeout).
    ``shutdown`` acts on the socket, not the descriptor: shutting down a ``dup`` wakes the
    handshake. The copy is closed once the handshake is over (or the request never got there)."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._copy: socket.socket | None = None

    def connected(self, sock: socket.socket | None) -> None:
        if sock is None or self._copy is not None:
            return
        try:
            self._copy = sock.dup()
        except OSError:
            return
        self._link.claim(self._copy)

    def over(self) -> None:
        copy, self._copy = self._copy, None
        if copy is not None:
            copy.close()  # closed first: a stop now finds it closed, never the live connection
            self._link.release(copy)


class SocketRegistry:
    """The sockets a provider's client has opened, and which exchange uses each one.

    An exchange stopped while a reused keep-alive connection waits for the response head cannot
    know which socket that is (httpcore2 reports it with the response); it is one of those no
    live exchange claims, so those are the ones shut down (they are idle or it, and an idle one
    is simply reopened)."""

    def __init__(self) -> None:
        self._owners: dict[socket.socket, object | None] = {}
        self._lock = threading.Lock()

    def claim(self, sock: socket.socket, owner: object) -> None:
        with self._lock:
            for known in [s for s in self._owners if s.fileno() == -1]:
                del self._owners[known]  # closed: forget it
            self._owners[sock] = owner

    def release(self, owner: object) -> None:
        with self._lock:
            for sock, current in self._owners.items():
                if current is owner:
                    self._owners[sock] = None

    def release_one(self, sock: socket.socket) -> None:
        with self._lock:
            if sock in self._owners:
                self._owners[sock] = None

    def shutdown_unclaimed(self) -> None:
        with self._lock:
            idle = [s for s, owner in self._owners.items() if owner is None]
        for sock in idle:
            shut_down(sock)


def shut_down(sock: socket.socket) -> None:
    """End the connection at once, waking a thread blocked reading or writing it."""
    # The plain socket method, also for an SSLSocket: its own shutdown() would detach the
    # TLS object under the reading thread; this only ends the connection, waking the read.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # already closed or never connected
        pass
