"""The full-screen session in a real pseudo-terminal (100x30) against the fake server."""

from __future__ import annotations

import json
import re
import signal
import time
from typing import Callable

from tests.pty.conftest import READ_PAUSE, Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def _assert_restored(output: str, term: Term) -> None:
    assert "\x1b[?1049l" in output
    after = output[output.rindex("\x1b[?1049l"):]
    assert "\x1b[?1049h" not in after  # the alternate screen was left last
    stty = output[output.index("speed "):]
    assert re.search(r"(?<![-\w])icanon\b", stty) and re.search(r"(?<![-\w])echo\b", stty)
    assert not term.screen.alternate
    for mode in ("1000", "1006", "2004"):  # mouse and bracketed paste off again
        assert term.screen.modes.get(mode) is not True, mode


def test_two_line_message_streams_answer_and_ctrl_c_restores_the_terminal(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.text("# Title\n\nHello **there**, streamed.", chunk_delay=0.02))
    t.wait_text("session ")
    t.type("first line")
    t.keys("\n")  # Ctrl+J: a newline, not a submission
    t.type("second line")
    assert t.server.requests == []
    t.keys("\r")
    t.wait_text("Hello there, streamed.")
    t.wait_text("■ done")
    assert t.server.requests[0].messages[-1] == {"role": "user", "content": "first line\nsecond line"}
    t.send("\x03")  # idle, empty draft: leave with 0
    out = t.finish()
    assert "EXIT=0" in out
    _assert_restored(out, t)
    # the conversation stays on the normal screen, then the resume command
    main = "\n".join(t.screen.scrollback + t.screen.lines())
    assert "› first line" in main and "Hello there, streamed." in main
    assert re.search(r"minicode: resume with: minicode --session [0-9a-f-]{36}", main)


def test_page_up_during_streaming_keeps_the_view_still(term_factory: Start) -> None:
    t = term_factory()
    answer = "\n\n".join(f"paragraph {i} of a long answer" for i in range(120))
    t.server.script(Reply.text(answer, chunk_size=16, chunk_delay=0.02))
    t.send_line("go")
    t.wait_text("paragraph 30 ")
    t.send("\x1b[5~", 0.3)  # PageUp
    still = t.screen.lines()[:25]
    t.pump(1.0)
    assert t.screen.lines()[:25] == still  # text kept arriving, the view did not move
    t.wait_text("new lines ↓")
    t.send("\x1b[F", 0.5)  # End: follow again
    t.wait_text("■ done", timeout=20)
    assert "paragraph 119 of a long answer" in t.screen.text()
    t.send("\x04")
    assert "EXIT=0" in t.finish()


def test_denied_approval_leaves_no_file(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.tool("write", path="a.txt", content="hi"), Reply.text("Understood."))
    t.send_line("make a.txt")
    t.wait_text("❯ Allow once")
    time.sleep(READ_PAUSE)
    t.keys("\x1b[A")  # Up wraps to the last answer: Deny
    t.wait_text("❯ Deny")
    t.keys("\r")
    t.wait_text("reason (optional, Enter sends)")
    t.send_line("not now")
    t.wait_text("Understood.")
    assert not (t.workspace / "a.txt").exists()
    tool_msg = t.server.requests[1].messages[-1]
    assert tool_msg["role"] == "tool" and "denied" in tool_msg["content"] and "not now" in tool_msg["content"]
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()


def test_esc_interrupts_a_long_bash_and_the_input_comes_back(term_factory: Start) -> None:
    t = term_factory("--yes")
    t.server.script(Reply.tool("bash", command="for i in 1 2 3; do echo tick $i; done; sleep 30"),
                    Reply.text("after interrupt"))
    t.send_line("run it")
    t.wait_text("tick 3")
    started = time.monotonic()
    t.send("\x1b", 0.5)
    t.wait_text("■ interrupted", timeout=5)
    assert time.monotonic() - started < 5
    t.wait_text("interrupted after")
    t.wait_text("idle")
    t.send_line("next")
    t.wait_text("after interrupt")
    # the model was told what the command printed before it was stopped
    result = t.server.requests[1].messages[-3]  # then the note that the task stopped, then "next"
    assert result["role"] == "tool" and result["content"].startswith("interrupted after ")
    assert t.server.requests[1].messages[-2]["role"] == "assistant"
    assert "tick 1\ntick 2\ntick 3" in result["content"]
    t.send("\x03")
    assert "EXIT=0" in t.finish()


def test_large_bracketed_paste_is_one_placeholder_and_is_sent_whole(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.text("got it"))
    lines = [f"pasted line {i}" for i in range(5000)]
    t.send("\x1b[200~" + "\r".join(lines) + "\x1b[201~", 1.0)
    t.wait_text("[pasted 5,000 lines]")
    assert t.server.requests == []
    t.keys("\r")
    t.wait_text("got it")
    assert t.server.requests[0].messages[-1]["content"] == "\n".join(lines)
    t.send("\x04")
    assert "EXIT=0" in t.finish()


def test_resize_relays_the_transcript(term_factory: Start) -> None:
    t = term_factory()
    long_line = " ".join(f"word{i:02d}" for i in range(25))  # 174 characters
    t.server.script(Reply.text(long_line))
    t.send_line("wrap")
    t.wait_text("■ done")
    assert sum(1 for line in t.screen.lines() if "word" in line) == 2
    t.child.setwinsize(30, 60)
    t.screen.resize(60, 30)
    t.wait(lambda: sum(1 for line in t.screen.lines() if "word" in line) == 4, what="re-laid at 60 columns")
    assert all(len(line) <= 60 for line in t.screen.lines())
    t.send("\x04")
    assert "EXIT=0" in t.finish()


def test_an_outside_sigint_leaves_an_idle_session_like_sigterm(term_factory: Start) -> None:
    import os

    t = term_factory()
    os.kill(t.minicode_pid(), signal.SIGINT)  # `kill -INT`: Ctrl+C itself is a key in raw mode
    out = t.finish()
    assert "EXIT=130" in out
    _assert_restored(out, t)


def test_sigterm_restores_the_terminal(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.hang("partial"))
    t.send_line("hang")
    t.wait_text("partial")
    import os

    os.kill(t.minicode_pid(), signal.SIGTERM)
    out = t.finish()
    assert "EXIT=130" in out
    _assert_restored(out, t)
    # the interrupted turn was saved in the session file
    sessions = list((t.workspace / ".minicode" / "sessions").glob("*.jsonl"))
    assert sessions and "hang" in sessions[0].read_text()
    assert json.loads(sessions[0].read_text().splitlines()[0])  # header intact


def test_a_failed_bash_shows_why_under_its_line(term_factory: Start) -> None:
    t = term_factory("--yes")
    t.server.script(Reply.tool("bash", command="echo the-reason >&2; exit 3"), Reply.text("It failed."))
    t.send_line("run it")
    t.wait_text("It failed.")
    lines = t.screen.lines()
    row = next(i for i, line in enumerate(lines) if "✗ bash" in line)
    assert "the-reason" in "\n".join(lines[row + 1 : row + 7])
    assert " . " not in lines[row]  # the workspace is not named as "."
    t.send("\x04")
    assert "EXIT=0" in t.finish()
