"""``minicode --sessions``: the table of this workspace's sessions, and the words it is made of.

Pure formatting (standard library only): relative and absolute times, sizes, one-line
messages cut to a number of terminal cells. The full-screen ``/resume`` picker uses the same
words. ``run_list`` is the command itself.
"""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path
from typing import Callable, Sequence, TextIO

from minicode.cli.frontends.shared.terminal_text import fit_cells
from minicode.session.catalog import SessionInfo, list_sessions, short_ids

__all__ = ["absolute_time", "format_sessions", "human_size", "one_line", "relative_time", "run_list"]

UNBOUNDED_MESSAGE_CHARS = 200
"""Without a terminal (a pipe, a file) a row is not cut to a width; its message to this."""
_HEAD = ("ID", "LAST ACTIVITY", "MSGS", "SIZE", "FIRST MESSAGE")


def run_list(workspace: Path, out: TextIO, err: TextIO, width: int | None,
             now: Callable[[], float] = time.time) -> int:
    """Print the table (newest first) to ``out``; notes about skipped files to ``err``."""
    sessions, skipped = list_sessions(workspace)
    for note in skipped:
        err.write(f"minicode: skipped {note}\n")
    if not sessions:
        err.write(f"minicode: no sessions with messages in this workspace ({workspace})\n")
        return 0
    for row in format_sessions(sessions, now(), width):
        out.write(row + "\n")
    err.write("minicode: resume one with: minicode --session ID  (any unique start of the id)\n")
    return 0


def format_sessions(sessions: Sequence[SessionInfo], now: float, width: int | None) -> list[str]:
    """The header and one row per session; each row cut to ``width`` cells (None: no cut,
    the message limited to ``UNBOUNDED_MESSAGE_CHARS``)."""
    short = short_ids([s.id for s in sessions])
    cells = [
        (short[s.id], f"{relative_time(s.modified_ns / 1e9, now)} · {absolute_time(s.modified_ns / 1e9)}",
         f"{s.messages:,}", human_size(s.size), one_line(s.first_message))
        for s in sessions
    ]
    widths = [max(len(_HEAD[i]), *(len(c[i]) for c in cells)) for i in range(4)]
    rows = []
    for c in (_HEAD, *cells):
        row = "  ".join((c[0].ljust(widths[0]), c[1].ljust(widths[1]), c[2].rjust(widths[2]), c[3].rjust(widths[3]), c[4]))
        rows.append(fit_cells(row, width) if width is not None else _cut_chars(row, len(row) - len(c[4]) + UNBOUNDED_MESSAGE_CHARS))
    return rows


def relative_time(then: float, now: float) -> str:
    seconds = max(0, int(now - then))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    days = seconds // 86400
    if days < 14:
        return "1 day ago" if days == 1 else f"{days} days ago"
    if days < 60:
        return f"{days // 7} weeks ago"
    return f"{days // 30} months ago" if days < 730 else f"{days // 365} years ago"


def absolute_time(then: float) -> str:
    """Local time, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(then))


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            break
        value /= 1024
    else:
        unit = "GiB"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def one_line(text: str) -> str:
    """All whitespace (newlines included) folded to single spaces; control characters dropped,
    so a message can never move the cursor or restyle the terminal."""
    cleaned = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf") or ch in "\t\n")
    return " ".join(cleaned.split())


def _cut_chars(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
