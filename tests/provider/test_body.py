"""The request body in chunks (provider/body.py): the same bytes as one JSON string, sent
with Content-Length (never chunked), no allocation much larger than one message."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Any

import httpx2
import pytest

from minicode.provider.body import CHUNK_BYTES, RequestBody, encode_body
from minicode.provider.messages import to_openai, tool_spec_to_openai
from minicode.provider.openai import OpenAIProvider
from minicode.provider.types import ChatRequest, Message, ToolCall, ToolSpec

from tests.provider.helpers import API_KEY, collect, sse, chunk


def _old_bytes(body: Any) -> bytes:
    """What httpx2's ``json=`` sent before: one string, encoded."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _conversation(turns: int, answer: str = "ok ✓ 世界 \U0001f600 \"quoted\" \\ back\nline") -> list[Message]:
    messages = [Message.system("sys"), Message.user("task")]
    for i in range(turns):
        call = ToolCall(f"call_{i}", "read", json.dumps({"path": f"f{i}.py"}))
        messages.append(Message(role="assistant", content=None, tool_calls=(call,)))
        messages.append(Message.tool(f"call_{i}", (answer * 50) + str(i)))
        messages.append(Message(role="assistant", content=answer * (i % 7)))
        messages.append(Message.user(f"next {i}"))
    return messages


def _body(messages: list[Message], tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [to_openai(m) for m in messages]}
    if tools:
        spec = ToolSpec("read", "Read a file ✓", {"type": "object", "properties": {"path": {"type": "string"}}})
        body["tools"] = [tool_spec_to_openai(spec)]
    body.update({"max_tokens": 8192, "stream": True, "stream_options": {"include_usage": True}})
    return body


@pytest.mark.parametrize("turns", [0, 1, 40, 400])
@pytest.mark.parametrize("chunk_bytes", [1, 100, CHUNK_BYTES])
def test_the_chunks_join_to_exactly_the_bytes_of_one_json_string(turns: int, chunk_bytes: int) -> None:
    body = _body(_conversation(turns))
    encoded = encode_body(body, chunk_bytes)
    assert encoded.joined() == _old_bytes(body)
    assert encoded.length == len(_old_bytes(body))
    assert encoded == _old_bytes(body)


def test_bodies_without_split_fields_and_odd_values_are_the_same_bytes() -> None:
    for body in ({}, {"model": "m"}, {"messages": []}, {"tools": "not a list", "x": [1, 2.5, None, True]},
                 {"messages": [{"content": ""}], "nested": {"a": {"b": ["é", "\u2028"]}}}):
        assert encode_body(body).joined() == _old_bytes(body)


def test_a_long_body_is_many_chunks_none_much_larger_than_one_message() -> None:
    body = _body(_conversation(400))
    encoded = encode_body(body)
    assert encoded.length > 10 * CHUNK_BYTES
    assert len(encoded.chunks) > 10
    largest_message = max(len(json.dumps(m, ensure_ascii=False).encode()) for m in body["messages"])
    assert max(map(len, encoded.chunks)) <= 4 * (CHUNK_BYTES + largest_message)


def test_a_message_larger_than_a_chunk_is_its_own_chunk() -> None:
    big = "x" * (3 * CHUNK_BYTES)
    body = _body([Message.system("s"), Message.user(big), Message.user("after")])
    encoded = encode_body(body)
    assert encoded.joined() == _old_bytes(body)
    assert any(big.encode() in c for c in encoded.chunks)


def test_iteration_repeats_and_digest_matches_the_joined_body() -> None:
    import hashlib

    encoded = encode_body(_body(_conversation(30)))
    assert b"".join(encoded) == b"".join(encoded) == encoded.joined()
    assert encoded.digest() == hashlib.sha256(encoded.joined()).hexdigest()
    assert encoded == encode_body(_body(_conversation(30)))
    assert encoded != encode_body(_body(_conversation(31)))
    assert "chunks" in repr(encoded)


def test_a_lone_surrogate_raises_like_the_one_string_encoding() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode_body({"messages": [{"content": "bad \ud800"}]})


def test_nan_is_refused_like_httpx_json() -> None:
    with pytest.raises(ValueError):
        encode_body({"temperature": float("nan")})


def test_an_empty_chunk_list_is_an_empty_body() -> None:
    assert RequestBody(()).length == 0 and RequestBody(()).joined() == b""


# --- on the wire --------------------------------------------------------------------------


class _OneRequestServer:
    """A socket server that records the raw bytes of one HTTP request and answers a stream."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.raw = b""
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        conn, _ = self._sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            while len(body) < length:
                body += conn.recv(65536)
            self.raw = head + b"\r\n\r\n" + body
            payload = sse(chunk({"role": "assistant", "content": "hi"}), chunk(finish="stop"))
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                         b"content-length: " + str(len(payload)).encode() + b"\r\nconnection: close\r\n\r\n" + payload)

    def close(self) -> None:
        self._thread.join(timeout=10)
        self._sock.close()


async def test_a_long_request_goes_out_with_content_length_and_the_same_bytes() -> None:
    server = _OneRequestServer()
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{server.port}/v1", api_key=API_KEY, model="m",
                              client=httpx2.Client(), sleep=lambda s: asyncio.sleep(0))
    messages = _conversation(200)
    try:
        await collect(provider, ChatRequest(messages=tuple(messages)))
    finally:
        server.close()
        await provider.aclose()
    head, _, body = server.raw.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    assert b"transfer-encoding: chunked" not in lines
    assert f"content-length: {len(body)}".encode() in lines
    assert b"content-type: application/json" in lines
    sent = json.loads(body)
    assert len(sent["messages"]) == len(messages)
    assert body == _old_bytes(sent)  # the compact one-string encoding, byte for byte
    old = httpx2.Client().build_request("POST", "http://x/", json=sent)
    assert body == old.read()
