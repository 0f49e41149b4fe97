"""The provider's reader thread: cancellation closes the socket in every phase, a finished
stream leaves its keep-alive connection for the next request, and reads are paced."""

from __future__ import annotations

import asyncio
import gc
import socket
import sys
import threading
import weakref
from typing import Any, Callable, Iterator

import httpx2
import pytest

from minicode.errors import APIError
from minicode.provider.body import RequestBody
from minicode.provider import exchange as exchange_module
from minicode.provider.exchange import READ_INTERVAL_SECONDS, Exchange
from minicode.provider.http import HttpClient, NetworkError, Opener, SocketRegistry
from minicode.provider.openai import OpenAIProvider
from minicode.provider.types import ChatRequest, StreamEnd, TextDelta

from .helpers import REQUEST, chunk, read_raw_request, sse

Respond = Callable[[int, int], bytes | None]
"""(connection number, request number on it) -> the raw answer; None: never answer; ``CLOSE``:
close the connection without answering."""
CLOSE = b""


class RawServer:
    """A loopback HTTP/1.1 server with keep-alive, scripted per request, that notices when
    the client closes a connection it never answered (``client_left``) or one it was answered
    on (``client_closed``). ``raw``: the requests as they came. With ``close_after`` (or an
    answer saying ``Connection: close``) it closes the connection after answering."""

    def __init__(self, respond: Respond, close_after: bool = False) -> None:
        self.respond = respond
        self.close_after = close_after
        self.raw: list[bytes] = []
        self.client_closed = threading.Event()
        self.requests: list[tuple[int, int]] = []
        self.got_request = threading.Event()
        self.client_left = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._connections += 1
            threading.Thread(target=self._serve, args=(conn, self._connections), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        with conn:
            for index in range(100):
                raw = read_raw_request(conn)
                if raw is None:
                    if index:
                        self.client_closed.set()
                    return
                self.raw.append(raw)
                self.requests.append((number, index))
                self.got_request.set()
                answer = self.respond(number, index)
                if answer is None:
                    conn.settimeout(30)
                    if conn.recv(1) == b"":  # the client closed (or shut down) its end
                        self.client_left.set()
                    return
                if answer == CLOSE:
                    return
                conn.sendall(answer)
                if self.close_after or b"Connection: close" in answer.partition(b"\r\n\r\n")[0]:
                    return


def json_answer(text: str) -> bytes:
    body = ('{"choices": [{"index": 0, "message": {"role": "assistant", "content": "%s"}, "finish_reason": "stop"}]}' % text).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body


def sse_answer(text: str) -> bytes:
    body = sse(chunk({"content": text}), chunk({}, finish="stop"))
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")


def mock_opener(body: Iterator[bytes]) -> Opener:
    """An SSE response from httpx2's mock transport, through the HTTP module's opener."""
    client = httpx2.Client(transport=httpx2.MockTransport(
        lambda request: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)))
    url = "http://test/v1/chat/completions"
    return HttpClient(url, {}, client).opener("POST", url, {}, None)


def reader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "minicode-http" and t.is_alive()]


async def no_reader_threads_left() -> bool:
    for _ in range(500):  # a condition, not a duration: the threads end once their socket is shut
        if not reader_threads():
            return True
        await asyncio.sleep(0.01)
    return False


async def cancel_once_under_way(task: asyncio.Task[object]) -> None:
    """Cancel ``task`` once a request of it has its thread (a condition, not a duration)."""
    for _ in range(500):
        if reader_threads():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def consume(provider: OpenAIProvider) -> None:
    async for _ in provider.stream(REQUEST):
        pass


@pytest.fixture
def provider_for() -> Iterator[Callable[[RawServer], OpenAIProvider]]:
    """A provider for the server, with its own httpx2 client."""
    made: list[tuple[RawServer, OpenAIProvider]] = []

    def make(server: RawServer) -> OpenAIProvider:
        provider = OpenAIProvider(base_url=server.base_url, api_key="", model="m", max_retries=0, env={})
        made.append((server, provider))
        return provider

    yield make
    for server, provider in made:
        server.close()
        provider._http.close()


async def test_cancel_while_waiting_for_the_head_closes_the_new_connection(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: None)  # accepts the request, never answers
    task = asyncio.create_task(consume(provider_for(server)))
    assert await asyncio.to_thread(server.got_request.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.client_left.wait, 10)  # not after the 300 s read timeout
    assert await no_reader_threads_left()


async def test_cancel_while_a_reused_connection_waits_for_the_head_closes_it(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: json_answer("first") if index == 0 else None)
    provider = provider_for(server)
    assert (await provider.chat(REQUEST)).message.content == "first"
    assert await no_reader_threads_left()  # the connection is back in the pool, idle
    server.got_request.clear()
    task = asyncio.create_task(consume(provider))
    assert await asyncio.to_thread(server.got_request.wait, 10)
    assert server.requests == [(1, 0), (1, 1)]  # the same connection, kept alive
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.client_left.wait, 10)
    assert await no_reader_threads_left()


