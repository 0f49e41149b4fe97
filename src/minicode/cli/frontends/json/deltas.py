"""Coalescing of streamed fragments into ``delta`` events for ``--output stream-json``.

A model streams a few characters per chunk; one JSON event per chunk would cost ~110 bytes
of envelope for every ~4 bytes of text. ``DeltaCoalescer`` holds one piece per kind (text,
reasoning, each call's tool output) — a server that interleaves reasoning and text chunk by
chunk must not cost an event per chunk — and releases every held piece, in the order their
kinds first appeared, when one of them holds MIN_BYTES (at most every MIN_INTERVAL), when
one has waited MAX_DELAY and holds FLOOR_BYTES, when one has waited HARD_DELAY whatever it
holds, or when the caller flushes (before any other event). Pure: the caller passes the time
in and schedules ``deadline``; every byte comes out once, each kind's bytes in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minicode.cli.frontends.json.event_json import DeltaKind

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


@dataclass(slots=True)
class _Held:
    """The text of one kind (and call) waiting to go out."""

    since: float
    parts: list[str] = field(default_factory=list)
    size: int = 0  # UTF-8 bytes


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
        self._held: dict[tuple[DeltaKind, str | None], _Held] = {}  # in order of first appearance
        self._last_release = float("-inf")

    @property
    def deadline(self) -> float | None:
        """When ``due`` should be called next, or None when nothing is held."""
        return min((self._deadline_of(held) for held in self._held.values()), default=None)

    def _deadline_of(self, held: _Held) -> float:
        return held.since + (self._max_delay if held.size >= self._floor_bytes else self._hard_delay)

    def add(self, kind: DeltaKind, text: str, now: float, call_id: str | None = None) -> list[Fragment]:
        """Hold ``text``; returns the pieces that are due now (all held kinds, in order)."""
        if not text:
            return []
        held = self._held.get((kind, call_id))
        if held is None:
            held = self._held[(kind, call_id)] = _Held(since=now)
        held.parts.append(text)
        held.size += len(text.encode("utf-8", "surrogatepass"))
        if (held.size >= self._min_bytes and now - self._last_release >= self._min_interval) or (
            held.size >= self._floor_bytes and now - held.since >= self._max_delay
        ):
            return self.flush(now)
        return []

    def due(self, now: float) -> list[Fragment]:
        """Every held piece once one has waited long enough (call it at ``deadline``)."""
        deadline = self.deadline
        return self.flush(now) if deadline is not None and now >= deadline else []

    def flush(self, now: float | None = None) -> list[Fragment]:
        """Everything held, now (another event follows, or the stream ends)."""
        pieces = [Fragment(kind, "".join(held.parts), call_id) for (kind, call_id), held in self._held.items()]
        self._held.clear()
        if pieces and now is not None:
            self._last_release = now
        return pieces
