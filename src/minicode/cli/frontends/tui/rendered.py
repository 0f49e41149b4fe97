"""Rendered Markdown blocks, kept for what is near the viewport only.

Rendered lines are the big part of a transcript's memory (a 2,000-token answer is ~8 KB of
text but ~190 KB of styled fragments), so every answer shares one cache of rendered blocks,
bounded by the number of lines it holds: the least recently shown blocks go first, and the
answer keeps only its text and its blocks' heights. A block shown again after it went is
rendered again from its text. Pure: no prompt_toolkit, no rich.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Hashable

from minicode.cli.frontends.tui.text import Line

__all__ = ["MAX_LINES", "RenderedBlocks", "shared"]

MAX_LINES = 400
"""About ten screens of 40 rows: the screen, a page or two either side, the streaming answer
and the last resize's width stay rendered; a run's whole transcript does not (a block shown
again after it left is rendered again from its text, a few milliseconds)."""


class RenderedBlocks:
    """Lines by key (an answer's layout at one width and a block index), least recently used
    first out once more than ``max_lines`` lines are held (the newest entry always stays)."""

    def __init__(self, max_lines: int = MAX_LINES) -> None:
        self.max_lines = max_lines
        self.lines = 0
        """Lines held now (tests and benches read it)."""
        self._blocks: OrderedDict[Hashable, list[Line]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._blocks

    def get(self, key: Hashable) -> list[Line] | None:
        lines = self._blocks.get(key)
        if lines is not None:
            self._blocks.move_to_end(key)
        return lines

    def put(self, key: Hashable, lines: list[Line]) -> None:
        old = self._blocks.pop(key, None)
        if old is not None:
            self.lines -= len(old)
        self._blocks[key] = lines
        self.lines += len(lines)
        while self.lines > self.max_lines and len(self._blocks) > 1:
            _, dropped = self._blocks.popitem(last=False)
            self.lines -= len(dropped)


shared = RenderedBlocks()
"""The one cache every answer of the process uses (a frame and the exit printout alike)."""
