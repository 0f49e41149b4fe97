"""A Markdown answer in the transcript, laid out lazily block by block.

The text is split at Markdown block boundaries outside code fences (``split_blocks``): every
finished block is rendered on its own, and its lines are kept in a cache shared by every
answer and bounded to what was shown last (``rendered.py``: a long run keeps its text, not
its styled lines); only the unfinished tail of a streaming answer is rendered again as text
arrives. At a width never seen before, the
blocks count by a cheap estimate, and a block is rendered only when a frame shows it — so
the first frame after a resize costs the blocks on screen, not a 20,000-token answer (its
real height replaces the estimate then, and the transcript is told). Pure: no prompt_toolkit,
no rich (Markdown comes in through the ``RenderMarkdown`` callable).
"""

from __future__ import annotations

from array import array
from typing import Callable

from minicode.cli.frontends.tui.heights import Heights
from minicode.cli.frontends.tui.items import MAX_CACHED_WIDTHS, Item, Line, RenderMarkdown, estimate_lines
from minicode.cli.frontends.tui.rendered import RenderedBlocks
from minicode.cli.frontends.tui.rendered import shared as shared_cache
from minicode.cli.frontends.tui.text import cell_width, neutralise, wrap_plain

__all__ = ["AnswerItem", "Kept", "kept_height", "kept_rendered", "split_blocks", "split_finished"]


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


Kept = tuple[tuple[int, "array[int]"], ...]
"""An answer's layouts without its text (``AnswerItem.kept_layouts``): per width, a code a
block, ``2 * height + 1`` when the block was rendered, ``2 * height`` when guessed."""


def kept_height(codes: array[int]) -> int:
    return sum(code >> 1 for code in codes)


def kept_rendered(codes: array[int]) -> bool:
    """Every block was rendered: its height is real, nothing is left to re-wrap."""
    return all(code & 1 for code in codes)


class _Layout:
    """One width's block heights (estimates until measured) and which are measured; the
    tail's lines once rendered, and the tail height last reported (``tail_counted``). The
    blocks' rendered lines live in the shared cache (``rendered.py``), keyed by this layout."""

    def __init__(self) -> None:
        self.sizes = Heights()
        self.measured = bytearray()
        """Per block: 1 once its real height replaced the estimate (it stays known when its
        lines leave the cache)."""
        self.tail: list[Line] | None = None
        self.tail_counted = 0


