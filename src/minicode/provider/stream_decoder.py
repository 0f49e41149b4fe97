"""The body of a streamed Chat Completions answer, bytes to stream events (SPEC 3.2), pure.

Owns what one SSE event means to the OpenAI protocol: ``[DONE]`` ends the stream, ``ping``
events and empty data are skipped, in-stream error signals (``event: error``, llama.cpp's
``error:`` line, an error object in a chunk) become ``APIError``, every other data line is a
JSON chunk for the accumulator. Framing is ``sse``'s, chunk merging ``accumulator``'s; this
module joins them so the provider's reader thread can decode a whole network read in one
call. Imports no HTTP library: the caller scrubs secrets from the errors at its boundary.
"""

from __future__ import annotations

from minicode import jsonsafe
from minicode.errors import APIError, ProtocolError
from minicode.provider.accumulator import StreamAccumulator
from minicode.provider.api_errors import api_error, error_info_from_body, excerpt, not_a_stream
from minicode.provider.sse import SSEDecoder, SSEEvent
from minicode.provider.types import StreamEnd, StreamEvent

__all__ = ["CHUNK_MAX_DEPTH", "StreamDecoder"]

_HEAD_BYTES = 2048
"""The start of the body kept to tell what a stream without a single event was (a web page)."""
CHUNK_MAX_DEPTH = 64
"""How deep a chunk's JSON may nest (a real one nests about 5 levels); deeper is hostile."""


class StreamDecoder:
    """Feed the raw body with :meth:`feed`, then call :meth:`finish` at end of body.

    Both append the events they produce to ``out`` *before* raising, so a consumer still
    sees the content that arrived ahead of an error. Once ``done`` is set (``[DONE]`` was
    read) the last event appended was the ``StreamEnd``; later bytes are ignored.
    """

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._acc = StreamAccumulator()
        self.done = False
        self._head = b""
        self._events = False  # any event with data or a name: it is a stream

    def feed(self, chunk: bytes, out: list[StreamEvent]) -> None:
        """Decode one network read. Raises ``APIError`` for an in-stream error or a
        malformed stream (the cause chained)."""
        if self.done:
            return
        if not self._events and len(self._head) < _HEAD_BYTES:
            self._head += chunk[: _HEAD_BYTES - len(self._head)]
        try:
            events = self._sse.feed(chunk)
        except ProtocolError as e:
            raise APIError(f"malformed stream: {e}") from e
        self._apply(events, out)

    def finish(self, out: list[StreamEvent]) -> None:
        """End of body: flush a last unterminated event; without ``[DONE]`` this raises,
        because a stream cut short is never a complete answer."""
        if self.done:
            return
        try:
            events = self._sse.close()
        except ProtocolError as e:
            raise APIError(f"malformed stream: {e}") from e
        self._apply(events, out)
        if not self.done and not self._events and self._head.strip() and not _sse_framing(self._head):
            raise not_a_stream(self._head)  # e.g. a web server's page at a wrong base_url
        if not self.done:
            raise APIError("the stream ended before [DONE]; the answer is incomplete")

    def _apply(self, events: list[SSEEvent], out: list[StreamEvent]) -> None:
        for sse in events:
            if self._handle(sse, out):
                out.extend(self._acc.drain())  # text held back for a surrogate pair that never came
                end = StreamEnd(self._acc.response())  # validates the tool calls; may raise
                self.done = True
                out.append(end)
                return

    def _handle(self, sse: SSEEvent, out: list[StreamEvent]) -> bool:
        """Apply one SSE event; True at ``[DONE]``."""
        if sse.data.strip() or sse.event != "message" or sse.error is not None:
            self._events = True
        if sse.error is not None or sse.event == "error":
            raise api_error(error_info_from_body((sse.error or sse.data).encode()), status=None)
        data = sse.data.strip()
        if sse.event == "ping" or not data:
            return False
        if data == "[DONE]":
            return True
        try:
            chunk = jsonsafe.loads(data, CHUNK_MAX_DEPTH)
        except jsonsafe.TooDeep as e:
            raise APIError(f"malformed stream: a chunk nests deeper than {CHUNK_MAX_DEPTH} levels") from e
        except ValueError as e:
            raise APIError(f"malformed stream: a chunk is not JSON ({excerpt(data.encode())})") from e
        out.extend(self._acc.add(chunk))
        return False


_FIELDS = (b":", b"data", b"event", b"id", b"retry")


def _sse_framing(head: bytes) -> bool:
    """Whether the body starts as server-sent events do (a comment such as ": keep-alive", or
    a field): such a stream was cut short, it is not some other page."""
    return head.lstrip().startswith(_FIELDS)
