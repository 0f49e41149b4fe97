"""The httpx transport: every request that minicode's own client does not carry.

Used when the endpoint is not plain (``provider/plain_http.py``: a proxy from the environment,
an unusual URL or key, extra content codings installed, ``MINICODE_HTTP=httpx``), when the
caller passes its own ``httpx.Client`` (tests: respx and mock transports) or does not pass
the environment. httpx's sync client runs on the exchange's thread (``provider/exchange.py``);
its connection pool keeps connections alive. Its errors are translated at this seam into the
transport's (``NetworkError`` and kin, ``BadEndpoint``), with the same message and the httpx
error as the cause. The only module that imports httpx (tests/test_architecture.py).
"""

from __future__ import annotations

import re
import socket
import ssl
from typing import Any, Iterable, Iterator, Mapping

import httpx

from minicode.errors import ConfigError
from minicode.provider import content_coding
from minicode.provider.plain_http import extra_codings_installed
from minicode.provider.early_http import READ_TIMEOUT, WRITE_TIMEOUT
from minicode.provider.http_connect import CONNECT_TIMEOUT
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
    from minicode.provider.early import EarlyRequest

__all__ = ["DEFAULT_TIMEOUT", "HttpxTransport", "make_client"]

DEFAULT_TIMEOUT = httpx.Timeout(connect=CONNECT_TIMEOUT, read=READ_TIMEOUT, write=WRITE_TIMEOUT, pool=CONNECT_TIMEOUT)
"""``read`` bounds the silence between two chunks: thinking models may pause for minutes."""
_PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")


def make_client(tls: ssl.SSLContext | None, env: Mapping[str, str]) -> httpx.Client:
    """The HTTP client (proxies from the environment, as httpx reads them); a proxy it cannot
    use is a ConfigError naming the variables, never their values (they may hold a password)."""
    try:
        return httpx.Client(timeout=DEFAULT_TIMEOUT, verify=tls if tls is not None else True)
    except (httpx.InvalidURL, ValueError, ImportError) as e:
        names = ", ".join(n for n in _PROXY_VARIABLES if env.get(n)) or "the proxy variables"
        why = ("socks proxies need the socksio package (pip install 'httpx[socks]')" if isinstance(e, ImportError)
               else re.sub(r"//[^/@\s]*@", "//…@", str(e)) or type(e).__name__)
        raise ConfigError(f"the proxy set in {names} cannot be used: {why}; fix or unset it") from e


class HttpxTransport:
    """Requests through ``client``, closed by ``close`` only when ``owns`` it."""

    def __init__(self, client: httpx.Client, *, owns: bool) -> None:
        self.client = client
        self._owns = owns

    def opener(self, method: str, url: str, headers: dict[str, str], body: Iterable[bytes] | None, *,
               early: EarlyRequest | None = None) -> Opener:
        if early is not None:
            early.close()  # sent by minicode's own client: this run's requests go through httpx
        try:
            request = self.client.build_request(method, url, content=body, headers=headers)
        except httpx.InvalidURL as e:
            raise BadEndpoint(str(e)) from e
        client = self.client

        def open_response(link: Link) -> Response:
            handshake = _Handshake(link)

            def trace(event: str, info: dict[str, Any]) -> None:
                # httpcore reports each new connection (and its TLS upgrade) with the stream it made.
                if event.endswith("connect_tcp.complete"):
                    handshake.connected(_claim(link, info.get("return_value")))
                elif event.endswith(("start_tls.complete", "start_tls.failed")):
                    handshake.over()
                    _claim(link, info.get("return_value"))

            request.extensions["trace"] = trace
            try:
                response = client.send(request, stream=True)
            except httpx.HTTPError as e:
                raise translated(e) from e
            finally:
                handshake.over()
            _claim(link, response.extensions.get("network_stream"))  # a reused keep-alive connection
            return _HttpxResponse(response)

        return open_response

    def close(self) -> None:
        if self._owns:
            self.client.close()  # only idle connections are left: closing them does not block


def _claim(link: Link, stream: Any) -> socket.socket | None:
    sock = stream.get_extra_info("socket") if stream is not None and hasattr(stream, "get_extra_info") else None
    if isinstance(sock, socket.socket):
        link.claim(sock)
        return sock
    return None


class _Handshake:
    """A copy of a new connection's TCP socket, claimed until TLS is set up over it.

    ``SSLContext.wrap_socket`` detaches the socket httpcore connected (its descriptor becomes
    −1), so shutting that one down reaches nothing and a stop during the handshake waited for
    the exchange's close timeout (2 s; the handshake itself for up to the connect timeout).
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
            copy.close()  # closed first: an abort now finds it closed, never the live connection
            self._link.release(copy)


class _HttpxResponse:
    """An ``httpx.Response`` as the exchange reads it (``transport.Response``)."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status_code = response.status_code
        self.reason_phrase = response.reason_phrase
        self.headers = Headers(response.headers.multi_items())

    def iter_bytes(self) -> Iterator[bytes]:
        coding = self._response.headers.get("content-encoding", "")
        try:
            if self._response.is_stream_consumed:  # a body given whole (mock transports): httpx's reading
                yield from self._response.iter_bytes()
            elif not _httpx_only(coding):
                yield from _bounded(self._response.iter_raw(), coding)
            else:  # br or zstd, and brotli or zstandard installed: httpx's decoders
                yield from self._response.iter_bytes()
        except httpx.HTTPError as e:
            raise translated(e) from e

    def close(self) -> None:
        self._response.close()


def _httpx_only(coding: str) -> bool:
    """Whether the body needs a decoder only httpx has (``br``/``zstd`` with their package
    installed). Otherwise ``provider/content_coding.py`` undoes gzip and deflate in bounded
    pieces (httpx's decoders inflate a read at once: a 7 KB ``gzip, gzip`` bomb became 4 GiB)
    and passes any other name through, as httpx does with a coding it cannot decode — so
    ``Content-Encoding: foo, gzip, gzip`` cannot steer the body to httpx's decoders."""
    names = {name.strip().lower() for name in coding.split(",")}
    return bool(names & {"br", "zstd"}) and extra_codings_installed()


def _bounded(raw: Iterator[bytes], coding: str) -> Iterator[bytes]:
    """The raw body undone as httpx would, piece by piece; a broken coding is httpx's
    ``DecodingError`` (the same message)."""
    decoding = content_coding.decoding(coding)
    if not decoding:
        yield from raw
        return
    try:
        for data in raw:
            yield from decoding.pieces(data)
        yield from decoding.end()
    except content_coding.BadCoding as e:
        raise translated(httpx.DecodingError(str(e))) from e


def translated(error: httpx.HTTPError) -> NetworkError | BadEndpoint:
    """The transport's error for an httpx error: the same message, a kind the adapter acts on."""
    if isinstance(error, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return BadEndpoint(str(error))
    kind = TimedOut if isinstance(error, httpx.TimeoutException) else (
        ConnectFailure if isinstance(error, httpx.ConnectError) else NetworkError)
    return kind(str(error), type(error).__name__)
