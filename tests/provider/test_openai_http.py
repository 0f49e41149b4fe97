"""HTTP errors, retries with backoff, cancellation and secrecy of the API key."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import threading
from email.utils import formatdate
from typing import Iterator

import httpx2
import pytest

from minicode.errors import APIError
from minicode.provider.openai import OpenAIProvider
from minicode.provider.http import NetworkError
from minicode.provider.types import ChatRequest, Message, RetryNotice, StreamEnd, TextDelta

from .helpers import API_KEY, BASE_URL, REQUEST, URL, Sleeps, chunk, collect, make_provider, sse, sse_response
from .mock_router import Router

HTML_502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>"


def ok_stream() -> httpx2.Response:
    return sse_response(sse(chunk({"content": "ok"}), chunk({}, finish="stop")))


@pytest.mark.parametrize(
    ("status", "body", "message", "calls"),
    [
        (400, {"error": {"message": "Invalid 'messages'", "type": "invalid_request_error", "code": None}}, "Invalid 'messages'", 1),
        (401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}, "Incorrect API key", 1),
        (400, {"object": "error", "message": "flat failure", "type": "BadRequestError", "code": 400}, "flat failure", 1),
        (401, "<html><body><h1>401 Authorization Required</h1></body></html>", "401 Authorization Required", 1),
        (429, {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}, "Rate limit", 4),
        (500, {"message": "flat internal", "type": "server_error"}, "flat internal", 4),
        (502, HTML_502, "502 Bad Gateway (the server answered with a web page", 4),
        (500, "", "Internal Server Error", 4),
    ],
)
async def test_http_errors_parsed_and_retried_only_when_retryable(
    router: Router, status: int, body: object, message: str, calls: int
) -> None:
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    route = router.post(URL).mock(return_value=httpx2.Response(status, content=content))
    sleeps = Sleeps()
    with pytest.raises(APIError) as info:
        await collect(make_provider(sleeps=sleeps))
    error = info.value
    assert error.status == status and message in str(error) and str(error).startswith(f"HTTP {status}: ")
    assert len(str(error)) < 260
    assert route.call_count == calls
    assert sleeps.calls == ([1.0, 2.0, 4.0] if calls == 4 else [])  # exponential, jitter 0


async def test_backoff_jitter_is_added() -> None:
    provider = OpenAIProvider(base_url="http://x/v1", api_key="", model="m", client=httpx2.Client(), jitter=lambda: 1.0)
    assert [provider._backoff(a, None) for a in range(3)] == [1.25, 2.5, 5.0]


async def test_context_overflow_openai_and_vllm(router: Router) -> None:
    openai = {"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
                        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
    vllm = {"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
            "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
            "type": "BadRequestError", "param": None, "code": 400}
    route = router.post(URL).mock(side_effect=[httpx2.Response(400, json=openai), httpx2.Response(400, json=vllm)])
    for _ in range(2):
        with pytest.raises(APIError) as info:
            await collect(make_provider(thinking="high"))
        assert info.value.context_overflow and info.value.status == 400
    assert route.call_count == 2  # neither retried (not even as a wire-profile hint)


async def test_429_retry_after_seconds_then_success(router: Router) -> None:
    route = router.post(URL).mock(side_effect=[
        httpx2.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}}),
        ok_stream(),
    ])
    sleeps = Sleeps()
    events = await collect(make_provider(sleeps=sleeps))
    assert isinstance(events[-1], StreamEnd) and events[-1].response.message.content == "ok"
    assert sleeps.calls == [7.0] and route.call_count == 2


async def test_503_retry_after_http_date_is_honoured_and_capped(router: Router) -> None:
    now = 1_700_000_000.0
    router.post(URL).mock(side_effect=[
        httpx2.Response(503, headers={"Retry-After": formatdate(now + 12, usegmt=True)}, text="busy"),
        httpx2.Response(503, headers={"Retry-After": "86400"}, text="busy"),
        ok_stream(),
    ])
    sleeps = Sleeps()
    await collect(make_provider(sleeps=sleeps, clock=now))
    assert sleeps.calls == [12.0, 60.0]


async def test_429_insufficient_quota_not_retried(router: Router) -> None:
    body = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                      "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
    route = router.post(URL).mock(return_value=httpx2.Response(429, json=body))
    sleeps = Sleeps()
    with pytest.raises(APIError) as info:
        await collect(make_provider(sleeps=sleeps))
    assert info.value.quota_exhausted and not info.value.retryable
    assert route.call_count == 1 and sleeps.calls == []


async def test_error_after_content_started_is_not_retried(router: Router) -> None:
    failing = sse(chunk({"content": "half"}), b'data: {"error": {"message": "upstream 500", "code": 500}}\n\n', done=False)
    route = router.post(URL).mock(side_effect=[sse_response(failing), ok_stream()])
    seen: list = []
    with pytest.raises(APIError, match="upstream 500"):
        async for event in make_provider().stream(REQUEST):
            seen.append(event)
    assert seen == [TextDelta("half")] and route.call_count == 1


async def test_connection_drop_mid_stream_is_not_retried(router: Router) -> None:
    def dropping() -> Iterator[bytes]:
        yield sse(chunk({"content": "half"}), done=False)
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body")

    route = router.post(URL).mock(side_effect=[sse_response(dropping()), ok_stream()])
    with pytest.raises(APIError, match="connection broke") as info:
        await collect(make_provider())
    assert isinstance(info.value.__cause__, NetworkError)  # the HTTP module's, from httpx2's own
    assert isinstance(info.value.__cause__.__cause__, httpx2.RemoteProtocolError)
    assert "peer closed connection without sending complete message body" in str(info.value)
    assert not info.value.retryable and route.call_count == 1


async def test_connect_failure_retried_then_success(router: Router) -> None:
    route = router.post(URL).mock(side_effect=[httpx2.ConnectError("refused"), httpx2.ReadTimeout("slow"), ok_stream()])
    sleeps = Sleeps()
    events = await collect(make_provider(sleeps=sleeps))
    assert isinstance(events[-1], StreamEnd) and route.call_count == 3 and sleeps.calls == [1.0, 2.0]


async def test_connect_failure_gives_up_with_cause(router: Router) -> None:
    route = router.post(URL).mock(side_effect=httpx2.ConnectError("connection refused"))
    with pytest.raises(APIError, match="cannot reach") as info:
        await make_provider().chat(REQUEST)
    assert info.value.network and isinstance(info.value.__cause__, NetworkError)
    assert route.call_count == 4


class _Failing(httpx2.BaseTransport):
    """Fails every request the way httpx2 does: a ConnectError raised from the socket or ssl
    error underneath (a transport of its own: the cause is what the test is about)."""

    def __init__(self, *causes: BaseException | None) -> None:
        self.causes = list(causes)
        self.calls = 0

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        cause = self.causes.pop(0) if len(self.causes) > 1 else self.causes[0]
        if cause is None:
            return ok_stream()
        raise httpx2.ConnectError(str(cause), request=request) from cause


def _provider(transport: _Failing, sleeps: Sleeps) -> OpenAIProvider:
    return OpenAIProvider(base_url=BASE_URL, api_key=API_KEY, model="test-model", thinking=None,
                          client=httpx2.Client(transport=transport), wire_cache=None, sleep=sleeps,
                          jitter=lambda: 0.0, clock=lambda: 1_700_000_000.0)


def _wrong_version() -> ssl.SSLError:
    error = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    error.reason = "WRONG_VERSION_NUMBER"  # as OpenSSL sets it when a plain-http server answers
    return error


@pytest.mark.parametrize("cause, said", [
    (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "no such host — check the host in [model].base_url"),
    (_wrong_version(), "is it a plain http:// server?"),
])
async def test_a_failure_retrying_cannot_fix_is_said_at_once(cause: BaseException, said: str) -> None:
    transport, sleeps = _Failing(cause), Sleeps()
    with pytest.raises(APIError, match="cannot reach the model endpoint") as info:
        await collect(_provider(transport, sleeps))
    assert said in str(info.value)
    assert info.value.lasting and not info.value.retryable
    assert transport.calls == 1 and sleeps.calls == []


async def test_a_temporary_dns_failure_is_still_retried() -> None:
    transport = _Failing(socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), None)
    events = await collect(_provider(transport, Sleeps()))
    assert isinstance(events[-1], StreamEnd) and transport.calls == 2


async def test_api_key_never_in_error_messages(router: Router) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {API_KEY}.", "code": "invalid_api_key"}}
    in_stream = sse(f'{{"error": {{"message": "bad key {API_KEY}"}}}}'.encode().join([b"data: ", b"\n\n"]), done=False)
    router.post(URL).mock(side_effect=[
        httpx2.Response(401, json=echo),
        sse_response(in_stream),
        httpx2.ConnectError(f"failed for https://u:{API_KEY}@host"),
        httpx2.ConnectError(API_KEY), httpx2.ConnectError(API_KEY), httpx2.ConnectError(API_KEY),
    ])
    errors = []
    for _ in range(3):
        with pytest.raises(APIError) as info:
            await collect(make_provider())
        errors.append(info.value)
    for error in errors:
        assert API_KEY not in str(error) and API_KEY not in repr(error.args)
    assert "[redacted]" in str(errors[0])


async def test_a_placeholder_key_too_short_to_be_secret_does_not_mangle_errors(router: Router) -> None:
    # Local servers often take a dummy key like "x"; replacing every "x" would garble the message.
    router.post(URL).mock(return_value=httpx2.Response(401, json={"error": {"message": "bad key x for xyz"}}))
    provider = OpenAIProvider(base_url=BASE_URL, api_key="x", model="m", client=httpx2.Client())
    with pytest.raises(APIError) as info:
        await collect(provider)
    assert "bad key x for xyz" in str(info.value) and "[redacted]" not in str(info.value)


async def test_empty_key_sends_no_authorization(router: Router) -> None:
    route = router.post("http://127.0.0.1:8080/v1/chat/completions").mock(return_value=ok_stream())
    provider = OpenAIProvider(base_url="http://127.0.0.1:8080/v1/", api_key="", model="m", client=httpx2.Client())
    await collect(provider)
    assert "authorization" not in route.calls[0].request.headers


@pytest.mark.parametrize("base_url", ["api.example.com/v1", "http://ho\x01st/v1", "http://[::1/v1", "ftp://host/v1"])
def test_a_base_url_httpx_cannot_request_is_a_config_error_before_any_request(base_url: str) -> None:
    from minicode.errors import ConfigError

    with pytest.raises(ConfigError, match=r"\[model\]\.base_url"):
        OpenAIProvider(base_url=base_url, api_key=API_KEY, model="m")


async def test_the_user_agent_is_minicode_s_and_only_bounded_codings_are_offered(router: Router) -> None:
    from minicode import __version__

    route = router.post(URL).mock(return_value=ok_stream())
    await collect(make_provider())
    headers = route.calls[0].request.headers
    assert headers["user-agent"] == f"minicode/{__version__}"
    assert headers["accept-encoding"] == "gzip, deflate"  # never br/zstd, whatever is installed
    assert headers["content-type"] == "application/json" and "transfer-encoding" not in headers


# --- cancellation -----------------------------------------------------------------------


class Endless(httpx2.SyncByteStream):
    """A response body that sends one chunk and then never ends until it is closed; records
    ``close`` (the provider's reader thread blocks in ``__iter__`` as on a silent socket)."""

    def __init__(self) -> None:
        self.closed = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield sse(chunk({"content": "first"}), done=False)
        self.closed.wait(30)  # the server keeps the connection open until the client leaves

    def close(self) -> None:
        self.closed.set()


def endless_response(endless: Endless) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=endless)


