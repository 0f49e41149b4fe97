"""Running respx-scripted tests over minicode's own socket transport.

respx only sees httpx. ``RespxBridge`` is a loopback HTTP/1.1 server (keep-alive) that turns
each request it reads off the socket into an ``httpx.Request`` for the original origin
(https and the ``Host`` header the client sent), asks
respx (active in the test) for the answer, and writes that answer back on the wire: the
status line, the headers, the body a chunk per piece the mocked response yields (so a
stream arrives in the pieces the test scripted). A side effect that raises (``ConnectError``,
a body iterator that raises midway) closes the connection where it happened: before any byte
of the response, or mid-body. ``transport`` is a ``SocketTransport`` for the origin that
dials this server instead, so the provider sees the test's URL and host unchanged. A client
that leaves while a body is under way closes the mocked response (a test's endless stream
sees it, as with httpx).
"""

from __future__ import annotations

import select
import socket
import threading

import httpx

from minicode.provider.http_connect import connect
from minicode.provider.plain_http import endpoint, httpx_user_agent
from minicode.provider.socket_transport import SocketTransport
from minicode.provider.transport import Link


class RespxBridge:
    def __init__(self) -> None:
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._client = httpx.Client()
        threading.Thread(target=self._accept, daemon=True).start()

    def transport(self, base_url: str) -> SocketTransport:
        point = endpoint(base_url.rstrip("/") + "/chat/completions")
        user_agent = httpx_user_agent()
        assert point is not None and user_agent is not None
        port = self._listener.getsockname()[1]
        def dial(host: str, _port: int, _tls: object, name: str, *, link: Link | None = None) -> socket.socket:
            return connect("127.0.0.1", port, None, name, link=link)

        return SocketTransport(point, None, user_agent, dial=dial)

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffered = b""
        with conn:
            while True:
                request, buffered = _read_request(conn, buffered)
                if request is None or not self._answer(conn, request):
                    return

    def _answer(self, conn: socket.socket, request: tuple[str, str, list[tuple[str, str]], bytes]) -> bool:
        method, target, headers, body = request
        host = next(v for k, v in headers if k.lower() == "host")
        try:
            response = self._client.send(httpx.Request(method, f"https://{host}{target}", headers=headers, content=body),
                                         stream=True)
        except Exception:  # what respx raised for this request: the connection ends unanswered
            return False
        skip = {"content-length", "transfer-encoding", "connection"}
        lines = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}".encode()]
        lines += [k + b": " + v for k, v in response.headers.raw if k.lower().decode() not in skip]
        lines += [b"Transfer-Encoding: chunked", b"Connection: keep-alive"]
        done = threading.Event()
        threading.Thread(target=_watch, args=(conn, response, done), daemon=True).start()
        try:
            conn.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
            for piece in response.iter_raw():
                if piece:
                    conn.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            conn.sendall(b"0\r\n\r\n")
        except Exception:  # the scripted body broke off (or the client left): cut the connection
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return False
        finally:
            done.set()
            response.close()
        return True


def _watch(conn: socket.socket, response: httpx.Response, done: threading.Event) -> None:
    """Close ``response`` if the client closes the connection before the body is sent."""
    while not done.is_set():
        try:
            readable, _, _ = select.select([conn], [], [], 0.02)
            if not readable:
                continue
            if conn.recv(1, socket.MSG_PEEK) == b"":
                response.close()
        except (OSError, ValueError):
            response.close()
        return  # closed, or the next request is coming (left unread for the server loop)


def _read_request(conn: socket.socket, buffered: bytes
                  ) -> tuple[tuple[str, str, list[tuple[str, str]], bytes] | None, bytes]:
    data = buffered
    while b"\r\n\r\n" not in data:
        try:
            piece = conn.recv(65536)
        except OSError:
            return None, b""
        if not piece:
            return None, b""
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = [(name, value.strip()) for name, _, value in (line.partition(":") for line in lines[1:])]
    length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
    while len(rest) < length:
        piece = conn.recv(65536)
        if not piece:
            return None, b""
        rest += piece
    return (method, target, headers, rest[:length]), rest[length:]
