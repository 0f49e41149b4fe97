"""A Markdown answer in the transcript, laid out lazily block by block.

The text is split at Markdown block boundaries outside code fences (``split_blocks``): every
finished block is rendered on its own and at most once per width; only the unfinished tail
of a streaming answer is rendered again as text arrives. At a width never seen before, the
blocks count by a cheap estimate, and a block is rendered only when a frame shows it — so
the first frame after a resize costs the blocks on screen, not a 20,000-token answer (its
real height replaces the estimate then, and the transcript is told). Pure: no prompt_toolkit,
no rich (Markdown comes in through the ``RenderMarkdown`` callable).
"""

from __future__ import annotations

from typing import Callable

from minicode.cli.tui.heights import Heights
from minicode.cli.tui.items import MAX_CACHED_WIDTHS, Item, Line, RenderMarkdown, estimate_lines
from minicode.cli.tui.text import cell_width, neutralise, wrap_plain

__all__ = ["AnswerItem", "split_blocks", "split_finished"]


def split_blocks(text: str) -> list[int]:
    """Where the finished Markdown blocks of a streaming ``text`` end: the offset of every
    block start after the first (empty when no block is finished yet).

    A block is finished when a blank line outside a code fence is followed by a line that
    has begun and is not indented (an indented one may continue a list item or a code block).
    """
    lines = text.split("\n")
    fence: str | None = None
    cuts: list[int] = []
    offset = 0
    previous_blank = False
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if fence is None and i > 0 and previous_blank and line[:1] not in ("", " ", "\t"):
            if not stripped.startswith(("```", "~~~")) or i < len(lines) - 1:
                cuts.append(offset)
        marker = stripped[:3]
        if marker in ("```", "~~~") and len(line) - len(stripped) < 4:
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
        previous_blank = not line.strip()
        offset += len(line) + 1
    return cuts


def split_finished(text: str) -> int:
    """Where the finished blocks of ``text`` end (0 = none finished yet)."""
    cuts = split_blocks(text)
    return cuts[-1] if cuts else 0


class _Layout:
    """One width's block heights (estimates until rendered) and the blocks rendered; the
    tail's lines once rendered, and the tail height last reported (``tail_counted``)."""

    def __init__(self) -> None:
        self.sizes = Heights()
        self.rendered: dict[int, list[Line]] = {}
        self.tail: list[Line] | None = None
        self.tail_counted = 0


