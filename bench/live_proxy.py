"""The live bench's recording proxy: sits on 127.0.0.1 between an agent and the model server.

Both agents talk to it instead of the server, so both are measured the same way. Every
request is forwarded as it came (method, path, headers but the hop-by-hop ones, body) and the
answer goes back as it comes — status, headers, and the body's bytes unchanged, chunk by
chunk as the server sends them (SSE passes through live); only the HTTP framing is the
proxy's own (a streamed body is re-chunked). Afterwards each exchange is read, not altered:

- from the request: how many ``tool`` messages it carries (the results of calls the agent ran,
  whether the model called natively or the agent recovered a call from text);
- from the response (one JSON body, or the SSE stream's chunks): ``usage`` (prompt and
  completion tokens), llama.cpp's ``timings`` (``prompt_n``: prompt tokens the server
  evaluated, ``cache_n``: taken from its cache), native tool calls, the finish reason.

llama.cpp sends ``timings`` in the final chunk of every stream and ``usage`` only when asked
(``stream_options.include_usage``); when ``usage`` is missing, prompt tokens are
``prompt_n + cache_n`` and output tokens ``predicted_n``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2

__all__ = ["Exchange", "RecordingProxy", "RequestStats", "ResponseStats", "request_stats", "response_stats",
           "written_call"]

MAX_HEADER_BYTES = 65536
MAX_RECORDED_BODY = 32 * 1024 * 1024
"""Bytes of one body kept for reading afterwards (forwarding is never capped)."""
MAX_TEXT = 4000
_WRITTEN_CALL = re.compile(r'<tool_call>|"function"\s*:\s*\{|"name"\s*:\s*"[\w.-]+"\s*,\s*"(?:arguments|parameters)"\s*:')
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                         "upgrade", "host", "content-length"})


@dataclass(frozen=True, slots=True)
class RequestStats:
    messages: int = 0
    tool_results: int = 0
    """``tool`` role messages in the request: results of calls the agent ran (history included)."""
    stream: bool = False


@dataclass(frozen=True, slots=True)
class ResponseStats:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    evaluated: int | None = None
    """llama.cpp ``timings.prompt_n``: prompt tokens the server evaluated."""
    cached: int | None = None
    """llama.cpp ``timings.cache_n``: prompt tokens taken from its cache."""
    tool_calls: int = 0
    """Native tool calls in the response."""
    finish_reason: str | None = None
    text: str = ""
    """The answer's text (the first MAX_TEXT characters), to read a failure by."""
    text_chars: int = 0
    server_ms: float | None = None
    """llama.cpp ``timings.prompt_ms + predicted_ms``: the server's own time for this request (the
    rest of its wall time was queueing behind other clients' requests, or the network)."""


@dataclass(slots=True)
class Exchange:
    method: str
    path: str
    started: float
    status: int = 0
    seconds: float = 0.0
    request: RequestStats = field(default_factory=RequestStats)
    response: ResponseStats = field(default_factory=ResponseStats)
    error: str | None = None
    content_type: str = ""

    @property
    def is_chat(self) -> bool:
        return self.path.rstrip("/").endswith("/chat/completions")


def request_stats(body: bytes) -> RequestStats:
    """What a chat request carries (an unreadable body: nothing)."""
    try:
        data = json.loads(body)
    except ValueError:
        return RequestStats()
    if not isinstance(data, dict):
        return RequestStats()
    messages = data.get("messages")
    messages = messages if isinstance(messages, list) else []
    tools = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")
    return RequestStats(len(messages), tools, data.get("stream") is True)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _sse_payloads(body: bytes) -> list[Any]:
    payloads: list[Any] = []
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
        if not data or data.strip() == b"[DONE]":
            continue
        with contextlib.suppress(ValueError):
            payloads.append(json.loads(data))
    return payloads


def response_stats(body: bytes, content_type: str) -> ResponseStats:
    """Usage, timings, tool calls and finish reason of one chat response (SSE or JSON)."""
    if "text/event-stream" in content_type:
        chunks = [p for p in _sse_payloads(body) if isinstance(p, dict)]
    else:
        try:
            whole = json.loads(body)
        except ValueError:
            return ResponseStats()
        chunks = [whole] if isinstance(whole, dict) else []
    usage: dict[str, Any] = {}
    timings: dict[str, Any] = {}
    calls: set[tuple[object, object]] = set()
    finish: str | None = None
    text: list[str] = []
    for chunk in chunks:
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            timings = chunk["timings"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            index = choice.get("index") if isinstance(choice.get("index"), int) else 0
            finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else finish
            part = choice.get("delta") if isinstance(choice.get("delta"), dict) else choice.get("message")
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("content"), str):
                text.append(part["content"])
            for n, call in enumerate(part.get("tool_calls") or ()):
                if isinstance(call, dict):
                    # a streamed call comes in pieces under one index; a whole message lists each once
                    key = call.get("index") if isinstance(call.get("index"), int) else call.get("id") or n
                    calls.add((index, key))
    evaluated, cached = _int(timings.get("prompt_n")), _int(timings.get("cache_n"))
    prompt = _int(usage.get("prompt_tokens"))
    if prompt is None and evaluated is not None:
        prompt = evaluated + (cached or 0)
    completion = _int(usage.get("completion_tokens"))
    if completion is None:
        completion = _int(timings.get("predicted_n"))
    prompt_ms, predicted_ms = _ms(timings.get("prompt_ms")), _ms(timings.get("predicted_ms"))
    server_ms = prompt_ms + predicted_ms if prompt_ms is not None and predicted_ms is not None else None
    whole = "".join(text)
    return ResponseStats(prompt, completion, evaluated, cached, len(calls), finish, whole[:MAX_TEXT], len(whole),
                         server_ms)


