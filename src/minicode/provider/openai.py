"""The OpenAI-compatible Chat Completions adapter.

Owns the HTTP side of SPEC 3: building requests, retries with backoff and ``Retry-After``,
the one silent wire-profile retry after a parseable 400, turning transport failures into
``APIError``s, and closing every exchange on every path (cancellation included). Each send
and read runs on an ``exchange`` thread through the provider's transport (``transport``:
minicode's own keep-alive HTTP/1.1 client for a plain endpoint, else httpx's sync client;
``transport_choice`` picks), which also decodes the SSE stream (``stream_decoder``: ``sse``
framing + ``accumulator`` merging) and hands the event loop a batch of events per read instead
of waking it for every network chunk. The decisions are delegated to pure modules:
``chat_body`` (the body and headers), ``messages`` (JSON shapes), ``api_errors`` (error
bodies), ``wire`` (profiles). The first send of a run may adopt the early first request
(``early``: one-shot and pipe mode send it before this module is even imported) when it is
the same request on the wire. The API key is only ever placed in the Authorization header and
is scrubbed from every error message. Imports no HTTP client itself.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path
from typing import Any, AsyncGenerator, Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from minicode import jsonsafe
from minicode.errors import APIError, ConfigError
from dataclasses import replace
from minicode.provider.body import encode_body
from minicode.provider.call_ids import unique_history_ids
from minicode.provider import early as early_slot
from minicode.provider.chat_body import chat_body, chat_headers
from minicode.provider.api_errors import (
    ErrorInfo,
    api_error,
    error_info_from_body,
    error_info_from_object,
    excerpt,
    parse_retry_after,
    parse_retry_after_ms,
)
from minicode.provider.exchange import Exchange, Head, SocketRegistry
from minicode.provider.net_errors import broke_http, http_reason, lasting_failure
from minicode.provider.tls import LazyTrustContext
from minicode.provider.proxy_env import PROXY_FAILURES, proxy_named, unreachable_proxy
from minicode.provider.transport import BadEndpoint, NetworkError, Transport
from minicode.provider.transport_choice import choose
from minicode.provider.messages import parse_chat_response, validate_messages
from minicode.provider.types import ChatRequest, ChatResponse, RetryNotice, StreamEnd, StreamEvent
from minicode.provider.wire import (
    THINKING_LEVELS,
    WireProfile,
    WireProfileCache,
    heuristic_profile,
    learn_from_400,
)
from minicode.redact import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIProvider"]

MAX_RETRIES = 3
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
JITTER_FRACTION = 0.25
"""Up to this fraction of the backoff is added at random so clients do not retry in step."""


def _random() -> float:
    """``random.random``, imported at the first retry (a run that needs none never loads it)."""
    from random import random

    return random()


MAX_PROFILE_PATCHES = 3
"""A strict server may refuse several of our fields (``thinking``, then ``reasoning_effort``,
``max_tokens``): each 400 that teaches something new patches the profile and retries once."""

Sleep = Callable[[float], Awaitable[None]]


class OpenAIProvider:
    """A ``Provider`` for any OpenAI-compatible ``/chat/completions`` endpoint.

    ``client`` is injectable (tests pass one with a mock transport: every request goes
    through it); when omitted the provider picks its transport (``transport_choice``: with
    ``env`` given and a plain endpoint minicode's own client, else an ``httpx.Client`` it
    creates) and closes it in :meth:`aclose`. Every request runs on its own thread
    (``provider/exchange.py``). ``tls`` is the SSL context (default: httpx's); a
    ``LazyTrustContext`` starts loading its CA bundle in the background here when the endpoint
    is https. ``transport`` replaces that choice (tests). ``sleep``, ``jitter``
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
        client: httpx.Client | None = None,
        tls: ssl.SSLContext | None = None,
        wire_cache: Path | None = None,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] | None = None,
        clock: Callable[[], float] = time.time,
        max_retries: int = MAX_RETRIES,
        env: Mapping[str, str] | None = None,
        transport: Transport | None = None,
    ) -> None:
        if thinking is not None and thinking not in THINKING_LEVELS:
            raise ConfigError(f"thinking: must be one of {', '.join(THINKING_LEVELS)}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._url = self.base_url + "/chat/completions"
        parts = urlsplit(base_url)
        self._hostname = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError as e:
            raise ConfigError("model.base_url: the port is not a number") from e
        self._host = self._hostname + (f":{port}" if port else "")
        self._api_key = api_key
        self._thinking = thinking
        self._transport = transport or choose(self._url, api_key, tls=tls, env=env, client=client)
        # Where the proxy of a failed connection is looked up: only an httpx client minicode made
        # goes through one (its own client is chosen only when no proxy variable is set); ``env``
        # is the process environment that client reads.
        self._proxy_env: Mapping[str, str] | None = None
        if client is None and transport is None and type(self._transport).__name__ == "HttpxTransport":
            self._proxy_env = env
        if client is None and isinstance(tls, LazyTrustContext) and parts.scheme.lower() == "https":
            tls.warm_in_background()  # overlaps with the rest of start-up; http never loads it
        self._sockets = SocketRegistry()
        self._cache = WireProfileCache(wire_cache, clock=clock) if wire_cache is not None else None
        self._profile: WireProfile | None = None
        self._sleep = sleep
        self._jitter = jitter or _random
        self._clock = clock
        self._max_retries = max_retries
        self._sent = False  # the first send may adopt the run's early first request

    async def aclose(self) -> None:
        self._transport.close()  # only idle connections are left: closing them does not block

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
        try:
            opener = self._transport.opener("GET", self.base_url + "/models", self._headers(False), None)
        except BadEndpoint as e:
            raise self._bad_endpoint(e) from e
        exchange = Exchange(opener, stream=False, sockets=self._sockets)
        exchange.start()
        try:
            head = await exchange.head()
            if not 200 <= head.status < 300:
                info, _ = await self._http_error(exchange, head)
                raise self._scrub(api_error(info, status=head.status))
            body = await self._read_body(exchange)
        except BadEndpoint as e:
            raise self._bad_endpoint(e) from e
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
            try:
                encoded = encode_body(body)
            except UnicodeEncodeError:  # a lone surrogate reached the conversation: sent as U+FFFD
                encoded = encode_body(jsonsafe.without_lone_surrogates(body))
            # The body goes out chunk by chunk with its length (not one big string a request,
            # and never chunked transfer encoding: some servers refuse it for request bodies).
            headers = {**self._headers(stream), "Content-Length": str(encoded.length), "Content-Type": "application/json"}
            # The first send may adopt the run's early first request when it is this request
            # on the wire (the transport compares; it closes it otherwise).
            early = early_slot.take() if not self._sent else None
            self._sent = True
            opener = self._transport.opener("POST", self._url, headers, encoded, early=early)
        except BadEndpoint as e:
            raise self._bad_endpoint(e) from e
        exchange = Exchange(opener, stream=stream, sockets=self._sockets)
        exchange.start()
        try:
            return exchange, await exchange.head()
        except BadEndpoint as e:
            await exchange.aclose()
            raise self._bad_endpoint(e) from e
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
        return chat_body(self.model, request.messages, request.tools, profile, self._thinking, request.max_tokens,
                         stream=stream)

    def _headers(self, stream: bool) -> dict[str, str]:
        return chat_headers(self._api_key, stream=stream)

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

    def _bad_endpoint(self, e: BadEndpoint) -> APIError:
        # A configuration mistake: retrying cannot help, so it is not a network error.
        return APIError(f"invalid base URL for the model endpoint: {self._scrub_text(str(e))}")

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
