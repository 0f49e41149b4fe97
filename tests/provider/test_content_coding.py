"""A response's Content-Encoding is undone in bounded pieces: a hostile server's
compressed bomb (``Content-Encoding: gzip, gzip``: kilobytes that inflate to gigabytes) ends
at the 4 MiB event cap or the error body's limit with no more than a piece in memory, instead
of being inflated whole in one call; a broken coding reads as httpx2 says it, once."""

from __future__ import annotations

import gzip
import zlib
from typing import Callable

import pytest

from minicode.errors import APIError
from minicode.provider import stream_decoder
from minicode.provider.content_coding import PIECE_BYTES, BadCoding, decoding
from minicode.provider.openai import OpenAIProvider

from .helpers import REQUEST, chunk, sse
from .test_exchange import RawServer, provider_for  # noqa: F401  (the fixture)

SSE = sse(chunk({"content": "hello"}), chunk({}, finish="stop"))


def gzipped(blocks: int, block: bytes = b"\0" * (1 << 20)) -> bytes:
    """``blocks`` MiB of ``block`` gzipped, without holding them in memory."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return b"".join(packer.compress(block) for _ in range(blocks)) + packer.flush()


BOMB = gzip.compress(gzipped(64))  # 64 MiB of zeros in about a kilobyte: gzip, gzip


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def undo(coding: str, data: bytes, read: int = 1000) -> list[bytes]:
    chain = decoding(coding)
    pieces = [p for at in range(0, len(data), read) for p in chain.pieces(data[at:at + read])]
    return pieces + list(chain.end())


@pytest.mark.parametrize(("coding", "packed"), [
    ("gzip", gzip.compress(SSE * 500)),
    ("x-gzip", gzip.compress(SSE * 500)),
    ("deflate", zlib.compress(SSE * 500)),
    ("deflate", raw_deflate(SSE * 500)),  # deflate without the zlib header, as httpx2 also takes it
    ("gzip, gzip", gzip.compress(gzip.compress(SSE * 500))),
    ("deflate,gzip", gzip.compress(zlib.compress(SSE * 500))),
])
def test_codings_are_undone_across_reads(coding: str, packed: bytes) -> None:
    assert b"".join(undo(coding, packed)) == SSE * 500


@pytest.mark.parametrize("coding", ["", "identity", "br-unknown-here"])
def test_no_coding_or_an_unknown_one_passes_the_bytes_through(coding: str) -> None:
    chain = decoding(coding)
    assert not chain and list(chain.pieces(b"data")) == [b"data"]


def test_a_bomb_comes_out_in_bounded_pieces() -> None:
    chain = decoding("gzip, gzip")
    sizes = [len(p) for p in chain.pieces(BOMB)]  # the whole bomb in one read
    assert sum(sizes) == 64 << 20 and max(sizes) <= PIECE_BYTES


@pytest.mark.parametrize(("coding", "data"), [("gzip", b"not gzip at all"), ("gzip", gzip.compress(SSE)[:-8] + b"x" * 8)])
def test_a_broken_coding_is_zlibs_message(coding: str, data: bytes) -> None:
    with pytest.raises(BadCoding) as info:
        undo(coding, data)
    assert str(info.value).startswith("Error -3 while decompressing data:") or "CRC" in str(info.value)


def answer(body: bytes, *, status: bytes = b"200 OK", kind: bytes = b"text/event-stream",
           coding: bytes = b"gzip, gzip") -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\nContent-Type: " + kind + b"\r\nContent-Encoding: " + coding
            + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)


@pytest.mark.parametrize("coding", [b"gzip, gzip", b"br, gzip, gzip", b"foo, gzip, identity, gzip"])
async def test_a_bomb_ends_at_the_event_cap_a_piece_at_a_time(
        provider_for: Callable[[RawServer], OpenAIProvider], monkeypatch: pytest.MonkeyPatch, coding: bytes) -> None:
    """An unknown coding in front (``br`` without brotli installed) does not steer the body to
    httpx2's own decoders, which inflate a whole read at once."""
    fed: list[int] = []
    feed = stream_decoder.StreamDecoder.feed

    def recording(self: stream_decoder.StreamDecoder, data: bytes, out: list[object]) -> None:
        fed.append(len(data))
        feed(self, data, out)  # type: ignore[arg-type]

    monkeypatch.setattr(stream_decoder.StreamDecoder, "feed", recording)
    server = RawServer(lambda conn, index: answer(BOMB, coding=coding), close_after=True)
    with pytest.raises(APIError, match="server-sent event larger than 4 MiB"):
        async for _ in provider_for(server).stream(REQUEST):
            pass
    assert fed and max(fed) <= PIECE_BYTES  # httpx2's own decoders inflate 64 MiB at once


async def test_a_compressed_answer_still_reads_and_a_bomb_as_an_error_body_is_cut(
        provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: answer(gzip.compress(gzip.compress(SSE))), close_after=True)
    text = ""
    async for event in provider_for(server).stream(REQUEST):
        text += getattr(event, "text", "")
    assert text == "hello"
    bomb = RawServer(lambda conn, index: answer(BOMB, status=b"401 Unauthorized", kind=b"application/json"),
                     close_after=True)
    with pytest.raises(APIError) as info:
        await provider_for(bomb).chat(REQUEST)
    assert info.value.status == 401


async def test_a_broken_coding_is_said_once(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: answer(b"not gzip at all", coding=b"gzip"), close_after=True)
    with pytest.raises(APIError) as info:
        async for _ in provider_for(server).stream(REQUEST):
            pass
    assert "Error -3 while decompressing data: incorrect header check" in info.value.message
    assert info.value.message.count("Error -3") == 1


async def test_the_events_of_one_big_compressed_read_come_in_more_than_one_batch() -> None:
    """3,000 events gzipped into one small read inflate to ~2 pieces: the first piece's events
    go to the loop while the second is decoded, not all at the end of the read."""
    from minicode.provider.exchange import BATCH_EVENTS, Exchange
    from minicode.provider.http import HttpClient

    from .test_exchange import _stream_through

    body = sse(*(chunk({"content": f"{i} "}) for i in range(3000)))
    server = RawServer(lambda conn, index: answer(gzip.compress(body), coding=b"gzip"), close_after=True)
    url = server.base_url + "/chat/completions"
    http = HttpClient(url, {})
    text, batches = await _stream_through(Exchange(http.opener("POST", url, {}, None), stream=True,
                                                   sockets=http.sockets))
    http.close()
    server.close()
    assert text == "".join(f"{i} " for i in range(3000))
    assert len(batches) >= 2 and len(batches[0]) >= BATCH_EVENTS
