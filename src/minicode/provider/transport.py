"""The seam between the adapter and an HTTP client: what a transport does and how it fails.

``provider/openai.py`` (retries, errors, the wire profile) and ``provider/exchange.py`` (the
reader thread) speak only this; two transports implement it: ``socket_transport`` (minicode's
own HTTP/1.1 client with a keep-alive connection, for plain endpoints) and ``httpx_transport``
(everything else: proxies, unusual URLs; tests' injected clients). ``transports.choose``
picks one per provider.

Failures cross the seam as ``NetworkError`` (the request may be retried after a wait; its
message reads like httpx's, its ``__cause__`` is the socket, TLS or httpx error so
``net_errors.lasting_failure`` can tell a lasting failure) or ``BadEndpoint`` (the URL cannot
be used at all: a configuration error). Standard library only.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Protocol, overload

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

    from minicode.provider.early import EarlyRequest

__all__ = [
    "BadEndpoint",
    "ConnectFailure",
    "Headers",
    "Link",
    "NetworkError",
    "Opener",
    "Response",
    "TimedOut",
    "Transport",
]


class NetworkError(Exception):
    """The connection failed or broke; ``reason`` is the short why a retry notice shows."""

    reason = "network error"

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name or type(self).__name__
        """The underlying error's type name: what to show when the message is empty."""

    @property
    def detail(self) -> str:
        return str(self) or self.name


class ConnectFailure(NetworkError):
    reason = "cannot connect"


class TimedOut(NetworkError):
    reason = "timed out"


class BadEndpoint(Exception):
    """The endpoint URL cannot be requested (invalid, unsupported scheme): retrying cannot help."""


class Headers:
    """Response header fields, looked up without regard to case; repeated fields joined with
    ", " (as httpx does)."""

    __slots__ = ("_fields",)

    def __init__(self, fields: Iterable[tuple[str, str]]) -> None:
        self._fields = list(fields)

    @overload
    def get(self, name: str) -> str | None: ...

    @overload
    def get(self, name: str, default: str) -> str: ...

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower()
        values = [v for k, v in self._fields if k.lower() == key]
        return ", ".join(values) if values else default

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def __repr__(self) -> str:  # names only: a server may echo anything in its values
        return f"Headers({[k for k, _ in self._fields]})"


class Response(Protocol):
    """A response as the reader thread reads it (``iter_bytes``: the decoded body, a piece
    per network read; failures as ``NetworkError``)."""

    status_code: int
    reason_phrase: str
    headers: Headers

    def iter_bytes(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class Link(Protocol):
    """What a transport's opener may ask of the exchange it runs for."""

    def stopped(self) -> bool: ...

    def claim(self, sock: socket.socket) -> None:
        """The connection's socket: an abort shuts it down (at once if already aborted)."""

    def release(self, sock: socket.socket) -> None:
        """The socket is the exchange's no more (back in the transport's pool)."""


Opener = Callable[[Link], Response]
"""Runs on the exchange's thread: sends the request and returns the response head's response."""


class Transport(Protocol):
    def opener(self, method: str, url: str, headers: dict[str, str], body: Iterable[bytes] | None, *,
               early: EarlyRequest | None = None) -> Opener:
        """What sends this request (``BadEndpoint`` at once for an unusable URL). ``early``: the
        run's early first request, to adopt if it is this request on the wire, else close."""
        ...

    def close(self) -> None: ...
