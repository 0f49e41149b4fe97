"""How often a stream (answer text, reasoning, a command's output) is redrawn.

A frame of the full screen costs a few milliseconds of CPU whatever arrived, and a model
streams a few characters at a time, hundreds of times a second. So streamed output is drawn
at most every ``FASTEST`` seconds and, when frames cost more, less often: the stream's frames
take at most ``SHARE`` of a core (frames of 4 ms: about 10 a second). A frame that gets
dearer (a long code block growing at the bottom) slows the redraws instead of taking more
CPU; keys, approvals and everything else are drawn at once as before. Pure: no prompt_toolkit.
"""

from __future__ import annotations

__all__ = ["FASTEST", "SHARE", "SLOWEST", "StreamPacer"]

FASTEST = 0.05
"""Seconds between two frames of a stream at best (prompt_toolkit's own minimum, 20 a second)."""
SLOWEST = 0.25
"""... and at worst: text still moves four times a second however dear a frame is."""
SHARE = 0.04
"""The share of a core a stream's frames may take."""


class StreamPacer:
    """The wait before the next frame of a stream, from what the recent frames cost."""

    def __init__(self) -> None:
        self.cost = 0.0
        """A frame's CPU seconds, smoothed over the last few frames."""

    def rendered(self, seconds: float) -> None:
        """A frame took ``seconds`` of CPU (negative or absurd values from a clock are ignored)."""
        if 0 <= seconds < 10:
            self.cost = seconds if not self.cost else 0.7 * self.cost + 0.3 * seconds

    def interval(self) -> float:
        return min(SLOWEST, max(FASTEST, self.cost / SHARE))