class AnswerItem(Item):
    """A Markdown answer that may still be streaming (see the module docstring). What it
    keeps is its text and, per width laid out, its blocks' heights; the rendered lines of a
    finished block are in the bounded shared cache (``rendered.py``) and come back from the
    text when a frame needs them again."""

    def __init__(self, text: str = "", *, finished: bool = False, cache: RenderedBlocks | None = None) -> None:
        super().__init__()
        self._done = ""
        """The finished blocks' text, one string."""
        self._starts = array("I")
        """Where each finished block starts in ``_done``."""
        self._line_cells = array("I")
        """The cell width of every source line of the finished blocks (the estimates need no re-scan)."""
        self._first_line = array("I")
        """Where each block's lines start in ``_line_cells``."""
        self._cells = 0  # cells of all blocks: the whole answer's quick estimate
        self._tail = ""
        self._layouts: dict[int, _Layout] = {}
        self._rendered = cache if cache is not None else shared_cache
        self.dropped = ""
        if text:
            self.append(text)
        if finished:
            self.finish(text)

    @property
    def text(self) -> str:
        return self._done + self._tail

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

    def finish(self, whole: str | None = None) -> None:
        """The answer is complete: its unfinished tail becomes its last block, whose lines
        (when rendered) go to the shared cache like the others'. ``whole`` is the answer as
        the conversation keeps it: when it is the same text, the entry keeps that string
        instead of its own copy (one copy of a long answer in memory, not two)."""
        if self._tail.strip():
            self._tail_to_block()
        if whole is not None and not self._tail.strip() and whole == self._done + self._tail:
            self._done, self._tail = whole, ""

    def _tail_to_block(self) -> None:
        index = len(self._starts)
        self._add_block(self._tail)
        self._tail = ""
        for layout in self._layouts.values():
            if layout.tail is not None:
                self._rendered.put((layout, index), layout.tail)
                layout.sizes.set(index, len(layout.tail))
                layout.measured[index] = 1
            layout.tail, layout.tail_counted = None, 0
        self._resized()

    def cut_off(self, why: str) -> None:
        """The stream ended without finishing (``why``: "interrupted"): the model never sent
        the rest, and the conversation keeps none of it, so the entry says so."""
        self.dropped = f"({why} — not kept in the conversation)"
        self._resized()

    def _add_block(self, block: str) -> None:
        index = len(self._starts)
        self._starts.append(len(self._done))
        self._done += block
        self._first_line.append(len(self._line_cells))
        widths = [cell_width(line) for line in block.strip("\n").split("\n")]
        self._line_cells.extend(widths)
        self._cells += sum(widths)
        for width, layout in self._layouts.items():
            layout.sizes.append(self._guess(index, width))
            layout.measured.append(0)

    def _block_text(self, index: int) -> str:
        end = self._starts[index + 1] if index + 1 < len(self._starts) else len(self._done)
        return self._done[self._starts[index]:end]

    def _guess(self, index: int, width: int) -> int:
        """Block ``index`` wrapped as plain text, with the blank line before it."""
        width = max(1, width)
        end = self._first_line[index + 1] if index + 1 < len(self._first_line) else len(self._line_cells)
        cells = self._line_cells[self._first_line[index]:end]
        return sum(max(1, -(-c // width)) for c in cells) + (1 if index else 0)

    # --- kept without the text (``stored.py``) -----------------------------------------------
    @property
    def complete(self) -> bool:
        """Finished whole, nothing cut off or pending: the text alone makes it again."""
        return not self._tail and not self.dropped

    def same_blocks(self, other: AnswerItem) -> bool:
        """The same text cut into the same blocks (so the same lines at every width)."""
        return self.text == other.text and self._starts == other._starts and self._tail == other._tail

    def basis(self) -> tuple[int, int, int]:
        """What ``estimate`` counts for a complete answer: source lines, cells, blocks."""
        return len(self._line_cells), self._cells, len(self._starts)

    def kept_layouts(self) -> Kept:
        """Per width laid out: each block's height and whether it was rendered (else it is
        the guess) as ``2 * height + rendered``, a byte a block where heights allow — all
        ``restore_layouts`` needs to lay the answer out again as it was."""
        out: list[tuple[int, array[int]]] = []
        for width, layout in self._layouts.items():
            if layout.tail:
                continue
            codes = [2 * layout.sizes.get(i) + layout.measured[i] for i in range(len(self._starts))]
            top = max(codes, default=0)
            if top < 1 << 16:
                out.append((width, array("B" if top < 1 << 8 else "H", codes)))
        return tuple(out)

    def restore_layouts(self, kept: Kept) -> None:
        """Lay the answer out as ``kept_layouts`` found it (its lines come back when shown)."""
        for width, codes in kept:
            if len(codes) != len(self._starts):
                continue
            layout = self._layouts[width] = _Layout()
            layout.sizes.extend([code >> 1 for code in codes])
            layout.measured.extend(bytes(code & 1 for code in codes))

    # --- the Item API -----------------------------------------------------------------------
    def estimate(self, width: int) -> int:
        """A guess in O(1): every source line, its overflow, and a blank line between blocks."""
        tail = self._tail.strip("\n")
        tail_lines = estimate_lines(tail, width) if tail else 0
        blocks = len(self._starts)
        return len(self._line_cells) + self._cells // max(1, width) + max(0, blocks - 1) + tail_lines

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
            layout.tail_counted = (estimate_lines(tail, width) + (1 if self._starts else 0)) if tail.strip() else 0
        return layout.sizes.total + layout.tail_counted + len(self._dropped_lines(width))

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        return self.slice(width, md, 0, 1 << 62)

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        layout = self._layout(width)
        out: list[Line] = []
        index, pos = layout.sizes.find(max(0, start))
        while index < len(self._starts) and len(out) < count:
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
        """Measure, at ``width``, the blocks no frame has shown (their lines go to the shared
        cache, which keeps the most recent)."""
        layout = self._layout(width)
        for index in range(len(self._starts)):
            if not layout.measured[index]:
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
            blocks = range(len(self._starts))
            layout.sizes.extend([self._guess(index, width) for index in blocks])
            layout.measured.extend(bytes(len(blocks)))
            self._resized()  # the quick estimate gives way to the block-by-block one
        return layout

    def _block(self, layout: _Layout, index: int, width: int, md: RenderMarkdown) -> list[Line]:
        """Block ``index`` at ``width`` with the blank line before it, rendered when the cache
        does not hold it; its first real height replaces the estimate (the transcript is told)."""
        key = (layout, index)
        lines = self._rendered.get(key)
        if lines is None:
            body = md(self._block_text(index).strip("\n"), width)
            lines = [(), *body] if index and body else body
            self._rendered.put(key, lines)
            layout.measured[index] = 1
            if layout.sizes.get(index) != len(lines):
                layout.sizes.set(index, len(lines))
                self._resized()
        return lines

    def _tail_lines(self, layout: _Layout, width: int, md: RenderMarkdown) -> list[Line]:
        if layout.tail is None:
            tail = md(self._tail.strip("\n"), width) if self._tail.strip() else []
            layout.tail = [(), *tail] if tail and self._starts else tail
            if len(layout.tail) != layout.tail_counted:
                self._resized()
        return layout.tail

    def _dropped_lines(self, width: int) -> list[Line]:
        return wrap_plain(self.dropped, width, "class:dropped") if self.dropped else []
