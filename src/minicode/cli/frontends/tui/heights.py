"""Cumulative heights of the transcript entries at one width.

The transcript view asks two things every frame: the total line count, and which entry holds
line ``top``. The sizes' running sums answer both by bisection. A size changed in place
drops the sums after it, rebuilt at the next question: the entry that changes each frame
(the streaming answer, a tool line that finished) is the last or near it, so that costs a
few additions; a change far up (an entry measured while scrolling) a pass over the rest,
microseconds. Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

__all__ = ["Heights"]


class Heights:
    """Non-negative sizes by index (from 0); appended at the end, changed in place, never removed."""

    def __init__(self) -> None:
        self._values: list[int] = []
        self._sums: list[int] = [0]  # _sums[k]: the first k sizes summed, for every k < len(_sums)
        self.total = 0

    def __len__(self) -> int:
        return len(self._values)

    def get(self, index: int) -> int:
        return self._values[index]

    def append(self, size: int) -> None:
        self._values.append(size)
        self.total += size

    def extend(self, sizes: list[int]) -> None:
        self._values.extend(sizes)
        self.total += sum(sizes)

    def set(self, index: int, size: int) -> None:
        self.total += size - self._values[index]  # (an index out of range raises IndexError)
        self._values[index] = size
        del self._sums[index + 1 :]

    def prefix(self, count: int) -> int:
        """The sum of the first ``count`` sizes."""
        return self._cumulative()[max(0, count)]

    def find(self, line: int) -> tuple[int, int]:
        """``(index, start)``: the entry whose span holds ``line`` and where that span starts
        (``index == len(self)`` when ``line`` is past the end). Zero sizes are skipped."""
        sums = self._cumulative()
        index = max(0, bisect_right(sums, line) - 1)
        return index, sums[index]

    def _cumulative(self) -> list[int]:
        sums = self._sums
        if len(sums) <= len(self._values):
            more = accumulate(self._values[len(sums) - 1 :], initial=sums[-1])
            next(more)  # the initial value: already the last sum
            sums.extend(more)
        return sums
