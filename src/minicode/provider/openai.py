"""The OpenAI-compatible Chat Completions adapter.

Owns the HTTP side of SPEC 3: building requests, retries with backoff and ``Retry-After``,
the silent wire-profile retries after a parseable 400, turning network failures into
``APIError``s, and closing every exchange on every path (cancellation included). Each send
and read runs on an ``exchange`` thread through the provider's httpx2 client (``http``), which
also decodes the SSE stream (``stream_decoder``: ``sse`` framing + ``accumulator`` merging)
and hands the event loop a batch of events per read instead of waking it for every network
chunk. The decisions are delegated to pure modules: ``messages`` (JSON shapes), ``api_errors``
(error bodies), ``wire`` (profiles). The API key is only ever placed in the Authorization
header and is scrubbed from every error message.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from minicode import jsonsafe
from minicode.errors import APIError, ConfigError
from minicode.provider.body import encode_body
from minicode.provider.call_ids import unique_history_ids
from minicode.provider.api_errors import (
    ErrorInfo,
    api_error,
    error_info_from_body,
    error_info_from_object,
    excerpt,
    parse_retry_after,
    parse_retry_after_ms,
)
from minicode.provider.exchange import Exchange, Head
from minicode.provider.http import HttpClient, NetworkError
from minicode.provider.messages import (
    merge_user_runs,
    parse_chat_response,
    to_openai,
    tool_spec_to_openai,
    validate_messages,
)
from minicode.provider.net_errors import broke_http, http_reason, lasting_failure
from minicode.provider.proxy_env import PROXY_FAILURES, proxy_named, unreachable_proxy
from minicode.provider.types import ChatRequest, ChatResponse, RetryNotice, StreamEnd, StreamEvent
from minicode.provider.wire import (
    THINKING_LEVELS,
    WireProfile,
    WireProfileCache,
    heuristic_profile,
    learn_from_400,
    profile_fields,
)
from minicode.redact import redact

if TYPE_CHECKING:  # the client type only: ``provider.http`` is the one module that uses httpx2
    import httpx2

__all__ = ["OpenAIProvider"]

MAX_RETRIES = 3
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
JITTER_FRACTION = 0.25
"""Up to this fraction of the backoff is added at random so clients do not retry in step."""


MAX_PROFILE_PATCHES = 3
"""A strict server may refuse several of our fields (``thinking``, then ``reasoning_effort``,
``max_tokens``): each 400 that teaches something new patches the profile and retries once."""

Sleep = Callable[[float], Awaitable[None]]


class OpenAIProvider:
    """A ``Provider`` for any OpenAI-compatible ``/chat/completions`` endpoint.

    Requests go through one httpx2 client, kept (with its connections) until :meth:`aclose`:
    made here from ``env`` (the process environment: the CA bundle, ``provider/ca_bundle.py``;
    proxies as httpx2 reads them), or ``client``, the caller's own (tests' mock transports),
    used as given. Every request runs on a thread of its own (``provider/exchange.py``).
    ``sleep``, ``jitter`` (a uniform [0, 1) source) and ``clock`` make backoff testable.
    ``wire_cache`` is the learned-profile file; ``None`` keeps learned profiles in memory only.
    Raises ``ConfigError`` for what the configuration must fix: the thinking level, a base URL
    httpx2 cannot request, an unusable CA bundle or proxy.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        thinking: str | None = None,
        client: httpx2.Client | None = None,
        wire_cache: Path | None = None,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] | None = None,
        clock: Callable[[], float] = time.time,
        max_retries: int = MAX_RETRIES,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if thinking is not None and thinking not in THINKING_LEVELS:
            raise ConfigError(f"thinking: must be one of {', '.join(THINKING_LEVELS)}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._url = self.base_url + "/chat/completions"
        self._http = HttpClient(self._url, env or {}, client)
        parts = urlsplit(base_url)
        self._hostname = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError as e:
            self._http.close()
            raise ConfigError("[model].base_url: the port is not a number from 1 to 65535") from e
        self._host = self._hostname + (f":{port}" if port else "")
        self._api_key = api_key
        self._thinking = thinking
        # Where the proxy of a failed connection is looked up: the environment the client minicode
        # made reads (a caller's own client has its own settings).
        self._proxy_env = env if client is None else None
        self._cache = WireProfileCache(wire_cache, clock=clock) if wire_cache is not None else None
        self._profile: WireProfile | None = None
        self._sleep = sleep
        self._jitter = jitter or random.random
        self._clock = clock
        self._max_retries = max_retries

    async def aclose(self) -> None:
        self._http.close()

    # --- Provider API -------------------------------------------------------------------

    async def chat(self, request: ChatRequest) -> ChatResponse:
        request = _with_unique_ids(request)
        validate_messages(request.messages)
        exchange, head = await self._open(request, stream=False)
        try:
            return self._json_answer(await self._read_body(exchange), head.status)
        finally:
            await exchange.aclose()

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        request = _with_unique_ids(request)
        validate_messages(request.messages)
        exchange, head = await self._open(request, stream=True)
        try:
            if "json" in head.headers.get("content-type", ""):
                # Some servers answer a streaming request with one JSON body (often an error).
                from minicode.provider.accumulator import answer_events  # loaded after the request, like the decoder

                for event in answer_events(self._json_answer(await self._read_body(exchange), head.status)):
                    yield event
                return
            while True:
                for event in await self._next_events(exchange):
                    if isinstance(event, StreamEnd):
                        exchange.mark_complete()  # even if the consumer stops at this event
                        yield event
                        return
                    yield event
        finally:
            # Runs on success, error, generator close and task cancellation alike.
            await exchange.aclose()

    # --- for probes (``minicode --doctor``) ------------------------------------------

    async def list_models(self) -> object:
        """``GET {base_url}/models``: the parsed JSON body (``provider.catalog`` reads it).

        Raises ``APIError`` like a chat request (HTTP status and the server's message, the
        key scrubbed; ``network`` for a connection failure). Not retried: a probe reports."""
        opener = self._http.opener("GET", self.base_url + "/models", self._headers(False), None)
        exchange = Exchange(opener, stream=False, sockets=self._http.sockets)
        exchange.start()
        try:
            head = await exchange.head()
            if not 200 <= head.status < 300:
                info, _ = await self._http_error(exchange, head)
                raise self._scrub(api_error(info, status=head.status))
            body = await self._read_body(exchange)
        except NetworkError as e:
            raise self._network_error(e) from e
        finally:
            await exchange.aclose()
        try:
            return jsonsafe.loads(body)
        except ValueError as e:
            raise APIError(f"malformed /models answer: the body is not JSON ({excerpt(body)})") from e

    async def wire_profile(self) -> WireProfile:
        """The wire profile the next request uses: learned (cached or this run's) or heuristic."""
        return await self._current_profile()

    # --- sending, retrying --------------------------------------------------------------

    async def _open(self, request: ChatRequest, *, stream: bool) -> tuple[Exchange, Head]:
        """Send until a 2xx response head is in hand; retries per SPEC 3.3/3.4. The caller
        owns the returned exchange (and closes it)."""
        profile = await self._current_profile()
        attempt = 0
        patches = 0  # a 400 may patch the profile once per field it constrains (each retried once)
        unconfirmed = False  # a patched profile is learned once the server accepts it
        while True:
            body = self._body(request, profile, stream=stream)
            try:
                exchange, head = await self._send(body, stream=stream)
            except NetworkError as e:
                error = self._network_error(e)
                if error.lasting or attempt >= self._max_retries:
                    raise error from e
                await self._wait_to_retry(request, attempt, None, "broken HTTP answer" if broke_http(e.name, str(e)) else e.reason)
                attempt += 1
                continue
            if unconfirmed and head.status != 400:
                unconfirmed = False
                try:
                    await self._remember(profile)  # the patch worked: learn it
                except BaseException:
                    await exchange.aclose()  # cancelled while writing the cache
                    raise
            if 200 <= head.status < 300:
                return exchange, head  # redirects are not followed: a moved endpoint is a config error
            info, retry_after = await self._http_error(exchange, head)
            error = self._scrub(api_error(info, status=head.status))
            if head.status == 400 and patches < MAX_PROFILE_PATCHES and not error.context_overflow:
                learned = learn_from_400(profile, info.message, info.param)
                if learned is not None and self._body(request, learned, stream=stream) != body:
                    profile, unconfirmed = learned, True
                    patches += 1
                    continue  # the silent retry of SPEC 3.4: only when the profile changed
            if not error.retryable or attempt >= self._max_retries:
                raise error
            await self._wait_to_retry(request, attempt, retry_after, http_reason(head.status))
            attempt += 1

    async def _wait_to_retry(self, request: ChatRequest, attempt: int, retry_after: float | None,
                             reason: str) -> None:
        """Tell ``request.on_retry`` (before waiting: the user sees why nothing arrives), then wait."""
        delay = self._backoff(attempt, retry_after)
        if request.on_retry is not None:
            request.on_retry(RetryNotice(attempt + 2, self._max_retries + 1, delay, reason))
        await self._sleep(delay)

    async def _send(self, body: dict[str, Any], *, stream: bool) -> tuple[Exchange, Head]:
        """One attempt: the exchange and its response head; closed again if that fails."""
        try:
            encoded = encode_body(body)
        except UnicodeEncodeError:  # a lone surrogate reached the conversation: sent as U+FFFD
            encoded = encode_body(jsonsafe.without_lone_surrogates(body))
        # The body goes out chunk by chunk with its length (not one big string a request,
        # and never chunked transfer encoding: some servers refuse it for request bodies).
        headers = {**self._headers(stream), "Content-Length": str(encoded.length), "Content-Type": "application/json"}
        opener = self._http.opener("POST", self._url, headers, encoded)
        exchange = Exchange(opener, stream=stream, sockets=self._http.sockets)
        exchange.start()
        try:
            return exchange, await exchange.head()
        except BaseException:
            await exchange.aclose()
            raise

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
        """The request body: consecutive user messages merged, tools declared when offered, the
        profile's token-limit and thinking fields, and usage in the stream when streaming."""
        body: dict[str, Any] = {"model": self.model,
                                "messages": [to_openai(m) for m in merge_user_runs(request.messages)]}
        if request.tools:
            body["tools"] = [tool_spec_to_openai(t) for t in request.tools]
        body.update(profile_fields(profile, self._thinking, request.max_tokens))
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.answer_schema is not None and profile.response_format:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "answer", "schema": dict(request.answer_schema)}}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _headers(self, stream: bool) -> dict[str, str]:
        """minicode's own headers (httpx2 adds Host, its defaults and the client's User-Agent).
        The API key goes here and nowhere else."""
        headers = {"Accept": "text/event-stream" if stream else "application/json"}
        if self._api_key:  # a local server may need no key at all
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        delay = min(BACKOFF_BASE_SECONDS * 2.0**attempt, BACKOFF_MAX_SECONDS)
        return delay + delay * JITTER_FRACTION * self._jitter()

    async def _http_error(self, exchange: Exchange, head: Head) -> tuple[ErrorInfo, float | None]:
        try:
            raw = await exchange.body()  # at most the first ERROR_BODY_BYTES
        except (APIError, NetworkError):
            raw = b""  # the status alone still tells what happened
        finally:
            await exchange.aclose()
        info = error_info_from_body(raw, head.reason)
        retry_after = parse_retry_after(head.headers.get("retry-after"), now=self._clock())
        if retry_after is None:
            retry_after = parse_retry_after_ms(head.headers.get("retry-after-ms"))
        return info, retry_after

    async def _read_body(self, exchange: Exchange) -> bytes:
        try:
            return await exchange.body()
        except NetworkError as e:
            raise self._network_error(e) from e

    def _json_answer(self, body: bytes, status: int) -> ChatResponse:
        try:
            data = jsonsafe.loads(body)
        except ValueError as e:
            raise APIError(f"malformed response: the body is not JSON ({excerpt(body)})") from e
        if not (isinstance(data, dict) and "choices" in data):
            info = error_info_from_object(data)
            if info is not None:
                raise self._scrub(api_error(info, status=status))
        return parse_chat_response(data)

    # --- reading a stream ---------------------------------------------------------------

    async def _next_events(self, exchange: Exchange) -> list[StreamEvent]:
        """The events of the exchange's next read(s); failures as ``APIError``s."""
        try:
            return await exchange.batch()
        except NetworkError as e:
            # Not marked as a network error: content may already be out, so it is never re-sent.
            raise APIError(f"the connection broke during the stream ({self._host}): "
                           f"{self._scrub_text(str(e)) or e.name}") from e
        except APIError as e:
            raise self._scrub(e)

    # --- errors -------------------------------------------------------------------------

    def _network_error(self, e: NetworkError) -> APIError:
        detail = self._scrub_text(str(e)) or e.name
        if e.name in PROXY_FAILURES and self._proxy_env is not None and (
                proxy := proxy_named(self._url, self._proxy_env)) is not None:
            return APIError(unreachable_proxy(proxy, self._host, detail), network=True)
        if (lasting := lasting_failure(e, self._hostname)) is not None:
            return APIError(f"cannot reach the model endpoint: {self._scrub_text(lasting)}", network=True, lasting=True)
        if broke_http(e.name, str(e)):
            return APIError(f"the model endpoint ({self._host}) broke the HTTP protocol: {detail}"
                            " (check that [model].base_url is an OpenAI-compatible API)", network=True)
        return APIError(f"cannot reach the model endpoint ({self._host}): {detail}", network=True)

    def _scrub_text(self, text: str) -> str:
        return redact(text, (self._api_key,))

    def _scrub(self, error: APIError) -> APIError:
        scrubbed = self._scrub_text(error.message)
        if scrubbed != error.message:
            error.message = scrubbed
            error.args = (scrubbed,)
        return error


def _with_unique_ids(request: ChatRequest) -> ChatRequest:
    """The request with each batch's call ids unique: a session written before duplicate ids
    were renamed on arrival (``call_ids``) is sent as a valid conversation, not refused."""
    messages = unique_history_ids(request.messages)
    return request if messages is request.messages else replace(request, messages=tuple(messages))
