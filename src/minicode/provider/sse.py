"""Incremental Server-Sent Events decoder (WHATWG rules), pure: bytes in, events out.

Owns line splitting (LF, CRLF, CR — also a CR that ends one chunk and an LF that starts the
next), the leading BOM, comments, field parsing and the per-event size cap. It knows nothing
about OpenAI chunks or HTTP; ``provider/openai.py`` feeds it and interprets the events.
Imports only the standard library and ``minicode.errors``.
"""

from __future__ import annotations

import re

from minicode.errors import ProtocolError
from dataclasses import dataclass

__all__ = ["MAX_EVENT_BYTES", "SSEDecoder", "SSEEvent"]

MAX_EVENT_BYTES = 4 * 1024 * 1024
"""One event (all its lines) may not exceed this; a larger one is a broken or hostile stream."""

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``event`` is the event type (``"message"`` unless an ``event:`` field said otherwise).
    ``error`` carries llama.cpp's non-standard ``error:`` field line, which the adapter
    turns into an API error; it is ``None`` for every standard event.
    """

    data: str = ""
    event: str = "message"
    id: str | None = None
    retry: int | None = None
    error: str | None = None


class SSEDecoder:
    """Feed raw bytes with :meth:`feed`; each call returns the events completed so far.

    :meth:`close` flushes a last line and a pending event that was not followed by a blank
    line (lenient: some servers end with ``data: [DONE]\\n`` and close). Raises
    ``ProtocolError`` when one event would exceed ``max_event_bytes``; the buffer never holds
    more than that limit plus one chunk.
    """

    def __init__(self, *, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._max = max_event_bytes
        self._buf = bytearray()
        self._scan_from = 0  # bytes of _buf already known to hold no line end
        self._at_start = True  # a BOM is only skipped at the very start of the stream
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF completes it
        self._event_bytes = 0
        self._reset_event()
        self._last_id: str | None = None

    def _reset_event(self) -> None:
        self._data: list[str] = []
        self._type = ""
        self._retry: int | None = None
        self._error: list[str] = []
        self._event_bytes = 0

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode one chunk of the byte stream; return the events it completed, in order."""
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        self._buf += chunk
        if self._at_start:
            if len(self._buf) < len(_BOM) and _BOM.startswith(bytes(self._buf)):
                return []  # could still be a BOM split across chunks
            if self._buf.startswith(_BOM):
                del self._buf[: len(_BOM)]
            self._at_start = False
        return self._drain()

    def close(self) -> list[SSEEvent]:
        """End of stream: process a last unterminated line and flush a pending event."""
        events: list[SSEEvent] = []
        if self._buf and not (self._at_start and _BOM.startswith(bytes(self._buf))):
            line = bytes(self._buf)
            self._buf.clear()
            self._check_size(len(line))
            self._process_line(line, events)
        self._buf.clear()
        self._dispatch(events)
        return events

    def _drain(self) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        buf = self._buf
        start = 0
        pos = self._scan_from
        while True:
            match = _LINE_END.search(buf, pos)
            if match is None:
                break
            line = bytes(buf[start : match.start()])
            self._check_size(len(line))
            self._event_bytes += len(line) + 1
            if match.group() == b"\r" and match.end() == len(buf):
                self._skip_lf = True  # the LF of this CRLF may arrive with the next chunk
            self._process_line(line, events)
            start = pos = match.end()
        del buf[:start]
        self._scan_from = len(buf)
        self._check_size(len(buf))
        return events

    def _check_size(self, pending: int) -> None:
        if self._event_bytes + pending > self._max:
            limit_mib = self._max / (1024 * 1024)
            self._buf.clear()
            self._reset_event()
            raise ProtocolError(f"server-sent event larger than {limit_mib:g} MiB; stream aborted")

    def _process_line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(events)
            return
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return  # comment or heartbeat
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        elif name == "error":
            self._error.append(value)
        # any other field is ignored, as WHATWG requires

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data or self._error:
            events.append(
                SSEEvent(
                    data="\n".join(self._data),
                    event=self._type or "message",
                    id=self._last_id,
                    retry=self._retry,
                    error="\n".join(self._error) if self._error else None,
                )
            )
        self._reset_event()
