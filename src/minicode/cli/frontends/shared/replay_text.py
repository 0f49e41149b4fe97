"""How a stored message reads when a resumed session shows it: the user's text collapsed to
its first lines, a tool call named by its target (the history entries, ``history.py``).
Pure: no prompt_toolkit, no rich, no agent modules.
"""

from __future__ import annotations

from minicode import jsonsafe

__all__ = ["USER_MAX_LINES", "call_target", "collapse_user"]

_TARGET_KEYS = ("path", "command", "pattern", "task", "question")  # task: agent; question: ask_user
_DETAIL_MAX = 60
USER_MAX_LINES = 20
"""A replayed user message longer than this shows its first lines and a count of the rest
(a resumed 2,500-line paste must not fill 30 pages)."""


def call_target(arguments: str) -> str:
    """What a tool call works on, from its JSON arguments: the command, a path or a pattern
    (first line, cut at 60 characters); "" when the arguments say none. A command without
    "$ ", as the live view draws it (``✓ bash make``; the plain modes' lines have the "$")."""
    try:
        args = jsonsafe.loads(arguments or "{}", repair_surrogates=True)
    except ValueError:
        return ""
    if not isinstance(args, dict):
        return ""
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            first = value.split("\n", 1)[0]
            text = first
            return text if len(text) <= _DETAIL_MAX else text[: _DETAIL_MAX - 1] + "…"
    return ""


def collapse_user(text: str, max_lines: int = USER_MAX_LINES) -> str:
    """``text`` cut to its first ``max_lines`` lines plus "[… N more lines]" when longer."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text
    return "\n".join([*lines[:max_lines], f"[… {len(lines) - max_lines:,} more lines]"])
