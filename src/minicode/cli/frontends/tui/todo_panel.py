"""The task-list panel above the status bar: the model's list, a few rows at most. Pure.

Bounded so it never hides the input: it gets at most ``MAX_ROWS`` rows and never more than
the screen leaves once the status bar, the input, any open question and a few transcript
rows have theirs (``panel_rows``); with too little room it is one summary row, or nothing.
A list longer than its rows shows the rows around the step in progress and says how many
more there are. Item text is the model's: shown revealed (no escape sequence is obeyed).
"""

from __future__ import annotations

from minicode.cli.frontends.shared.shown_call import reveal
from minicode.cli.frontends.tui.text import fit_cells
from minicode.tools.todo_list import TodoList

__all__ = ["MAX_ROWS", "MIN_TRANSCRIPT_ROWS", "panel_lines", "panel_rows"]

MAX_ROWS = 6
MIN_TRANSCRIPT_ROWS = 3
"""Rows the transcript keeps before the panel takes any."""


def panel_rows(todo: TodoList, screen_rows: int, taken: int) -> int:
    """How many rows the panel gets: ``taken`` are the rows everything else below the
    transcript needs (status bar, input, question, queued line)."""
    if not todo:
        return 0
    room = screen_rows - taken - MIN_TRANSCRIPT_ROWS
    return max(0, min(len(todo.items) + 1, MAX_ROWS, room))


def panel_lines(todo: TodoList, width: int, rows: int) -> list[tuple[str, str]]:
    """(style, text) per row, each within ``width``: a head row, then the items that fit."""
    if rows <= 0 or not todo:
        return []
    head = f" task list {todo.summary}"
    if rows == 1:  # no room for items: the head says what is being done now
        current = todo.current
        return [("class:todo.head", fit_cells(head + (f" · ▶ {reveal(current.text)}" if current else ""), width))]
    items = todo.items
    room = rows - 1
    start = 0
    if len(items) > room:  # the rows around the step in progress (else the first open one)
        room -= 1  # one row says how many are not shown
        focus = next((i for i, item in enumerate(items) if item.status == "in_progress"),
                     next((i for i, item in enumerate(items) if item.status != "done"), 0))
        start = max(0, min(focus - room // 2, len(items) - room))
    out = [("class:todo.head", fit_cells(head, width))]
    for item in items[start:start + room]:
        out.append((f"class:todo.{item.status}", fit_cells(f"  {reveal(item.line)}", width)))
    hidden = len(items) - room
    if hidden > 0:
        out.append(("class:todo.more", fit_cells(f"  … {hidden} more", width)))
    return out
