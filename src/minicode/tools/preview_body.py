"""Multi-line approval previews (``ToolPreview.body``): capped excerpts built from the
arguments alone, or (``unified_body``) a real diff against the file's current text, so a
person can see what a call will do before it runs."""

from __future__ import annotations

from itertools import islice

from minicode.tools.truncate import PREVIEW_DIFF_MAX_LINES, shorten_line

__all__ = ["BLANK_RUN", "MAX_BODY_LINES", "command_body", "content_body", "diff_body", "squeeze_blank_runs", "unified_body"]

MAX_BODY_LINES = 20
BLANK_RUN = 2
"""Consecutive blank (or whitespace-only) lines from which a preview shows one marker line."""


def _more(count: int) -> str:
    return f"… {count} more line{'s' if count != 1 else ''}"


def squeeze_blank_runs(lines: list[str]) -> list[str]:
    """``lines`` with every run of ``BLANK_RUN`` or more blank / whitespace-only lines shown
    as one ``⋯ N blank lines`` marker: blank lines must not fill a preview and push what
    does something out of sight."""
    out: list[str] = []
    run = 0
    for line in [*lines, "end"]:
        if not line.strip():
            run += 1
            continue
        if run >= BLANK_RUN:
            out.append(f"⋯ {run:,} blank lines")
        else:
            out.extend([""] * run)
        run = 0
        out.append(line)
    return out[:-1]


def content_body(content: str, limit: int = MAX_BODY_LINES) -> str:
    """The first ``limit`` lines of a file's new content (runs of blank lines squeezed),
    plus how many are left out."""
    lines = squeeze_blank_runs(content.splitlines())
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join([*lines[:limit], _more(len(lines) - limit)])


def diff_body(old: str, new: str, replace_all: bool = False, limit: int = MAX_BODY_LINES) -> str:
    """A mini diff of an edit: ``- old`` lines then ``+ new`` lines, capped at ``limit``
    lines in all (each side keeps at least a fair share)."""
    minus = [f"- {line}" for line in old.splitlines() or [""]]
    plus = [f"+ {line}" for line in new.splitlines() or [""]]
    half = max(1, limit // 2)
    keep_minus = min(len(minus), max(half, limit - len(plus)))
    keep_plus = min(len(plus), limit - keep_minus)
    out = minus[:keep_minus]
    if keep_minus < len(minus):
        out.append(_more(len(minus) - keep_minus))
    out += plus[:keep_plus]
    if keep_plus < len(plus):
        out.append(_more(len(plus) - keep_plus))
    if replace_all:
        out.append("(replace_all)")
    return "\n".join(out)


def command_body(command: str) -> str:
    """The full command when it spans several lines (a one-liner already is the detail)."""
    return command if "\n" in command.strip() else ""


def unified_body(old: str, new: str, context: int = 3, limit: int = PREVIEW_DIFF_MAX_LINES) -> str:
    """A unified diff of a file's text (``@@ -a,b +c,d @@`` hunks with real line numbers,
    ``context`` lines around each change, no ``---``/``+++`` header), at most ``limit``
    lines, then how many were left out; "" when nothing changes. Long lines are shortened."""
    import difflib  # here: only a diff needs it, and most callers want the other helpers

    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), n=context, lineterm="")
    lines = [shorten_line(line) for line in islice(diff, 2, None)]  # skip the ---/+++ header
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join([*lines[:limit], _more(len(lines) - limit)])
