"""Shared builders for the provider tests: SSE bodies, chunks, a provider on a mock client."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any, Iterator

import httpx2

from minicode.provider.openai import OpenAIProvider
from minicode.provider.types import ChatRequest, Message, StreamEvent

BASE_URL = "https://api.example.com/v1"
URL = BASE_URL + "/chat/completions"
API_KEY = "sk-test-SECRET-0123456789"
REQUEST = ChatRequest(messages=(Message.system("sys"), Message.user("hi")))


class Sleeps:
    """An injected ``sleep`` that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_provider(
    *, thinking: str | None = None, model: str = "test-model", base_url: str = BASE_URL,
    wire_cache: Path | None = None, sleeps: Sleeps | None = None, clock: float = 1_700_000_000.0,
) -> OpenAIProvider:
    """A provider with its own httpx2 client (the ``router`` fixture answers for it when a test asks for one)."""
    return OpenAIProvider(
        base_url=base_url,
        api_key=API_KEY,
        model=model,
        thinking=thinking,
        wire_cache=wire_cache,
        sleep=sleeps or Sleeps(),
        jitter=lambda: 0.0,
        clock=lambda: clock,
    )


def chunk(delta: dict[str, Any] | None = None, *, finish: str | None = None, index: int = 0, **top: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"id": "c", "object": "chat.completion.chunk"}
    obj["choices"] = [{"index": index, "delta": delta or {}, "finish_reason": finish}]
    obj.update(top)
    return obj


def sse(*items: dict[str, Any] | bytes | str, done: bool = True) -> bytes:
    out = b""
    for item in items:
        if isinstance(item, bytes):
            out += item
        elif isinstance(item, str):
            out += f"data: {item}\n\n".encode()
        else:
            out += b"data: " + json.dumps(item).encode() + b"\n\n"
    if done:
        out += b"data: [DONE]\n\n"
    return out


def sse_response(body: bytes | Iterator[bytes], status: int = 200) -> httpx2.Response:
    return httpx2.Response(status, headers={"content-type": "text/event-stream"}, content=body)


async def collect(provider: OpenAIProvider, request: ChatRequest = REQUEST) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    gen = provider.stream(request)
    try:
        async for event in gen:
            events.append(event)
    finally:
        await gen.aclose()  # type: ignore[attr-defined]
    return events


def sent_json(route: Any, call: int = -1) -> dict[str, Any]:
    return json.loads(route.calls[call].request.content)


def read_raw_request(conn: socket.socket) -> bytes | None:
    """Read one HTTP/1.1 request (head and Content-Length body) off a server socket, as it
    came; None at EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


def read_http_request(conn: socket.socket) -> bool:
    """Read one HTTP/1.1 request off a server socket; False at EOF."""
    return read_raw_request(conn) is not None
