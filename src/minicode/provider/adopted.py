"""Adopting the early first request (``provider/early.py``) into an ``Exchange``.

The adapter's first send compares the ``httpx.Request`` it built with the early one, on the
wire (``wire_of``: scheme, host, port, target, header fields in order, body bytes). Equal: the
exchange's thread takes the early connection instead of sending (``opener``), and reads its
response through ``AdoptedResponse``, which offers the part of ``httpx.Response`` the exchange
uses (status, reason, headers, ``iter_bytes``, ``close``, the socket for aborting) and raises
httpx's errors, so retries, error messages, limits and cancellation are the adapter's as for
any response. Different: the early connection is closed and the request is sent as usual.

An early request that failed while connecting (nothing sent: DNS, refused, TLS) is replaced
by a normal send on the same thread, so the error, its message and the retries are exactly
httpx's (the early attempt is not counted). One that failed after sending (the server may
have it) counts as the first attempt: its failure is raised as the httpx error of the same
kind, and the adapter retries it after its usual wait, as it would have.

The third importer of httpx (tests/test_architecture.py).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import httpx

from minicode.provider.early import EarlyRequest, Wire
from minicode.provider.early_http import ConnectFailed, HTTPFailure

__all__ = ["AdoptedResponse", "opener", "wire_of"]


def wire_of(request: httpx.Request) -> Wire:
    """``request`` as it would go on the wire (its body read into memory, once)."""
    url = request.url
    port = url.port or (443 if url.scheme == "https" else 80)
    return Wire(url.scheme, url.host, port, url.raw_path.decode("ascii"), list(request.headers.raw), request.read())


def opener(early: EarlyRequest, client: httpx.Client, request: httpx.Request
           ) -> Callable[[Callable[[], bool]], httpx.Response | AdoptedResponse]:
    """What the exchange's thread calls instead of ``client.send``: the early response, or
    a normal send when the early request never left (see the module doc)."""

    def open_response(stopped: Callable[[], bool]) -> httpx.Response | AdoptedResponse:
        early.outcome()  # an abort wakes it: the socket is shut down
        if early.head is not None and early.body is not None:
            return AdoptedResponse(early)
        error = early.error
        early.close()
        if stopped():
            raise httpx.ReadError("aborted")  # not reported: the exchange was stopped
        if isinstance(error, ConnectFailed) or not early.sent:
            return client.send(request, stream=True)
        raise _as_httpx(error, written=early.written) from error

    return open_response


class _NetworkStream:
    """What ``Exchange._claim`` asks of httpcore's network stream: the socket."""

    def __init__(self, early: EarlyRequest) -> None:
        self._early = early

    def get_extra_info(self, name: str) -> Any:
        return self._early.socket if name == "socket" else None


class AdoptedResponse:
    """The early response, shaped like the ``httpx.Response`` the exchange reads."""

    def __init__(self, early: EarlyRequest) -> None:
        assert early.head is not None and early.body is not None
        self._early = early
        self._body = early.body
        self.status_code = early.head.status
        self.reason_phrase = early.head.reason.decode("ascii", "ignore")
        self.headers = httpx.Headers(early.head.headers)
        self.is_success = 200 <= self.status_code < 300
        self.extensions: dict[str, Any] = {"network_stream": _NetworkStream(early)}

    def iter_bytes(self) -> Iterator[bytes]:
        """The decoded body, a piece per read; failures as httpx's errors. The connection is
        closed at the end (it is not httpx's to pool)."""
        try:
            yield from self._body
        except (HTTPFailure, OSError) as e:
            raise _as_httpx(e, written=True) from e
        finally:
            self._early.close()

    def close(self) -> None:
        self._early.close()


def _as_httpx(error: BaseException | None, *, written: bool) -> httpx.HTTPError:
    if isinstance(error, TimeoutError):
        return httpx.ReadTimeout("timed out") if written else httpx.WriteTimeout("timed out")
    if isinstance(error, HTTPFailure):
        return httpx.RemoteProtocolError(str(error))
    if isinstance(error, OSError):
        text = str(error) or type(error).__name__
        return httpx.ReadError(text) if written else httpx.WriteError(text)
    return httpx.RemoteProtocolError(f"the early request failed: {type(error).__name__}")
