"""A response body's ``Content-Encoding`` undone in bounded pieces (``provider.http``).

gzip and deflate (httpx2's codings without brotli or zstandard) are undone here, never more than
``PIECE_BYTES`` of output per step: a compressed body is a bomb in a hostile server's hands
(a 7 KB answer with ``Content-Encoding: gzip, gzip`` is 4 GiB of zeros). Undone in one call, as
httpx2's decoders do, a single network read became gigabytes — memory exhausted, and no stop or
``--timeout`` seen until it was done. In pieces, the SSE decoder's 4 MiB event cap, the error
body's limit, the stop and the deadline all act after at most a piece per coding.

identity and codings it does not know are passed through as httpx2 does.
"""

from __future__ import annotations

import zlib
from typing import Iterator

__all__ = ["PIECE_BYTES", "BadCoding", "Decoding", "decoding"]

PIECE_BYTES = 256 * 1024
"""The most one step of one coding produces."""


class BadCoding(Exception):
    """The body is not what its coding says (zlib's message, as httpx2 reports it)."""


class _Zlib:
    def __init__(self, *, gzip: bool) -> None:
        self._gzip = gzip
        self._first = True
        self._object = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """``data`` undone, in pieces of at most ``PIECE_BYTES``."""
        while data:
            out = self._step(data)
            data = self._object.unconsumed_tail
            if out:
                yield out

    def end(self) -> Iterator[bytes]:
        try:
            while out := self._object.flush(PIECE_BYTES):
                yield out
                if len(out) < PIECE_BYTES:
                    return
        except zlib.error as e:
            raise BadCoding(str(e)) from e

    def _step(self, data: bytes) -> bytes:
        try:
            out = self._object.decompress(data, PIECE_BYTES)
        except zlib.error as e:
            if self._gzip or not self._first:
                raise BadCoding(str(e)) from e
            # deflate without the zlib header (httpx2 tries that too)
            self._object = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._object.decompress(data, PIECE_BYTES)
        self._first = False
        return out


class Decoding:
    """The chain of codings of one body, outermost first."""

    def __init__(self, chain: list[_Zlib]) -> None:
        self._chain = chain

    def __bool__(self) -> bool:
        return bool(self._chain)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """One raw read undone through every coding, piece by piece."""
        return self._through(0, data)

    def end(self) -> Iterator[bytes]:
        """What each coding still holds at the end of the body, undone by the codings inside it."""
        for index, coding in enumerate(self._chain):
            for piece in coding.end():
                yield from self._through(index + 1, piece)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._chain):
            if data:
                yield data
            return
        for piece in self._chain[index].pieces(data):
            yield from self._through(index + 1, piece)


def decoding(content_encoding: str) -> Decoding:
    """The codings named by the ``Content-Encoding`` values (comma-joined), applied last first."""
    names = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    chain: list[_Zlib] = []
    for name in reversed(names):
        if name in ("gzip", "x-gzip"):
            chain.append(_Zlib(gzip=True))
        elif name == "deflate":
            chain.append(_Zlib(gzip=False))
    return Decoding(chain)
