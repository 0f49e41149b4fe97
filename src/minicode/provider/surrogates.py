"""Text deltas back into valid Unicode: surrogate pairs split across chunks are joined. Pure.

JSON escapes a character outside the BMP as two UTF-16 halves (``"\\ud83d\\ude00"`` is 😀). A
server that cuts its stream between the halves sends ``"\\ud83d"`` in one chunk and
``"\\ude00"`` in the next; each parses to a lone surrogate, which cannot be written to a
terminal, a file or a request body. ``SurrogateJoiner`` holds a trailing high half back until
the next piece of the same stream (text, reasoning, one tool call's arguments) and joins the
pair; whatever stays unpaired becomes U+FFFD.
"""

from __future__ import annotations

__all__ = ["REPLACEMENT", "SurrogateJoiner", "replace_lone_surrogates"]

REPLACEMENT = "\ufffd"


def _is_high(c: str) -> bool:
    return "\ud800" <= c <= "\udbff"


def _is_low(c: str) -> bool:
    return "\udc00" <= c <= "\udfff"


def replace_lone_surrogates(text: str) -> str:
    """``text`` with surrogate pairs joined into their characters and every other surrogate
    replaced by U+FFFD (unchanged, and cheap, when there is none)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if _is_high(c) and i + 1 < len(text) and _is_low(text[i + 1]):
            out.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            i += 2
            continue
        out.append(REPLACEMENT if _is_high(c) or _is_low(c) else c)
        i += 1
    return "".join(out)


class SurrogateJoiner:
    """One stream of text pieces; ``push`` returns what can be shown now, ``flush`` the rest."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def push(self, piece: str) -> str:
        text = self._held + piece
        self._held = ""
        if text and _is_high(text[-1]):
            text, self._held = text[:-1], text[-1]  # its low half may open the next piece
        return replace_lone_surrogates(text)

    def flush(self) -> str:
        """What is still held (a high half that never got its pair) as U+FFFD."""
        held, self._held = self._held, ""
        return REPLACEMENT if held else ""
