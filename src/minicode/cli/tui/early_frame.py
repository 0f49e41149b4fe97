"""The early frame's picture, in plain ANSI: the full screen's layout before prompt_toolkit.

The same rows the application draws a moment later: the transcript above (its opening note,
then a resumed conversation's last entries, bottom-aligned once they fill the screen), the
status bar on the second-to-last row (state, model, thinking level, session id — the context
share follows with the real frame, which knows the prompt's size), and the empty input with
its prompt on the last row. Answers are plain wrapped text here; the real frame renders
their Markdown. Pure: lines in, bytes out (``early.py`` writes them).
"""

from __future__ import annotations

from minicode.cli.tui.text import cell_width, fit_cells, wrap_plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # the tail reader loads only to resume a session (json, the call previews)
    from minicode.cli.tui.early_tail import Entry

__all__ = ["ENTER", "LEAVE", "PROMPT", "StyledLine", "frame_bytes", "status_ident", "status_text", "transcript_lines"]

PROMPT = "› "  # layout.PROMPT
ENTER = "\x1b[?1049h\x1b[H\x1b[2J"
"""Alternate screen, home, erased."""
LEAVE = "\x1b[?2004l\x1b[0m\x1b[?25h\x1b[?1049l"
"""Bracketed paste off, attributes reset, cursor shown, main screen back."""
_COLORS = {  # layout.STYLE as SGR parameters
    "notice": "38;5;245",
    "user": "1;38;5;111",
    "prompt": "1;38;5;111",
    "tool.ok": "38;5;71",
    "tool.error": "38;5;203",
    "diff.add": "38;5;71",
    "diff.del": "38;5;203",
    "diff": "38;5;222",
    "stats": "38;5;245",
    "status.bad": "38;5;208",
}
_MONOCHROME = {"user": "1", "prompt": "1"}  # NO_COLOR: what prompt_toolkit keeps at one bit

StyledLine = tuple[str, str]
"""(style class, text of one screen row)"""


def transcript_lines(note: str, entries: list[Entry], width: int) -> list[StyledLine]:
    """The transcript at ``width``: the opening note, then the entries, a blank line between
    entries (a tool call's diff lines stay under it)."""
    out: list[StyledLine] = [("notice", line) for line in _wrapped(note, width, "")]
    for style, text, prefix in entries:
        if style == "diff":
            kind = "diff.add" if text.startswith("    +") else "diff.del" if text.startswith("    -") else "diff"
            out.append((kind, fit_cells(text, width)))
            continue
        out.append(("", ""))
        indent = "  " if style.startswith("tool") else " " * cell_width(prefix)
        out.extend((style, line) for line in _wrapped(prefix + text.replace("\n", "\n" + indent), width, indent))
    return out


def _wrapped(text: str, width: int, indent: str) -> list[str]:
    return ["".join(piece for _, piece in line) for line in wrap_plain(text, width, "", indent)]


def status_ident(model: str, thinking: str | None, session_id: str) -> str:
    """The status bar's model, thinking level and short session id (also ``layout.status_line``'s)."""
    return f" {model}{f' · think {thinking}' if thinking else ''} · {session_id[:8]} "


def status_text(model: str, thinking: str | None, session_id: str, width: int) -> str:
    """The status bar's text at start (``layout.status_line`` with nothing going on): the
    state, then the model and the session id, dropped first when the row is too narrow."""
    state = " idle "
    ident = status_ident(model, thinking, session_id)
    text = state + ident if cell_width(state + ident) <= width else state
    return fit_cells(text, width)


def frame_bytes(lines: list[StyledLine], status: str, width: int, height: int, *, color: bool) -> bytes:
    """The whole frame as one write: alternate screen, transcript rows (the last ones when
    they overflow), the status bar, the prompt, bracketed paste on, the cursor in the input."""
    area = height - 2
    shown = lines[-area:] if len(lines) > area else lines
    parts = [ENTER]
    for row, (style, text) in enumerate(shown):
        if text:
            parts.append(f"\x1b[{row + 1};1H{_sgr(style, color)}{text}\x1b[0m")
    padded = status + " " * max(0, width - cell_width(status))
    parts.append(f"\x1b[{height - 1};1H\x1b[7m{padded}\x1b[0m")
    parts.append(f"\x1b[{height};1H{_sgr('prompt', color)}{PROMPT}\x1b[0m")
    parts.append(f"\x1b[?2004h\x1b[{height};{len(PROMPT) + 1}H\x1b[?25h")
    return "".join(parts).encode("utf-8", "replace")


def _sgr(style: str, color: bool) -> str:
    code = (_COLORS if color else _MONOCHROME).get(style)
    return f"\x1b[{code}m" if code else ""
