"""Cheaper repaints of the full screen: scroll the terminal, and diff only the rows that changed.

prompt_toolkit repaints by comparing every cell of the new screen with the last one, in
Python. While an answer streams with the view at the bottom, each new line moves every
transcript row up by one, so at 120x40 thousands of cells differ and are sent again, frame
after frame. ``RepaintRenderer`` (prompt_toolkit's ``Renderer``) adds two shortcuts around its
screen diff:

1. **Scroll.** When the transcript shows the same lines moved by k rows (its window reports
   a ``ScrollHint``), the terminal scrolls that band of rows itself (a scroll region, then k
   line feeds at its bottom or k reverse index at its top: plain VT100) and the last screen's
   rows are moved alike, so the new frame differs only in the rows that came into view.
2. **Equal rows.** A row equal to the last frame's (one dict comparison, in C) is left out
   of the cell-by-cell diff.

Both keep prompt_toolkit's invariant (the last screen is what the terminal shows), so the
diff paints exactly what differs. Only for a VT100 output, on a full screen of unchanged
size; otherwise the stock path. The screen diff is prompt_toolkit's private
``_output_screen_diff``: ``app.py`` uses this renderer only when ``pt_private.screen_diff_ok()``
says its signature is the one this module was written for.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import prompt_toolkit.renderer as pt_renderer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.layout.screen import Char, Screen
from prompt_toolkit.output import Output
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import Renderer

from minicode.cli.frontends.tui.pt_private import screen_diff_ok

__all__ = ["RepaintRenderer", "ScrollHint", "changed_rows", "scroll_rows"]


@dataclass(frozen=True, slots=True)
class ScrollHint:
    """Rows [top, top + rows) of the screen show what they showed last frame, moved up by
    ``shift`` rows (down when negative)."""

    top: int
    rows: int
    shift: int


class RepaintRenderer(Renderer):
    """prompt_toolkit's Renderer with the two shortcuts of the module docstring.
    ``scroll_hint`` gives (and forgets) what the frame being drawn scrolled, if anything."""

    def __init__(self, *args: Any, scroll_hint: Callable[[], ScrollHint | None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._scroll_hint = scroll_hint
        self.scrolled = 0
        """Frames that scrolled the terminal instead of repainting (tests and benches read it)."""

    def render(self, app: Any, layout: Any, is_done: bool = False) -> None:
        stock: Callable[..., tuple[Point, str | None]] | None = getattr(pt_renderer, "_output_screen_diff", None)
        if stock is None or not screen_diff_ok() or not isinstance(self.output, Vt100_Output):
            self._scroll_hint()
            super().render(app, layout, is_done)
            return

        def diff(app: Any, output: Output, screen: Screen, current_pos: Point, color_depth: Any,
                 previous_screen: Screen | None, last_style: str | None, is_done: bool, full_screen: bool,
                 **rest: Any) -> tuple[Point, str | None]:
            hint = self._scroll_hint()
            size = rest["size"]
            if previous_screen is None or is_done or not full_screen or rest["previous_width"] != size.columns:
                return stock(app, output, screen, current_pos, color_depth, previous_screen, last_style,
                             is_done, full_screen, **rest)
            if hint is not None and scroll_rows(output, previous_screen, hint, size.rows):
                current_pos = Point(x=0, y=0)
                self.scrolled += 1
            rows = min(max(screen.height, previous_screen.height), size.rows)
            new, old = changed_rows(screen, previous_screen, rows)
            return stock(app, output, new, current_pos, color_depth, old, last_style, is_done, full_screen,
                         **rest)

        setattr(pt_renderer, "_output_screen_diff", diff)  # for this frame only
        try:
            super().render(app, layout, is_done)
        finally:
            setattr(pt_renderer, "_output_screen_diff", stock)


def scroll_rows(output: Output, previous: Screen, hint: ScrollHint, screen_rows: int) -> bool:
    """Scroll the terminal's rows [top, top + rows) by ``hint.shift`` and move the last
    screen's rows alike; the cursor ends at the top left. False (nothing done) when the hint
    does not fit the screen or would move everything out."""
    top, rows, shift = hint.top, hint.rows, hint.shift
    if not 0 < abs(shift) < rows or top < 0 or top + rows > screen_rows:
        return False
    for buffer in (previous.data_buffer, previous.zero_width_escapes):
        band: list[Any] = [buffer.pop(y, None) for y in range(top, top + rows)]
        band = band[shift:] + [None] * shift if shift > 0 else [None] * -shift + band[:shift]
        for y, row in enumerate(band, start=top):
            if row is not None:
                buffer[y] = row
    output.hide_cursor()
    output.reset_attributes()  # the rows scrolled in take the current background: the default
    region = f"\x1b[{top + 1};{top + rows}r"  # DECSTBM (it also homes the cursor)
    if shift > 0:  # a line feed on the bottom margin moves the band up
        output.write_raw(f"{region}\x1b[{top + rows};1H" + "\n" * shift)
    else:  # a reverse index on the top margin moves it down
        output.write_raw(f"{region}\x1b[{top + 1};1H" + "\x1bM" * -shift)
    output.write_raw("\x1b[r")  # the whole screen again; the cursor goes home
    return True


def changed_rows(screen: Screen, previous: Screen, rows: int) -> tuple[Screen, Screen]:
    """Views of ``screen`` and ``previous`` holding only the rows (< ``rows``) that differ, for
    the cell-by-cell diff; a row with zero-width escapes always counts as different."""
    new_rows: defaultdict[int, defaultdict[int, Char]] = _rows_like(screen)
    old_rows: defaultdict[int, defaultdict[int, Char]] = _rows_like(previous)
    data, before = screen.data_buffer, previous.data_buffer
    escapes, escapes_before = screen.zero_width_escapes, previous.zero_width_escapes
    for y in range(rows):
        row, old = data.get(y), before.get(y)
        if (row or {}) == (old or {}) and not escapes.get(y) and not escapes_before.get(y):
            continue
        if row is not None:
            new_rows[y] = row
        if old is not None:
            old_rows[y] = old
    new_view, old_view = copy.copy(screen), copy.copy(previous)
    new_view.data_buffer, old_view.data_buffer = new_rows, old_rows
    return new_view, old_view


def _rows_like(screen: Screen) -> defaultdict[int, defaultdict[int, Char]]:
    """An empty row buffer whose missing rows read as ``screen``'s do (its default cell)."""
    make_row = screen.data_buffer.default_factory
    assert make_row is not None
    return defaultdict(make_row)