async def test_a_finished_stream_leaves_its_connection_for_the_next_request(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: sse_answer(f"answer {index}"))
    provider = provider_for(server)
    for expected in ("answer 0", "answer 1"):
        events = [e async for e in provider.stream(REQUEST)]
        assert events[0] == TextDelta(expected) and isinstance(events[-1], StreamEnd)
        assert await no_reader_threads_left()  # the rest of the body was read in the background
    assert server.requests == [(1, 0), (1, 1)]


class SentBodies:
    """What the provider hands its HTTP client: a weak reference to each request body and the
    body's first chunk (bytes take no weak references; httpx2 may keep the chunks without the
    body, so they are checked by reference count)."""

    def __init__(self, provider: OpenAIProvider) -> None:
        self.bodies: list[weakref.ref[RequestBody]] = []
        self.chunks: list[bytes] = []
        opener = provider._http.opener

        def spy(method: str, url: str, headers: dict[str, str], body: Any, **kw: Any) -> Opener:
            assert isinstance(body, RequestBody)
            self.bodies.append(weakref.ref(body))
            self.chunks.append(body.chunks[0])
            return opener(method, url, headers, body, **kw)

        provider._http.opener = spy  # type: ignore[method-assign]

    def all_gone(self) -> bool:
        # 2: this list's reference and getrefcount's argument — nobody else holds the chunk.
        return all(ref() is None for ref in self.bodies) and all(
            sys.getrefcount(self.chunks[i]) == 2 for i in range(len(self.chunks)))


async def let_go(provider: OpenAIProvider, sent: SentBodies) -> bool:
    """Every body sent is gone once its answer is in: nothing (an exchange waiting out its drain
    time, a response holding its request) keeps it. httpx2's response and its streams refer to
    each other, so it takes the cycle collector (which runs as young objects pile up)."""
    assert sent.bodies
    assert await no_reader_threads_left()
    await asyncio.sleep(0)  # the loop hears that the threads are done
    gc.collect()
    return sent.all_gone()


