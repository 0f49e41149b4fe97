"""The task list and plan mode on stderr in pipe and one-shot modes (``Printer``): the whole
list while short, only what changed once long; the plan on stdout after a --plan answer."""

from __future__ import annotations

import io

from minicode.agent.events import ModeChanged, TodoUpdated
from minicode.cli.frontends.plain.frontend import PlainFrontend, Printer
from minicode.tools.todo_list import TodoItem, TodoList


def _printer() -> tuple[Printer, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Printer(out, err, progress=False), out, err


def test_a_short_list_is_printed_whole_and_a_long_one_by_its_changes() -> None:
    printer, _, err = _printer()
    short = TodoList((TodoItem("a", "done"), TodoItem("b", "in_progress"), TodoItem("c", "blocked")))
    printer(TodoUpdated(short))
    assert err.getvalue() == "minicode: task list (1/3 done):\n  ✓ a\n  ▶ b\n  ✗ c\n"
    long = TodoList(tuple(TodoItem(f"step {n}", "pending") for n in range(12)))
    moved = TodoList((TodoItem("step 0", "in_progress"), *long.items[1:]))
    err.truncate(0), err.seek(0)
    printer(TodoUpdated(moved, long))
    assert err.getvalue() == "minicode: task list (0/12 done):\n  ▶ step 0\n  … 11 unchanged (0/12 done)\n"
    err.truncate(0), err.seek(0)
    printer(TodoUpdated(TodoList(), moved))
    assert err.getvalue() == "minicode: task list cleared\n"


def test_mode_switches_are_said_and_a_plan_goes_to_stdout() -> None:
    printer, out, err = _printer()
    printer(ModeChanged("plan", "entered"))
    assert err.getvalue().startswith("minicode: plan mode: read-only tools")
    PlainFrontend(printer, yes=False).plan_ready(TodoList((TodoItem("a", "pending"),)))
    assert out.getvalue() == "plan:\n☐ a\n"
