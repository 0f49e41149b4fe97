"""A request body as a sequence of byte chunks with a known length: ``RequestBody``.

A long conversation's request is megabytes of JSON. Encoded as one string and then one
``bytes`` object, every request makes two allocations of that size; glibc serves them from
``mmap`` at first, then raises its threshold after the big free and serves the next one from
the heap, which it cannot give back once fragmented — the resident size saw-tooths upward over
a session. Here the body is encoded a message (a tool declaration) at a time and gathered into
chunks of about ``CHUNK_BYTES``, so no allocation is much larger than the largest single
message. The bytes are exactly those of ``json.dumps(body, ensure_ascii=False,
separators=(",", ":"), allow_nan=False).encode()`` (what httpx2's ``json=`` sends): JSON of an
object is the JSON of its keys and values joined by ``,`` and ``:``, so encoding the parts
one by one changes nothing on the wire. Sent with ``Content-Length`` (never chunked transfer
encoding, which some servers refuse for request bodies).

Pure; imports only the standard library.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterator, Mapping

__all__ = ["CHUNK_BYTES", "RequestBody", "encode_body"]

CHUNK_BYTES = 64 * 1024
"""Small parts are gathered up to about this size (characters) before being encoded: few
``send`` calls, and each allocation well below glibc's initial mmap threshold (128 KiB)."""

_SPLIT_KEYS = frozenset({"messages", "tools"})
"""Top-level list fields encoded element by element (the rest are small)."""

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class RequestBody:
    """The encoded body: ``chunks`` (bytes, in order) and their total ``length``.

    Iterating yields the chunks (httpx2 sends them in turn, with the ``Content-Length`` the
    caller sets from ``length``); it can be iterated again for a re-send. ``joined`` and
    ``digest`` give the whole body or its SHA-256 (tests, equality).
    """

    __slots__ = ("__weakref__", "chunks", "length")  # weakref: tests check a sent body is let go

    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self.chunks = chunks
        self.length = sum(map(len, chunks))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.chunks)

    def joined(self) -> bytes:
        """The whole body as one bytes object (one allocation of ``length``: tests, small bodies)."""
        return b"".join(self.chunks)

    def digest(self) -> str:
        """SHA-256 of the body (hex), without joining the chunks."""
        sha = hashlib.sha256()
        for chunk in self.chunks:
            sha.update(chunk)
        return sha.hexdigest()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RequestBody):
            return self.length == other.length and self.digest() == other.digest()
        if isinstance(other, (bytes, bytearray)):
            return self.length == len(other) and self.joined() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RequestBody({len(self.chunks)} chunks, {self.length} bytes)"


def encode_body(body: Mapping[str, Any], chunk_bytes: int = CHUNK_BYTES) -> RequestBody:
    """``body`` as JSON in chunks (see the module doc). Raises ``UnicodeEncodeError`` for a
    lone surrogate (like ``json=`` did: the caller replaces them and encodes again) and
    ``ValueError`` for NaN or infinity."""
    out = _Chunks(chunk_bytes)
    out.add("{")
    for i, (key, value) in enumerate(body.items()):
        out.add(("," if i else "") + _encoder.encode(key) + ":")
        if key in _SPLIT_KEYS and isinstance(value, list):
            out.add("[")
            for j, item in enumerate(value):
                if j:
                    out.add(",")
                out.add(_encoder.encode(item))
            out.add("]")
        else:
            out.add(_encoder.encode(value))
    out.add("}")
    return RequestBody(out.finish())


class _Chunks:
    """Gathers encoded text into bytes chunks of about ``size`` characters."""

    __slots__ = ("_chunks", "_pending", "_pending_len", "_size")

    def __init__(self, size: int) -> None:
        self._size = max(1, size)
        self._chunks: list[bytes] = []
        self._pending: list[str] = []
        self._pending_len = 0

    def add(self, text: str) -> None:
        if len(text) >= self._size:  # a big part is its own chunk (no copy into a bigger one)
            self._flush()
            self._chunks.append(text.encode("utf-8"))
            return
        self._pending.append(text)
        self._pending_len += len(text)
        if self._pending_len >= self._size:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._chunks.append("".join(self._pending).encode("utf-8"))
            self._pending.clear()
            self._pending_len = 0

    def finish(self) -> tuple[bytes, ...]:
        self._flush()
        return tuple(self._chunks)