class AnswerItem(Item):
    """A Markdown answer that may still be streaming (see the module docstring)."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._blocks: list[str] = []
        self._widths: list[tuple[int, ...]] = []
        """Per block: the cell width of each of its lines (the estimates need no re-scan)."""
        self._lines = 0  # source lines and cells of all blocks: the whole answer's quick estimate
        self._cells = 0
        self._tail = ""
        self._layouts: dict[int, _Layout] = {}
        self.dropped = ""
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        return "".join(self._blocks) + self._tail

    def append(self, text: str) -> None:
        self._tail += neutralise(text)
        start = 0
        for cut in split_blocks(self._tail):
            self._add_block(self._tail[start:cut])
            start = cut
        self._tail = self._tail[start:]
        for layout in self._layouts.values():
            layout.tail = None
        self._resized()

    def cut_off(self, why: str) -> None:
        """The stream ended without finishing (``why``: "interrupted"): the model never sent
        the rest, and the conversation keeps none of it, so the entry says so."""
        self.dropped = f"({why} — not kept in the conversation)"
        self._resized()

    def _add_block(self, block: str) -> None:
        index = len(self._blocks)
        self._blocks.append(block)
        widths = tuple(cell_width(line) for line in block.strip("\n").split("\n"))
        self._widths.append(widths)
        self._lines += len(widths)
        self._cells += sum(widths)
        for width, layout in self._layouts.items():
            layout.sizes.append(self._guess(index, width))

    def _guess(self, index: int, width: int) -> int:
        """Block ``index`` wrapped as plain text, with the blank line before it."""
        width = max(1, width)
        return sum(max(1, -(-cells // width)) for cells in self._widths[index]) + (1 if index else 0)

    # --- the Item API -----------------------------------------------------------------------
    def estimate(self, width: int) -> int:
        """A guess in O(1): every source line, its overflow, and a blank line between blocks."""
        tail = self._tail.strip("\n")
        tail_lines = estimate_lines(tail, width) if tail else 0
        return self._lines + self._cells // max(1, width) + max(0, len(self._blocks) - 1) + tail_lines

    def cached(self, width: int) -> bool:
        return width in self._layouts

    def height(self, width: int, md: RenderMarkdown) -> int:
        """Lines at ``width`` as far as known, never rendering anything: at a width not laid
        out yet the whole answer is a quick estimate; laid out, blocks never shown (and a tail
        not yet rendered) count by estimate. Each reveal corrects it (the transcript is told)."""
        layout = self._layouts.get(width)
        if layout is None:
            return self.estimate(width) + len(self._dropped_lines(width))
        if layout.tail is not None:
            layout.tail_counted = len(layout.tail)
        else:
            tail = self._tail.strip("\n")
            layout.tail_counted = (estimate_lines(tail, width) + (1 if self._blocks else 0)) if tail.strip() else 0
        return layout.sizes.total + layout.tail_counted + len(self._dropped_lines(width))

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.slice(width, md, 0, 1 << 62)

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        layout = self._layout(width)
        out: list[Line] = []
        index, pos = layout.sizes.find(max(0, start))
        while index < len(self._blocks) and len(out) < count:
            seq = self._block(layout, index, width, md)
            out.extend(seq[max(0, start - pos): max(0, start - pos) + count - len(out)])
            pos += len(seq)
            index += 1
        for seq in (self._tail_lines(layout, width, md), self._dropped_lines(width)):
            if len(out) < count:
                out.extend(seq[max(0, start - pos): max(0, start - pos) + count - len(out)])
            pos += len(seq)
        return out

    def settle(self, width: int, md: RenderMarkdown, more: Callable[[], bool]) -> bool:
        layout = self._layout(width)
        for index in range(len(self._blocks)):
            if index not in layout.rendered:
                if not more():
                    return False
                self._block(layout, index, width, md)
        if layout.tail is None and more():
            self._tail_lines(layout, width, md)
        return layout.tail is not None

    def _layout(self, width: int) -> _Layout:
        layout = self._layouts.get(width)
        if layout is None:
            if len(self._layouts) >= MAX_CACHED_WIDTHS:
                self._layouts.pop(next(iter(self._layouts)))
            layout = self._layouts[width] = _Layout()
            layout.sizes.extend([self._guess(index, width) for index in range(len(self._blocks))])
            self._resized()  # the quick estimate gives way to the block-by-block one
        return layout

    def _block(self, layout: _Layout, index: int, width: int, md: RenderMarkdown) -> list[Line]:
        """Block ``index`` at ``width`` with the blank line before it, rendered on first use;
        its real height replaces the estimate (and the transcript is told)."""
        lines = layout.rendered.get(index)
        if lines is None:
            body = md(self._blocks[index].strip("\n"), width)
            lines = layout.rendered[index] = [(), *body] if index and body else body
            if layout.sizes.get(index) != len(lines):
                layout.sizes.set(index, len(lines))
                self._resized()
        return lines

    def _tail_lines(self, layout: _Layout, width: int, md: RenderMarkdown) -> list[Line]:
        if layout.tail is None:
            tail = md(self._tail.strip("\n"), width) if self._tail.strip() else []
            layout.tail = [(), *tail] if tail and self._blocks else tail
            if len(layout.tail) != layout.tail_counted:
                self._resized()
        return layout.tail

    def _dropped_lines(self, width: int) -> list[Line]:
        return wrap_plain(self.dropped, width, "class:dropped") if self.dropped else []
