"""A minimal HTTP/1.1 client: the early first request and, for a plain endpoint, every request.

``http.client`` would cost ~40 ms to import (it loads the ``email`` package to parse headers);
this needs ``socket`` only (``ssl`` for https), which is why it exists. It does exactly what
httpx does for one request on a connection and nothing more: connect (``http_connect.py``: a
timeout, TLS with the given context, given up on a stop), send the head and the body, read
the status line and headers (informational 1xx skipped, as httpcore does), then the body as
httpx would hand it over: de-chunked (``Transfer-Encoding: chunked``), bounded by
``Content-Length``, or up to the close, and decoded for ``gzip``/``deflate`` (what httpx
offers without brotli or zstandard installed; other codings pass through, as in httpx).

``provider/socket_transport.py`` keeps a connection for the next request when the body was
read to its end (``BodyReader.complete``, nothing more buffered: ``leftover``) and the server
allows it (``ResponseHead.keep_alive``). Errors are this module's own (``HTTPFailure``;
``NoResponse`` when the connection ended before any byte of a response: on a reused connection
the request is sent again on a fresh one; ``http_connect.ConnectFailed`` when nothing was sent) or
``OSError``/``TimeoutError`` from the socket; the socket transport turns them into the
adapter's ``NetworkError``s. Standard library only.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from minicode.provider.content_coding import Decoding

__all__ = [
    "MAX_HEAD_BYTES",
    "READ_TIMEOUT",
    "WRITE_TIMEOUT",
    "BodyReader",
    "HTTPFailure",
    "NoResponse",
    "ResponseHead",
    "read_head",
]

READ_TIMEOUT = 300.0
"""The longest silence between two reads: thinking models may pause for minutes."""
WRITE_TIMEOUT = 60.0
MAX_HEAD_BYTES = 64 * 1024
"""A response head (status line and headers) larger than this is refused."""
_READ_SIZE = 64 * 1024
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
"""The bytes of a header name (RFC 9110 ``token``), as h11 checks them."""
_CONTROL = bytes(b for b in range(0x20) if b != 0x09) + b"\x7f"
"""Bytes no header value may hold (HTAB aside): h11 refuses them, and so does this client."""
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_MAX_CHUNK_SIZE_DIGITS = 20
_NO_BODY_STATUSES = (204, 304)


class HTTPFailure(Exception):
    """The server broke the protocol, or the connection ended where it must not; ``message``
    reads like httpx's for the same failure."""


class NoResponse(HTTPFailure):
    """The connection ended (closed or reset) before any byte of the response arrived."""


class ResponseHead:
    """The status line and the header fields (raw bytes, in order) of a response."""

    __slots__ = ("headers", "reason", "status", "version")

    def __init__(self, status: int, reason: bytes, headers: list[tuple[bytes, bytes]],
                 version: bytes = b"HTTP/1.1") -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.version = version

    def values(self, name: bytes) -> list[bytes]:
        return [v for k, v in self.headers if k.lower() == name]

    @property
    def keep_alive(self) -> bool:
        """Whether the server lets the connection carry another request (HTTP/1.1 without
        ``Connection: close``; HTTP/1.0 connections are not kept)."""
        tokens = b",".join(self.values(b"connection")).lower().split(b",")
        return self.version == b"HTTP/1.1" and b"close" not in (t.strip() for t in tokens)


class _Buffered:
    """A socket with a read buffer: lines for the head, blocks for the body."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.received = 0

    def fill(self) -> bool:
        """Read once more; False at the end of the stream."""
        data = self.sock.recv(_READ_SIZE)
        if not data:
            return False
        self.buffer += data
        self.received += len(data)
        return True

    def line(self, limit: int) -> bytes | None:
        """The next CRLF- (or LF-) terminated line without its end; None at a premature end."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line.removesuffix(b"\r")
            if len(self.buffer) > limit:
                raise HTTPFailure("response head too large")
            if not self.fill():
                return None

    def take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


