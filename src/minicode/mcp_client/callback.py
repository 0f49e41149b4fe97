"""The loopback end of an OAuth sign-in (RFC 8252 §7.3): a one-request HTTP listener on
127.0.0.1 that receives the browser's redirect to ``/callback?code=…&state=…``.

Single use: the first request for ``/callback`` settles it, whatever it says, and the listener
closes (other paths — a browser's ``/favicon.ico`` — get a 404 and change nothing). The
``state`` must be the one the authorization URL carried (compared in constant time): a request
with another is a forged or stale redirect and fails the sign-in. The authorization server's
refusal (``error=access_denied``) fails it with what the server said. Everything in the request
is untrusted: read with a size and time limit, and only shown after ``printable``. Standard
library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

__all__ = ["CALLBACK_PATH", "Callback", "CallbackListener", "SignInFailed", "printable"]

CALLBACK_PATH = "/callback"
_REQUEST_BYTES = 16 * 1024
_READ_S = 10.0
_SHOWN_CHARS = 200


class SignInFailed(Exception):
    """The sign-in did not complete; the message says why (shown to the user)."""


@dataclass(frozen=True, slots=True)
class Callback:
    code: str
    state: str
    iss: str | None


def printable(text: str) -> str:
    """Untrusted text (a server's error description) as one short line without control characters."""
    line = "".join(ch if ch.isprintable() else " " for ch in text)
    line = " ".join(line.split())
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1] + "…"


class CallbackListener:
    """``async with CallbackListener(port) as listener``: listening on 127.0.0.1:``port``
    (0: any free port, then ``listener.port``); ``await listener.wait(state, timeout)``."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[Callback] | None = None
        self._state = ""

    async def __aenter__(self) -> CallbackListener:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port,  # OSError when taken
                                                  limit=_REQUEST_BYTES)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()
        if self._result is not None and not self._result.done():
            self._result.cancel()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def wait(self, state: str, timeout: float) -> Callback:
        """The redirect's code; ``SignInFailed`` when it was refused, carried another state, or
        did not come within ``timeout`` seconds."""
        assert self._result is not None, "use CallbackListener in async with"
        self._state = state
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._result)
        except TimeoutError:
            raise SignInFailed(f"no answer from the browser within {timeout:g} s (signin_timeout)") from None
        finally:
            await self.__aexit__()  # single use

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_READ_S):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, OSError):
            writer.close()
            return
        except (asyncio.LimitOverrunError, ValueError):  # a head beyond the limit
            await _answer(writer, 431, "Request too large.")
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        target = urlsplit(parts[1]) if len(parts) == 3 and parts[0] == "GET" else None
        if target is None or target.path != CALLBACK_PATH or self._result is None or self._result.done():
            await _answer(writer, 404, "Not found.")
            return
        status, page = self._settle(parse_qs(target.query))
        await _answer(writer, status, page)

    def _settle(self, query: dict[str, list[str]]) -> tuple[int, str]:
        assert self._result is not None

        def one(name: str) -> str:
            return query.get(name, [""])[0]

        if not self._state or not secrets.compare_digest(one("state").encode(), self._state.encode()):
            self._result.set_exception(SignInFailed(
                "the browser's answer did not carry this sign-in's state (a stale or forged redirect); sign in again"))
            return 400, "This answer does not belong to the sign-in minicode started. Nothing was signed in."
        if one("error"):
            said = printable(one("error") + (f": {one('error_description')}" if one("error_description") else ""))
            self._result.set_exception(SignInFailed(f"the authorization server refused the sign-in ({said})"))
            return 200, "Sign-in refused. You can close this tab."
        if not one("code"):
            self._result.set_exception(SignInFailed("the browser's answer carried no authorization code"))
            return 400, "No authorization code in this answer. Nothing was signed in."
        self._result.set_result(Callback(one("code"), one("state"), one("iss") or None))
        return 200, "Signed in to the MCP server. You can close this tab and return to minicode."


async def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 431: "Request Header Fields Too Large"}[status]
    body = f"<!doctype html><title>minicode</title><p>{text}</p>\n".encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n")
    with contextlib.suppress(OSError):
        writer.write(head.encode("latin-1") + body)
        await writer.drain()
    writer.close()
