"""What the model is told about changes made outside its turns, and the rewind points.

After ``/undo`` (or a rewind that kept or restored files) the files no longer match what the
conversation says; the next user message carries a short note saying so, in front of the
user's text (``with_notes``), so the model re-reads instead of trusting its memory. The note
is part of the stored message — it is what was sent — and ``strip_notes`` takes it off where
the user's own words are wanted back (the draft after a rewind, the rewind picker). Pure.
"""

from __future__ import annotations

import re
from typing import Sequence

from dataclasses import dataclass
from minicode.session.log import MessageLog

__all__ = ["RewindPoint", "rewind_points", "strip_notes", "undo_note", "with_notes"]

_NOTE = re.compile(r"\A(?:\[minicode note: [^\n]*\]\n)+\n")
_PREVIEW_CHARS = 300


@dataclass(frozen=True, slots=True)
class RewindPoint:
    """A user message the conversation can be rewound to (continued from just before it)."""

    index: int
    """Its index in the conversation (the rewind record's ``keep``)."""
    task: int
    """Its raw id (the undo snapshots of its task and later ones are filed under ids >= this)."""
    text: str
    """The start of the message, notes taken off (``_PREVIEW_CHARS`` at most)."""


def rewind_points(log: MessageLog) -> list[RewindPoint]:
    """Every user message of the conversation, oldest first. Only the user messages are read."""
    out = []
    for index in log.user_indexes():
        content = log.peek(index).content or ""
        out.append(RewindPoint(index, log.raw_id(index), strip_notes(content)[:_PREVIEW_CHARS]))
    return out


def with_notes(text: str, notes: Sequence[str]) -> str:
    if not notes:
        return text
    return "".join(f"[minicode note: {_one_line(n)}]\n" for n in notes) + "\n" + text


def strip_notes(text: str) -> str:
    return _NOTE.sub("", text, count=1)


def undo_note(restored: Sequence[str], deleted: Sequence[str], why: str) -> str:
    """E.g. "the user undid file changes (/undo): restored a.py; deleted new.txt. Re-read …"."""
    parts = []
    if restored:
        parts.append("restored " + ", ".join(restored) + " to their earlier content")
    if deleted:
        parts.append("deleted " + ", ".join(deleted) + " (created earlier in this conversation)")
    return f"{why}: " + "; ".join(parts) + ". Re-read a file before relying on or editing it."


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("]", ")")