def read_head(sock: socket.socket) -> tuple[ResponseHead, BodyReader]:
    """Read the response head (informational 1xx responses skipped) and return it with a
    reader of the body that follows. ``HTTPFailure`` when the server sent no valid head
    (``NoResponse`` when not a byte of it)."""
    stream = _Buffered(sock)
    try:
        head = _one_head(stream)
    except (HTTPFailure, ConnectionError) as e:
        if stream.received == 0:
            raise NoResponse(str(e) or type(e).__name__) from e
        raise
    while 100 <= head.status < 200 and head.status != 101:
        head = _one_head(stream)
    if head.status == 101:
        raise HTTPFailure("unexpected protocol switch (101)")
    return head, BodyReader(stream, head)


def _one_head(stream: _Buffered) -> ResponseHead:
    status_line = stream.line(MAX_HEAD_BYTES)
    if status_line is None:
        raise HTTPFailure("Server disconnected without sending a response.")
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise HTTPFailure("illegal status line: " + repr(status_line[:100]))
    headers: list[tuple[bytes, bytes]] = []
    size = len(status_line)
    while True:
        line = stream.line(MAX_HEAD_BYTES)
        if line is None:
            raise HTTPFailure("Server disconnected without sending a response.")
        if not line:
            break
        size += len(line)
        if size > MAX_HEAD_BYTES:
            raise HTTPFailure("response head too large")
        if line[:1] in (b" ", b"\t") and headers:  # obsolete line folding
            name, value = headers.pop()
            headers.append((name, value + b" " + line.strip()))
            continue
        name, colon, value = line.partition(b":")
        value = value.strip(b" \t")
        if not colon or not name or not _TOKEN.issuperset(name) or len(value.translate(None, _CONTROL)) != len(value):
            raise HTTPFailure("illegal header line: " + repr(line[:100]))
        headers.append((name, value))
    return ResponseHead(int(parts[1]), parts[2] if len(parts) > 2 else b"", headers, parts[0])


