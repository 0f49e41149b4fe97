"""Interactive trust, end to end: the real executable in a pseudo-terminal (100x30) against the
fake server, which records every request. Typed text never answers a question, a paste is
never a submission (also right after a resize, without bracketed paste), Ctrl+C clears before
it leaves, slash commands complete and typos are caught, retries show, a resumed session
replays faithfully and recalls the earlier input."""

from __future__ import annotations

import time
from typing import Callable

import pytest

from tests.pty.conftest import READ_PAUSE, Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def _type_like_a_person(t: Term, text: str, gap: float = 0.03) -> None:
    for ch in text:
        t.child.send(ch)
        time.sleep(gap)
    t.wait(lambda: t.draft_shows(text), what=f"draft showing {text!r}")


@pytest.mark.parametrize("after", [0.0, 0.5, 2.0])  # at once, late in ANSWER_GRACE, after it
def test_sentences_typed_after_a_question_appears_never_answer_it(term_factory: Start, after: float) -> None:
    t = term_factory()
    t.server.script(Reply.tool("bash", command="touch made.txt"), Reply.text("Made it."), Reply.text("Checked."))
    t.send_line("make the file")
    t.wait_text("❯ Allow once")
    time.sleep(after)
    _type_like_a_person(t, "also check x")
    t.pump(0.3)
    assert not (t.workspace / "made.txt").exists() and len(t.server.requests) == 1
    assert "awaiting approval" in t.screen.text()
    t.send("\r")  # the sentence's own Enter queues it; it answers nothing
    t.wait_text("queued: also check x")
    t.pump(0.3)
    assert not (t.workspace / "made.txt").exists() and len(t.server.requests) == 1
    _type_like_a_person(t, "now please also fix the tests")  # n… and a… words, still text
    t.pump(0.3)
    assert not (t.workspace / "made.txt").exists() and len(t.server.requests) == 1
    # a deliberate answer: Tab to the answers, a moment to read, Enter — sent once the Tab is
    # seen (on a loaded machine a Tab and an Enter read together are a paste of both, T7)
    t.keys("\t")
    t.wait_text("↑↓ choose · Enter answers")
    time.sleep(READ_PAUSE)
    t.send("\r")
    t.wait_text("Made it.")
    assert (t.workspace / "made.txt").exists()
    t.wait(lambda: len(t.server.requests) == 3, what="the queued message sent after the task")
    assert t.server.requests[2].messages[-1] == {"role": "user", "content": "also check x"}
    assert t.draft_shows("now please also fix the tests")  # the draft survived the answer
    t.send("\x03")
    t.send("\x03")
    assert "EXIT=0" in t.finish()


def _markdown_answer(tokens: int, seed: str) -> str:
    parts: list[str] = []
    i = 0
    while sum(len(p) + 2 for p in parts) < tokens * 4:
        parts.append(f"## {seed} section {i}\n\nThe *module* `part_{i}.py` owns **one concept**; it keeps"
                     " functions short and documents why, not what. " * 2)
        parts.append(f"- item {i} one\n- item {i} two\n\n```python\ndef f_{i}(x):\n    return x + {i}\n```")
        i += 1
    return "\n\n".join(parts)


