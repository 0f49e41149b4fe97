"""Transcript items of the full-screen UI: what each entry shows, rendered to lines per width.

Pure: no prompt_toolkit, no rich (Markdown comes in through the ``RenderMarkdown`` callable).
Every item caches its rendered lines per width, so a redraw or a scroll costs nothing and a
resize re-lays each entry once; a Markdown answer (``answer.py``) does so block by block, only
for the blocks a frame shows.
All model and tool text passes through ``neutralise`` before it is stored.
"""

from __future__ import annotations

from typing import Callable

from minicode.cli.frontends.tui.rendered import RenderedBlocks
from minicode.cli.frontends.tui.text import Fragment, Line, cell_width, cut_cells, neutralise, wrap_plain

__all__ = [
    "Fragment",
    "HelpItem",
    "Item",
    "Line",
    "ReasoningItem",
    "RenderMarkdown",
    "TextItem",
    "estimate_lines",
    "neutralise",
    "wrap_plain",
]

RenderMarkdown = Callable[[str, int], list[Line]]

MAX_CACHED_WIDTHS = 3  # a resize back and forth should not re-render, but memory stays bounded
TEXT_LINES = 400
"""Lines of plain entries kept laid out (``TextItem``): ten screens of 40 rows."""
text_lines = RenderedBlocks(TEXT_LINES)


def estimate_lines(text: str, width: int) -> int:
    """Screen lines ``text`` takes wrapped at ``width`` without rendering it (a guess for Markdown)."""
    width = max(1, width)
    return sum(max(1, -(-cell_width(line) // width)) for line in text.split("\n"))


class Item:
    """Base of every transcript entry: per-width line cache around ``_render``."""

    __slots__ = ("_cache", "_watcher")  # no __dict__ for a slotted entry: a long run has many

    def __init__(self) -> None:
        self._cache: dict[int, list[Line]] = {}
        self._watcher: Callable[[], None] | None = None

    def watch(self, callback: Callable[[], None]) -> None:
        """``callback`` runs whenever this entry's height may have changed (the transcript
        keeps the heights of unchanged entries, so a change must say so)."""
        self._watcher = callback

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        got = self._cache.get(width)
        if got is None:
            if len(self._cache) >= MAX_CACHED_WIDTHS:
                self._cache.pop(next(iter(self._cache)))
            got = self._cache[width] = self._render(width, md)
        return got

    def height(self, width: int, md: RenderMarkdown) -> int:
        """Lines at ``width``; the transcript sums these every frame, so they are cached."""
        return len(self.lines(width, md))

    def slice(self, width: int, md: RenderMarkdown, start: int, count: int) -> list[Line]:
        """Lines [start, start + count) at ``width``."""
        return self.lines(width, md)[start : start + count]

    def cached(self, width: int) -> bool:
        return width in self._cache

    def estimate(self, width: int) -> int:
        """A cheap guess of ``height`` without rendering (for entries never yet on screen)."""
        return 1

    def settle(self, width: int, md: RenderMarkdown, more: Callable[[], bool]) -> bool:
        """Render what is not rendered yet at ``width`` while ``more()`` allows (the idle
        re-wrap after a resize); True when nothing is left."""
        if not self.cached(width) and more():
            self.height(width, md)
        return self.cached(width)

    def _changed(self) -> None:
        self._cache.clear()
        self._resized()

    def _resized(self) -> None:
        if self._watcher is not None:
            self._watcher()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        raise NotImplementedError


class TextItem(Item):
    """A plain entry: user submission, notice, error, statistics, help. Its lines are kept
    in one cache every plain entry shares, bounded to what was shown last (``TEXT_LINES``):
    a long run has two of these a turn, and laying one out again is cheap."""

    __slots__ = ("text", "style", "prefix")

    def __init__(self, text: str, style: str = "", prefix: str = "") -> None:
        super().__init__()
        self.text = neutralise(text)
        self.style = style
        self.prefix = prefix

    def estimate(self, width: int) -> int:
        return estimate_lines(self.prefix + self.text, width)

    def lines(self, width: int, md: RenderMarkdown) -> list[Line]:
        key = (self, width)
        got = text_lines.get(key)
        if got is None:
            got = self._render(width, md)
            text_lines.put(key, got)
        return got

    def cached(self, width: int) -> bool:
        return (self, width) in text_lines

    def settle(self, width: int, md: RenderMarkdown, more: Callable[[], bool]) -> bool:
        return True  # laid out when shown: cheap, and keeping it laid out is what costs

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        indent = " " * cell_width(self.prefix)
        text = self.prefix + self.text.replace("\n", "\n" + indent)
        return wrap_plain(text, width, self.style, indent)


_HELP_MIN_TEXT = 16  # columns a help description needs beside its keys, else it wraps from the left


class HelpItem(TextItem):
    """Two-column help: a wrapped description continues under the description, not the keys."""

    __slots__ = ()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        out: list[Line] = []
        for line in self.text.split("\n"):
            gap = line.find("  ")
            column = len(line) - len(line[gap:].lstrip(" ")) if gap >= 0 else 0
            # a column that leaves too little room for words is no column
            indent = " " * column if 0 < column <= width - _HELP_MIN_TEXT else ""
            out.extend(wrap_plain(line, width, self.style, indent))
        return out


class ReasoningItem(Item):
    """Reasoning, collapsed to one dim line: how much, and the latest words while it streams;
    ``expanded`` (Ctrl+R) shows all of it, dim, under that line."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.finished = False
        self.expanded = False

    def toggle(self) -> None:
        self.expanded = not self.expanded
        self._changed()

    def append(self, text: str) -> None:
        self.text += neutralise(text)
        self._changed()

    def finish(self) -> None:
        self.finished = True
        self._changed()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        head = f"∴ {'thought' if self.finished else 'thinking'} ({len(self.text):,} chars)"
        if self.expanded:
            body = wrap_plain("  " + self.text.strip().replace("\n", "\n  "), width, "class:reasoning", "  ")
            return [(("class:reasoning", cut_cells(head + " · Ctrl+T hides", width)[0]),), *body]
        words = " ".join(self.text.split())
        if not self.finished and words:
            room = max(0, width - cell_width(head) - 3)
            head += "  " + (_last_cells(words, room) if room else "")
        return [(("class:reasoning", cut_cells(head, width)[0]),)]


def _last_cells(text: str, cells: int) -> str:
    """The end of ``text`` that fits in ``cells`` columns, starting at a word where it can."""
    used = 0
    for i in range(len(text) - 1, -1, -1):
        used += cell_width(text[i])
        if used > cells:
            tail = text[i + 1 :]
            if text[i] == " " or " " not in tail:
                return tail  # cut at a space already, or one long word: keep its end
            return tail.split(" ", 1)[1]
    return text
