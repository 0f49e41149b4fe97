"""One-line names of tool calls for progress lines and approval questions (plain mode).

``bash $ <command>``, ``grep <pattern> in <path>``, ``write <path>``: what the call does, not
the workspace it runs in (every call runs there). Standard library only, so the plain
frontend can use it without loading prompt_toolkit or rich.
"""

from __future__ import annotations

from pathlib import Path

from minicode.cli.frontends.shared.shown_call import command_parts, reveal

__all__ = ["LABEL_CHARS", "PATTERN_TOOLS", "one_line", "tool_label"]

LABEL_CHARS = 120
PATTERN_TOOLS = ("grep", "glob")


def tool_label(name: str, target: str, detail: str, workspace: Path | None = None) -> str:
    """How a tool call is named on one line: ``bash $ <command>`` (its directory is always the
    workspace, so it is left out), ``grep <pattern> in <path>``, ``agent: <task>``, else ``<tool> <path>``; the
    workspace itself is shown as ``.``."""
    if name == "bash":
        return f"bash $ {one_line(detail)}"
    if name == "agent":  # its detail is the sub-task
        return f"agent: {one_line(detail)}"
    where = "." if workspace is not None and target == str(workspace) else reveal(target)
    if name in PATTERN_TOOLS and detail:
        return f"{name} {one_line(detail)} in {where or '.'}"
    return f"{name} {where}".strip()


def one_line(text: str) -> str:
    """Text on one line: its first line that does something (revealed, runs of spaces
    squeezed — ``shown_call``), cut at LABEL_CHARS with "…", and how many more lines follow
    (``echo hello … (+2 more lines, 73 blank)``)."""
    first, size = command_parts(text)
    if len(first) > LABEL_CHARS:
        first = first[: LABEL_CHARS - 1] + "…"
    return f"{first} … {size}" if size else first
