"""Coalescing of streamed fragments into ``delta`` events for ``--output stream-json``.

A model streams a few characters per chunk; one JSON event per chunk would cost ~110 bytes
of envelope for every ~4 bytes of text. ``DeltaCoalescer`` holds fragments of one kind (text,
reasoning, one call's tool output) and releases them as one piece when MIN_BYTES have
gathered (at most every MIN_INTERVAL), when the piece has waited MAX_DELAY and holds
FLOOR_BYTES, when it has waited HARD_DELAY whatever it holds, when the kind changes, or when
the caller flushes (before any other event). Pure: the caller passes the time in and
schedules ``deadline``; nothing is ever repeated.
"""

from __future__ import annotations

from dataclasses import dataclass

from minicode.cli.jsonout import DeltaKind

__all__ = ["FLOOR_BYTES", "HARD_DELAY", "MAX_DELAY", "MIN_BYTES", "MIN_INTERVAL", "DeltaCoalescer", "Fragment"]

MIN_BYTES = 256
"""A piece is released early once it holds this many bytes (and MIN_INTERVAL has passed)."""
MIN_INTERVAL = 0.05
"""Seconds between two pieces at least, however fast the model streams."""
MAX_DELAY = 1.0
"""Seconds after which a held piece goes out once it is worth its envelope (FLOOR_BYTES)."""
FLOOR_BYTES = 160
"""Every delta carries ~110 bytes of envelope: a piece released by time alone holds at least
this much, so a slow model (20 tokens/s is ~80 bytes a second) cannot make the stream
balloon; docs/events.md has the figures."""
HARD_DELAY = 3.0
"""Seconds a held byte waits at most, however little text there is."""


@dataclass(frozen=True, slots=True)
class Fragment:
    """A piece to send: ``text`` of one ``kind`` (``call_id`` for tool output)."""

    kind: DeltaKind
    text: str
    call_id: str | None = None


class DeltaCoalescer:
    """Holds fragments until they are worth an event; every byte comes out exactly once, in order."""

    def __init__(
        self,
        min_bytes: int = MIN_BYTES,
        min_interval: float = MIN_INTERVAL,
        max_delay: float = MAX_DELAY,
        floor_bytes: int = FLOOR_BYTES,
        hard_delay: float = HARD_DELAY,
    ) -> None:
        self._min_bytes = min_bytes
        self._min_interval = min_interval
        self._max_delay = max_delay
        self._floor_bytes = floor_bytes
        self._hard_delay = hard_delay
        self._key: tuple[DeltaKind, str | None] | None = None
        self._parts: list[str] = []
        self._bytes = 0
        self._held_since = 0.0
        self._last_release = float("-inf")

    @property
    def deadline(self) -> float | None:
        """When ``due`` should be called next, or None when nothing is held."""
        if not self._parts:
            return None
        if self._bytes >= self._floor_bytes:
            return self._held_since + self._max_delay
        return self._held_since + self._hard_delay

    def add(self, kind: DeltaKind, text: str, now: float, call_id: str | None = None) -> list[Fragment]:
        """Hold ``text``; returns the pieces that are due now (a piece of another kind first)."""
        if not text:
            return []
        out = self.flush(now) if self._key != (kind, call_id) else []
        if not self._parts:
            self._key = (kind, call_id)
            self._held_since = now
        self._parts.append(text)
        self._bytes += len(text.encode("utf-8", "surrogatepass"))
        waited = now - self._held_since
        if (self._bytes >= self._min_bytes and now - self._last_release >= self._min_interval) or (
            self._bytes >= self._floor_bytes and waited >= self._max_delay
        ):
            out += self.flush(now)
        return out

    def due(self, now: float) -> list[Fragment]:
        """The held piece once it has waited long enough (call it at ``deadline``)."""
        deadline = self.deadline
        return self.flush(now) if deadline is not None and now >= deadline else []

    def flush(self, now: float | None = None) -> list[Fragment]:
        """Everything held, now (another event follows, or the stream ends)."""
        if not self._parts or self._key is None:
            return []
        kind, call_id = self._key
        piece = Fragment(kind, "".join(self._parts), call_id)
        self._parts = []
        self._bytes = 0
        self._key = None
        if now is not None:
            self._last_release = now
        return [piece]
