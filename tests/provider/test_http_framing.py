"""Hostile or broken response framing gets the same verdict over minicode's own HTTP client
as over httpx (h11's rules): what h11 refuses is refused — a sign or underscore in a
Content-Length, differing lengths, a control character in a header, a chunk size that is
not 1-20 hex digits, a transfer coding other than chunked — and what it accepts is read the
same. A refusal reads as the server breaking the protocol, not as an unreachable server."""

from __future__ import annotations

from typing import Callable

import pytest

from minicode.errors import APIError
from dataclasses import replace
from minicode.provider.openai import OpenAIProvider

from .helpers import REQUEST, Sleeps, chunk, sse
from .test_exchange import RawServer, provider_for  # noqa: F401  (the fixture)

JSON = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}'
SSE = sse(chunk({"content": "hello"}), chunk({}, finish="stop"))


def sized(headers: bytes, body: bytes = JSON) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + headers + b"\r\n" + body


def chunked(size_line: bytes, data: bytes = SSE, *, coding: bytes = b"chunked", trailer: bytes = b"") -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: " + coding + b"\r\n\r\n"
            + size_line + b"\r\n" + data + b"\r\n0\r\n" + trailer + b"\r\n")


REFUSED = {
    "plus sign in Content-Length": (sized(b"Content-Length: +%d\r\n" % len(JSON)), "bad Content-Length"),
    "underscore in Content-Length": (sized(b"Content-Length: 1_0\r\n"), "bad Content-Length"),
    "differing Content-Lengths": (sized(b"Content-Length: 5\r\nContent-Length: %d\r\n" % len(JSON)),
                                  "conflicting Content-Length"),
    "differing lengths in one field": (sized(b"Content-Length: 5, %d\r\n" % len(JSON)), "conflicting Content-Length"),
    "NUL in a header value": (sized(b"X-A: a\x00b\r\nContent-Length: %d\r\n" % len(JSON)), "illegal header line"),
    "space in a header name": (sized(b"X A: b\r\nContent-Length: %d\r\n" % len(JSON)), "illegal header line"),
    "0x chunk size": (chunked(b"0x%x" % len(SSE)), "illegal chunk header"),
    "96-bit chunk size": (chunked(b"f" * 24), "illegal chunk header"),
    "gzip transfer coding": (chunked(b"%x" % len(SSE), coding=b"gzip, chunked"), "Transfer-Encoding"),
}


@pytest.mark.parametrize("case", list(REFUSED))
async def test_malformed_framing_is_refused_on_both_clients(provider_for: Callable[[RawServer], OpenAIProvider],
                                                            case: str) -> None:
    answer, said = REFUSED[case]
    server = RawServer(lambda conn, index: answer, close_after=True)
    provider = provider_for(server)
    provider._max_retries, provider._sleep = 1, Sleeps()  # one retry, waited on no clock
    notices: list[str] = []
    request = replace(REQUEST, on_retry=lambda notice: notices.append(notice.reason))
    with pytest.raises(APIError) as info:
        if b"event-stream" in answer:
            async for _ in provider.stream(request):
                pass
        else:
            await provider.chat(request)
    assert said in info.value.message
    if "chunk" not in case:  # refused in the head: the server broke HTTP, it is not unreachable
        assert "broke the HTTP protocol" in info.value.message and "[model].base_url" in info.value.message
        assert notices == ["broken HTTP answer"]  # retried once, and the notice says why


ACCEPTED = {
    "the same length twice": sized(b"Content-Length: %d\r\nContent-Length: %d\r\n" % (len(JSON), len(JSON))),
    "the same length listed twice": sized(b"Content-Length: %d, %d\r\n" % (len(JSON), len(JSON))),
    "a chunk extension and upper-case hex": chunked(b"%X;name=value" % len(SSE)),
    "HTAB and bytes over 0x7f in a value": sized(b"X-A: a\tb\xc3\xa9\r\nContent-Length: %d\r\n" % len(JSON)),
}


@pytest.mark.parametrize("case", list(ACCEPTED))
async def test_framing_h11_accepts_is_read_on_both_clients(provider_for: Callable[[RawServer], OpenAIProvider],
                                                           case: str) -> None:
    answer = ACCEPTED[case]
    server = RawServer(lambda conn, index: answer, close_after=True)
    provider = provider_for(server)
    if b"event-stream" in answer:
        text = ""
        async for event in provider.stream(REQUEST):
            text += getattr(event, "text", "")
        assert text == "hello"
    else:
        assert (await provider.chat(REQUEST)).message.content == "hello"


async def test_an_endless_trailer_after_the_answer_costs_the_connection_not_the_answer(
        provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    """A trailer section is bounded like a head; the answer before it still counts."""
    trailer = b"T: x\r\n" * 20_000  # 120 kB of trailer fields
    server = RawServer(lambda conn, index: chunked(b"%x" % len(SSE), trailer=trailer), close_after=True)
    provider = provider_for(server)
    text = ""
    async for event in provider.stream(REQUEST):
        text += getattr(event, "text", "")
    assert text == "hello"


async def test_a_server_that_hangs_up_is_still_said_unreachable(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: b"")  # CLOSE: reads the request, closes without a word
    provider = provider_for(server)
    with pytest.raises(APIError) as info:
        await provider.chat(REQUEST)
    assert info.value.message.startswith("cannot reach the model endpoint")
