"""minicode's own transport (``provider/socket_transport.py``) against loopback servers: the
request on the wire is httpx's, the connection is kept alive and reused, a connection the
server closed is replaced, failures read and retry as on the httpx path (refused, closed
mid-stream, 429 with Retry-After, gzip), the API key never shows."""

from __future__ import annotations

import asyncio
import gzip
import threading
import socket
import ssl
from typing import Callable

import pytest

from minicode.errors import APIError
from minicode.provider.openai import OpenAIProvider
from minicode.provider.transport import Link
from minicode.provider.types import ChatRequest, RetryNotice, TextDelta

from .helpers import API_KEY, REQUEST, Sleeps, chunk, sse
from .test_early_request import stream_text as text_of
from .test_exchange import CLOSE, RawServer, Respond, cancel_once_under_way, json_answer, no_reader_threads_left, sse_answer

Server = RawServer


@pytest.fixture
def serve() -> Callable[..., Server]:
    made: list[Server] = []

    def make(respond: Respond, close_after: bool = False) -> Server:
        made.append(Server(respond, close_after))
        return made[-1]

    yield make
    for server in made:
        server.close()


def own(base_url: str, sleeps: Sleeps | None = None, key: str = API_KEY) -> OpenAIProvider:
    provider = OpenAIProvider(base_url=base_url, api_key=key, model="m", env={}, sleep=sleeps or Sleeps(),
                              jitter=lambda: 0.0)
    assert type(provider._transport).__name__ == "SocketTransport"
    return provider


async def idle_again(provider: OpenAIProvider) -> None:
    """Wait (a condition) until the last exchange's thread gave its connection back."""
    for _ in range(500):
        if provider._transport._idle:  # type: ignore[attr-defined]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the connection was not kept")


async def test_the_request_on_the_wire_is_httpx_s(serve: Callable[..., Server]) -> None:
    server = serve(lambda conn, index: sse_answer("hi"))
    ours = own(server.base_url)
    theirs = OpenAIProvider(base_url=server.base_url, api_key=API_KEY, model="m", env={"MINICODE_HTTP": "httpx"})
    assert type(theirs._transport).__name__ == "HttpxTransport"
    for provider in (ours, theirs):
        assert await text_of(provider) == "hi"
        await provider.aclose()
    assert len(server.raw) == 2 and server.raw[0] == server.raw[1]  # head and body, byte for byte
    assert server.raw[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")


async def test_requests_reuse_one_kept_alive_connection(serve: Callable[..., Server]) -> None:
    server = serve(lambda conn, index: sse_answer(f"answer {index}") if index % 2 == 0 else json_answer("chat"))
    provider = own(server.base_url)
    assert await text_of(provider) == "answer 0"
    await idle_again(provider)
    assert (await provider.chat(REQUEST)).message.content == "chat"
    await idle_again(provider)
    assert await text_of(provider) == "answer 2"
    assert server.requests == [(1, 0), (1, 1), (1, 2)]
    await provider.aclose()


@pytest.mark.parametrize("close_header", [True, False], ids=["says-close", "closes-silently"])
async def test_a_connection_the_server_closed_is_replaced_without_a_retry(
        serve: Callable[..., Server], close_header: bool) -> None:
    def answer(conn: int, index: int) -> bytes:
        raw = sse_answer(f"conn {conn}")
        return raw.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1) if close_header else raw

    server = serve(answer, close_after=True)
    sleeps = Sleeps()
    provider = own(server.base_url, sleeps)
    assert await text_of(provider) == "conn 1"
    # Whether the close has reached us when the next request starts (the idle connection is
    # dropped) or not (the request fails unanswered on it and goes out again): no retry wait.
    assert await text_of(provider) == "conn 2"
    assert server.requests == [(1, 0), (2, 0)] and sleeps.calls == []
    await provider.aclose()


async def test_a_reused_connection_closed_unanswered_is_sent_again_once_on_a_fresh_one(
        serve: Callable[..., Server]) -> None:
    """The server takes the second request on the kept connection and closes it without a
    byte of answer (an idle timeout racing the request): sent again at once, no retry wait."""
    server = serve(lambda conn, index: CLOSE if (conn, index) == (1, 1) else sse_answer(f"{conn}.{index}"))
    sleeps = Sleeps()
    notices: list[RetryNotice] = []
    provider = own(server.base_url, sleeps)
    assert await text_of(provider) == "1.0"
    await idle_again(provider)
    assert await text_of(provider, ChatRequest(REQUEST.messages, on_retry=notices.append)) == "2.0"
    assert server.requests == [(1, 0), (1, 1), (2, 0)]
    assert sleeps.calls == [] and notices == []
    await provider.aclose()


