"""The task-list panel and /plan in the real full screen (a pseudo-terminal, the fake server):
a long list in a small terminal never hides the input or the status bar; /plan shows PLAN,
a planning model's write is refused (the file stays), /plan accept acts on the plan."""

from __future__ import annotations

import time
from typing import Callable

from tests.pty.conftest import READ_PAUSE, Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def test_a_long_list_in_a_small_terminal_keeps_the_input_visible(term_factory: Start) -> None:
    t = term_factory()
    t.child.setwinsize(12, 60)
    t.screen.resize(60, 12)
    t.pump(0.5)
    items = [{"text": f"step number {n} of a long plan", "status": "done" if n < 8 else "pending"}
             for n in range(18)]
    items[8]["status"] = "in_progress"
    t.server.script(Reply.tool("todo", items=items), Reply.text("Listed."))
    t.send_line("make a long list")
    t.wait_answered("Listed.")
    t.type("still typing here")
    lines = t.screen.lines()
    status = max(i for i, line in enumerate(lines) if "context" in line)
    assert t.draft_shows("still typing here") and status < len(lines) - 1
    head = next(i for i, line in enumerate(lines) if "task list 8/18 done" in line)
    panel = lines[head:status]
    assert any("▶ step number 8 of a long plan" in line for line in panel)
    assert any("more" in line for line in panel) and len(panel) <= 6
    assert head >= 3  # the transcript keeps its rows
    t.send("\x15")  # Ctrl+U: empty the draft
    t.send("\x04")
    assert "EXIT=0" in t.finish()


def test_plan_refuses_writes_then_accept_acts_on_the_list(term_factory: Start) -> None:
    t = term_factory()
    (t.workspace / "app.py").write_text("x = 1\n")
    plan = [{"text": "set x to 2 in app.py", "status": "pending"}]
    t.server.script(
        Reply.tool("write", path="app.py", content="x = 2\n"),
        Reply.tool("todo", items=plan), Reply.text("Plan: set x."),
        Reply.tool("write", path="app.py", content="x = 2\n"), Reply.text("Done: x is 2."),
    )
    t.send_line("/plan")
    t.wait(lambda: any(line.lstrip().startswith("PLAN") for line in t.screen.lines()), what="PLAN in the status bar")
    t.send_line("set x to 2")
    t.wait_answered("plan ready: /plan accept")
    assert (t.workspace / "app.py").read_text() == "x = 1\n"  # the write was refused, never asked
    assert "refused: plan mode" in t.screen.text() and "task list 0/1 done" in t.screen.text()
    t.send_line("/plan accept")
    t.wait_text("❯ Allow once")  # acting: the write asks again, as usual
    time.sleep(READ_PAUSE)
    t.keys("\r")
    t.wait_answered("Done: x is 2.")
    assert (t.workspace / "app.py").read_text() == "x = 2\n"
    assert not any(line.lstrip().startswith("PLAN") for line in t.screen.lines())
    t.send("\x04")
    assert "EXIT=0" in t.finish()
