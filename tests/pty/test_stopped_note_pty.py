"""A task stopped with Esc, then another task: resumed with ``-c``, the full screen shows the
note minicode recorded for the stopped task as minicode's (■ …), not as the model's answer."""

from __future__ import annotations

from typing import Callable

from minicode.agent.stopped import STOPPED_SHOWN
from tests.pty.conftest import Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def test_a_resumed_session_shows_the_stopped_note_as_minicodes(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.hang("partial"), Reply.text("Second answer."))
    t.send_line("first task")
    t.wait(lambda: len(t.server.requests) == 1 and "partial" in t.screen.text(), what="the stream")
    t.keys("\x1b")  # Esc: stopped before an answer
    t.wait_text("■ interrupted")
    t.send_line("second task")
    t.wait_answered("Second answer.")
    t.send("\x03")
    assert "EXIT=0" in t.finish()
    again = term_factory("-c")
    again.wait_text("Second answer.")
    screen = again.screen.text()
    assert f"■ {STOPPED_SHOWN}" in screen
    assert "That task stopped before I could finish it" not in screen
    again.send("\x03")
    assert "EXIT=0" in again.finish()
