"""A new user's trial, round 4, in a real terminal: keys a person presses out of habit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import pexpect

from tests.pty.conftest import COLUMNS, EXE, HUMAN_PAUSE, READ_PAUSE, ROWS, Term, workspace_for
from tests.pty.screen import Screen
from tests.support.fake_openai import FakeOpenAI, Reply

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



def test_ctrl_z_suspends_and_fg_brings_the_session_back_as_it_was(tmp_path: Path) -> None:
    """Ctrl+Z typed a raw ^Z into the draft (sent to the model with the message); it suspends
    now, as in other terminal programs, and the shell's ``fg`` brings the screen back with the
    draft as it was. Run from an interactive shell: job control is what makes Ctrl+Z mean
    anything (without it the kernel drops the stop and minicode just goes on)."""
    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        env["PS1"] = "$ "
        child = pexpect.spawn("bash", ["--norc", "--noprofile", "-i"], cwd=str(ws), env=env,
                              dimensions=(ROWS, COLUMNS), encoding="utf-8", timeout=10)
        t = Term(child, Screen(COLUMNS, ROWS), server, ws)
        try:
            server.script(Reply.text("Back again."))
            t.send(f"{EXE}\r")
            t.wait(lambda: t.screen.alternate and "context" in t.screen.text(), what="first frame")
            t.type("a draft")
            t.send("\x1a")
            t.wait(lambda: "Stopped" in "".join(t.raw), what="the shell saying minicode stopped")
            shown = len(t.raw)
            t.send("fg\r")
            t.wait(lambda: "\x1b[?1049h" in "".join(t.raw[shown:]) and t.draft_shows("a draft"),
                   what="the screen and the draft back")
            assert "^Z" not in t.screen.text()
            time.sleep(HUMAN_PAUSE)
            t.send("\r")
            t.wait_answered("Back again.")
            assert server.requests[0].messages[-1]["content"] == "a draft"
            t.send("\x03")
            t.wait(lambda: "minicode: resume with" in "".join(t.raw), what="the exit printout")
            t.send("echo EXIT=$?\r")  # a stopped and resumed job ends the shell's command list
            t.wait(lambda: "EXIT=0" in "".join(t.raw), what="EXIT=0")
        finally:
            child.terminate(force=True)
