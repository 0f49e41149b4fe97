"""How a call's model-controlled text is shown when a person decides about it.

The approval is the only guard, so what it shows must be what runs. A model (or a prompt
injection in a file it read) can hide work from a question in ways a terminal makes easy:

- blank lines: ``echo hello`` + 60 newlines + ``curl … | sh`` fills any preview with nothing;
- long runs of spaces that push the rest of a line past the window's edge;
- characters that print nothing or reorder what is printed: bidi controls (U+202A–202E,
  U+2066–2069, "Trojan Source"), zero-width spaces and joiners, tag characters.

So the frontends show a call through these helpers (both the full screen and the plain
prompt): ``reveal`` makes control and invisible characters visible, ``preview_lines`` squeezes
runs of blank lines (``⋯ 60 blank lines``) and of spaces (``⋯400 spaces⋯``) so every line that
does something is on screen, and ``command_head`` is the one-line name of a command that says
how much more there is (``echo hello … (+2 more lines, 75 blank)``). Stdlib only.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Any, Mapping

from minicode.cli.frontends.shared.terminal_text import neutralise
from dataclasses import dataclass
from minicode.tools.preview_body import diff_body, squeeze_blank_runs

__all__ = ["COMMAND_BODY_MAX_LINES", "RECOVERED", "Change", "change_lines", "command_head", "command_lines",
           "command_parts", "preview_lines", "reveal", "squeeze_spaces"]

RECOVERED = "(recovered from text)"
"""Said after a call the model wrote as text instead of calling the tool (``agent.text_calls``):
the person deciding should know the call was read out of prose."""
COMMAND_BODY_MAX_LINES = 200
"""Lines of a command shown under its question; every line up to this is shown (a command
longer than that says how much is left out and that it cannot be reviewed here)."""
SPACE_RUN = 8
"""Whitespace inside a line longer than this is shown as a count."""

_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul fillers
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2028, 0x2029),  # line and paragraph separators (a terminal may break the line there)
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x2069),  # bidi isolates
    (0x2800, 0x2800),  # braille blank (prints as a space, is not one)
    (0x3164, 0x3164),  # Hangul filler
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xE0000, 0xE007F),  # tag characters (invisible text)
)


@functools.cache
def _invisible_run() -> re.Pattern[str]:
    """A run of one invisible character; compiled at the first text that is not ASCII (every
    range above is beyond it), as this class of ranges costs ~1 ms to compile."""
    invisible = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _INVISIBLE_RANGES)
    return re.compile(f"([{invisible}])\\1*")


_SPACES = re.compile(r"[^\S\n]{%d,}" % (SPACE_RUN + 1))


def reveal(text: str) -> str:
    """``text`` with control sequences made visible (``neutralise``: ESC → ␛ …), a carriage
    return too (``␍``: in a command or a path it is part of a word, so dropping it as answers
    do would show a different command), and characters that print nothing or reorder the line
    shown as their code (``⟨U+202E⟩``)."""
    shown = neutralise(text.replace("\r", "\u240d"))
    return shown if shown.isascii() else _invisible_run().sub(_code, shown)


def _code(run: re.Match[str]) -> str:
    """``⟨U+200B⟩``, or ``⟨U+200B ×60⟩`` for a run of the same character."""
    size = len(run.group())
    return f"⟨U+{ord(run.group(1)):04X}{f' ×{size:,}' if size > 1 else ''}⟩"


def squeeze_spaces(line: str) -> str:
    """``line`` with each run of more than ``SPACE_RUN`` spaces/tabs shown as ``⋯N spaces⋯``."""
    return _SPACES.sub(lambda m: f" ⋯{len(m.group()):,} spaces⋯ ", line)


def preview_lines(text: str) -> list[str]:
    """The lines of a preview as shown: revealed, runs of blank lines and of spaces squeezed."""
    lines = reveal(text).rstrip("\n").split("\n") if text.strip() else []
    return [squeeze_spaces(line) for line in squeeze_blank_runs(lines)]


def command_lines(command: str, limit: int = COMMAND_BODY_MAX_LINES, head_chars: int | None = None) -> list[str]:
    """What a multi-line command shows under its question: every line (squeezed) up to
    ``limit``, then how much is left out; [] for a one-line command (its head says it all) —
    unless its head is cut at ``head_chars`` (the plain prompt's label): then the line whole."""
    busy = [line for line in command.split("\n") if line.strip()]
    if len(busy) == 1 and head_chars is not None and len(command_parts(command)[0]) > head_chars:
        return [squeeze_spaces(reveal(busy[0].strip()))]
    if len(busy) <= 1:
        return []
    lines = preview_lines(command)
    if len(lines) <= limit:
        return lines
    hidden = sum(1 for line in lines[limit:] if not line.startswith("⋯ "))
    return [*lines[:limit], f"… {hidden:,} more lines not shown here: deny unless you know what they do"]




@functools.cache
def _cut() -> re.Pattern[str]:
    """What a capped preview body says where it left something out (``preview_body``, ``truncate``)."""
    return re.compile(r"^… [\d,]+ more lines?$|… \[\+\d+ chars\]")



WHOLE_CONTENT = "(the diff is longer than its preview: the whole new content follows)"


@dataclass(frozen=True, slots=True)
class Change:
    """The lines a write or edit shows under its question; ``diff``: they are ``+``/``-`` lines."""

    lines: list[str]
    diff: bool


def change_lines(tool: str, arguments: Mapping[str, Any], body: str,
                 limit: int = COMMAND_BODY_MAX_LINES) -> Change:
    """What a write or edit waiting for approval shows: its preview ``body`` when nothing of
    it was left out, else the whole change from the call's arguments — an edit's old and new
    text, a write's new content — up to ``limit`` lines, then how much is left out. A preview
    cut to its first lines would let a line in the middle of a long change go unseen."""
    lines = preview_lines(body)
    diff = tool == "edit" or body.startswith("@@")
    if not any(_cut().search(line) for line in lines):
        return Change(lines, diff)
    old, new, content = (arguments.get(k) for k in ("old_text", "new_text", "content"))
    if tool == "edit" and isinstance(old, str) and isinstance(new, str):
        lines, diff = preview_lines(diff_body(old, new, arguments.get("replace_all") is True, sys.maxsize)), True
    elif tool == "write" and isinstance(content, str):
        lines, diff = [*([WHOLE_CONTENT] if diff else []), *preview_lines(content)], False
    if len(lines) <= limit:
        return Change(lines, diff)
    hidden = sum(1 for line in lines[limit:] if not line.startswith("⋯ "))
    return Change([*lines[:limit], f"… {hidden:,} more lines not shown here: deny unless you know what they do"], diff)


def command_head(command: str) -> str:
    """A command on one line: its first line that does something (squeezed, revealed) and,
    when there is more, how much (``echo hello … (+2 more lines, 75 blank)``)."""
    first, size = command_parts(command)
    return f"{first} … {size}" if size else first


def command_parts(command: str) -> tuple[str, str]:
    """``command_head`` in two parts, so a frontend that must cut the first line to its width
    can keep the size: (first line that does something, ``(+2 more lines, 75 blank)`` or "")."""
    lines = reveal(command).split("\n")
    busy = [line for line in lines if line.strip()]
    if not busy:
        return "", ""
    head = squeeze_spaces(busy[0].strip())
    more, blank = len(busy) - 1, sum(1 for line in lines if not line.strip()) - _edge_blanks(lines)
    if not more:
        return head, ""
    return head, f"(+{more} more line{'' if more == 1 else 's'}{f', {blank:,} blank' if blank else ''})"


def _edge_blanks(lines: list[str]) -> int:
    """Blank lines before the first and after the last line that does something."""
    lead = next(i for i, line in enumerate(lines) if line.strip())
    trail = next(i for i, line in enumerate(reversed(lines)) if line.strip())
    return lead + trail
