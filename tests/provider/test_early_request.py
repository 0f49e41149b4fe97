"""The early first request (``provider/early.py``, ``socket_transport.py``) through the real adapter on
a loopback server: adopted when identical (one request at the server), closed and re-sent
when not, responses read exactly like httpx's (chunked, sized, gzip, error statuses, the
4 MiB event cap), connection failures falling back to the normal path, cancellation closing
the socket."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading

import httpx
import pytest

from minicode.errors import APIError
from minicode.provider import early as early_slot
from minicode.provider.chat_body import chat_body, chat_headers
from minicode.provider.early import EarlyRequest, Wire
from minicode.provider.openai import OpenAIProvider
from minicode.provider.types import ChatRequest, Message, StreamEnd, TextDelta
from minicode.provider.wire import heuristic_profile

from .helpers import API_KEY, REQUEST, Sleeps, chunk, read_http_request, sse
from .test_exchange import RawServer, sse_answer

MODEL = "test-model"


def wire_of(request: httpx.Request) -> Wire:
    """``request`` as httpx puts it on the wire: what the early request must equal."""
    url = request.url
    port = url.port or (443 if url.scheme == "https" else 80)
    return Wire(url.scheme, url.host, port, url.raw_path.decode("ascii"), list(request.headers.raw), request.read())


@pytest.fixture(autouse=True)
def no_pending_early() -> None:
    yield
    pending = early_slot.take()
    if pending is not None:
        pending.close()


def provider(base_url: str, sleeps: Sleeps | None = None) -> OpenAIProvider:
    return OpenAIProvider(base_url=base_url, api_key=API_KEY, model=MODEL, sleep=sleeps or Sleeps(),
                          jitter=lambda: 0.0, env={})


def early_request(base_url: str, request: ChatRequest = REQUEST) -> EarlyRequest:
    """What ``cli/early_start.py`` sends for ``request``, sent now and offered for adoption."""
    body = chat_body(MODEL, request.messages, request.tools, heuristic_profile("127.0.0.1", MODEL), None,
                     request.max_tokens, stream=True)
    with httpx.Client() as client:
        wire = wire_of(client.build_request("POST", base_url + "/chat/completions", json=body,
                                            headers=chat_headers(API_KEY, stream=True)))
    early = EarlyRequest(wire)
    early_slot.offer(early)
    early.start()
    return early


async def stream_text(p: OpenAIProvider, request: ChatRequest = REQUEST) -> str:
    text = ""
    async for event in p.stream(request):
        if isinstance(event, TextDelta):
            text += event.text
        if isinstance(event, StreamEnd):
            assert event.response.message.content == text
    return text


def sized_sse(text: str, *, encoding: str | None = None) -> bytes:
    body = sse(chunk({"content": text}), chunk({}, finish="stop"))
    extra = b""
    if encoding == "gzip":
        body = gzip.compress(body)
        extra = b"Content-Encoding: gzip\r\n"
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + extra
            + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def error_answer(status: int, reason: bytes, body: bytes, content_type: bytes = b"application/json",
                 extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%sContent-Length: %d\r\n\r\n"
            % (status, reason, content_type, extra, len(body)) + body)


@pytest.mark.parametrize("answer", [sse_answer("hello"), sized_sse("hello"), sized_sse("hello", encoding="gzip")],
                         ids=["chunked", "content-length", "gzip"])
async def test_an_identical_request_is_adopted_not_sent_again(answer: bytes) -> None:
    server = RawServer(lambda conn, index: answer)
    try:
        p = provider(server.base_url)
        early = early_request(server.base_url)
        assert await stream_text(p) == "hello"
        assert server.requests == [(1, 0)]  # one connection, one request: the early one
        assert early.head is not None
        await p.aclose()
    finally:
        server.close()


async def test_a_different_request_is_closed_and_sent_normally() -> None:
    server = RawServer(lambda conn, index: None if conn == 1 else sse_answer("normal"))
    try:
        p = provider(server.base_url)
        early_request(server.base_url, ChatRequest(messages=(Message.user("something else"),)))
        assert server.got_request.wait(10)
        assert await stream_text(p) == "normal"
        assert server.client_left.wait(10)  # the early connection was closed
        assert [conn for conn, _ in server.requests] == [1, 2]
        await p.aclose()
    finally:
        server.close()


async def test_only_the_first_send_may_adopt() -> None:
    server = RawServer(lambda conn, index: sse_answer(f"answer {conn}.{index}"))
    try:
        p = provider(server.base_url)
        assert await stream_text(p) == "answer 1.0"
        early_request(server.base_url)  # offered after the first send: never adopted
        assert await stream_text(p) in ("answer 1.1", "answer 3.0")
        pending = early_slot.take()  # still pending: never adopted
        assert pending is not None
        pending.close()
        await p.aclose()
    finally:
        server.close()


async def _error_run(answer: bytes, *, with_early: bool) -> tuple[str, list[float], int]:
    answers = [answer, sse_answer("fine")]
    server = RawServer(lambda conn, index: answers[min(len(server.requests) - 1, 1)])
    sleeps = Sleeps()
    try:
        p = provider(server.base_url, sleeps)
        if with_early:
            early_request(server.base_url)
        try:
            message = await stream_text(p)
        except APIError as e:
            message = f"error: {e}"
        await p.aclose()
        return message, sleeps.calls, len(server.requests)
    finally:
        server.close()


@pytest.mark.parametrize("answer", [
    error_answer(429, b"Too Many Requests", b'{"error": {"message": "slow down", "type": "rate_limit"}}',
                 extra=b"Retry-After: 7\r\n"),
    error_answer(401, b"Unauthorized", b'{"error": {"message": "Incorrect API key provided", "type": "auth"}}'),
    error_answer(502, b"Bad Gateway", b"<html><body><h1>502 Bad Gateway</h1></body></html>", b"text/html"),
], ids=["429-retry-after", "401", "html-502"])
async def test_an_error_status_reads_as_on_the_normal_path(answer: bytes) -> None:
    normal = await _error_run(answer, with_early=False)
    early = await _error_run(answer, with_early=True)
    assert early == normal
    if b"429" in answer:
        assert early == ("fine", [7.0], 2)  # waited as Retry-After said, then one more request


async def test_connection_refused_falls_back_to_the_normal_path() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    base_url = f"http://127.0.0.1:{port}/v1"
    results = []
    for with_early in (False, True):
        sleeps = Sleeps()
        p = provider(base_url, sleeps)
        if with_early:
            early = early_request(base_url)
            assert early.outcome(10) and early.error is not None and not early.sent
        with pytest.raises(APIError) as info:
            await stream_text(p)
        results.append((str(info.value), sleeps.calls))
        await p.aclose()
    assert results[0] == results[1]  # same message, same retries: the early attempt is not counted
    assert "Connection refused" in results[0][0]


class HangUpFirst(RawServer):
    """Reads the first connection's request and closes it without a word."""

    def _serve(self, conn: socket.socket, number: int) -> None:
        if number == 1:
            with conn:
                read_http_request(conn)
                self.requests.append((number, 0))
            return
        super()._serve(conn, number)


