"""The exit printout: this run's transcript as printed to the normal screen when the full
screen ends (the last ``EXIT_MAX_LINES`` lines of it). Pure: no prompt_toolkit, no rich."""

from __future__ import annotations

from typing import TYPE_CHECKING

from minicode.cli.frontends.tui.history import HistoryItem
from minicode.cli.frontends.tui.items import Line, wrap_plain

if TYPE_CHECKING:
    from minicode.cli.frontends.tui.view import Transcript

__all__ = ["EXIT_MAX_LINES", "exit_lines", "plain_text"]


EXIT_MAX_LINES = 3_000
"""The exit printout ends with at most about this many lines (whole entries): more than a
terminal's scrollback usually keeps (tmux and kitty 2,000, iTerm2 1,000), and the entries
above would be rendered again only to scroll away."""


def exit_lines(transcript: Transcript, width: int, max_lines: int = EXIT_MAX_LINES) -> list[Line]:
    """This run's transcript at ``width``, styled, as printed to the normal screen on exit; a
    resumed session's earlier conversation is left out (it was printed when it happened).
    A run longer than ``max_lines`` is printed from the entry where its last ``max_lines``
    lines begin, under a line saying how many entries were left out."""
    md = transcript.md
    entries = [item for item in transcript.items if not isinstance(item, HistoryItem)]
    shown: list[list[Line]] = []
    count = 0
    for item in reversed(entries):
        if count >= max_lines:
            break
        shown.append(item.lines(width, md))
        count += len(shown[-1]) + 1
    out: list[Line] = []
    left_out = len(entries) - len(shown)
    if left_out:
        note = (f"… {left_out:,} earlier {'entry' if left_out == 1 else 'entries'} of this run not printed"
                " (the session keeps them: --export prints it whole)")
        out.extend(wrap_plain(note, width, "class:notice"))
    for lines in reversed(shown):
        if out:
            out.append(())
        out.extend(lines)
    return out


def plain_text(transcript: Transcript, width: int) -> str:
    """``exit_lines`` without styles and trailing spaces (for a stdout that is not a terminal)."""
    return "\n".join("".join(text for _, text in line).rstrip() for line in exit_lines(transcript, width))
