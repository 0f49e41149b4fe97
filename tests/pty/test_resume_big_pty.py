"""Resuming a long session in a real terminal (100x30): the first screen is the end of the
conversation — each call as it ended (status, duration, diff) and the last answer — Home
scrolls to the very first message, and the next request goes out and is answered. A damaged
message refuses the resume before anything is written; a torn last line is reported and the
session goes on, and a message damaged under the open session says why where it is shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pexpect

from minicode.agent.deps import ToolOutcome
from minicode.compaction.checkpoint import Checkpoint
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore
from tests.pty.conftest import COLUMNS, EXE, ROWS, Term, workspace_for
from tests.support.fake_openai import FakeOpenAI, Reply

Start = Callable[..., Term]
TASKS = 400
OUTPUT = "\n".join(f"{i:5}  line of output from the test run" for i in range(120))  # ~5 KB a result


def _long_session(ws: Path, sid: str, tasks: int = TASKS) -> Path:
    """``tasks`` tasks — a failing command, an edit with its diff, an answer — compacted every
    50 tasks (the next request carries only what follows the last checkpoint)."""
    store, _ = SessionStore.create(ws.resolve(), new_id=lambda: sid)
    messages = 0
    for t in range(tasks):
        bash = ToolCall(f"b{t}", "bash", json.dumps({"command": f"make test{t}"}))
        edit = ToolCall(f"e{t}", "edit", json.dumps({"path": f"src/mod{t}.py", "old": "a", "new": "b"}))
        store.append_message(Message.user(f"task {t}: fix module {t}"))
        store.append_message(Message(role="assistant", content="Looking.", tool_calls=(bash,)))
        store.append_message(Message.tool(bash.id, OUTPUT + "\n[exit code 2]"),
                             ToolOutcome(True, 2, status="failed", duration_seconds=2.5, summary="exit 2"))
        store.append_message(Message(role="assistant", tool_calls=(edit,)))
        store.append_message(Message.tool(edit.id, "1 replacement"),
                             ToolOutcome(False, None, status="done", duration_seconds=0.1, summary="1 replacement",
                                         diff=f"-old line of task {t}\n+new line of task {t}"))
        store.append_message(Message(role="assistant", content=f"## Task {t}\n\nFixed `mod{t}.py`: **done {t}**."))
        messages += 6
        if (t + 1) % 50 == 0:
            store.append_checkpoint(Checkpoint(f"summary of tasks 0..{t}", messages - 6))
    store.close()
    return ws / ".minicode" / "sessions" / f"{sid}.jsonl"


def test_a_long_session_opens_at_its_end_and_scrolls_to_its_start(term_factory: Start, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = "cccc3333-0000-4000-8000-000000000003"
    path = _long_session(ws, sid)
    assert path.stat().st_size > 2_000_000
    t = term_factory("--session", sid)
    t.wait_text(f"done {TASKS - 1}")
    screen = t.screen.text()
    last = TASKS - 1
    assert f"› task {last}: fix module {last}" in screen
    # each call as it ended: status, duration, summary; the edit with its diff, the failure with its output
    assert f"✓ edit src/mod{last}.py  — 0.1s · 1 replacement" in screen and f"+new line of task {last}" in screen
    assert "119  line of output from the test run" in screen
    assert screen.rstrip().splitlines()[-3].startswith(f"Fixed mod{last}.py: done {last}.")  # the very bottom
    t.keys("\x1b[5~")  # PageUp: a failed command's line above its output
    t.wait(lambda: any(f"✗ bash make test{n}  — 2.5s · exit 2" in t.screen.text() for n in (last, last - 1)),
           what="a bash line as it ended")
    assert "Task 0" not in screen
    t.keys("\x1b[1;5H")  # Ctrl+Home: the very start of the history
    t.wait_text("› task 0: fix module 0")
    screen = t.screen.text()
    assert f"resumed session · {TASKS * 6:,} messages" in screen and "Looking." in screen
    assert "+new line of task 0" in screen
    t.keys("\x1b[1;5F")  # Ctrl+End: back to the bottom
    t.wait(lambda: "↑ scrolled" not in t.screen.text() and f"done {last}" in t.screen.text(), what="bottom")
    t.server.script(Reply.text("continuing from task 399"))
    t.send_line("go on")
    t.wait_text("continuing from task 399")
    request = t.server.requests[-1].body["messages"]
    assert any("summary of tasks 0..399" in (m.get("content") or "") for m in request)
    assert request[-1] == {"role": "user", "content": "go on"}
    t.send_line("/exit")
    out = t.finish()
    assert "EXIT=0" in out, out[-3000:]


def test_a_damaged_message_refuses_the_full_screen_resume_and_the_file_is_unchanged(tmp_path: Path) -> None:
    """Damage before the checkpoint (a message a lazy resume would only read when shown)
    refuses the resume before anything is written (issue 24 item 7)."""
    with FakeOpenAI() as server:
        ws, env = workspace_for(server, tmp_path)
        sid = "dddd4444-0000-4000-8000-000000000005"
        path = _long_session(ws, sid, tasks=60)
        lines = path.read_text().splitlines()
        answer = next(i for i, line in enumerate(lines) if "done 0" in line)
        lines[answer] = '{"type":"message","role":"assistant","content":["not text"]}'
        path.write_text("\n".join(lines) + "\n")
        before = path.read_bytes()
        child = pexpect.spawn("bash", ["-c", f"{EXE} --session {sid}; echo EXIT=$?"], cwd=str(ws), env=env,
                              dimensions=(ROWS, COLUMNS), encoding="utf-8", timeout=30)
        child.expect(pexpect.EOF)
        out = child.before
        assert "EXIT=1" in out and "Traceback" not in out, out[-3000:]
        assert f"is corrupt at line {answer + 1} (message field 'content' must be text or null" in out
        assert path.read_bytes() == before and not server.requests


def test_a_message_damaged_under_the_open_session_and_a_torn_last_line_do_not_stop_it(term_factory: Start,
                                                                                      tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = "dddd4444-0000-4000-8000-000000000004"
    path = _long_session(ws, sid, tasks=60)
    with path.open("a") as f:
        f.write('{"type":"message","role":"user","content":"cut sh')
    t = term_factory("--session", sid)
    t.wait_text("done 59")
    t.server.script(Reply.text("still here"))
    t.send_line("and now?")
    t.wait_answered("still here")  # the file is open: rewritten in place by another program now
    lines = path.read_text().splitlines()
    answer = next(i for i, line in enumerate(lines) if "done 0" in line)  # before the checkpoint
    lines[answer] = '{"type":"message","role":"assistant","content":["not text"]}'.ljust(len(lines[answer]))
    path.write_text("\n".join(lines) + "\n")
    t.keys("\x1b[H")
    t.wait_text("› task 0: fix module 0")
    screen = t.screen.text()
    assert "this message cannot be shown" in screen and f"corrupt at line {answer + 1}" in screen
    assert "› task 1: fix module 1" in screen  # the messages around it are shown
    t.send_line("/exit")
    out = t.finish()
    assert "EXIT=0" in out, out[-3000:]
    assert "torn last line" in out or "torn last line" in "".join(t.raw)


def test_leaving_at_the_first_frame_while_the_provider_is_built_exits_cleanly(term_factory: Start,
                                                                              tmp_path: Path) -> None:
    """Ctrl+D right at the first frame: the provider's build on its thread (just started)
    neither delays nor breaks the exit."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = "eeee5555-0000-4000-8000-000000000005"
    _long_session(ws, sid, tasks=5)
    t = term_factory("--session", sid)
    t.child.send("\x04")
    out = t.finish()
    assert "EXIT=0" in out, out[-3000:]
    assert "Traceback" not in out and f"resume with: minicode --session {sid}" in out