async def test_a_server_that_closes_without_answering_counts_as_the_first_attempt() -> None:
    results = []
    for with_early in (False, True):
        server = HangUpFirst(lambda conn, index: sse_answer("second"))
        sleeps = Sleeps()
        try:
            p = provider(server.base_url, sleeps)
            if with_early:
                early_request(server.base_url)
            assert await stream_text(p) == "second"
            results.append((sleeps.calls, len(server.requests)))
            await p.aclose()
        finally:
            server.close()
    assert results[0] == results[1] == ([1.0], 2)  # one retry after the usual wait, as today


async def test_cancelling_closes_the_early_connection() -> None:
    server = RawServer(lambda conn, index: None)  # never answers
    try:
        p = provider(server.base_url)
        early_request(server.base_url)
        task = asyncio.ensure_future(stream_text(p))
        assert await asyncio.to_thread(server.got_request.wait, 10)
        await asyncio.sleep(0)  # let the stream reach its exchange
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(server.client_left.wait, 1.0)  # closed at once, not at a timeout
        await p.aclose()
    finally:
        server.close()


async def test_an_event_over_4_mib_is_refused_as_on_the_normal_path() -> None:
    event = b'data: {"choices": [{"index": 0, "delta": {"content": "' + b"x" * (5 * 1024 * 1024) + b'"}}]}\n\n'
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(event)) + event
    messages = []
    for with_early in (False, True):
        server = RawServer(lambda conn, index: answer)
        try:
            p = provider(server.base_url)
            if with_early:
                early_request(server.base_url)
            with pytest.raises(APIError, match="larger than 4 MiB") as info:
                await stream_text(p)
            messages.append(str(info.value))
            assert len(server.requests) == 1
            await p.aclose()
        finally:
            server.close()
    assert messages[0] == messages[1]