async def test_a_fresh_connection_closed_unanswered_is_a_retried_network_error(serve: Callable[..., Server]) -> None:
    server = serve(lambda conn, index: CLOSE if conn < 3 else sse_answer("third"))
    sleeps = Sleeps()
    notices: list[RetryNotice] = []
    provider = own(server.base_url, sleeps)
    assert await text_of(provider, ChatRequest(REQUEST.messages, on_retry=notices.append)) == "third"
    assert sleeps.calls == [1.0, 2.0] and [n.reason for n in notices] == ["network error"] * 2
    await provider.aclose()


async def test_a_refused_connection_is_retried_then_reported(serve: Callable[..., Server]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    sleeps = Sleeps()
    notices: list[RetryNotice] = []
    provider = own(f"http://127.0.0.1:{port}/v1", sleeps)
    with pytest.raises(APIError, match=r"cannot reach the model endpoint \(127.0.0.1:\d+\): .*refused") as info:
        await text_of(provider, ChatRequest(REQUEST.messages, on_retry=notices.append))
    assert info.value.network and sleeps.calls == [1.0, 2.0, 4.0]
    assert [n.reason for n in notices] == ["cannot connect"] * 3


async def test_a_stream_cut_midway_is_an_error_not_retried(serve: Callable[..., Server]) -> None:
    body = sse(chunk({"content": "half"}), done=False)
    cut = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"%x\r\n" % len(body) + body + b"\r\n")
    server = serve(lambda conn, index: cut, close_after=True)
    sleeps = Sleeps()
    provider = own(server.base_url, sleeps)
    events = []
    with pytest.raises(APIError, match="connection broke during the stream .*incomplete chunked read") as info:
        async for event in provider.stream(REQUEST):
            events.append(event)
    assert events == [TextDelta("half")] and not info.value.retryable
    assert server.requests == [(1, 0)] and sleeps.calls == []


async def test_429_with_retry_after_then_success_on_the_kept_connection(serve: Callable[..., Server]) -> None:
    limited = b'{"error": {"message": "slow down"}}'
    first = (b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Type: application/json\r\n"
             b"Content-Length: %d\r\n\r\n" % len(limited) + limited)
    server = serve(lambda conn, index: first if index == 0 else sse_answer("ok"))
    sleeps = Sleeps()
    provider = own(server.base_url, sleeps)
    assert await text_of(provider) == "ok"
    assert sleeps.calls == [3.0] and server.requests == [(1, 0), (1, 1)]
    await provider.aclose()


async def test_an_html_401_never_shows_the_key(serve: Callable[..., Server]) -> None:
    page = b"<html><body><h1>401 Authorization Required</h1><p>Bearer " + API_KEY.encode() + b"</p></body></html>"
    server = serve(lambda conn, index: b"HTTP/1.1 401 Unauthorized\r\nContent-Type: text/html\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(page) + page)
    provider = own(server.base_url)
    with pytest.raises(APIError) as info:
        await text_of(provider)
    assert info.value.status == 401 and "401 Authorization Required" in str(info.value)
    assert API_KEY not in str(info.value) and API_KEY not in repr(info.value)
    assert server.requests == [(1, 0)]


async def test_a_gzip_stream_sized_and_a_gzip_json_answer(serve: Callable[..., Server]) -> None:
    streamed = gzip.compress(sse(chunk({"content": "zipped"}), chunk({}, finish="stop")))
    answer = gzip.compress(b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "zj"}, '
                           b'"finish_reason": "stop"}]}')

    def respond(conn: int, index: int) -> bytes:
        body, kind = (streamed, b"text/event-stream") if index == 0 else (answer, b"application/json")
        return (b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
                % (kind, len(body)) + body)

    server = serve(respond)
    provider = own(server.base_url)
    assert await text_of(provider) == "zipped"
    await idle_again(provider)
    assert (await provider.chat(REQUEST)).message.content == "zj"
    assert server.requests == [(1, 0), (1, 1)]
    await provider.aclose()


