"""Terminal text primitives of the full-screen UI: neutralising control characters (the one
``terminal_text.neutralise`` both frontends use), cell widths, and word wrapping by cells (a CJK character takes two columns, a combining mark none).

Pure: no prompt_toolkit, no rich. Everything the transcript wraps goes through ``wrap_plain``.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from minicode.cli.frontends.shared.terminal_text import neutralise

__all__ = ["Fragment", "Line", "cell_width", "cut_cells", "fit_cells", "neutralise", "wrap_plain"]

Fragment = tuple[str, str]
"""(prompt_toolkit style string, text)"""
Line = tuple[Fragment, ...]

TAB = "    "


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch) or ch in "\u200b\u200c\u200d\ufeff":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cell_width(text: str) -> int:
    """Columns ``text`` takes in a terminal."""
    if text.isascii():
        return len(text)
    return sum(_char_width(ch) for ch in text)


def cut_cells(text: str, cells: int) -> tuple[str, str]:
    """``text`` split so the head takes at most ``cells`` columns (at least one character)."""
    if text.isascii():
        cut = max(1, cells)
        return text[:cut], text[cut:]
    used = 0
    for i, ch in enumerate(text):
        used += _char_width(ch)
        if used > cells and i > 0:
            return text[:i], text[i:]
    return text, ""


def fit_cells(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, ending in "…" when cut."""
    if cell_width(text) <= width:
        return text
    return cut_cells(text, max(1, width - 1))[0] + "…"


def _wrap_line(source: str, width: int, indent: str) -> list[str]:
    """One source line → screen lines of at most ``width`` cells; continuations start with
    ``indent`` and never with the spaces the line was broken at."""
    out: list[str] = []
    line, used = "", 0
    for word in _words(source):
        cells = cell_width(word)
        if used + cells <= width:
            line, used = line + word, used + cells
            continue
        if word[0] == " ":  # the break swallows the spaces
            out.append(line.rstrip(" "))
            line, used = indent, len(indent)
            continue
        if line.strip():
            out.append(line.rstrip(" "))
            line, used = indent, len(indent)
        while used + cells > width:  # a word longer than the line is broken by cells
            head, word = cut_cells(word, width - used)
            out.append(line + head)
            line, used = indent, len(indent)
            cells = cell_width(word)
        line, used = line + word, used + cells
    out.append(line.rstrip(" ") if out else line)
    return out


def _words(source: str) -> list[str]:
    """Alternating runs of spaces and non-spaces."""
    words: list[str] = []
    for ch in source:
        if words and (ch == " ") == (words[-1][-1] == " "):
            words[-1] += ch
        else:
            words.append(ch)
    return words


def wrap_plain(text: str, width: int, style: str = "", indent: str = "") -> list[Line]:
    """Plain text wrapped at ``width`` cells, one paragraph per source line; continuation
    lines start with ``indent``."""
    width = max(len(indent) + 2, width)
    out: list[Line] = []
    for source in text.expandtabs(len(TAB)).split("\n"):
        out.extend(((style, piece),) for piece in _wrap_line(source, width, indent))
    return out
