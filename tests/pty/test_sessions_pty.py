"""The session commands in a real terminal (100x30): the /resume list (grouped, filtered by
typing, Enter opens, Esc cancels), /resume PREFIX, /new, and /rewind with the message back in
the draft — then a resume in pipe mode honours the rewind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

from minicode.provider.types import Message
from minicode.session.store import SessionStore
from tests.pty.conftest import Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]
EXE = str(Path(sys.executable).parent / "minicode")


def _make(ws: Path, sid: str, first: str) -> None:
    store, _ = SessionStore.create(ws.resolve(), new_id=lambda: sid)
    store.append_message(Message.user(first))
    store.append_message(Message(role="assistant", content=f"answer to {first}"))
    store.close()


def _command(t: Term, text: str) -> None:
    t.send_line(text)


def test_resume_list_filters_and_opens_a_session(term_factory: Start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _make(ws, "aaaa1111-0000-4000-8000-000000000001", "fix the parser")
    _make(ws, "bbbb2222-0000-4000-8000-000000000002", "write the docs")
    t = term_factory()
    _command(t, "/resume")
    t.wait_text("resume a session (newest first)")
    # the list's rows come with the catalog, which may be read after the title is drawn
    t.wait(lambda: all(x in t.screen.text() for x in ("Today", "fix the parser", "write the docs")),
           what="the sessions listed")
    screen = t.screen.text()
    assert "aaaa1111" in screen and "2 msgs" in screen
    t.type("docs")
    t.wait(lambda: "fix the parser" not in t.screen.text(), what="the filter hides the other session")
    t.keys("\r")
    t.wait_text("› write the docs")
    t.wait_text("answer to write the docs")
    t.wait(lambda: "bbbb2222" in t.screen.lines()[-2], what="the status bar names the new session")
    _command(t, "/resume")
    t.wait_text("resume a session")
    t.keys("\x1b")  # Esc: the list closes, nothing else happens
    t.wait(lambda: "resume a session" not in t.screen.text() and "idle" in t.screen.text(), what="list closed")
    _command(t, "/exit")
    out = t.finish()
    assert "EXIT=0" in out, out[-3000:]
    assert "minicode: resume with: minicode --session bbbb2222-0000-4000-8000-000000000002" in out


def test_resume_by_prefix_and_new(term_factory: Start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _make(ws, "aaaa1111-0000-4000-8000-000000000001", "fix the parser")
    t = term_factory()
    t.server.script(Reply.text("noted"))
    t.send_line("hello")
    t.wait_text("noted")
    _command(t, "/resume aaaa")
    t.wait_text("› fix the parser")
    t.wait_text("stays: /resume")  # the session left behind can be found again
    _command(t, "/resume beef")
    t.wait_text("no session starting with 'beef'")
    _command(t, "/new")
    t.wait_text("the previous session aaaa1111 stays")
    _command(t, "/exit")
    out = t.finish()
    assert "EXIT=0" in out and "resume with: minicode --session aaaa1111" not in out


def test_rewind_puts_the_message_back_and_a_resume_honours_it(term_factory: Start, tmp_path: Path) -> None:
    t = term_factory()
    t.server.script(Reply.text("first answer"), Reply.text("second answer"), Reply.text("redone"))
    t.send_line("first question")
    t.wait_text("first answer")
    t.send_line("second question")
    t.wait_text("second answer")
    _command(t, "/rewind")
    t.wait_text("rewind to before which message?")
    t.keys("\r")  # the newest: the second question
    t.wait_text("rewound: the conversation continues from before")
    t.wait(lambda: "› second question" in t.screen.lines()[-1], what="the message back in the draft")
    assert "second answer" not in t.screen.text()
    t.send_line(" again")
    t.wait_text("redone")
    sent = [m["content"] for m in t.server.requests[-1].messages if m["role"] != "system"]
    assert sent == ["first question", "first answer", "second question again"]
    _command(t, "/exit")
    out = t.finish()
    assert "EXIT=0" in out
    session_id = out.split("minicode --session ")[-1].split()[0]
    t.server.script(Reply.text("after resume"))
    proc = subprocess.run([EXE, "--session", session_id[:8]], input="and now?\n", capture_output=True, text=True,
                          cwd=t.workspace, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, timeout=30)
    assert proc.returncode == 0, proc.stderr
    resumed = [m["content"] for m in t.server.requests[-1].messages if m["role"] != "system"]
    assert resumed == ["first question", "first answer", "second question again", "redone", "and now?"]


def test_model_switch_in_the_full_screen_sends_the_next_request_to_the_new_model(term_factory: Start) -> None:
    """The session's provider is built after the first frame; /model builds another (on first
    use): the first request goes to the configured model, the next to the chosen one, and a
    name that cannot be a model changes nothing."""
    t = term_factory()
    t.server.script(Reply.text("first answer"), Reply.text("second answer"))
    t.send_line("hello")
    t.wait_text("first answer")
    assert t.server.requests[-1].body["model"] == "fake-model"
    t.send_line("/model other-model")
    t.wait(lambda: "other-model" in t.screen.lines()[-2], what="the status bar names the new model")
    t.send_line("/model has space")
    t.wait_text("cannot switch the model")
    t.send_line("again")
    t.wait_text("second answer")
    assert t.server.requests[-1].body["model"] == "other-model"
    t.send_line("/exit")
    out = t.finish()
    assert "EXIT=0" in out, out[-3000:]
