"""ask_user in a real terminal: pipe mode asks on /dev/tty (stdin is the pipe), the full screen's
panel answers with a digit or the arrows and Enter, and Esc declines (real executable, real pty)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

import pexpect

from tests.pty.conftest import READ_PAUSE, Term, workspace_for
from tests.support.fake_openai import FakeOpenAI, Reply

EXE = str(Path(sys.executable).parent / "minicode")
Start = Callable[..., Term]
QUESTION = {"question": "Which database should the app use?", "options": ["Postgres", "SQLite"]}


def _told(server: FakeOpenAI, index: int = 1) -> str:
    return [m["content"] for m in server.requests[index].messages if m["role"] == "tool"][-1]


def test_pipe_mode_asks_on_the_terminal_and_a_number_chooses(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        env["TERM"] = "dumb"
        server.script(Reply.tool("ask_user", **QUESTION), Reply.tool("ask_user", question="And the port?"),
                      Reply.text("SQLite on 8080."))
        command = f"echo 'set up the app' | {EXE} > out.txt; echo EXIT=$?"
        child = pexpect.spawn("bash", ["-c", command], cwd=str(ws), env=env, encoding="utf-8", timeout=15,
                              dimensions=(30, 200))
        child.expect_exact("minicode: the model asks:")
        child.expect_exact("    Which database should the app use?")
        child.expect_exact("    2) SQLite")
        child.expect_exact("minicode: a number or your own answer (empty line: no answer): ")
        child.send("2\r")
        child.expect_exact("minicode: your answer (empty line: no answer): ")
        child.send("8080\r")
        child.expect_exact("EXIT=0")
        child.expect(pexpect.EOF)
        assert "ask_user" in {t["function"]["name"] for t in server.requests[0].body["tools"]}  # a terminal: offered
        assert _told(server, 1) == "The user chose option 2:\n<answer>\nSQLite\n</answer>"
        assert _told(server, 2) == "The user answered:\n<answer>\n8080\n</answer>"
        assert (ws / "out.txt").read_text() == "SQLite on 8080.\n"


def test_pipe_mode_an_empty_line_declines(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        env["TERM"] = "dumb"
        server.script(Reply.tool("ask_user", question="Which port?"), Reply.text("Picked 8000."))
        child = pexpect.spawn("bash", ["-c", f"echo go | {EXE} > /dev/null; echo EXIT=$?"], cwd=str(ws), env=env,
                              encoding="utf-8", timeout=15, dimensions=(30, 200))
        child.expect_exact("(empty line: no answer): ")
        child.send("\r")
        child.expect_exact("EXIT=0")
        child.expect(pexpect.EOF)
        assert _told(server).startswith("The user declined to answer.")


def _asked(t: Term) -> None:
    t.server.script(Reply.tool("ask_user", **QUESTION), Reply.text("Using the answer."))
    t.send_line("set up the app")
    t.wait_text("the model asks:")
    t.wait_text("Esc: no answer")
    time.sleep(READ_PAUSE)  # a person reads the question before answering


def test_full_screen_a_digit_and_enter_choose(term_factory: Start) -> None:
    t = term_factory()
    _asked(t)
    assert "❯ 1. Postgres" in t.screen.text() and "3. Other… (type an answer)" in t.screen.text()
    t.keys("2")
    t.wait_text("❯ 2. SQLite")
    assert len(t.server.requests) == 1  # a digit alone answers nothing
    t.keys("\r")
    t.wait_answered("Using the answer.")
    assert _told(t.server) == "The user chose option 2:\n<answer>\nSQLite\n</answer>"
    assert "→ SQLite" in t.screen.text()
    assert "ask_user" in {tool["function"]["name"] for tool in t.server.requests[0].body["tools"]}


def test_full_screen_arrows_other_and_a_typed_answer(term_factory: Start) -> None:
    t = term_factory()
    _asked(t)
    t.keys("\x1b[B", "\x1b[B")  # Down, Down: Other…
    t.wait_text("❯ 3. Other…")
    t.keys("\r")
    t.wait_text("your answer (Enter sends, Esc goes back)")
    t.type("MariaDB 11")
    time.sleep(READ_PAUSE)
    t.keys("\r")
    t.wait_answered("Using the answer.")
    assert _told(t.server) == "The user answered:\n<answer>\nMariaDB 11\n</answer>"


def test_full_screen_typed_text_does_not_answer_and_esc_declines(term_factory: Start) -> None:
    t = term_factory()
    _asked(t)
    for key in "also 1 more":  # typed key by key into the draft, the digit among the letters
        t.keys(key)
    t.wait(lambda: t.draft_shows("also 1 more"), what="the draft holding the typed text")
    assert "Tab moves to the choices" in t.screen.text() and len(t.server.requests) == 1
    t.keys("\r")  # sent: queued as the next task, not an answer
    t.wait_text("queued")
    assert len(t.server.requests) == 1
    t.keys("\x1b")  # Esc: declined, the task goes on (and then the queued message runs)
    t.server.script(Reply.text("queued one done"))
    t.wait_answered("queued one done")
    assert _told(t.server).startswith("The user declined to answer.")
    assert t.server.requests[2].messages[-1] == {"role": "user", "content": "also 1 more"}


def test_pipe_mode_shows_a_hostile_question_inert(tmp_path: Path) -> None:
    import io

    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        env["TERM"] = "dumb"
        server.script(Reply.tool("ask_user", question="Pick \x1b]0;PWNED\x07\x1b[2J one", options=["a\u202eb", "c"]),
                      Reply.text("ok"))
        child = pexpect.spawn("bash", ["-c", f"echo go | {EXE} > /dev/null; echo EXIT=$?"], cwd=str(ws), env=env,
                              encoding="utf-8", timeout=15, dimensions=(30, 200))
        child.logfile_read = seen = io.StringIO()
        child.expect_exact("(empty line: no answer): ")
        child.send("1\r")
        child.expect_exact("EXIT=0")
        child.expect(pexpect.EOF)
        shown = seen.getvalue()
        assert "    Pick ␛]0;PWNED␇␛[2J one" in shown and "    1) a⟨U+202E⟩b" in shown
        assert "\x1b" not in shown and "\u202e" not in shown
        assert _told(server) == "The user chose option 1:\n<answer>\na\u202eb\n</answer>"  # the option as the model sent it


def test_tasks_read_from_the_terminal_a_line_typed_ahead_stays_a_task(tmp_path: Path) -> None:
    """``minicode > out.txt`` reads tasks from the terminal: a task typed while the model works is
    not the answer; the question waits for a line typed after it."""
    import threading

    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        env["TERM"] = "dumb"
        typed_ahead = threading.Event()

        def first_reply(_request: object) -> Reply:
            typed_ahead.wait(15)
            return Reply.tool("ask_user", question="Which port?")

        server.script(Reply.dynamic(first_reply), Reply.text("first done"), Reply.text("second done"))
        child = pexpect.spawn("bash", ["-c", f"{EXE} > out.txt; echo EXIT=$?"], cwd=str(ws), env=env,
                              encoding="utf-8", timeout=15, dimensions=(30, 200))
        child.send("first task\r")
        assert server.wait_for_requests(1)
        child.send("second task\r")
        child.expect_exact("second task")  # echoed: the line reached minicode's input
        typed_ahead.set()
        child.expect_exact("1 line typed ahead kept as the next task (they do not answer this question)")
        child.expect_exact("(empty line: no answer): ")
        child.send("8080\r")
        assert server.wait_for_requests(3)
        child.sendeof()
        child.expect_exact("EXIT=0")
        child.expect(pexpect.EOF)
        assert _told(server) == "The user answered:\n<answer>\n8080\n</answer>"
        assert server.requests[2].messages[-1] == {"role": "user", "content": "second task"}
        assert (ws / "out.txt").read_text() == "first done\nsecond done\n"
