"""Text on its way to a terminal: control sequences made visible, any encoding survived.

Model answers, tool output, file names and server messages may carry escape sequences
(``\\x1b]0;PWNED\\x07`` sets the window title, ``\\x1b[2J`` wipes the screen). On a terminal every
frontend shows them as visible characters instead of obeying them (``neutralise``: ESC → ␛,
other C0 controls → control pictures, C1 → U+FFFD, CR dropped; newline and tab kept). To a pipe
or a file the plain frontend writes the answer verbatim (``ShownStream`` with
``terminal=False``), but a character the stream cannot encode (an ASCII locale) is replaced
instead of failing the write. Stdlib only: both the plain frontend and ``cli.tui`` import it.
"""

from __future__ import annotations

import io
from typing import TextIO

__all__ = ["ShownStream", "neutralise"]


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
    never failing on a character the stream's encoding lacks (it is replaced)."""

    def __init__(self, stream: TextIO, *, terminal: bool) -> None:
        super().__init__()
        self._stream = stream
        self._terminal = terminal

    def write(self, text: str) -> int:
        shown = neutralise(text) if self._terminal else text
        try:
            self._stream.write(shown)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "utf-8"
            self._stream.write(shown.encode(encoding, "replace").decode(encoding, "replace"))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._terminal

    def fileno(self) -> int:
        return self._stream.fileno()
