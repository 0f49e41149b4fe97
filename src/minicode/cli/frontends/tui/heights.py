"""Cumulative heights of the transcript entries at one width, updated in O(log n).

The transcript view asks two things every frame: the total line count, and which entry holds
line ``top``. A Fenwick (binary indexed) tree of the entries' sizes answers both without
walking the entries, and lets the one entry that changed (the streaming answer, a tool line
that finished) update its size in O(log n). Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

__all__ = ["Heights"]


class Heights:
    """Non-negative sizes by index; appended at the end, changed in place, never removed."""

    def __init__(self) -> None:
        self._values: list[int] = []
        self._tree: list[int] = [0]  # 1-based: _tree[i] sums the sizes (i - lowbit(i), i]
        self.total = 0

    def __len__(self) -> int:
        return len(self._values)

    def get(self, index: int) -> int:
        return self._values[index]

    def append(self, size: int) -> None:
        self._values.append(size)
        i = len(self._values)
        # the new node covers (i - lowbit(i), i]: this size plus its children i-1, i-2, i-4, …
        # below the lowbit (amortised O(1): most nodes have a small lowbit)
        node, step, low = size, 1, i & -i
        while step < low:
            node += self._tree[i - step]
            step <<= 1
        self._tree.append(node)
        self.total += size

    def extend(self, sizes: list[int]) -> None:
        """Append many sizes at once (a new width's first layout), in linear time overall."""
        if self._values:
            for size in sizes:
                self.append(size)
            return
        # an empty tree is built bottom-up in one pass: each node adds itself to its parent
        tree = [0, *sizes]
        n = len(sizes)
        for i in range(1, n + 1):
            parent = i + (i & -i)
            if parent <= n:
                tree[parent] += tree[i]
        self._values = list(sizes)
        self._tree = tree
        self.total = sum(sizes)

    def set(self, index: int, size: int) -> None:
        delta = size - self._values[index]
        if not delta:
            return
        self._values[index] = size
        self.total += delta
        i = index + 1
        while i < len(self._tree):
            self._tree[i] += delta
            i += i & -i

    def prefix(self, count: int) -> int:
        """The sum of the first ``count`` sizes."""
        out = 0
        while count > 0:
            out += self._tree[count]
            count -= count & -count
        return out

    def find(self, line: int) -> tuple[int, int]:
        """``(index, start)``: the entry whose span holds ``line`` and where that span starts
        (``index == len(self)`` when ``line`` is past the end). Zero sizes are skipped."""
        pos = 0
        rest = line
        step = 1 << (len(self._values).bit_length())
        while step:
            nxt = pos + step
            if nxt < len(self._tree) and self._tree[nxt] <= rest:
                pos = nxt
                rest -= self._tree[nxt]
            step >>= 1
        return pos, line - rest