@pytest.mark.parametrize("bracketed", [False, True])
def test_a_paste_right_after_a_resize_with_a_40k_token_transcript_is_one_draft(
        term_factory: Start, bracketed: bool) -> None:
    t = term_factory()
    t.server.script(Reply.text(_markdown_answer(20_000, "first"), chunk_size=4096),
                    Reply.text(_markdown_answer(20_000, "second"), chunk_size=4096))
    t.send_line("first")
    t.wait_text("■ done", timeout=30)
    t.send_line("second")
    t.wait(lambda: t.screen.text().count("■ done") >= 1 and "second section" in t.screen.text()
           and "idle" in t.screen.text(), timeout=30, what="the second answer done")
    assert len(t.server.requests) == 2
    lines = [f"pasted line {i}" for i in range(1, 11)]
    paste = "\r".join(lines) + "\r"
    t.child.setwinsize(30, 70)
    t.screen.resize(70, 30)
    t.child.send("\x1b[200~" + paste + "\x1b[201~" if bracketed else paste)  # at once, mid-resize
    t.wait(lambda: t.draft_shows("pasted line 10"), timeout=15, what="the paste in the draft")
    t.pump(1.0)
    assert len(t.server.requests) == 2  # zero model requests from the paste
    assert "› pasted line" not in t.screen.text() and "queued:" not in t.screen.text()
    assert all(len(line) <= 70 for line in t.screen.lines())
    t.send("\x03")  # clears the 10-line draft
    t.wait_text("draft cleared — Up brings it back")
    assert not t.draft_shows("pasted line")
    t.send("\x03")
    # leaving prints this run's transcript at the new width: 40k tokens of Markdown laid out
    # again (seconds of CPU on a loaded 2-core machine), so the wait is for that, not the exit
    assert "EXIT=0" in t.finish(timeout=90)
    assert len(t.server.requests) == 2


def test_ctrl_c_clears_a_draft_up_brings_it_back_and_a_second_exits_0(term_factory: Start) -> None:
    t = term_factory()
    t.type("a draft I want")
    t.keys("\n")  # Ctrl+J
    t.type("on two lines")
    t.send("\x03")
    t.wait_text("draft cleared — Up brings it back")
    assert not t.draft_shows("a draft I want")
    t.keys("\x1b[A")
    t.wait(lambda: t.draft_shows("a draft I want") and t.draft_shows("on two lines"), what="the draft back")
    t.send("\x03")
    t.wait(lambda: not t.draft_shows("a draft"), what="cleared again")
    t.send("\x03")
    assert "EXIT=0" in t.finish()
    assert t.server.requests == []


def test_slash_completion_did_you_mean_and_paths_as_text(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.text("about that path"))
    t.child.send("/")
    t.wait_text("summarise older context now")  # the menu: commands with their help
    assert "/compact" in t.screen.text() and "/help" in t.screen.text()  # the first of the menu (8 rows)
    t.send("\x03")
    t.send_line("/exti")
    t.wait_text("unknown command /exti — did you mean /exit?")
    t.wait(lambda: t.draft_shows("/exti"), what="the typo back in the draft")
    t.send("\x03")
    t.send_line("/usr/lib is missing")
    t.wait_text("about that path")
    assert [r.messages[-1]["content"] for r in t.server.requests] == ["/usr/lib is missing"]
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()


def test_a_retry_shows_in_the_status_bar(term_factory: Start) -> None:
    t = term_factory()
    t.server.script(Reply.error(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "3"}),
                    Reply.text("after the retry"))
    t.send_line("go")
    t.wait_text("(attempt 2 of 4): HTTP 429 rate limited")
    t.wait_text("after the retry", timeout=15)
    t.send("\x04")
    assert "EXIT=0" in t.finish()


def test_a_resumed_session_replays_calls_as_they_ended_and_recalls_input(term_factory: Start) -> None:
    t = term_factory("--yes")
    t.server.script(
        Reply.tools(("edit", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})),
        Reply.tool("bash", command="for i in 1 2 3; do echo tick $i; done; sleep 30"),
    )
    (t.workspace / "a.py").write_text("x = 1\n")
    t.server.script()
    t.send_line("edit then run")  # the edit fails (never read): recorded as failed
    t.wait_text("tick 3", timeout=15)
    t.send("\x1b", 0.5)
    t.wait_text("■ interrupted")
    t.send("\x03")
    assert "EXIT=0" in t.finish()
    again = term_factory("-c")
    again.wait_text("resumed session")
    again.wait_text("interrupted after")
    screen = again.screen.text()
    assert "tick 3" in screen and "✗ edit a.py" in screen
    again.keys("\x1b[A")  # Up: the message of the earlier run
    again.wait(lambda: again.draft_shows("edit then run"), what="the earlier input recalled")
    again.send("\x03")
    again.send("\x03")
    assert "EXIT=0" in again.finish()
