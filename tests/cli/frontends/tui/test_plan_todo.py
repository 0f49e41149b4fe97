"""The task-list panel and /plan in the real Application (pipe input, fake session): the
panel's bounded rows, PLAN in the status bar, accept and reject."""

from __future__ import annotations

from minicode.agent.events import TodoUpdated
from minicode.cli.frontends.tui.layout import status_line
from minicode.cli.frontends.tui.todo_panel import MAX_ROWS, panel_lines, panel_rows
from minicode.tools.todo_list import TodoItem, TodoList
from tests.cli.frontends.tui.conftest import Harness
from tests.cli.frontends.tui.fake_session import Step

PLAN = TodoList((TodoItem("read the parser", "pending"), TodoItem("fix the bug", "pending")))


def _status(h: Harness) -> str:
    return "".join(t for _, t in status_line(h.controller, 120))


def test_the_panel_is_bounded_and_shows_the_rows_around_the_step_in_progress() -> None:
    long = TodoList(tuple(TodoItem(f"step {n}", "done" if n < 10 else "in_progress" if n == 10 else "pending")
                          for n in range(20)))
    rows = panel_rows(long, screen_rows=40, taken=4)
    assert rows == MAX_ROWS
    lines = [text for _, text in panel_lines(long, 30, rows)]
    assert lines[0] == " task list 10/20 done" and any("▶ step 10" in line for line in lines)
    assert lines[-1] == "  … 16 more" and len(lines) == rows
    assert all(len(line) <= 30 for line in lines)


def test_with_no_room_the_panel_is_one_summary_row_or_nothing() -> None:
    todo = TodoList((TodoItem("a", "done"), TodoItem("b\x1b[2J", "in_progress")))
    assert panel_rows(todo, screen_rows=8, taken=4) == 1
    assert panel_lines(todo, 80, 1) == [("class:todo.head", " task list 1/2 done · ▶ b␛[2J")]  # never obeyed
    assert panel_rows(todo, screen_rows=6, taken=4) == 0 and panel_rows(TodoList(), 40, 4) == 0


async def test_plan_shows_in_the_status_bar_and_a_proposed_plan_can_be_accepted(harness: Harness) -> None:
    await harness.send("/plan")
    await harness.until(lambda: harness.session.mode == "plan" and harness.controller.task is None)
    assert _status(harness).startswith(" PLAN ")
    assert "plan mode: read-only tools" in harness.screen_text()
    await harness.send("/plan accept")  # nothing proposed yet
    await harness.until(lambda: "no plan to accept yet" in harness.screen_text())
    harness.session.scripts.append([Step(event=TodoUpdated(PLAN))])
    await harness.send("fix the parser")
    await harness.until(lambda: harness.controller.task is None and bool(harness.session.todo))
    await harness.redrawn()
    assert "plan ready: /plan accept" in harness.screen_text()
    await harness.send("/plan accept")
    await harness.until(lambda: len(harness.session.turns) == 2 and harness.controller.task is None)
    assert harness.session.turns[1] == "The user accepted your plan" and harness.session.mode == "act"
    assert not _status(harness).startswith(" PLAN ")
    assert "plan accepted: acting on it" in harness.screen_text()


async def test_a_rejected_plan_is_dropped_and_the_panel_goes(harness: Harness) -> None:
    await harness.send("/plan")
    await harness.until(lambda: harness.session.mode == "plan")
    harness.session.scripts.append([Step(event=TodoUpdated(PLAN))])
    await harness.send("fix the parser")
    await harness.until(lambda: harness.controller.task is None and bool(harness.session.todo))
    await harness.redrawn()
    assert _panel(harness) == [" task list 0/2 done", "  ☐ read the parser", "  ☐ fix the bug"]
    await harness.send("/plan reject")
    await harness.until(lambda: harness.session.mode == "act" and not harness.session.todo)
    await harness.redrawn()
    assert _panel(harness) == [] and "plan rejected" in harness.screen_text()


def _panel(h: Harness) -> list[str]:
    from prompt_toolkit.application.current import set_app

    layout = h.controller.app.layout  # type: ignore[union-attr]
    with set_app(h.controller.app):  # type: ignore[arg-type]
        for window in layout.find_all_windows():
            text = window.content.text() if hasattr(window.content, "text") and callable(window.content.text) else None
            if isinstance(text, list) and text and str(text[0][0]).startswith("class:todo"):
                return "".join(t for _, t in text).split("\n")
    return []
