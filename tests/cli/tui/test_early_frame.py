"""The early frame's parts: the end of a session file read cheaply (entries, settings, the
message count), and the frame laid out as the application lays it out (rows, status bar,
input), with stored text neutralised."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from minicode.agent.deps import ToolOutcome
from minicode.cli.tui import early_tail
from minicode.cli.tui.early_frame import frame_bytes, status_text, transcript_lines
from minicode.cli.tui.early_tail import FIRST_WINDOW, read_tail, tool_line
from minicode.provider.types import Message, ToolCall
from minicode.session.records import SessionSettings
from minicode.session.store import SessionStore
from tests.pty.screen import Screen

OUTPUT = "\n".join(f"{i:5}  line of output" for i in range(300))  # ~7 KB a result


def _session(ws: Path, tasks: int, settings_at: int | None = None) -> str:
    store, sid = SessionStore.create(ws)
    for t in range(tasks):
        if t == settings_at:
            store.append_settings(SessionSettings("other-model", None))
            store.append_settings(SessionSettings(None, "high"))
        store.append_message(Message.user(f"question {t}"))
        call = ToolCall(f"c{t}", "bash", json.dumps({"command": f"make target{t}"}))
        store.append_message(Message(role="assistant", tool_calls=(call,)))
        store.append_message(Message.tool(f"c{t}", OUTPUT + "\n[exit code 2]"),
                             ToolOutcome(True, 2, status="failed", duration_seconds=1.5, summary="exit 2"))
        store.append_message(Message(role="assistant", content=f"answer **{t}**"))
    store.close()
    return str(ws / ".minicode" / "sessions" / f"{sid}.jsonl")


def _never(_entries: object) -> bool:
    return False


def test_a_big_file_is_read_from_its_end_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _session(tmp_path, 400)
    assert os.path.getsize(path) > 2_000_000
    read: list[int] = []
    real = os.pread

    def counting(fd: int, size: int, offset: int) -> bytes:
        read.append(size)
        return real(fd, size, offset)

    monkeypatch.setattr(early_tail.os, "pread", counting)
    tail = read_tail(path, lambda entries: len(entries) >= 8)
    assert tail is not None and tail.messages is None  # only the end: no count
    assert read == [FIRST_WINDOW]  # the end, once: enough for the screen (settings: a mapping)
    assert tail.entries[-1] == ("answer", "answer **399**", "")
    assert tail.entries[-2] == ("tool.error", "bash make target399  — 1.5s · exit 2", "✗ ")
    assert tail.entries[-3] == ("user", "question 399", "› ")
    assert (tail.model, tail.thinking) == (None, None)


def test_the_window_grows_until_the_screen_is_full_and_stops_at_the_whole_file(tmp_path: Path) -> None:
    path = _session(tmp_path, 30)
    tail = read_tail(path, _never)
    assert tail is not None and tail.messages == 120
    assert tail.entries[0] == ("user", "question 0", "› ") and len(tail.entries) == 90


@pytest.mark.parametrize("search", [8 * 1024 * 1024, 1_500_001])
def test_settings_recorded_before_the_window_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       search: int) -> None:
    monkeypatch.setattr(early_tail, "SETTINGS_SEARCH", search)  # a mapping from an unaligned start too
    path = _session(tmp_path, 200, settings_at=5)
    tail = read_tail(path, lambda entries: True)
    assert tail is not None and tail.messages is None
    assert (tail.model, tail.thinking) == ("other-model", "high")


def test_settings_further_back_than_the_search_are_left_to_the_application(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(early_tail, "SETTINGS_SEARCH", 100_000)  # the records are ~1.3 MB before the end
    path = _session(tmp_path, 200, settings_at=5)
    tail = read_tail(path, lambda entries: True)
    assert tail is not None and (tail.model, tail.thinking) == (None, None)


def test_a_rewind_cuts_the_conversation(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    for t in range(3):
        store.append_message(Message.user(f"question {t}"))
        store.append_message(Message(role="assistant", content=f"answer {t}"))
    store.append_rewind(2)
    store.append_message(Message.user("again"))
    store.close()
    tail = read_tail(str(tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"), _never)
    assert tail is not None and tail.messages == 3
    assert [text for _, text, _ in tail.entries] == ["question 0", "answer 0", "again"]


def test_a_torn_or_damaged_line_is_left_out(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("question"))
    store.append_message(Message(role="assistant", content="the answer"))
    store.close()
    path = tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"type":"message","role":"user","content":"broken"\n{"type":"message","role":"assistant","conte')
    tail = read_tail(str(path), _never)
    assert tail is not None and [text for _, text, _ in tail.entries] == ["question", "the answer"]
    assert read_tail(str(tmp_path / "missing.jsonl"), _never) is None


def test_stored_escape_sequences_are_shown_not_obeyed(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("hi\x1b[2J"))
    call = ToolCall("c1", "bash", json.dumps({"command": "echo \x1b]0;T\x07"}))
    store.append_message(Message(role="assistant", content="pwned\x1b]0;PWNED\x07 \x1b[31mred\x9b1m", tool_calls=(call,)))
    store.close()
    tail = read_tail(str(tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"), _never)
    assert tail is not None
    lines = transcript_lines("note", tail.entries, 80)
    frame = frame_bytes(lines, status_text("m", None, sid, 80), 80, 24, color=True).decode()
    assert "pwned␛]0;PWNED␇ ␛[31mred" in frame and "hi␛[2J" in frame
    assert "\x1b]0" not in frame and "\x1b[2J\x1b" not in frame.replace("\x1b[H\x1b[2J", "") and "\x9b" not in frame
    assert "bash echo ␛]0;T␇" in frame


def test_tool_lines_say_how_the_call_ended() -> None:
    call = {"id": "c", "name": "edit", "arguments": json.dumps({"path": "a.py", "old": "x", "new": "y"})}
    done = {"is_error": False, "status": "done", "duration": 0.25, "summary": "1 replacement", "diff": "-x\n+y"}
    assert tool_line(call, done) == [("tool.ok", "edit a.py  — 0.2s · 1 replacement", "✓ "),
                                     ("diff", "    -x", ""), ("diff", "    +y", "")]
    denied = {"is_error": True, "status": "denied", "summary": "denied"}
    assert tool_line(call, denied) == [("tool.error", "edit a.py  — denied", "✗ ")]
    old = {"is_error": True, "exit_code": 3}  # an older file: only whether it failed
    assert tool_line({"id": "c", "name": "bash", "arguments": '{"command": "make"}'}, old) == [
        ("tool.error", "bash make  — failed · exit 3", "✗ ")]
    assert tool_line({"id": "c", "name": "ls", "arguments": "{}"}, None) == [("tool.ok", "ls", "✓ ")]


def test_a_call_recovered_from_text_says_so_as_the_application_does() -> None:
    from minicode.agent.deps import ToolOutcome
    from minicode.cli.tui.controller import Controller
    from minicode.cli.tui.markdown import MarkdownRenderer
    from minicode.provider.types import Message, ToolCall
    from tests.cli.tui.fake_session import FakeSession

    call = {"id": "t", "name": "read", "arguments": '{"path": "a.py"}', "from_text": True}
    done = {"is_error": False, "status": "done", "duration": 0.1, "summary": "1 line"}
    ((_, early, _),) = tool_line(call, done)
    assert early == "read a.py (recovered from text)  — 0.1s · 1 line"
    assert tool_line({**call, "from_text": "yes"}, None) == [("tool.ok", "read a.py", "✓ ")]  # only true counts
    messages = [Message.user("x"), Message(role="assistant", tool_calls=(ToolCall("t", "read", call["arguments"], True),)),
                Message.tool("t", "1\tx")]
    session = FakeSession(messages=messages)
    session.outcomes = {"t": ToolOutcome(False, status="done", duration_seconds=0.1, summary="1 line")}
    c = Controller(session, MarkdownRenderer())
    c.start()
    lines = c.transcript.visible(80, 0, c.transcript.total_lines(80) + 10)
    assert any(early in "".join(t for _, t in line) for line in lines)


def test_the_frame_puts_the_status_bar_and_the_input_on_the_last_rows() -> None:
    entries = [("user", "a question that is long enough to wrap at this width", "› "), ("answer", "the answer", "")]
    lines = transcript_lines("session abc · model m", entries, 30)
    assert lines == [("notice", "session abc · model m"), ("", ""), ("user", "› a question that is long"),
                     ("user", "  enough to wrap at this width"), ("", ""), ("answer", "the answer")]
    monochrome = frame_bytes(lines, status_text("m", "high", "12345678-aaaa", 40), 40, 10, color=False).decode()
    assert "38;5;" not in monochrome and "\x1b[7m" in monochrome  # NO_COLOR: reverse and bold only
    screen = Screen(40, 10)
    screen.feed(monochrome)
    rows = screen.lines()
    assert screen.alternate and rows[0] == "session abc · model m"  # shorter than the screen: from the top
    assert rows[8] == " idle  m · think high · 12345678" and rows[9] == "›"
    assert (screen.y, screen.x) == (9, 2)
    small = Screen(30, 5)  # taller than the screen: its end, above the status bar
    small.feed(frame_bytes(lines, status_text("m", None, "1234", 30), 30, 5, color=True).decode())
    assert small.lines() == ["  enough to wrap at this width", "", "the answer", " idle  m · 1234", "›"]


def test_a_narrow_status_bar_keeps_the_state() -> None:
    assert status_text("a-very-long-model-name", None, "12345678", 20) == " idle "
    assert status_text("m", None, "12345678", 40) == " idle  m · 12345678 "


def test_each_tasks_end_line_is_shown_as_the_application_shows_it(tmp_path: Path) -> None:
    # trial R13: the replay shows "■ done · …" per task; the early frame must show the same rows
    from minicode.agent.stats import TaskStats
    from minicode.session.turn_ends import turn_end_from_record

    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("one"))
    store.append_message(Message(role="assistant", content="answer one"))
    store.append_turn_end("done", TaskStats(wall_seconds=1.0, model_calls=1))
    store.append_message(Message.user("two"))
    store.append_turn_end("interrupted", TaskStats(wall_seconds=0.25))
    store.append_message(Message.user("three"))
    store.append_message(Message(role="assistant", content="answer three"))
    store.append_turn_end("done", TaskStats())
    store.append_rewind(3)  # back to "three": its end goes with it
    store.close()
    path = tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"
    tail = read_tail(str(path), _never)
    assert tail is not None
    assert [(style, text) for style, text, _ in tail.entries] == [
        ("user", "one"), ("answer", "answer one"),
        ("stats", "done · 1.0s · 1 model call · 0 tool calls · tokens: unavailable"),
        ("user", "two"), ("status.bad", "interrupted · 0.2s · 0 model calls · 0 tool calls · tokens: unavailable"),
    ]
    records = [json.loads(line) for line in path.read_text().splitlines() if '"turn_end"' in line]
    assert [r["shown"] for r in records[:2]] == [turn_end_from_record(r).text for r in records[:2]]


def test_a_turn_end_without_its_line_or_with_escapes_is_left_out_or_neutralised(tmp_path: Path) -> None:
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("one"))
    store.close()
    path = tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"
    with open(path, "a") as f:
        f.write('{"type":"turn_end","status":"done","stats":{}}\n')  # an older file: no line
    tail = read_tail(str(path), _never)
    assert tail is not None and [text for _, text, _ in tail.entries] == ["one"]
    store, sid = SessionStore.create(tmp_path)
    store.append_message(Message.user("two"))
    store.close()
    path = tmp_path / ".minicode" / "sessions" / f"{sid}.jsonl"
    with open(path, "a") as f:
        f.write('{"type":"turn_end","status":"error","shown":"bad \\u001b]0;x\\u0007"}\n')
    tail = read_tail(str(path), _never)
    assert tail is not None and tail.entries[-1][0] == "status.bad"
    assert "\x1b" not in tail.entries[-1][1] and "␛]0;x" in tail.entries[-1][1]
