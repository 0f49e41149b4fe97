"""The OpenAI-compatible Chat Completions adapter: the only module that imports httpx.

Owns the HTTP side of SPEC 3: building and sending requests, retries with backoff and
``Retry-After``, the one silent wire-profile retry after a parseable 400, reading the SSE
stream to ``[DONE]``, and closing the response on every path (cancellation included).
The decisions are delegated to pure modules: ``sse`` (framing), ``accumulator`` (chunk
merging), ``messages`` (JSON shapes), ``api_errors`` (error bodies), ``wire`` (profiles).
The API key is only ever placed in the Authorization header and is scrubbed from every
error message.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any, AsyncGenerator, Awaitable, Callable
from urllib.parse import urlsplit

import httpx

from minicode.errors import APIError, ConfigError, ProtocolError
from minicode.provider.accumulator import StreamAccumulator
from minicode.provider.api_errors import (
    MAX_RETRY_AFTER_SECONDS,
    ErrorInfo,
    api_error,
    error_info_from_body,
    error_info_from_object,
    parse_retry_after,
)
from minicode.provider.messages import parse_chat_response, to_openai, tool_spec_to_openai, validate_messages
from minicode.provider.sse import SSEDecoder, SSEEvent
from minicode.provider.types import (
    ChatRequest,
    ChatResponse,
    ReasoningDelta,
    RetryNotice,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from minicode.provider.wire import (
    THINKING_LEVELS,
    WireProfile,
    WireProfileCache,
    heuristic_profile,
    learn_from_400,
    profile_fields,
)
from minicode.redact import redact

__all__ = ["OpenAIProvider"]

MAX_RETRIES = 3
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
JITTER_FRACTION = 0.25
"""Up to this fraction of the backoff is added at random so clients do not retry in step."""
DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=15.0)
"""``read`` bounds the silence between two chunks: thinking models may pause for minutes."""
MAX_BODY_BYTES = 32 * 1024 * 1024
"""A non-streaming answer larger than this is refused rather than held in memory."""
ERROR_BODY_BYTES = 64 * 1024
"""Only the beginning of an error body is read: enough for any message, bounded for HTML pages."""

Sleep = Callable[[float], Awaitable[None]]


class OpenAIProvider:
    """A ``Provider`` for any OpenAI-compatible ``/chat/completions`` endpoint.

    ``client`` is injectable (tests pass one with a mock transport); when omitted the
    provider creates and owns one and closes it in :meth:`aclose`. ``sleep``, ``jitter``
    (a uniform [0, 1) source) and ``clock`` make backoff testable. ``wire_cache`` is the
    learned-profile file; ``None`` keeps learned profiles in memory only.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        thinking: str | None = None,
        client: httpx.AsyncClient | None = None,
        wire_cache: Path | None = None,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.time,
        max_retries: int = MAX_RETRIES,
    ) -> None:
        if thinking is not None and thinking not in THINKING_LEVELS:
            raise ConfigError(f"thinking: must be one of {', '.join(THINKING_LEVELS)}")
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        parts = urlsplit(base_url)
        self._hostname = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError as e:
            raise ConfigError("model.base_url: the port is not a number") from e
        self._host = self._hostname + (f":{port}" if port else "")
        self._api_key = api_key
        self._thinking = thinking
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
        self._cache = WireProfileCache(wire_cache, clock=clock) if wire_cache is not None else None
        self._profile: WireProfile | None = None
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock
        self._max_retries = max_retries

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    # --- Provider API -------------------------------------------------------------------

    async def chat(self, request: ChatRequest) -> ChatResponse:
        validate_messages(request.messages)
        response = await self._open(request, stream=False)
        try:
            return await self._json_answer(response)
        finally:
            await response.aclose()

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        validate_messages(request.messages)
        response = await self._open(request, stream=True)
        try:
            async with aclosing(self._read_stream(response)) as events:
                async for event in events:
                    yield event
        finally:
            # Runs on success, error, generator close and task cancellation alike.
            await response.aclose()

    # --- sending, retrying --------------------------------------------------------------

    async def _open(self, request: ChatRequest, *, stream: bool) -> httpx.Response:
        """Send until a 2xx response (headers only) is in hand; retries per SPEC 3.3/3.4."""
        profile = await self._current_profile()
        attempt = 0
        hint_used = False  # the profile may be patched once per request
        unconfirmed = False  # a patched profile is learned once the server accepts it
        while True:
            body = self._body(request, profile, stream=stream)
            try:
                response = await self._send(body, stream=stream)
            except httpx.HTTPError as e:
                if attempt >= self._max_retries:
                    raise self._network_error(e) from e
                await self._wait_to_retry(request, attempt, None, _network_reason(e))
                attempt += 1
                continue
            if unconfirmed and response.status_code != 400:
                unconfirmed = False
                try:
                    await self._remember(profile)  # the patch worked: learn it
                except BaseException:
                    await response.aclose()  # cancelled while writing the cache
                    raise
            if 200 <= response.status_code < 300:
                return response  # redirects are not followed: a moved endpoint is a config error
            info, retry_after = await self._http_error(response)
            error = self._scrub(api_error(info, status=response.status_code))
            if response.status_code == 400 and not hint_used and not error.context_overflow:
                learned = learn_from_400(profile, info.message, info.param)
                if learned is not None and self._body(request, learned, stream=stream) != body:
                    profile, hint_used, unconfirmed = learned, True, True
                    continue  # the silent, one-time retry of SPEC 3.4
            if not error.retryable or attempt >= self._max_retries:
                raise error
            await self._wait_to_retry(request, attempt, retry_after, _http_reason(response.status_code))
            attempt += 1

    async def _wait_to_retry(self, request: ChatRequest, attempt: int, retry_after: float | None,
                             reason: str) -> None:
        """Tell ``request.on_retry`` (before waiting: the user sees why nothing arrives), then wait."""
        delay = self._backoff(attempt, retry_after)
        if request.on_retry is not None:
            request.on_retry(RetryNotice(attempt + 2, self._max_retries + 1, delay, reason))
        await self._sleep(delay)

    async def _send(self, body: dict[str, Any], *, stream: bool) -> httpx.Response:
        request = self._client.build_request("POST", self._url, json=body, headers=self._headers(stream))
        try:
            return await self._client.send(request, stream=True)
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as e:
            # A configuration mistake: retrying cannot help, so it is not a network error.
            raise APIError(f"invalid base URL for the model endpoint: {self._scrub_text(str(e))}") from e

    async def _current_profile(self) -> WireProfile:
        if self._profile is None:
            cached = await asyncio.to_thread(self._cache.get, self._host, self.model) if self._cache else None
            self._profile = cached or heuristic_profile(self._hostname, self.model)
        return self._profile

    async def _remember(self, profile: WireProfile) -> None:
        self._profile = profile
        if self._cache is not None:
            await asyncio.to_thread(self._cache.put, self._host, self.model, profile)

    def _body(self, request: ChatRequest, profile: WireProfile, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": [to_openai(m) for m in request.messages]}
        if request.tools:
            body["tools"] = [tool_spec_to_openai(t) for t in request.tools]
        body.update(profile_fields(profile, self._thinking, request.max_tokens))
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _headers(self, stream: bool) -> dict[str, str]:
        headers = {"Accept": "text/event-stream" if stream else "application/json"}
        if self._api_key:  # a local server may need no key at all
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        delay = min(BACKOFF_BASE_SECONDS * 2.0**attempt, BACKOFF_MAX_SECONDS)
        return delay + delay * JITTER_FRACTION * self._jitter()

    async def _http_error(self, response: httpx.Response) -> tuple[ErrorInfo, float | None]:
        try:
            raw = await self._read_body(response, limit=ERROR_BODY_BYTES, truncate=True)
        except APIError:
            raw = b""  # the status alone still tells what happened
        finally:
            await response.aclose()
        info = error_info_from_body(raw, response.reason_phrase)
        retry_after = parse_retry_after(response.headers.get("retry-after"), now=self._clock())
        if retry_after is None:
            retry_after = _retry_after_ms(response.headers.get("retry-after-ms"))
        return info, retry_after

    async def _read_body(self, response: httpx.Response, *, limit: int, truncate: bool = False) -> bytes:
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    if truncate:
                        break  # an error body: its beginning is enough
                    raise APIError(f"response body larger than {limit // (1024 * 1024)} MiB")
                chunks.append(chunk)
        except httpx.HTTPError as e:
            raise self._network_error(e) from e
        return b"".join(chunks)

    async def _json_answer(self, response: httpx.Response) -> ChatResponse:
        body = await self._read_body(response, limit=MAX_BODY_BYTES)
        try:
            data = json.loads(body)
        except ValueError as e:
            raise APIError(f"malformed response: the body is not JSON ({_excerpt(body)})") from e
        if not (isinstance(data, dict) and "choices" in data):
            info = error_info_from_object(data)
            if info is not None:
                raise self._scrub(api_error(info, status=response.status_code))
        return parse_chat_response(data)

    # --- reading a stream ---------------------------------------------------------------

    async def _read_stream(self, response: httpx.Response) -> AsyncGenerator[StreamEvent, None]:
        if "json" in response.headers.get("content-type", ""):
            # Some servers answer a streaming request with one JSON body (often an error).
            for event in _answer_events(await self._json_answer(response)):
                yield event
            return
        acc = StreamAccumulator()
        async with aclosing(self._sse_events(response)) as sses:
            async for sse in sses:
                out: list[StreamEvent] = []
                done = self._handle_event(sse, acc, out)
                for event in out:
                    yield event
                if done:
                    yield StreamEnd(acc.response())
                    return
        raise APIError("the stream ended before [DONE]; the answer is incomplete")

    async def _sse_events(self, response: httpx.Response) -> AsyncGenerator[SSEEvent, None]:
        decoder = SSEDecoder()
        try:
            async for chunk in response.aiter_bytes():
                for sse in decoder.feed(chunk):
                    yield sse
            for sse in decoder.close():
                yield sse
        except httpx.HTTPError as e:
            # Not marked as a network error: content may already be out, so it is never re-sent.
            raise APIError(f"the connection broke during the stream ({self._host}): "
                           f"{self._scrub_text(str(e)) or type(e).__name__}") from e
        except ProtocolError as e:
            raise APIError(f"malformed stream: {e}") from e

    def _handle_event(self, sse: SSEEvent, acc: StreamAccumulator, out: list[StreamEvent]) -> bool:
        """Apply one SSE event; return True at ``[DONE]``. In-stream errors raise ``APIError``."""
        if sse.error is not None or sse.event == "error":
            raise self._scrub(api_error(error_info_from_body((sse.error or sse.data).encode()), status=None))
        data = sse.data.strip()
        if sse.event == "ping" or not data:
            return False
        if data == "[DONE]":
            return True
        try:
            chunk = json.loads(data)
        except ValueError as e:
            raise APIError(f"malformed stream: a chunk is not JSON ({_excerpt(data.encode())})") from e
        try:
            out.extend(acc.add(chunk))
        except APIError as e:
            self._scrub(e)
            raise
        return False

    # --- errors -------------------------------------------------------------------------

    def _network_error(self, e: httpx.HTTPError) -> APIError:
        detail = self._scrub_text(str(e)) or type(e).__name__
        return APIError(f"cannot reach the model endpoint ({self._host}): {detail}", network=True)

    def _scrub_text(self, text: str) -> str:
        return redact(text, (self._api_key,))

    def _scrub(self, error: APIError) -> APIError:
        scrubbed = self._scrub_text(error.message)
        if scrubbed != error.message:
            error.message = scrubbed
            error.args = (scrubbed,)
        return error


_STATUS_REASONS = {408: "request timeout", 409: "conflict", 429: "rate limited", 500: "server error",
                   502: "bad gateway", 503: "service unavailable", 504: "gateway timeout"}


def _http_reason(status: int) -> str:
    """Why a retry happens, short: "HTTP 429 rate limited" (the body may hold secrets or noise)."""
    return f"HTTP {status} {_STATUS_REASONS.get(status, 'server error' if status >= 500 else 'error')}"


def _network_reason(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.ConnectError):
        return "cannot connect"
    if isinstance(error, httpx.TimeoutException):
        return "timed out"
    return "network error"


def _retry_after_ms(value: str | None) -> float | None:
    """OpenAI's ``retry-after-ms`` header, clamped like ``Retry-After``."""
    try:
        seconds = float(value) / 1000 if value else None
    except ValueError:
        return None
    if seconds is None or seconds != seconds:
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def _excerpt(raw: bytes, limit: int = 80) -> str:
    text = " ".join(raw.decode("utf-8", errors="replace").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _answer_events(answer: ChatResponse) -> list[StreamEvent]:
    """The events of a complete answer that arrived as one JSON body."""
    message = answer.message
    events: list[StreamEvent] = []
    if message.reasoning:
        events.append(ReasoningDelta(message.reasoning))
    if message.content:
        events.append(TextDelta(message.content))
    for index, call in enumerate(message.tool_calls):
        events.append(ToolCallDelta(index=index, name=call.name, arguments_fragment=call.arguments))
    if answer.usage is not None:
        events.append(UsageUpdate(answer.usage))
    events.append(StreamEnd(answer))
    return events
