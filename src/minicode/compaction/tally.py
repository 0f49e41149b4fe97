"""minicode's own estimate of the kept history, kept as running sums: ``HistoryTally``.

The compaction trigger takes the larger of the server's count (the calibration) and this
local estimate, so a server that under-reports ``usage.prompt_tokens`` — or reports nothing —
cannot let the context grow past the window. Summing every message before every request
would cost time proportional to the history; the tally remembers the prefix sums of the
estimates instead, so each message is estimated once (when first counted) and a check costs
the messages added since the last one. Rewinds and compactions are recognised (the history
got shorter, the last counted message is another object, or the kept part starts elsewhere)
and only the kept part is counted again. Holds no message but the last one counted.

Pure; no I/O.
"""

from __future__ import annotations

from array import array
from typing import Callable, Sequence

from minicode.provider.types import Message

__all__ = ["HistoryTally"]


class HistoryTally:
    """Estimated tokens of ``history[first:]``, updated incrementally between calls."""

    __slots__ = ("_last", "_start", "_sums")

    def __init__(self) -> None:
        self._start = 0
        self._sums = array("q", [0])
        """``_sums[k] - _sums[0]``: tokens of ``history[_start : _start + k]``."""
        self._last: Message | None = None
        """The last message counted (``history[_start + len(_sums) - 2]``), to notice a changed history."""

    def reset(self) -> None:
        """Forget everything counted (the history was cut back or replaced)."""
        self._restart(0)

    def tokens(self, history: Sequence[Message], first: int, estimate: Callable[[Message], int]) -> int:
        """Estimated tokens of ``history[first:]`` (``estimate`` per message)."""
        first = max(0, min(first, len(history)))
        counted = self._start + len(self._sums) - 1
        if first < self._start or counted > len(history) or counted <= first or not self._same_tail(history, counted):
            self._restart(first)
            counted = first
        elif first > self._start:
            del self._sums[: first - self._start]  # sums stay cumulative: tokens subtract _sums[0]
            self._start = first
        sums = self._sums
        for i in range(counted, len(history)):
            message = history[i]
            sums.append(sums[-1] + estimate(message))
            self._last = message
        return sums[-1] - sums[0]

    def _same_tail(self, history: Sequence[Message], counted: int) -> bool:
        return self._last is not None and history[counted - 1] is self._last

    def _restart(self, first: int) -> None:
        self._start = first
        self._sums = array("q", [0])
        self._last = None
