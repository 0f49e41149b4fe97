"""Transcript items of the full-screen UI: what each entry shows, rendered to lines per width.

Pure: no prompt_toolkit, no rich (Markdown comes in through the ``RenderMarkdown`` callable).
Every item caches its rendered lines per width, so a redraw or a scroll costs nothing and a
resize re-lays each entry once. A streaming answer is split at Markdown block boundaries
outside code fences: finished blocks are rendered once per width, only the tail is re-rendered.
All model and tool text passes through ``neutralise`` before it is stored.
"""

from __future__ import annotations

from typing import Callable

from minicode.cli.tui.text import Fragment, Line, cell_width, cut_cells, neutralise, wrap_plain

__all__ = [
    "AnswerItem",
    "Fragment",
    "HelpItem",
    "Item",
    "Line",
    "ReasoningItem",
    "RenderMarkdown",
    "TextItem",
    "neutralise",
    "split_finished",
    "wrap_plain",
]

RenderMarkdown = Callable[[str, int], list[Line]]

MAX_CACHED_WIDTHS = 3  # a resize back and forth should not re-render, but memory stays bounded


def split_finished(text: str) -> int:
    """Where the finished Markdown blocks of a streaming ``text`` end (0 = none finished yet).

    A block is finished when a blank line outside a code fence is followed by a line that
    has begun and is not indented (an indented one may continue a list item or a code block).
    """
    lines = text.split("\n")
    fence: str | None = None
    cut_line = 0
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if fence is None and i > 0 and not lines[i - 1].strip() and line[:1] not in ("", " ", "\t"):
            if not stripped.startswith(("```", "~~~")) or i < len(lines) - 1:
                cut_line = i
        marker = stripped[:3]
        if marker in ("```", "~~~") and len(line) - len(stripped) < 4:
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
    if cut_line == 0:
        return 0
    return sum(len(line) + 1 for line in lines[:cut_line])


def _estimate(text: str, width: int) -> int:
    width = max(1, width)
    return sum(max(1, -(-cell_width(line) // width)) for line in text.split("\n"))


class Item:
    """Base of every transcript entry: per-width line cache around ``_render``."""

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

    def _changed(self) -> None:
        self._cache.clear()
        self._resized()

    def _resized(self) -> None:
        if self._watcher is not None:
            self._watcher()

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        raise NotImplementedError


class TextItem(Item):
    """A plain entry: user submission, notice, error, statistics, help."""

    def __init__(self, text: str, style: str = "", prefix: str = "") -> None:
        super().__init__()
        self.text = neutralise(text)
        self.style = style
        self.prefix = prefix

    def estimate(self, width: int) -> int:
        return _estimate(self.prefix + self.text, width)

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        indent = " " * cell_width(self.prefix)
        text = self.prefix + self.text.replace("\n", "\n" + indent)
        return wrap_plain(text, width, self.style, indent)


_HELP_MIN_TEXT = 16  # columns a help description needs beside its keys, else it wraps from the left


class HelpItem(TextItem):
    """Two-column help: a wrapped description continues under the description, not the keys."""

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        out: list[Line] = []
        for line in self.text.split("\n"):
            gap = line.find("  ")
            column = len(line) - len(line[gap:].lstrip(" ")) if gap > 0 else 0
            # a column that leaves too little room for words is no column
            indent = " " * column if 0 < column <= width - _HELP_MIN_TEXT else ""
            out.extend(wrap_plain(line, width, self.style, indent))
        return out


class AnswerItem(Item):
    """A Markdown answer that may still be streaming."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._blocks: list[str] = []
        self._tail = ""
        self._done_lines: dict[int, list[Line]] = {}
        self._done_count: dict[int, int] = {}
        self.dropped = ""
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        return "".join(self._blocks) + self._tail

    def cut_off(self, why: str) -> None:
        """The stream ended without finishing (``why``: "interrupted"): the model never sent
        the rest, and the conversation keeps none of it, so the entry says so."""
        self.dropped = f"({why} — not kept in the conversation)"
        self._changed()

    def estimate(self, width: int) -> int:
        return _estimate(self.text.strip("\n"), width)

    def append(self, text: str) -> None:
        self._tail += neutralise(text)
        cut = split_finished(self._tail)
        if cut:
            self._blocks.append(self._tail[:cut])
            self._tail = self._tail[cut:]
        self._changed()

    def _changed(self) -> None:
        super()._changed()
        for width in list(self._done_lines)[:-MAX_CACHED_WIDTHS]:
            del self._done_lines[width], self._done_count[width]

    def _render(self, width: int, md: RenderMarkdown) -> list[Line]:
        done = self._done_lines.setdefault(width, [])
        for block in self._blocks[self._done_count.get(width, 0):]:
            rendered = md(block.strip("\n"), width)
            if done and rendered:
                done.append(())
            done.extend(rendered)
        self._done_count[width] = len(self._blocks)
        tail = md(self._tail.strip("\n"), width) if self._tail.strip() else []
        out = [*done, (), *tail] if done and tail else [*done, *tail]
        if self.dropped:
            out += wrap_plain(self.dropped, width, "class:dropped")
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
