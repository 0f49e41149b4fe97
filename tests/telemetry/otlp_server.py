"""A stand-in Langfuse host on 127.0.0.1: records OTLP/HTTP POSTs, answers as told."""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@dataclass(frozen=True)
class Post:
    path: str
    headers: dict[str, str]
    body: bytes
    """The request body, decompressed."""

    def request(self) -> ExportTraceServiceRequest:
        message = ExportTraceServiceRequest()
        message.ParseFromString(self.body)
        return message

    def span_names(self) -> list[str]:
        return [
            span.name
            for resource in self.request().resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


@dataclass
class OtlpServer:
    url: str
    status: int = 200
    hang: threading.Event | None = None
    """When set, requests wait on this event (until released) before answering."""
    posts: list[Post] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)

    def span_names(self) -> list[str]:
        return [name for post in self.posts for name in post.span_names()]


@contextmanager
def otlp_server(status: int = 200, hang: bool = False) -> Iterator[OtlpServer]:
    state = OtlpServer(url="", status=status, hang=threading.Event() if hang else None)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
            state.posts.append(Post(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            state.received.set()
            if state.hang is not None:
                state.hang.wait(30)
            self.send_response(state.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    # shutdown() waits for the loop to poll its stop flag: every 10 ms, not the default 0.5 s
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        if state.hang is not None:
            state.hang.set()
        server.shutdown()
        server.server_close()


def unused_port() -> int:
    """A port on 127.0.0.1 with nothing listening (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
