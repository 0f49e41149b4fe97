"""A new user's trial, round 4, in a real terminal: keys a person presses out of habit."""

from __future__ import annotations

import time
from typing import Callable

from tests.pty.conftest import READ_PAUSE, Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def test_down_until_the_bottom_then_enter_denies_a_call_with_three_answers(term_factory: Start) -> None:
    """A compound command gets no "always allow" answer, so the list has three: Down three
    times wrapped round to "Allow once" and Enter ran the command the person meant to deny."""
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch made.txt; echo done"), Reply.text("Not run."))
    t.send_line("make it")
    t.wait_text("❯ Allow once")
    assert "Always allow" not in t.screen.text()  # three answers
    time.sleep(READ_PAUSE)
    t.keys("\x1b[B", "\x1b[B", "\x1b[B")
    t.wait_text("❯ Deny")
    t.keys("\r")
    t.wait_text("reason (optional")
    t.keys("\r")
    t.wait_answered("Not run.")
    assert not (t.workspace / "made.txt").exists()
    assert "denied" in t.screen.text()
    t.send("\x03")
    assert "EXIT=0" in t.finish()