class CutOff(RawServer):
    """Answers the first request with ``answer``, then closes the connection."""

    def _serve(self, conn: socket.socket, number: int) -> None:
        with conn:
            read_http_request(conn)
            self.requests.append((number, 0))
            answer = self.respond(number, 0)
            assert answer is not None
            conn.sendall(answer)


@pytest.mark.parametrize("framing", ["chunked", "content-length"])
async def test_a_stream_cut_off_breaks_as_on_the_normal_path(framing: str) -> None:
    body = sse(chunk({"content": "par"}), done=False)
    if framing == "chunked":
        answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                  + b"%x\r\n" % len(body) + body + b"\r\n")
    else:
        answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n"
                  % (len(body) + 100)) + body
    results = []
    for with_early in (False, True):
        server = CutOff(lambda conn, index: answer)
        try:
            p = provider(server.base_url)
            if with_early:
                early_request(server.base_url)
            seen: list[object] = []
            with pytest.raises(APIError) as info:
                async for event in p.stream(REQUEST):
                    seen.append(event)
            port = server.base_url.split(":")[2].split("/")[0]
            results.append((seen, str(info.value).replace(port, "PORT"), len(server.requests)))
            await p.aclose()
        finally:
            server.close()
    assert results[0] == results[1]
    assert results[0][0] == [TextDelta("par")] and "the connection broke during the stream" in results[0][1]


def test_the_wire_repr_never_shows_the_key() -> None:
    with httpx.Client() as client:
        wire = wire_of(client.build_request("POST", "http://127.0.0.1:1/v1/chat/completions", json={"a": 1},
                                            headers=chat_headers(API_KEY, stream=True)))
    assert API_KEY not in repr(wire) and API_KEY not in repr(EarlyRequest(wire).wire)
    assert json.loads(wire.body) == {"a": 1}


def test_the_switch_interval_is_short_only_until_the_request_is_out() -> None:
    import sys

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    before = sys.getswitchinterval()
    try:
        with httpx.Client() as client:
            wire = wire_of(client.build_request("POST", f"http://127.0.0.1:{port}/v1/chat/completions", json={}))
        early = EarlyRequest(wire)
        early.start()
        conn, _ = listener.accept()
        assert read_http_request(conn)
        for _ in range(1000):  # a condition: the thread sets it back right after writing
            if early.written:
                break
            threading.Event().wait(0.01)
        assert early.written and sys.getswitchinterval() == before
        early.close()
        conn.close()
        listener.close()
        refused = EarlyRequest(wire)  # nothing listens any more: fails before writing
        refused.start()
        assert refused.outcome(10) and refused.error is not None
        assert sys.getswitchinterval() == before
    finally:
        sys.setswitchinterval(before)
        listener.close()


async def test_cancelling_while_the_early_request_connects_ends_it() -> None:
    from minicode.provider.http_connect import ConnectFailed

    from .test_exchange import cancel_once_under_way, no_reader_threads_left
    from .test_socket_transport import Unanswered

    server = Unanswered()  # the connection is never completed
    try:
        base_url = f"http://127.0.0.1:{server.port}/v1"
        p = provider(base_url)
        early = early_request(base_url)
        await cancel_once_under_way(asyncio.ensure_future(stream_text(p)))  # waiting on the early request
        assert early.outcome(5)  # given up on the stop, not at the 15 s connect timeout
        assert isinstance(early.error, ConnectFailed) and not early.sent
        assert await no_reader_threads_left()
        await p.aclose()
    finally:
        server.close()