async def test_an_http_1_0_answer_is_read_to_the_close_and_not_kept(serve: Callable[..., Server]) -> None:
    body = sse(chunk({"content": "old"}), chunk({}, finish="stop"))
    server = serve(lambda conn, index: b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + body,
                   close_after=True)
    provider = own(server.base_url)
    assert await text_of(provider) == "old"
    assert await text_of(provider) == "old"
    assert server.requests == [(1, 0), (2, 0)]
    assert provider._transport._idle == []  # type: ignore[attr-defined]
    await provider.aclose()


async def test_cancelling_mid_stream_closes_the_connection_at_once(serve: Callable[..., Server]) -> None:
    first = sse(chunk({"content": "first"}), done=False)
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n" % len(first) + first + b"\r\n")  # and then nothing: the stream stays open
    server = serve(lambda conn, index: head)
    provider = own(server.base_url)
    got = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(REQUEST):
            if event == TextDelta("first"):
                got.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.client_closed.wait, 10)  # not after the 300 s read timeout
    assert provider._transport._idle == []  # type: ignore[attr-defined]


class Unanswered:
    """A listener that never completes a connection: its one-place accept queue is filled
    first, so the kernel drops the next handshakes and a connect waits (as for a filtered
    port). ``tls_silent``: instead, accept and never say a word (a TLS handshake waits)."""

    def __init__(self, *, tls_silent: bool = False) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=0)
        self.port = self.listener.getsockname()[1]
        self.fillers: list[socket.socket] = []
        self.client_left = threading.Event()
        if tls_silent:
            threading.Thread(target=self._accept_and_wait, daemon=True).start()
            return
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", self.port))
            self.fillers.append(filler)

    def _accept_and_wait(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(30)
            try:
                while conn.recv(4096):  # the ClientHello, then the client's end
                    pass
            except OSError:
                pass
            self.client_left.set()

    def close(self) -> None:
        for sock in (*self.fillers, self.listener):
            sock.close()


async def stopped_while_connecting(server: Unanswered, tls: ssl.SSLContext | None) -> None:
    from minicode.provider.http_connect import connect
    from minicode.provider.plain_http import endpoint, httpx_user_agent
    from minicode.provider.socket_transport import SocketTransport

    scheme = "https" if tls is not None else "http"
    point = endpoint(f"{scheme}://api.example.com/v1/chat/completions")
    assert point is not None

    def dial(host: str, _port: int, tls: ssl.SSLContext | None, name: str, *, link: Link | None = None) -> socket.socket:
        return connect("127.0.0.1", server.port, tls, name, link=link)

    provider = OpenAIProvider(base_url=f"{scheme}://api.example.com/v1", api_key=API_KEY, model="m", max_retries=0,
                              transport=SocketTransport(point, tls, httpx_user_agent() or "", dial=dial))
    await cancel_once_under_way(asyncio.create_task(text_of(provider)))
    # Ended by the stop, not by the connect timeout (15 s) — the wait below gives up after 5 s.
    assert await no_reader_threads_left()
    await provider.aclose()


async def test_a_connect_that_gets_no_answer_ends_when_the_request_is_cancelled() -> None:
    server = Unanswered()
    try:
        await stopped_while_connecting(server, None)
    finally:
        server.close()


async def test_a_tls_handshake_that_gets_no_answer_ends_when_the_request_is_cancelled() -> None:
    server = Unanswered(tls_silent=True)
    try:
        await stopped_while_connecting(server, ssl.create_default_context())
        assert await asyncio.to_thread(server.client_left.wait, 10)  # the socket was shut down
    finally:
        server.close()


@pytest.mark.parametrize(("cause", "said"), [
    (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "cannot resolve api.example.com: no such host"),
    (ConnectionRefusedError(111, "Connection refused"), None),
])
async def test_a_lasting_connect_failure_is_said_at_once_a_passing_one_retried(cause: OSError, said: str | None) -> None:
    from minicode.provider.http_connect import ConnectFailed
    from minicode.provider.plain_http import endpoint, httpx_user_agent
    from minicode.provider.socket_transport import SocketTransport

    def dial(host: str, port: int, tls: object, name: str, *, link: object = None) -> socket.socket:
        raise ConnectFailed(cause)

    point = endpoint("https://api.example.com/v1/chat/completions")
    assert point is not None
    sleeps = Sleeps()
    provider = OpenAIProvider(base_url="https://api.example.com/v1", api_key=API_KEY, model="m", sleep=sleeps,
                              transport=SocketTransport(point, None, httpx_user_agent() or "", dial=dial))
    with pytest.raises(APIError) as info:
        await text_of(provider)
    if said is not None:
        assert info.value.lasting and said in str(info.value) and sleeps.calls == []
    else:
        assert not info.value.lasting and "Connection refused" in str(info.value) and len(sleeps.calls) == 3


async def test_an_idle_connection_past_the_keepalive_expiry_is_not_reused(serve: Callable[..., Server]) -> None:
    """A connection idle longer than httpcore's 5 s may have been dropped silently (a NAT): a
    fresh one is opened instead of writing into it (an injected clock, no waiting)."""
    from minicode.provider.plain_http import endpoint, httpx_user_agent
    from minicode.provider.socket_transport import KEEPALIVE_EXPIRY_SECONDS, SocketTransport

    server = serve(lambda conn, index: sse_answer(f"{conn}.{index}"))
    now = [100.0]
    point = endpoint(server.base_url + "/chat/completions")
    assert point is not None
    provider = OpenAIProvider(base_url=server.base_url, api_key=API_KEY, model="m",
                              transport=SocketTransport(point, None, httpx_user_agent() or "", clock=lambda: now[0]))
    assert await text_of(provider) == "1.0"
    await idle_again(provider)
    now[0] += KEEPALIVE_EXPIRY_SECONDS  # just within: reused
    assert await text_of(provider) == "1.1"
    await idle_again(provider)
    now[0] += KEEPALIVE_EXPIRY_SECONDS + 0.1
    assert await text_of(provider) == "2.0"
    assert server.requests == [(1, 0), (1, 1), (2, 0)]
    await provider.aclose()


def test_an_idle_connection_is_usable_only_while_nothing_can_be_read() -> None:
    from minicode.provider.socket_transport import _still_open

    ours, theirs = socket.socketpair()
    try:
        assert _still_open(ours)
        theirs.sendall(b"HTTP/1.1 200 OK\r\n")  # bytes nobody asked for
        assert not _still_open(ours)
        ours.recv(100)
        assert _still_open(ours)
        theirs.close()  # the server closed it
        assert not _still_open(ours)
    finally:
        ours.close()
    assert not _still_open(ours)  # closed here


async def test_an_answer_sent_before_the_body_was_read_is_read_after_the_write_fails() -> None:
    """A server that refuses a large request from its head (413) and closes: writing the body
    breaks, and the 413 it sent is still read and reported (not a network error retried), as
    httpcore does. The break is made certain by a socket whose writes after the head fail."""
    from minicode.provider.http_connect import connect
    from minicode.provider.plain_http import endpoint, httpx_user_agent
    from minicode.provider.socket_transport import SocketTransport
    from minicode.provider.types import Message

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    heads: list[bytes] = []

    def refuse() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            heads.append(data.partition(b"\r\n\r\n")[0])
            page = b'{"error": {"message": "request too large"}}'
            conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(page) + page)

    class BreaksAfterTheHead(socket.socket):
        writes = 0

        def sendall(self, data: object, flags: int = 0) -> None:  # type: ignore[override]
            self.writes += 1
            if self.writes > 1:
                raise BrokenPipeError(32, "Broken pipe")
            super().sendall(data, flags)  # type: ignore[arg-type]

    def dial(host: str, _port: int, tls: object, name: str, *, link: Link | None = None) -> socket.socket:
        return BreaksAfterTheHead(fileno=connect("127.0.0.1", port, None, name, link=link).detach())

    threading.Thread(target=refuse, daemon=True).start()
    point = endpoint("http://api.example.com/v1/chat/completions")
    assert point is not None
    sleeps = Sleeps()
    provider = OpenAIProvider(base_url="http://api.example.com/v1", api_key=API_KEY, model="m", sleep=sleeps,
                              transport=SocketTransport(point, None, httpx_user_agent() or "", dial=dial))
    big = ChatRequest(messages=(Message.user("x" * 200_000),))
    try:
        with pytest.raises(APIError, match="HTTP 413.*request too large") as info:
            await text_of(provider, big)
        assert info.value.status == 413 and sleeps.calls == [] and len(heads) == 1
        assert provider._transport._idle == []  # type: ignore[attr-defined]  # half-sent: never reused
    finally:
        listener.close()
