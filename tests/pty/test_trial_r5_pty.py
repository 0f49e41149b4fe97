"""A new user's trial, round 5, in a real terminal (findings-r5-trial.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from minicode.agent.stats import TaskStats
from minicode.provider.types import Message
from minicode.session.store import SessionStore
from tests.pty.conftest import Term
from tests.support.fake_openai import Reply

Start = Callable[..., Term]


def test_a_resumed_session_shows_how_each_earlier_task_ended_as_the_live_view_did(
        term_factory: Start, tmp_path: Path) -> None:
    """R13: the replay showed the messages but no "■ done · …" line per task, so a resumed
    transcript differed from the live one (and an interrupted task looked finished)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    store, sid = SessionStore.create(ws.resolve())
    store.append_message(Message.user("first task"))
    store.append_message(Message(role="assistant", content="first answer"))
    store.append_turn_end("done", TaskStats(wall_seconds=3.25, model_calls=2, tool_calls=1))
    store.append_message(Message.user("second task"))
    store.append_turn_end("interrupted", TaskStats(wall_seconds=0.5, model_calls=1))
    store.close()
    t = term_factory("--session", sid[:8])
    t.wait_text("first answer")
    t.wait_text("■ done · 3.2s · 2 model calls · 1 tool call · tokens: unavailable")
    t.wait_text("■ interrupted · 0.5s · 1 model call · 0 tool calls")
    screen = t.screen.text()
    assert screen.index("first answer") < screen.index("■ done") < screen.index("second task") \
        < screen.index("■ interrupted")
    t.server.script(Reply.text("third answer"))
    t.send_line("third task")
    t.wait_answered("third answer")
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()


def test_a_numbered_list_shows_its_numbers_with_a_dot(term_factory: Start) -> None:
    """R14: rich drew " 1 first" — the number read as part of the text."""
    t = term_factory()
    t.server.script(Reply.text("Steps:\n\n1. first step\n2. second step\n\n- a bullet"))
    t.send_line("list the steps")
    t.wait_answered("a bullet")
    lines = t.screen.lines()
    assert any(line.startswith(" 1. first step") for line in lines)
    assert any(line.startswith(" 2. second step") for line in lines)
    assert any(line.startswith(" • a bullet") for line in lines)
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()


def test_a_resumed_command_line_reads_as_it_did_live(term_factory: Start) -> None:
    """The replay (and the early frame) named a command ``bash $ echo hi`` where the live
    view drew ``bash echo hi``."""
    import time

    from tests.pty.conftest import READ_PAUSE

    t = term_factory()
    t.server.script(Reply.tool("bash", command="echo hi"), Reply.text("ran it"))
    t.send_line("run it")
    t.wait_text("❯ Allow once")
    time.sleep(READ_PAUSE)
    t.keys("\r")
    t.wait_answered("ran it")
    live = next(line for line in t.screen.lines() if "echo hi" in line and "✓" in line)
    assert live.startswith("✓ bash echo hi  — ")
    t.send_line("/exit")
    assert "EXIT=0" in t.finish()
    again = term_factory("-c")
    again.wait_text("ran it")
    replayed = next(line for line in again.screen.lines() if "echo hi" in line)
    assert replayed.startswith("✓ bash echo hi  — ") and "$" not in replayed
    again.send_line("/exit")
    assert "EXIT=0" in again.finish()