async def test_a_request_body_is_let_go_once_its_answer_is_in(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    """A long conversation's body is megabytes: held past its answer, pipe mode's quick
    succession of tasks piled them up (100 MB after 400 tasks)."""
    answers = iter([sse_answer("streamed"), json_answer("whole")])  # whichever connection each comes on
    server = RawServer(lambda conn, index: next(answers))
    provider = provider_for(server)
    sent = SentBodies(provider)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # so that only reference counting frees (see let_go)
    try:
        assert [e async for e in provider.stream(REQUEST)][0] == TextDelta("streamed")
        assert (await provider.chat(REQUEST)).message.content == "whole"
        assert len(sent.bodies) == 2 and await let_go(provider, sent)
    finally:
        if gc_was_enabled:
            gc.enable()


async def test_a_failed_request_lets_its_body_go_too(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    error = b'{"error": {"message": "nope"}}'
    server = RawServer(lambda conn, index: b"HTTP/1.1 500 Oops\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n" % len(error) + error)
    provider = provider_for(server)
    sent = SentBodies(provider)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(APIError, match="nope"):
            await consume(provider)
        assert await let_go(provider, sent)
    finally:
        if gc_was_enabled:
            gc.enable()


class DrippingServer:
    """Answers one request with an SSE body of ``count`` events, each in an HTTP chunk of its own
    (as OpenAI's API sends them) and ``gap`` seconds apart; ``burst`` events go out in one write."""

    def __init__(self, count: int, gap: float, burst: int = 1) -> None:
        self.count, self.gap, self.burst = count, gap, burst
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1/chat/completions"

    def _serve(self) -> None:
        conn, _ = self._listener.accept()
        with conn:
            read_raw_request(conn)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            for start in range(0, self.count, self.burst):
                pieces = [sse(chunk({"content": f"{i} "}), done=False) for i in range(start, min(start + self.burst, self.count))]
                conn.sendall(b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in pieces))
                threading.Event().wait(self.gap)  # the model's pace, not the test's
            done = b"data: [DONE]\n\n"
            conn.sendall(b"%x\r\n" % len(done) + done + b"\r\n0\r\n\r\n")
            conn.recv(1)
        self._listener.close()


async def _stream_through(exchange: Exchange) -> tuple[str, list[list[object]]]:
    exchange.start()
    assert (await exchange.head()).status == 200
    batches: list[list[object]] = []
    while not batches or not isinstance(batches[-1][-1], StreamEnd):
        batches.append(list(await exchange.batch()))
    exchange.mark_complete()
    await exchange.aclose()
    return "".join(e.text for b in batches for e in b if isinstance(e, TextDelta)), batches


async def test_reads_are_paced_once_the_stream_has_run_for_a_while() -> None:
    """A chunked stream, an event every 10 ms: the first UNPACED_SECONDS are read as they come;
    after that a network read happens at most every READ_INTERVAL_SECONDS, so the chunks that
    arrived meanwhile come in one read and one batch — and the stream is never held back (a
    wait per chunk, not per read, held such a stream to 20 events a second)."""
    server = DrippingServer(count=60, gap=0.01)
    http = HttpClient(server.url, {})
    started = asyncio.get_running_loop().time()
    pauses: list[float] = []
    stop = threading.Event()

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        stop.wait(seconds)

    exchange = Exchange(http.opener("POST", server.url, {}, None), stream=True, sockets=http.sockets, pause=pause)
    text, batches = await _stream_through(exchange)
    took = asyncio.get_running_loop().time() - started
    http.close()
    assert text == "".join(f"{i} " for i in range(60))
    assert pauses and all(0 < p <= READ_INTERVAL_SECONDS for p in pauses)
    assert len(batches) < 40  # ~20 unpaced chunks one by one, then ~5 chunks a batch (not 60)
    assert took < 2.0  # 0.6 s of stream; a wait per chunk after the first 0.2 s made it 2.2 s


async def test_the_chunks_one_network_read_brings_come_as_one_batch() -> None:
    """Ten events in one write arrive in one read: one batch (httpx2 yields them one by one)."""
    server = DrippingServer(count=30, gap=0.05, burst=10)
    http = HttpClient(server.url, {})
    exchange = Exchange(http.opener("POST", server.url, {}, None), stream=True, sockets=http.sockets)
    text, batches = await _stream_through(exchange)
    http.close()
    assert text == "".join(f"{i} " for i in range(30))
    assert len(batches) <= 5 and max(len(b) for b in batches) >= 10


async def test_reads_waiting_for_the_consumer_come_as_one_batch() -> None:
    def body() -> Iterator[bytes]:
        for i in range(5):
            yield sse(chunk({"content": str(i)}), done=False)
        yield b"data: [DONE]\n\n"

    exchange = Exchange(mock_opener(body()), stream=True, sockets=SocketRegistry())
    exchange.start()
    await exchange.head()
    await asyncio.wait_for(asyncio.shield(exchange._finished), 10)  # the thread has read everything
    events = await exchange.batch()  # six reads, one hand-over
    assert events[:-1] == [TextDelta(str(i)) for i in range(5)] and isinstance(events[-1], StreamEnd)
    exchange.mark_complete()
    await exchange.aclose()


async def test_closing_an_exchange_still_connecting_does_not_wait_for_the_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx2's connect cannot be cut short: closing must not wait for it (up to 15 s, or
    CLOSE_WAIT_SECONDS) — the thread is left to end on its own."""
    monkeypatch.setattr(exchange_module, "CLOSE_WAIT_SECONDS", 60.0)  # waiting would show
    connecting = threading.Event()
    release = threading.Event()

    def opener(link: Any) -> Any:
        connecting.set()
        release.wait(30)  # a connect that nothing interrupts
        raise NetworkError("connect failed", "ConnectError")

    exchange = Exchange(opener, stream=True, sockets=SocketRegistry())
    exchange.start()
    assert await asyncio.to_thread(connecting.wait, 10)
    async with asyncio.timeout(10):
        await exchange.aclose()
    assert reader_threads()  # closed without waiting for the blocked connect, still under way
    release.set()
    assert await no_reader_threads_left()
    assert exchange.stopped()


# --- servers that break HTTP ----------------------------------------------------------------


async def test_an_answer_that_is_not_http_says_the_server_broke_the_protocol(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    """Not "cannot reach" (it answered), and the retry notice says why."""
    server = RawServer(lambda conn, index: b"SSH-2.0-OpenSSH_9.6\r\n\r\n", close_after=True)
    provider = provider_for(server)
    provider._max_retries, provider._sleep = 1, _no_sleep
    notices: list[str] = []
    request = ChatRequest(REQUEST.messages, on_retry=lambda notice: notices.append(notice.reason))
    with pytest.raises(APIError) as info:
        await provider.chat(request)
    assert "broke the HTTP protocol" in info.value.message and "[model].base_url" in info.value.message
    assert notices == ["broken HTTP answer"] and len(server.requests) == 2


async def test_a_server_that_hangs_up_is_still_said_unreachable(provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    server = RawServer(lambda conn, index: CLOSE)  # reads the request, closes without a word
    with pytest.raises(APIError) as info:
        await provider_for(server).chat(REQUEST)
    assert info.value.message.startswith("cannot reach the model endpoint")


async def test_a_broken_trailer_after_the_answer_costs_the_connection_not_the_answer(
        provider_for: Callable[[RawServer], OpenAIProvider]) -> None:
    """What arrived up to ``[DONE]`` is the answer; a fault in the framing after it only means
    the connection is not reused."""
    body = sse(chunk({"content": "hello"}), chunk({}, finish="stop"))
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
              + b"%x\r\n" % len(body) + body + b"\r\n0\r\n" + b"T: x\r\n" * 20_000 + b"\r\n")
    server = RawServer(lambda conn, index: answer, close_after=True)
    text = ""
    async for event in provider_for(server).stream(REQUEST):
        text += getattr(event, "text", "")
    assert text == "hello"


async def _no_sleep(seconds: float) -> None:
    pass