class BodyReader:
    """The response body as httpx's ``iter_bytes`` gives it: de-framed and decoded, one
    piece per network read (never an empty piece), ending at the body's end."""

    def __init__(self, stream: _Buffered, head: ResponseHead) -> None:
        self._stream = stream
        self._chunked = _chunked(head)
        length = _content_length(head)
        self._left: int | None = None if self._chunked else length  # Content-Length bytes still to come
        self._chunk_left = 0  # bytes of the current chunk still to come
        self._done = head.status in _NO_BODY_STATUSES
        self._trailer_bytes = 0
        self._fault: HTTPFailure | None = None  # met after data still to hand on
        self._received = 0
        self._decoding = _decoding(b",".join(head.values(b"content-encoding")))

    @property
    def complete(self) -> bool:
        """The whole body was read (the connection could carry another request)."""
        return self._done

    @property
    def framed(self) -> bool:
        """The body's end is known without the connection closing (chunked, sized, none)."""
        return self._chunked or self._left is not None or self._done

    @property
    def leftover(self) -> int:
        """Bytes buffered beyond what was read so far (after the end: more than the body)."""
        return len(self._stream.buffer)

    def __iter__(self) -> Iterator[bytes]:
        while not self._done:
            data = self._next_raw()
            if self._decoding is None:
                if data:
                    yield data
                continue
            from minicode.provider.content_coding import BadCoding

            try:  # in bounded pieces: a compressed bomb must not become gigabytes in one call
                yield from self._decoding.pieces(data)
                if self._done:
                    yield from self._decoding.end()
            except BadCoding as e:
                raise HTTPFailure(str(e)) from e

    def _next_raw(self) -> bytes:
        if self._chunked:
            return self._next_chunked()
        if self._left is not None:
            return self._next_sized()
        if not self._stream.buffer and not self._stream.fill():
            self._done = True  # no length: the body ends with the connection
            return b""
        data = self._stream.take(len(self._stream.buffer))
        return data

    def _next_sized(self) -> bytes:
        assert self._left is not None
        if self._left == 0:
            self._done = True
            return b""
        if not self._stream.buffer and not self._stream.fill():
            raise HTTPFailure(
                "peer closed connection without sending complete message body "
                f"(received {self._received} bytes, expected {self._received + self._left})"
            )
        data = self._stream.take(min(self._left, len(self._stream.buffer)))
        self._left -= len(data)
        self._received += len(data)
        if self._left == 0:
            self._done = True
        return data

    def _next_chunked(self) -> bytes:
        """The chunk data the buffer holds, reading from the network only when it holds none."""
        if self._fault is not None:
            raise self._fault
        out = bytearray()
        while not self._done:
            try:
                self._parse_buffer(out)
            except HTTPFailure as e:
                if not out:
                    raise
                # What came before the fault goes on first, as h11 hands over each event: its
                # [DONE] may end the answer, and the fault then only costs the connection.
                self._fault = e
                break
            if out or self._done:
                break
            self._fill_chunked()
        return bytes(out)

    def _parse_buffer(self, out: bytearray) -> None:
        while self._stream.buffer and not self._done:
            if self._chunk_left > 0:
                piece = self._stream.take(min(self._chunk_left, len(self._stream.buffer)))
                self._chunk_left -= len(piece)
                out += piece
                if self._chunk_left == 0:
                    self._chunk_left = -1  # its CRLF comes next
            elif not self._chunk_header():
                return  # a size line (or a chunk's CRLF) is not complete yet

    def _fill_chunked(self) -> None:
        if not self._stream.fill():
            raise HTTPFailure("peer closed connection without sending complete message body (incomplete chunked read)")

    def _chunk_header(self) -> bool:
        """Consume the CRLF after a chunk, or a size line (and the trailer after the last)."""
        if b"\n" not in self._stream.buffer:
            if len(self._stream.buffer) > MAX_HEAD_BYTES:
                raise HTTPFailure("chunk size line too long")
            return False
        line = self._stream.line(MAX_HEAD_BYTES)
        assert line is not None
        if self._chunk_left == -1:  # the end of the previous chunk's data
            if line:
                raise HTTPFailure("malformed chunked encoding: missing CRLF after a chunk")
            self._chunk_left = 0
            return True
        size_text = line.split(b";", 1)[0].rstrip(b" \t")
        if not size_text or len(size_text) > _MAX_CHUNK_SIZE_DIGITS or not _HEX.issuperset(size_text):
            raise HTTPFailure("illegal chunk header: " + repr(line[:40]))
        size = int(size_text, 16)
        if size > 0:
            self._chunk_left = size
            return True
        while True:  # the last chunk: skip the trailer fields up to the empty line
            trailer = self._stream.line(MAX_HEAD_BYTES)
            if trailer is None:
                raise HTTPFailure("peer closed connection without sending complete message body "
                                  "(incomplete chunked read)")
            if not trailer:
                break
            self._trailer_bytes += len(trailer)
            if self._trailer_bytes > MAX_HEAD_BYTES:  # bounded like the head (h11 does the same)
                raise HTTPFailure("chunked trailer too large")
        self._done = True
        return True


def _chunked(head: ResponseHead) -> bool:
    """Whether the body is chunked. Like h11: ``chunked`` is the only transfer coding, said once."""
    codings = head.values(b"transfer-encoding")
    if not codings:
        return False
    if len(codings) > 1:
        raise HTTPFailure("multiple Transfer-Encoding headers")
    if codings[0].strip().lower() != b"chunked":
        raise HTTPFailure("Only Transfer-Encoding: chunked is supported")
    return True


def _content_length(head: ResponseHead) -> int | None:
    """The Content-Length, if any: digits only; repeated (as fields or a list) only when every
    value is the same (h11's rule: differing lengths are how responses get smuggled)."""
    values = {v.strip() for field in head.values(b"content-length") for v in field.split(b",")}
    if not values:
        return None
    if len(values) > 1:
        raise HTTPFailure("conflicting Content-Length headers")
    value = values.pop()
    if not value or not _DIGITS.issuperset(value):
        raise HTTPFailure("bad Content-Length")
    return int(value)


def _decoding(coding: bytes) -> Decoding | None:
    """The body's content codings (``provider/content_coding.py``, loaded only for a coded body),
    or None when there are none to undo."""
    if not coding.strip():
        return None
    from minicode.provider.content_coding import decoding

    found = decoding(coding.decode("latin-1"))
    return found if found else None
