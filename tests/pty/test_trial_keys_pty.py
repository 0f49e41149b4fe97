"""The keyboard findings of the new-user trial, in a real terminal (the real executable in a
pseudo-terminal against the fake server): Tab never changes the highlighted answer (T3), the
first Ctrl+C during a task interrupts it and queued messages come back (T4), typed text never
answers /undo and /undo is not queued behind a task (T17)."""

from __future__ import annotations

import time
from typing import Callable

from tests.pty.conftest import READ_PAUSE, Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def test_send_the_draft_then_tab_enter_allows_once_not_for_the_session(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch made.txt"), Reply.text("Made it."),
                    Reply.tool("bash", command="touch second.txt"), Reply.text("Again."))
    t.send_line("make the file")
    t.wait_text("❯ Allow once")
    t.send_line("yes please do it")  # Enter queues it; the draft is empty again
    t.wait_text("queued: yes please do it")
    t.keys("\t")  # what the panel taught ("Tab moves to the answers")
    t.wait_text("the answers have the keys")  # seen before the Enter (read together: a paste)
    time.sleep(READ_PAUSE)
    t.send("\r")
    t.wait_text("Made it.")
    assert "allowed once" in t.screen.text() and "allowed for this session" not in t.screen.text()
    # the queued message went as a task: its call is asked again (nothing was allowed for the session)
    t.wait_text("approve bash touch second.txt?")
    t.send("\x03")  # interrupts the task (the question is withdrawn)
    t.wait_text("interrupted — Ctrl+C again on an empty draft leaves")
    assert not (t.workspace / "second.txt").exists()
    t.send("\x03")
    assert "EXIT=0" in t.finish()


def test_ctrl_c_during_a_task_interrupts_and_the_queued_message_comes_back(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch made.txt"), Reply.text("never sent"))
    t.send_line("make the file")
    t.wait_text("❯ Allow once")
    t.send_line("yes please do it")
    t.wait_text("queued: yes please do it")
    t.send("\x03")  # empty draft, a task runs: interrupt it, do not leave
    t.wait_text("interrupted — Ctrl+C again on an empty draft leaves")
    t.wait(lambda: t.draft_shows("yes please do it"), what="the queued message back in the draft")
    assert t.child.isalive() and not (t.workspace / "made.txt").exists()
    assert len(t.server.requests) == 1  # the queued message was not sent
    t.send("\x03")  # clears the draft (Up would bring it back)
    t.wait_text("draft cleared — Up brings it back")
    t.send("\x03")  # idle, empty draft: leave
    assert "EXIT=0" in t.finish()


def test_typed_yes_never_answers_the_undo_question_and_undo_is_not_queued(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.tool("write", path="w.txt", content="made by the model\n"), Reply.text("Wrote it."),
                    Reply.tool("bash", command="sleep 30"), Reply.text("slept"))
    t.send_line("write the file")
    t.wait_text("❯ Allow once")
    time.sleep(READ_PAUSE)
    t.send("\r")
    t.wait_text("Wrote it.")
    assert (t.workspace / "w.txt").exists()
    t.send_line("/undo")
    t.wait_text("restore these files?")
    for typed in ("yes", "res"):
        t.type(typed)
        time.sleep(READ_PAUSE)
        t.send("\r")
        t.wait_text("typed text does not answer this question")
        assert (t.workspace / "w.txt").exists()
        t.send("\x7f" * len(typed))
    t.send("\x1b")  # Esc: no
    t.wait_text("nothing was restored")
    assert (t.workspace / "w.txt").exists()
    # while a task runs, /undo is refused instead of queued to pop up later
    t.send_line("sleep please")
    t.wait_text("❯ Allow once")
    t.send_line("/undo")
    t.wait_text("/undo asks a question: wait for the task to end, or press Esc to stop it")
    assert "queued:" not in t.screen.text()
    t.send("\x1b")  # Esc interrupts the task
    t.wait_text("idle")
    assert (t.workspace / "w.txt").exists()
    t.send("\x03")  # idle, empty draft (the refused /undo was not put back): leave
    assert "EXIT=0" in t.finish()


def test_a_session_highlight_left_behind_for_the_draft_falls_back_to_allow_once(term_factory: Start) -> None:
    """T3 addendum: draft, Tab, Down to "for this session", back to typing, the message queued:
    the next Enter on the empty draft allows once."""
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch made"), Reply.text("Made."), Reply.text("Queued one."))
    t.send_line("go")
    t.wait_text("❯ Allow once")
    t.type("abc")
    t.keys("\t")
    t.wait_text("↑↓ choose · Enter answers")
    t.keys("\x1b[B")
    t.wait_text("❯ Allow every bash command for this session")
    t.keys("d")
    t.wait_text("❯ Allow once")
    t.keys("\r")
    t.wait_text("queued: abcd")
    time.sleep(READ_PAUSE)
    t.send("\r")
    t.wait_text("Made.")
    assert "allowed once" in t.screen.text() and "allowed for this session" not in t.screen.text()
    t.wait_answered("Queued one.")
    t.send("\x03")
    assert "EXIT=0" in t.finish()