def written_call(stats: ResponseStats) -> bool:
    """The answer made no native call but its text has the shape of one — a JSON object with a
    "name" and "arguments" (fenced or bare), ``<tool_call>``, ``{"function": ...}`` — the way small
    models write calls. A diagnostic count only: whether it was meant as a call is the agent's to decide."""
    return stats.tool_calls == 0 and bool(_WRITTEN_CALL.search(stats.text))


class RecordingProxy:
    """``async with RecordingProxy(upstream) as proxy``: ``proxy.base_url`` stands for the
    upstream base URL (same path); ``proxy.exchanges`` lists what passed, in order."""

    def __init__(self, upstream_base_url: str) -> None:
        parts = urlsplit(upstream_base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) base URL: {upstream_base_url!r}")
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._path = parts.path.rstrip("/")
        self._client = httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=10.0))
        self._server: asyncio.Server | None = None
        self.exchanges: list[Exchange] = []
        self.base_url = ""
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __aenter__(self) -> RecordingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEADER_BYTES)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}{self._path}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
        await self._client.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the agent went away or sent no HTTP: nothing to answer
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Forward one request and its answer; False when the connection is to be closed."""
        head = await reader.readuntil(b"\r\n\r\n")
        method, target, headers = _parse_head(head)
        body = await _read_body(reader, headers)
        exchange = Exchange(method, target, time.monotonic())
        self.exchanges.append(exchange)
        if exchange.is_chat:
            exchange.request = request_stats(body)
        keep_alive = not any(k == "connection" and v.lower() == "close" for k, v in headers)
        forward = [(k, v) for k, v in headers if k not in _HOP_BY_HOP]
        # a Request of its own, not client.build_request: that would add the client's default headers
        request = httpx2.Request(method, self._origin + target, headers=forward, content=body)
        recorded = bytearray()
        self._in_flight += 1
        self._idle.clear()
        relay = asyncio.ensure_future(self._relay(exchange, request, writer, recorded))
        gone = asyncio.ensure_future(_closed(reader))
        try:
            await asyncio.wait((relay, gone), return_when=asyncio.FIRST_COMPLETED)
            if not relay.done():
                # the agent went away (killed at its time limit) while the server works: closing the
                # upstream request makes it stop, which matters on a shared server
                relay.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await relay
            elif not isinstance(relay.exception(), ConnectionError):
                return relay.result() and keep_alive
            # gone while waiting, or a write to it failed (the relay closed the upstream request)
            exchange.error = exchange.error or "the agent closed the connection before the answer ended"
            return False
        finally:
            gone.cancel()
            exchange.seconds = time.monotonic() - exchange.started
            if exchange.is_chat and exchange.status:
                exchange.response = response_stats(bytes(recorded), exchange.content_type)
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    async def _relay(self, exchange: Exchange, request: httpx2.Request, writer: asyncio.StreamWriter,
                     recorded: bytearray) -> bool:
        """Send the request upstream and its answer back; False when the connection cannot be reused."""
        try:
            response = await self._client.send(request, stream=True)
        except httpx2.HTTPError as e:
            exchange.error = f"upstream: {type(e).__name__}: {e}"
            message = json.dumps({"error": {"message": f"live bench proxy: {exchange.error}"}}).encode()
            exchange.status = 502
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\n"
                         b"content-length: %d\r\n\r\n%s" % (len(message), message))
            await writer.drain()
            return True
        try:
            exchange.status = response.status_code
            exchange.content_type = response.headers.get("content-type", "")
            lines = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}".encode("latin-1")]
            lines += [k + b": " + v for k, v in response.headers.raw if k.lower().decode("latin-1") not in _HOP_BY_HOP]
            bodiless = request.method == "HEAD" or response.status_code in (204, 304) or response.status_code < 200
            if not bodiless:
                lines.append(b"transfer-encoding: chunked")
            writer.write(b"\r\n".join(lines) + b"\r\n\r\n")
            await writer.drain()
            if not bodiless:
                async for chunk in response.aiter_raw():
                    if chunk:
                        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        await writer.drain()
                        if len(recorded) < MAX_RECORDED_BODY:
                            recorded += chunk
                writer.write(b"0\r\n\r\n")
                await writer.drain()
            return True
        except httpx2.HTTPError as e:
            exchange.error = f"upstream broke off: {type(e).__name__}: {e}"
            return False  # the agent saw a body cut short: the connection cannot be reused
        finally:
            await response.aclose()

    async def idle(self, timeout: float) -> bool:
        """Wait until no request is in flight (at most ``timeout`` seconds); False if one still is."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True


async def _closed(reader: asyncio.StreamReader) -> None:
    """Returns once the agent has closed its side (EOF seen, nothing left unread); reads nothing."""
    while not reader.at_eof():
        await asyncio.sleep(0.2)


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    if not target.startswith("/"):
        raise ValueError(f"not an origin-form target: {target[:80]!r}")
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
    return method, target, headers


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]]) -> bytes:
    values = dict(headers)
    if "chunked" in values.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailers
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    return await reader.readexactly(int(values.get("content-length", "0")))