async def test_cancelling_the_consumer_closes_the_stream(router: Router) -> None:
    endless = Endless()
    router.post(URL).mock(return_value=endless_response(endless))
    got_first = asyncio.Event()

    async def consume() -> None:
        async for event in make_provider().stream(REQUEST):
            if event == TextDelta("first"):
                got_first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert await asyncio.to_thread(endless.closed.wait, 5)


async def test_closing_the_generator_closes_the_stream(router: Router) -> None:
    endless = Endless()
    router.post(URL).mock(return_value=endless_response(endless))
    gen = make_provider().stream(REQUEST)
    assert await gen.__anext__() == TextDelta("first")
    await asyncio.wait_for(gen.aclose(), 5)  # type: ignore[attr-defined]
    assert await asyncio.to_thread(endless.closed.wait, 5)  # a bridged server notices on its next poll


async def _wait_for_disconnect(server: object) -> None:
    for _ in range(250):  # the server notices the closed socket on its next heartbeat write
        if server.disconnects:  # type: ignore[attr-defined]
            return
        await asyncio.sleep(0.02)


async def test_cancel_against_a_real_local_server() -> None:
    from tests.support.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI() as server:
        server.script(Reply.hang("first"))
        provider = OpenAIProvider(base_url=server.base_url, api_key="", model="m")
        got_first = asyncio.Event()

        async def consume() -> None:
            async for event in provider.stream(REQUEST):
                if isinstance(event, TextDelta):
                    got_first.set()

        task = asyncio.create_task(consume())
        try:
            await asyncio.wait_for(got_first.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
        finally:
            await provider.aclose()
        await _wait_for_disconnect(server)
        assert server.disconnects == 1


async def test_generator_close_against_a_real_local_server() -> None:
    from tests.support.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI() as server:
        server.script(Reply.hang("first"))
        provider = OpenAIProvider(base_url=server.base_url, api_key="", model="m")
        gen = provider.stream(REQUEST)
        try:
            assert await asyncio.wait_for(gen.__anext__(), 10) == TextDelta("first")
            await asyncio.wait_for(gen.aclose(), 5)  # type: ignore[attr-defined]
            await _wait_for_disconnect(server)
            assert server.disconnects == 1  # while the provider's client is still open
        finally:
            await provider.aclose()


@pytest.mark.parametrize("status", [408, 409])
async def test_408_and_409_are_retried(router: Router, status: int) -> None:
    route = router.post(URL).mock(side_effect=[httpx2.Response(status, text="try again"), ok_stream()])
    sleeps = Sleeps()
    assert isinstance((await collect(make_provider(sleeps=sleeps)))[-1], StreamEnd)
    assert route.call_count == 2 and sleeps.calls == [1.0]


async def test_retry_after_ms_header(router: Router) -> None:
    router.post(URL).mock(side_effect=[httpx2.Response(429, headers={"retry-after-ms": "1500"}, text="x"), ok_stream()])
    sleeps = Sleeps()
    await collect(make_provider(sleeps=sleeps))
    assert sleeps.calls == [1.5]


async def test_redirect_is_an_error_not_an_answer(router: Router) -> None:
    route = router.post(URL).mock(return_value=httpx2.Response(301, headers={"location": "https://elsewhere/"}, text="Moved"))
    with pytest.raises(APIError, match="Moved") as info:
        await collect(make_provider())
    assert info.value.status == 301 and route.call_count == 1


async def test_ping_events_and_comments_are_ignored(router: Router) -> None:
    body = b": OPENROUTER PROCESSING\n\nevent: ping\ndata: ping\n\n" + sse(chunk({"content": "x"}))
    router.post(URL).mock(return_value=sse_response(body))
    events = await collect(make_provider())
    assert events[0] == TextDelta("x") and isinstance(events[-1], StreamEnd)


async def test_each_retry_is_reported_before_its_wait(router: Router) -> None:
    router.post(URL).mock(side_effect=[
        httpx2.Response(429, headers={"Retry-After": "2"}, json={"error": {"message": "slow down"}}),
        httpx2.ConnectError("refused"),
        httpx2.Response(503, text="busy"),
        ok_stream(),
    ])
    order: list[object] = []

    class Recording(Sleeps):
        async def __call__(self, seconds: float) -> None:
            order.append(seconds)

    notices: list[RetryNotice] = []
    request = ChatRequest(REQUEST.messages, on_retry=lambda n: (notices.append(n), order.append(n)))
    events = await collect(make_provider(sleeps=Recording()), request)
    assert isinstance(events[-1], StreamEnd)
    assert notices == [
        RetryNotice(2, 4, 2.0, "HTTP 429 rate limited"),
        RetryNotice(3, 4, 2.0, "cannot connect"),
        RetryNotice(4, 4, 4.0, "HTTP 503 service unavailable"),
    ]
    assert order == [notices[0], 2.0, notices[1], 2.0, notices[2], 4.0]  # told, then waited


async def test_no_retry_notice_when_not_retried_and_on_final_failure(router: Router) -> None:
    router.post(URL).mock(side_effect=[httpx2.Response(401, json={"error": {"message": "bad key"}})]
                          + [httpx2.Response(500, text="x")] * 4)
    notices: list[RetryNotice] = []
    request = ChatRequest(REQUEST.messages, on_retry=notices.append)
    with pytest.raises(APIError):
        await collect(make_provider(), request)
    assert notices == []  # a 401 is not retried
    with pytest.raises(APIError):
        await make_provider().chat(request)
    # three retries reported; the fourth failure is the error itself, not another notice
    assert [(n.attempt, n.reason) for n in notices] == [(2, "HTTP 500 server error"), (3, "HTTP 500 server error"),
                                                        (4, "HTTP 500 server error")]
    assert ChatRequest(REQUEST.messages, on_retry=notices.append) == REQUEST  # not part of the value


@pytest.mark.parametrize("variable, value, said", [
    ("HTTPS_PROXY", "http://user:hunter2secret@::::garbage", "Invalid port"),
    ("ALL_PROXY", "socks5://127.0.0.1:1080", "socksio"),
])
def test_a_proxy_httpx_cannot_use_is_a_config_error_naming_the_variable(
        monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str) -> None:
    from minicode.errors import ConfigError

    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, value)  # httpx2 reads the process environment itself
    with pytest.raises(ConfigError, match=f"the proxy set in {variable} cannot be used") as info:
        OpenAIProvider(base_url=BASE_URL, api_key=API_KEY, model="m", env={variable: value})
    assert said in str(info.value) and "hunter2secret" not in str(info.value)


async def test_a_lone_surrogate_in_the_conversation_is_sent_as_a_replacement_character(router: Router) -> None:
    """Nothing should put one there (streams and session files are repaired), but if a path
    does, the request still goes out — as valid UTF-8 — instead of failing the task."""
    route = router.post(URL).mock(return_value=ok_stream())
    request = ChatRequest(messages=(Message.system("sys"), Message.user("bad \ud800 half")))
    events = await collect(make_provider(), request)
    assert any(isinstance(e, TextDelta) for e in events)
    sent = json.loads(route.calls[0].request.content)
    assert sent["messages"][-1]["content"] == "bad \ufffd half"
