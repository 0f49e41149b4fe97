"""Terminal text primitives of the full-screen UI: word wrapping by cells (a CJK character
takes two columns, a combining mark none), with the neutralising and the cell widths of
``cli.frontends.shared.terminal_text`` (the one copy every frontend uses).

Pure: no prompt_toolkit, no rich. Everything the transcript wraps goes through ``wrap_plain``.
"""

from __future__ import annotations

from minicode.cli.frontends.shared.terminal_text import cell_width, cut_cells, fit_cells, neutralise

__all__ = ["Fragment", "Line", "cell_width", "cut_cells", "fit_cells", "neutralise", "wrap_plain"]

Fragment = tuple[str, str]
"""(prompt_toolkit style string, text)"""
Line = tuple[Fragment, ...]

TAB = "    "


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
