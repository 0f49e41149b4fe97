"""One HTTP exchange on its own thread: send, read and decode off the event loop.

Why a thread: an asyncio HTTP stack wakes the event loop for every network read and walks
httpcore2/anyio/h11 each time — at 200 tokens/s that is a wake-up every 5 ms and most of the
CPU a stream costs. Here a daemon thread of its own (``minicode-http``) does
the blocking send and read through httpx2's sync client (``provider/http.py``: its TLS,
proxies, timeouts and kept-alive connections), decodes SSE and accumulates the answer
(``StreamDecoder``), and hands the loop the events of each network read as one batch through
a ``Handoff`` (``http.paced_reads``: the batch goes out just before the next read from the
network — httpx2 yields a chunked body one HTTP chunk at a time, several from one read). After
the first ``UNPACED_SECONDS`` of a stream it reads at most once per ``READ_INTERVAL_SECONDS``
(the wait comes before a network read, not before each chunk): the chunks that arrive meanwhile
wait in the kernel and come in one read, so the thread and the loop wake ~20 times a second
instead of ~200. Short answers and tool calls finish inside the unpaced window and are never
delayed.

Cancellation: ``abort()`` (loop side) shuts the exchange's socket down, which wakes a blocked
``recv`` at once; the thread then closes the response and ends. The opener tells the exchange
each socket as soon as httpcore2 reports it (``Link.claim``); while a reused connection, whose
socket the exchange does not know yet, waits for the response head, the provider's idle
connections are shut down instead (``SocketRegistry``). Errors are the HTTP module's
``NetworkError``s.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from minicode.errors import APIError
from minicode.provider.handoff import Handoff
from minicode.provider.http import NetworkError, Opener, Response, SocketRegistry, paced_reads, shut_down
from minicode.provider.types import StreamEvent

__all__ = [
    "ERROR_BODY_BYTES",
    "MAX_BODY_BYTES",
    "READ_INTERVAL_SECONDS",
    "UNPACED_SECONDS",
    "Exchange",
    "Head",
]

READ_INTERVAL_SECONDS = 0.05
"""A streaming read happens at most this often once the stream is paced (the UI redraws at
most every 50 ms anyway); what arrives in between is read in one go."""
UNPACED_SECONDS = 0.2
"""The first part of a stream is read as it arrives: short answers end without any delay."""
BATCH_EVENTS = 1024
"""Events decoded from one read are handed over as soon as a piece of it brings them to this
many (a compressed read can inflate to a great many): the consumer starts on them while the
rest is decoded."""
_THREAD_NAME = "minicode-http"
DRAIN_SECONDS = 0.5
"""After ``[DONE]`` the rest of the body is read in the background so the connection can be
reused; a server that keeps the body open longer than this loses the connection."""
CLOSE_WAIT_SECONDS = 2.0
"""How long closing an aborted exchange waits for its thread to confirm the socket is closed."""
MAX_BODY_BYTES = 32 * 1024 * 1024
"""A non-streaming answer larger than this is refused rather than held in memory."""
ERROR_BODY_BYTES = 64 * 1024
"""Only the beginning of an error body is read: enough for any message, bounded for HTML pages."""


@dataclass(frozen=True, slots=True)
class Head:
    """The status line and headers of the response."""

    status: int
    reason: str
    headers: Mapping[str, str]
    """Looked up without regard to case (httpx2's headers)."""


@dataclass(frozen=True, slots=True)
class _Body:
    data: bytes


@dataclass(frozen=True, slots=True)
class _Batch:
    events: list[StreamEvent]


@dataclass(frozen=True, slots=True)
class _Failure:
    error: BaseException


_Item = Head | _Body | _Batch | _Failure


class Exchange:
    """One request and its response, run on a daemon thread; the loop side awaits results.

    Create it inside the event loop (``start`` begins the send). Then ``head()``; then either
    ``body()`` or ``batch()`` until a batch holds the ``StreamEnd``. Errors are raised as they
    happened in the thread (``NetworkError``, ``APIError`` from decoding or limits).
    Always finish with ``aclose()``: after a normal end it lets the thread finish reading in the
    background; otherwise it aborts — the socket is shut down at once — and waits (bounded)
    for the thread to have closed it; a thread still connecting (no socket yet) is not waited for.
    """

    def __init__(
        self,
        opener: Opener,
        *,
        stream: bool,
        sockets: SocketRegistry,
        clock: Callable[[], float] = time.monotonic,
        pause: Callable[[float], object] | None = None,
    ) -> None:
        """``opener`` (``HttpClient.opener``) sends the request on the thread and returns the
        response. ``clock`` and ``pause`` (a sleep that an abort cuts short; default: the stop
        event's wait) are the pacing's time, injectable for tests."""
        self._loop = asyncio.get_running_loop()
        self._opener: Opener | None = opener  # dropped once it has run: it holds the request body
        self._stream = stream
        self._sockets = sockets
        self._handoff: Handoff[_Item] = Handoff(self._loop)
        self._pending: deque[_Item] = deque()
        self._stop = threading.Event()
        self._clock = clock
        self._pause = pause or self._stop.wait
        self._lock = threading.Lock()
        self._owned: list[socket.socket] = []
        self._response: Response | None = None
        self._ended = False  # the thread is done with the connection
        self._read_all = False  # the whole body is read: the connection may serve another request
        self._finished: asyncio.Future[None] = self._loop.create_future()
        self._complete = False  # the consumer got the whole answer
        self._drain_timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Send on a thread of its own (it ends with the exchange: ``_run`` never raises)."""
        threading.Thread(target=self._run, name=_THREAD_NAME, daemon=True).start()

    # --- loop side --------------------------------------------------------------------

    async def head(self) -> Head:
        item = await self._next()
        if not isinstance(item, Head):
            raise _unexpected(item)
        return item

    async def body(self) -> bytes:
        item = await self._next()
        if not isinstance(item, _Body):
            raise _unexpected(item)
        self._complete = True
        return item.data

    async def batch(self) -> list[StreamEvent]:
        """The events of the next read(s); the last batch ends with the ``StreamEnd``."""
        item = await self._next()
        if not isinstance(item, _Batch):
            raise _unexpected(item)
        events = item.events
        while self._pending and isinstance(self._pending[0], _Batch):  # reads not yet taken
            more = self._pending.popleft()
            assert isinstance(more, _Batch)
            events.extend(more.events)
        return events

    def mark_complete(self) -> None:
        """The consumer has the whole answer: closing need not cut the connection."""
        self._complete = True

    def abort(self) -> None:
        """Stop at once: shut the socket down (waking a blocked read); safe to call twice."""
        self._stop.set()
        with self._lock:
            if self._ended or self._read_all:
                return  # nothing blocks any more; the connection stays usable
            owned, response = list(self._owned), self._response
        for sock in owned:
            shut_down(sock)
        if owned:
            return
        if response is None:
            self._sockets.shutdown_unclaimed()  # waiting for the head on a reused connection
        else:
            response.close()  # a response without a socket (tests' mock transports)

    async def aclose(self) -> None:
        if self._finished.done():
            return
        if self._complete:
            self._drain_timer = self._loop.call_later(DRAIN_SECONDS, self.abort)
            return
        self.abort()
        if self._connecting():
            return  # no socket to see closed; the thread ends once connect gives up (daemon)
        await asyncio.wait({self._finished}, timeout=CLOSE_WAIT_SECONDS)

    def _connecting(self) -> bool:
        """The thread holds no connection yet: httpx2's connect cannot be cut short (up to its
        connect timeout): there is no socket to shut down before it is made."""
        with self._lock:
            return not self._ended and not self._owned and self._response is None

    async def _next(self) -> _Item:
        if not self._pending:
            self._pending.extend(await self._handoff.get())
        item = self._pending.popleft()
        if isinstance(item, _Failure):
            raise item.error
        return item

    # --- the opener's side (``http.Link``) ---------------------------------------------

    def stopped(self) -> bool:
        return self._stop.is_set()

    def claim(self, sock: socket.socket) -> None:
        with self._lock:
            if sock not in self._owned:  # claimed for its TLS handshake, then for the request
                self._owned.append(sock)
            stopped = self._stop.is_set()
        self._sockets.claim(sock, self)
        if stopped:
            shut_down(sock)

    def release(self, sock: socket.socket) -> None:
        with self._lock:
            if sock in self._owned:
                self._owned.remove(sock)
        self._sockets.release_one(sock)

    # --- worker thread ------------------------------------------------------------------

    def _run(self) -> None:
        response: Response | None = None
        try:
            response = self._open()
            with self._lock:
                self._response = response
            if self._stop.is_set():
                return
            self._handoff.put(Head(response.status_code, response.reason_phrase, response.headers))
            if not 200 <= response.status_code < 300:
                self._read_body(response, ERROR_BODY_BYTES, truncate=True)
            elif self._stream and "json" not in response.headers.get("content-type", ""):
                self._read_stream(response)
            else:
                self._read_body(response, MAX_BODY_BYTES, truncate=False)
        except Exception as e:  # the top of the thread: every failure goes to the loop
            if not self._stop.is_set():
                self._handoff.put(_Failure(e))
        finally:
            self._end(response)

    def _open(self) -> Response:
        """Send the request and return the response. The opener (and with it the request body,
        megabytes in a long conversation) is let go as soon as it has run: an exchange lives on
        while its answer streams and ``DRAIN_SECONDS`` after, and bodies kept that long piled up
        in pipe mode's quick succession of tasks."""
        opener, self._opener = self._opener, None
        if opener is None:
            raise RuntimeError("an exchange is sent only once")
        return opener(self)

    def _body_read(self) -> None:
        """The body is read to its end: from now on an abort must not cut the connection
        (httpx2's pool may give it to the next request)."""
        with self._lock:
            self._read_all = True

    def _end(self, response: Response | None) -> None:
        with self._lock:
            self._ended = True
            self._owned.clear()
            self._response = None  # httpx2's response holds its request, and that the body
        self._sockets.release(self)
        if response is not None:
            try:
                response.close()
            except Exception:  # closing a broken connection: nothing left to do
                pass
        try:
            self._loop.call_soon_threadsafe(self._resolve)
        except RuntimeError:  # the loop is closed
            pass

    def _resolve(self) -> None:
        """On the loop, once the thread is done: the pending drain timer has nothing left to
        cut, and cancelling it lets this exchange go now rather than ``DRAIN_SECONDS`` later."""
        _resolve(self._finished)
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None

    def _read_body(self, response: Response, limit: int, *, truncate: bool) -> None:
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > limit:
                    if truncate:
                        break  # an error body: its beginning is enough
                    raise APIError(f"response body larger than {limit // (1024 * 1024)} MiB")
                chunks.append(chunk)
            else:
                self._body_read()
        except NetworkError:
            if not truncate:
                raise
            # an error body that broke off: the status and what arrived still tell the story
        self._handoff.put(_Body(b"".join(chunks)))

    def _read_stream(self, response: Response) -> None:
        # Imported here, on this thread, once the request is out: the decoder (SSE framing,
        # accumulation, chunk checks) loads while the server prepares its first byte.
        from minicode.provider.stream_decoder import StreamDecoder

        decoder = StreamDecoder()
        chunks = response.iter_bytes()
        events: list[StreamEvent] = []  # decoded since the last hand-over
        started = last_read = self._clock()

        def hand_over() -> None:
            nonlocal events
            if events:
                self._handoff.put(_Batch(events))
                events = []

        def before_read() -> None:  # everything read so far is decoded: hand it over, then pace
            nonlocal last_read
            hand_over()
            now = self._clock()
            if now - started >= UNPACED_SECONDS and (rest := READ_INTERVAL_SECONDS - (now - last_read)) > 0:
                self._pause(rest)
            last_read = self._clock()

        try:
            with paced_reads(before_read):
                while not self._stop.is_set() and not decoder.done:
                    chunk = next(chunks, None)
                    if chunk is None:
                        decoder.finish(events)
                    else:
                        decoder.feed(chunk, events)
                    if not response.paced or len(events) >= BATCH_EVENTS:  # no read to wait for; a big one
                        hand_over()
        finally:
            hand_over()  # what arrived before an error is still delivered, in order
        if decoder.done and _drain(chunks):
            self._body_read()


def _drain(chunks: Any) -> bool:
    """Read the body to its end (normally just the chunked terminator after ``[DONE]``) so
    httpx2 can keep the connection for the next request; any failure only costs the
    connection (False)."""
    try:
        for _ in chunks:
            pass
    except Exception:
        return False
    return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _unexpected(item: _Item) -> RuntimeError:
    return RuntimeError(f"HTTP exchange out of order: got {type(item).__name__}")
