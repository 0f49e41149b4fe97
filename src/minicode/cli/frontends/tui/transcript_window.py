"""The transcript on screen: a prompt_toolkit ``Container`` that copies whole rows of cells.

A ``Window`` over a ``UIControl`` would copy every visible line into the screen character by
character, build a position map per line and register the mouse handler cell by cell, every
frame — at 120x40 that was a fifth of a streaming frame. The transcript needs none of that
(no cursor, no wrapping, no selection), so this container turns each line into a row of
``Char`` cells once, keeps the rows of the lines on screen (``RowCache``: bounded to them),
and writes a row into the screen with one ``dict.update``.
"""

from __future__ import annotations

from typing import Callable

from prompt_toolkit.layout import Container, Dimension
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Char, Screen, WritePosition
from prompt_toolkit.mouse_events import MouseEvent

from minicode.cli.frontends.tui.repaint import ScrollHint
from minicode.cli.frontends.tui.text import Line

__all__ = ["RowCache", "TranscriptWindow"]

Row = dict[int, Char]
"""Cells of one screen line by column (from 0); a wide character's second cell is empty."""

_EMPTY = Char("", "")  # what prompt_toolkit puts after a wide character: differs from anything


def line_row(line: Line, width: int) -> Row:
    """The cells of ``line`` cut at ``width`` columns, as prompt_toolkit's Window lays them out:
    a wide character takes two cells, a zero-width one joins the character before it."""
    row: Row = {}
    x = 0
    for style, text in line:
        for ch in text:
            char = Char(ch, style)
            w = char.width
            if w == 0:
                if x:
                    back = x - 1 if row.get(x - 1) is not _EMPTY else x - 2
                    prev = row.get(back)
                    if prev is not None:
                        row[back] = Char(prev.char + ch, prev.style)
                continue
            if x + w > width:
                return row
            row[x] = char
            for i in range(1, w):
                row[x + i] = _EMPTY
            x += w
    return row


class RowCache:
    """The rows of the lines on screen at one width, kept from frame to frame: a line that
    stays on screen (or scrolls by a row) is converted once; a line that leaves is dropped at
    the next frame, so the cache never holds more than one screen."""

    def __init__(self) -> None:
        self._width = 0
        self._rows: dict[Line, Row] = {}
        self.converted = 0
        """Lines converted to cells so far (tests read it)."""

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self, lines: list[Line], width: int) -> list[Row]:
        old = self._rows if width == self._width else {}
        fresh: dict[Line, Row] = {}
        out: list[Row] = []
        for line in lines:
            row = fresh.get(line)
            if row is None:
                row = old.get(line)
                if row is None:
                    row = line_row(line, width)
                    self.converted += 1
                fresh[line] = row
            out.append(row)
        self._rows, self._width = fresh, width
        return out


class TranscriptWindow(Container):
    """The transcript area: ``get_lines(width, height)`` gives the transcript line at the top
    of the view and the lines on screen (top to bottom), ``on_mouse`` gets every mouse event
    over the area. After a frame that showed the same lines moved by a few rows (the view
    follows a stream), ``take_scroll`` says so once, for the renderer (``repaint.py``)."""

    def __init__(self, get_lines: Callable[[int, int], tuple[int, list[Line]]],
                 on_mouse: Callable[[MouseEvent], None]) -> None:
        self._get_lines = get_lines
        self._on_mouse = on_mouse
        self.cache = RowCache()
        self._last: tuple[WritePosition, int, list[Line]] | None = None
        self._scrolled: ScrollHint | None = None

    def take_scroll(self) -> ScrollHint | None:
        hint, self._scrolled = self._scrolled, None
        return hint

    def reset(self) -> None:
        pass

    def preferred_width(self, max_available_width: int) -> Dimension:
        return Dimension()

    def preferred_height(self, width: int, max_available_height: int) -> Dimension:
        return Dimension()

    def get_children(self) -> list[Container]:
        return []

    def write_to_screen(self, screen: Screen, mouse_handlers: MouseHandlers, write_position: WritePosition,
                        parent_style: str, erase_bg: bool, z_index: int | None) -> None:
        if z_index is None or z_index <= 0:
            self._draw(screen, mouse_handlers, write_position, parent_style)
        else:
            screen.draw_with_z_index(z_index, lambda: self._draw(screen, mouse_handlers, write_position, parent_style))

    def _draw(self, screen: Screen, mouse_handlers: MouseHandlers, wp: WritePosition, parent_style: str) -> None:
        if wp.width <= 0 or wp.height <= 0:
            return
        top, lines = self._get_lines(wp.width, wp.height)
        lines = lines[: wp.height]
        self._scrolled = self._scroll_from_last(wp, top, lines)
        self._last = (wp, top, lines)
        screen.height = max(screen.height, wp.ypos + wp.height)  # as a Window does: the diff reads it
        buffer = screen.data_buffer
        for y, row in enumerate(self.cache.rows(lines, wp.width)):
            if row:
                buffer[wp.ypos + y].update(row if not wp.xpos else {wp.xpos + x: c for x, c in row.items()})
        if parent_style.strip():
            screen.fill_area(wp, style=parent_style, after=False)
        handlers = dict.fromkeys(range(wp.xpos, wp.xpos + wp.width), self._mouse)
        for y in range(wp.ypos, wp.ypos + wp.height):
            mouse_handlers.mouse_handlers[y].update(handlers)

    def _scroll_from_last(self, wp: WritePosition, top: int, lines: list[Line]) -> ScrollHint | None:
        """The same lines as last frame, moved by fewer rows than the area has (checked on the
        first line both frames show: a re-measured entry above may have moved everything)."""
        if self._last is None:
            return None
        last_wp, last_top, last_lines = self._last
        shift = top - last_top
        if (last_wp.xpos, last_wp.ypos, last_wp.width, last_wp.height) != (wp.xpos, wp.ypos, wp.width, wp.height):
            return None
        if not 0 < abs(shift) < wp.height:
            return None
        first = max(0, shift)  # the first row, counted in the last frame, both frames show
        if first >= len(last_lines) or first - shift >= len(lines) or last_lines[first] != lines[first - shift]:
            return None
        return ScrollHint(wp.ypos, wp.height, shift)

    def _mouse(self, event: MouseEvent) -> None:
        self._on_mouse(event)
