"""A scriptable OpenAI-compatible Chat Completions server on 127.0.0.1.

It replays scripted replies in order and records every request it got, so end-to-end tests
can drive the real ``minicode`` executable in a subprocess without a model or a network::

    with FakeOpenAI() as server:
        server.script(Reply.tool("write", path="a.txt", content="hi"), Reply.text("Done."))
        run(["minicode", ...], env={..., "MINICODE_BASE_URL": server.base_url})
        assert server.requests[1].body["messages"][-1]["role"] == "tool"

Streaming requests (``"stream": true``) get SSE; others get one JSON body. When the script
runs out, ``default`` answers (if set), else a 500 that says the script is exhausted (with
``Retry-After: 0``: minicode still retries it, without the seconds of backoff a run would wait).
``GET /models`` lists ``models`` (or answers ``models_reply``); with ``api_key`` set, a request
without that Bearer key gets OpenAI's 401; ``reject_fields`` makes every POST naming one of
those body fields fail with OpenAI's 400 "Unsupported parameter" (the request is recorded).
The local servers' own questions (``/props``, ``/api/show``, ``/api/v0/models``: the context
window, ``provider/server_window.py``) answer 404 unless ``routes`` maps the path to a JSON
value (200) or a ``Reply``; they are recorded in ``asked``, never in ``requests``.
It runs in a daemon thread (``ThreadingHTTPServer``) so it serves while a test blocks on a
subprocess. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

__all__ = ["FakeOpenAI", "RecordedRequest", "Reply"]

_LOCAL_QUESTIONS = ("/props", "/api/show", "/api/v0/models")

_ids = itertools.count(1)


@dataclass
class Reply:
    """One scripted answer. Build with the class methods."""

    kind: str  # "text" | "tools" | "error" | "raw" | "hang" | "dynamic"
    content: str = ""
    reasoning: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw JSON arguments)
    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes = b""
    chunk_size: int = 8
    chunk_delay: float = 0.0
    usage: dict[str, int] | None = field(
        default_factory=lambda: {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    )
    finish_reason: str | None = None
    make: Callable[["RecordedRequest"], "Reply"] | None = None
    whole_calls: bool = False  # each tool call in one chunk (Groq, Ollama, xAI) instead of pieces
    ignore_stream: bool = False  # answer a streaming request with one JSON body, as some servers do
    interleave: bool = False  # reasoning and text chunks alternate (one of each in turn) instead of reasoning first

    @classmethod
    def text(cls, content: str, **kw: Any) -> "Reply":
        """A plain answer, streamed in ``chunk_size``-character pieces."""
        return cls(kind="text", content=content, **kw)

    @classmethod
    def tool(cls, name: str, /, **arguments: Any) -> "Reply":
        """One tool call with JSON-encoded arguments."""
        return cls(kind="tools", calls=[(name, json.dumps(arguments))])

    @classmethod
    def tools(cls, *calls: tuple[str, dict[str, Any] | str], content: str = "", **kw: Any) -> "Reply":
        """Several tool calls in one response; arguments as a dict or a raw (maybe broken) string."""
        raw_calls = [(n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls]
        return cls(kind="tools", calls=raw_calls, content=content, **kw)

    @classmethod
    def error(cls, status: int, body: dict[str, Any] | str, headers: dict[str, str] | None = None) -> "Reply":
        text = body if isinstance(body, str) else json.dumps(body)
        return cls(kind="error", status=status, body=text, headers=headers or {})

    @classmethod
    def raw_sse(cls, raw: bytes) -> "Reply":
        """Bytes sent verbatim as an event stream (for malformed-stream tests)."""
        return cls(kind="raw", raw=raw)

    @classmethod
    def hang(cls, content: str = "") -> "Reply":
        """Send ``content`` (maybe nothing), then keep the stream open until the client leaves."""
        return cls(kind="hang", content=content)

    @classmethod
    def dynamic(cls, make: Callable[["RecordedRequest"], "Reply"]) -> "Reply":
        """Decide the reply from the request (e.g. echo something the request contained)."""
        return cls(kind="dynamic", make=make)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    arrived: float  # time.monotonic() when the request line was read
    raw: bytes = b""  # the body's bytes as sent (POST)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def has_tools(self) -> bool:
        return bool(self.body.get("tools"))


POLL_INTERVAL = 0.01  # how long close() can wait for the server's loop (seconds)


class FakeOpenAI:
    """The server. Use as a context manager; ``base_url`` ends with ``/v1``."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.gets: list[RecordedRequest] = []
        self.default: Reply | None = None
        self.models: list[dict[str, Any]] = [{"id": "fake-model", "object": "model"}]
        self.models_reply: Reply | None = None  # e.g. Reply.error(404, ...): /models answers that
        self.api_key: str | None = None
        self.reject_fields: set[str] = set()
        self.routes: dict[str, Any] = {}  # "/props" -> JSON served with 200, or a Reply
        self.asked: list[RecordedRequest] = []
        self.disconnects = 0  # hanging streams whose client went away
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A client killed between the listener's "readable" and accept() (the kill -9 tests)
        # leaves nothing to accept: a blocking accept() would then wait forever, and close()
        # with it. Non-blocking, that accept() fails and serve_forever goes on.
        self._httpd.socket.setblocking(False)
        # close() waits for serve_forever to look at its stop flag, which it does once a poll
        # interval (0.5 s by default): at every test's end that was up to half a second idle.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL},
                                        daemon=True)

    # --- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # --- scripting ------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.requests) >= count:
                return True
            time.sleep(0.01)
        return False

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            reply = self._script.pop(0) if self._script else self.default
        if reply is None:
            return Reply.error(500, {"error": {"message": "fake server: script exhausted"}}, headers={"Retry-After": "0"})
        while reply.kind == "dynamic" and reply.make is not None:
            reply = reply.make(request)
        return reply

    def _refusal(self, request: RecordedRequest) -> Reply | None:
        """The 401 or 400 a real server would answer before looking at the script, if any."""
        headers = {k.lower(): v for k, v in request.headers.items()}
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply.error(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                               "code": "invalid_api_key"}})
        for name in sorted(self.reject_fields & set(request.body)):
            return Reply.error(400, {"error": {
                "message": f"Unsupported parameter: '{name}' is not supported with this model.",
                "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"}})
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models, for probes
                request = RecordedRequest(self.path, dict(self.headers.items()), {}, time.monotonic())
                if self._route(request):
                    return
                with server._lock:
                    server.gets.append(request)
                refusal = server._refusal(request)
                if refusal is not None:
                    _serve(self, server, refusal, False)
                elif server.models_reply is not None:
                    _serve(self, server, server.models_reply, False)
                else:
                    self._send_json(200, {"object": "list", "data": server.models})

            def do_POST(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_invalid_json": raw.decode("utf-8", "replace")}
                request = RecordedRequest(self.path, dict(self.headers.items()), body, arrived, raw)
                if self._route(request):
                    return
                refusal = server._refusal(request)
                if refusal is not None:
                    with server._lock:
                        server.requests.append(request)
                    _serve(self, server, refusal, False)
                    return
                reply = server._next_reply(request)
                _serve(self, server, reply, bool(body.get("stream")))

            def _route(self, request: RecordedRequest) -> bool:
                """A local server's own question (or a path ``routes`` names): answered here."""
                path = request.path.split("?", 1)[0]
                if path not in server.routes and path not in _LOCAL_QUESTIONS:
                    return False
                with server._lock:
                    server.asked.append(request)
                answer = server.routes.get(path)
                if answer is None:
                    self._send_json(404, {"error": "Not Found"})
                elif isinstance(answer, Reply):
                    reply = answer
                    while reply.kind == "dynamic" and reply.make is not None:
                        reply = reply.make(request)
                    if reply.kind == "hang":  # a server that never answers this question
                        server._stopping.wait(30)
                        self.close_connection = True
                    else:
                        _serve(self, server, reply, False)
                else:
                    self._send_json(200, answer)
                return True

            def _send_json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


# --- serving one reply --------------------------------------------------------------------


def _serve(h: BaseHTTPRequestHandler, server: FakeOpenAI, reply: Reply, stream: bool) -> None:
    try:
        if reply.kind == "error":
            data = reply.body.encode()
            h.send_response(reply.status)
            content_type = "application/json" if reply.body.lstrip().startswith("{") else "text/html"
            h.send_header("Content-Type", content_type)
            for k, v in reply.headers.items():
                h.send_header(k, v)
            if not any(k.lower() == "connection" for k in reply.headers):
                # the connection is closed after every reply (finally below): say so, or a client
                # may send its retry on it while the close is on its way (a "network error" under load)
                h.send_header("Connection", "close")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            return
        if not stream or reply.ignore_stream:
            _send_plain_json(h, reply)
            return
        _start_sse(h)
        if reply.kind == "raw":
            h.wfile.write(reply.raw)
        elif reply.kind == "hang":
            _hang(h, server, reply)
        else:
            for chunk in _sse_chunks(reply):
                h.wfile.write(chunk)
                h.wfile.flush()
                if reply.chunk_delay:
                    time.sleep(reply.chunk_delay)
        h.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        h.close_connection = True


def _start_sse(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()


def _hang(h: BaseHTTPRequestHandler, server: FakeOpenAI, reply: Reply) -> None:
    if reply.content:
        h.wfile.write(_event(_chunk({"role": "assistant", "content": reply.content})))
    try:
        while not server._stopping.is_set():
            h.wfile.write(b": keep-alive\n\n")  # a write to a closed socket is how we notice
            h.wfile.flush()
            time.sleep(0.05)
    except (BrokenPipeError, ConnectionResetError):
        with server._lock:
            server.disconnects += 1
        raise


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None,
           choices: bool = True) -> dict[str, Any]:
    obj: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model"}
    obj["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else []
    if usage is not None:
        obj["usage"] = usage
    return obj


def _event(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def _sse_chunks(reply: Reply) -> list[bytes]:
    out = [_event(_chunk({"role": "assistant", "content": ""}))]
    thinking = [{"reasoning_content": piece} for piece in _pieces(reply.reasoning, reply.chunk_size)]
    text = [{"content": piece} for piece in _pieces(reply.content, reply.chunk_size)]
    if reply.interleave:
        deltas = [d for pair in itertools.zip_longest(thinking, text) for d in pair if d is not None]
    else:
        deltas = thinking + text
    out += [_event(_chunk(delta)) for delta in deltas]
    for index, (name, args) in enumerate(reply.calls):
        call_id = f"call_{next(_ids)}"
        if reply.whole_calls:
            whole = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            out.append(_event(_chunk({"tool_calls": [whole]})))
            continue
        first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(_event(_chunk({"tool_calls": [first]})))
        for piece in _pieces(args, max(reply.chunk_size, 16)):
            out.append(_event(_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})))
    finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
    out.append(_event(_chunk({}, finish=finish)))
    if reply.usage is not None:
        out.append(_event(_chunk({}, usage=reply.usage, choices=False)))
    out.append(b"data: [DONE]\n\n")
    return out


def _send_plain_json(h: BaseHTTPRequestHandler, reply: Reply) -> None:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.calls:
        message["tool_calls"] = [
            {"id": f"call_{next(_ids)}", "type": "function", "function": {"name": n, "arguments": a}}
            for n, a in reply.calls
        ]
    finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
    obj: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if reply.usage is not None:
        obj["usage"] = reply.usage
    data = json.dumps(obj).encode()
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Connection", "close")  # closed after the reply, as every reply is
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)
