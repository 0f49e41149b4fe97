"""Text on its way to a terminal: control sequences made visible, any encoding survived.

Model answers, tool output, file names and server messages may carry escape sequences
(``\\x1b]0;PWNED\\x07`` sets the window title, ``\\x1b[2J`` wipes the screen). On a terminal every
frontend shows them as visible characters instead of obeying them (``neutralise``: ESC → ␛,
other C0 controls → control pictures, C1 → U+FFFD, CR dropped; newline and tab kept). To a pipe
or a file the plain frontend writes the answer verbatim (``ShownStream`` with
``terminal=False``), but a character the stream cannot encode (an ASCII locale) is replaced
instead of failing the write. Stdlib only: both the plain frontend and ``cli.frontends.tui`` import it.
"""

from __future__ import annotations

import io
import os
import unicodedata
from typing import IO, TextIO


__all__ = ["ShownStream", "cell_width", "cut_cells", "fit_cells", "neutralise", "silence"]


def _control_table() -> dict[int, str]:
    table: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in "\n\t"}
    table[0x0D] = ""  # CR: dropped; it could only be used to overwrite a line
    table[0x7F] = "\u2421"
    table.update({c: "\ufffd" for c in range(0x80, 0xA0)})
    return table


_CONTROLS = _control_table()


def neutralise(text: str) -> str:
    """Make control sequences visible and harmless: ESC → ␛, other C0 → control pictures, C1 → �."""
    return text.translate(_CONTROLS)


class ShownStream(io.TextIOBase):
    """``stream`` as minicode writes to it: neutralised when ``terminal``, verbatim otherwise;
    never failing on a character the stream's encoding lacks (it is replaced).

    ``best_effort`` (stderr, the channel of the human lines): a stream that cannot be written
    any more (the terminal hung up, ``2>&-``, ``2>/dev/full``) is dropped silently instead of
    failing the task that reports — there is nobody left to tell — and its descriptor is
    pointed at /dev/null, so the interpreter's final flush cannot fail on it either."""

    def __init__(self, stream: TextIO | None, *, terminal: bool, best_effort: bool = False) -> None:
        super().__init__()
        self._stream = stream
        self._terminal = terminal
        self._best_effort = best_effort
        self.lost = stream is None  # best effort: the stream failed, later text is dropped

    def write(self, text: str) -> int:
        if self.lost and self._best_effort:
            return len(text)
        shown = neutralise(text) if self._terminal else text
        try:
            self._write(shown)
        except (OSError, ValueError):
            if not self._best_effort:
                raise
            self._lose()
        return len(text)

    def _write(self, shown: str) -> None:
        if self._stream is None:
            raise BrokenPipeError("the stream is closed")
        try:
            self._stream.write(shown)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "utf-8"
            self._stream.write(shown.encode(encoding, "replace").decode(encoding, "replace"))

    def flush(self) -> None:
        if self._stream is None or (self.lost and self._best_effort):
            return
        try:
            self._stream.flush()
        except (OSError, ValueError):
            if not self._best_effort:
                raise
            self._lose()

    def _lose(self) -> None:
        self.lost = True
        assert self._stream is not None
        silence(self._stream)
        try:
            self._stream.flush()  # what the failed write left buffered goes to /dev/null
        except (OSError, ValueError):
            pass

    def isatty(self) -> bool:
        return self._terminal

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("the stream is closed")
        return self._stream.fileno()


def silence(stream: TextIO | IO[bytes]) -> None:
    """Point a broken stream's descriptor at /dev/null (writes and the final flush succeed)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):
        pass


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
