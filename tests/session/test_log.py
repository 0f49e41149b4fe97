"""Reading a session: messages located then parsed on demand, rewinds, settings, checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minicode.agent.deps import ToolOutcome
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.provider.types import Message, ToolCall
from minicode.session.records import SessionSettings
from minicode.session.store import SessionStore, reading_session

CALL = Message(role="assistant", tool_calls=(ToolCall("c1", "bash", '{"command": "ls"}'),))


def _write(ws: Path, *items: Message | dict[str, object]) -> tuple[str, Path]:
    store, sid = SessionStore.create(ws)
    for item in items:
        if isinstance(item, Message):
            store.append_message(item, ToolOutcome(False, 0) if item.role == "tool" else None)
        else:
            store._append(dict(item))
    store.close()
    return sid, store.path


def test_messages_are_parsed_only_when_needed(workspace: Path) -> None:
    msgs = [Message.user(f"q{i}") if i % 2 == 0 else Message(role="assistant", content=f"a{i}") for i in range(10)]
    sid, _ = _write(workspace, *msgs)
    store, loaded = SessionStore.open(workspace, sid)
    log = loaded.messages
    assert len(log) == 10 and log.parsed_count() == 0
    assert log.role(4) == "user" and log.user_indexes() == [0, 2, 4, 6, 8]
    assert log[-1] == msgs[-1] and log.parsed_count() == 1
    assert log.peek(3) == msgs[3] and log.parsed_count() == 1  # peek keeps nothing
    assert log[2:5] == msgs[2:5] and list(log) == msgs
    assert [log.raw_id(i) for i in range(10)] == list(range(10))
    store.close()


def test_outcomes_come_with_the_parsed_results(workspace: Path) -> None:
    sid, _ = _write(workspace, Message.user("go"), CALL, Message.tool("c1", "x"))
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.messages.outcomes == {}
    loaded.messages[2]
    assert loaded.messages.outcomes == {"c1": ToolOutcome(False, 0)}
    store.close()


def test_a_message_damaged_after_the_open_is_reported_with_its_line_when_needed(workspace: Path) -> None:
    """A file damaged on load refuses to load (tests/session/test_damaged_message.py); one
    changed under the open session (another program rewrote the line in place) is reported
    when the message is first read."""
    sid, path = _write(workspace, Message.user("one"), Message(role="assistant", content="two"))
    store, loaded = SessionStore.open(workspace, sid)
    lines = path.read_text().splitlines()
    lines[2] = '{"type":"message","role":"assistant","content":7}'.ljust(len(lines[2]))
    path.write_text("\n".join(lines) + "\n")
    assert loaded.messages[0].content == "one"
    with pytest.raises(SessionError, match="corrupt at line 3"):
        loaded.messages[1]
    with pytest.raises(SessionError, match="line 3"):
        loaded.messages.verify()
    store.close()


def test_a_message_line_that_is_not_a_whole_object_refuses_to_load(workspace: Path) -> None:
    sid, path = _write(workspace, Message.user("one"), Message(role="assistant", content="two"))
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:-1]  # not a complete record, and not the last line
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionError, match="corrupt at line 2"):
        SessionStore.open(workspace, sid)


def test_messages_stay_readable_after_the_store_closes_until_the_log_closes(workspace: Path) -> None:
    sid, _ = _write(workspace, Message.user("one"), Message.user("two"))
    store, loaded = SessionStore.open(workspace, sid)
    store.close()
    assert loaded.messages[0].content == "one"
    loaded.messages.close()
    with pytest.raises(SessionError, match="closed"):
        loaded.messages[1]


def test_rewind_keeps_the_raw_messages_but_continues_before_the_chosen_one(workspace: Path) -> None:
    sid, path = _write(workspace, Message.user("one"), Message(role="assistant", content="1"),
                       Message.user("two"), Message(role="assistant", content="2"))
    store, _ = SessionStore.open(workspace, sid)
    store.append_rewind(2)
    store.append_message(Message.user("two again"))
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    log = loaded.messages
    assert [m.content for m in log] == ["one", "1", "two again"]
    assert [log.raw_id(i) for i in range(3)] == [0, 1, 4]  # raw ids are never reused
    assert log.raw_count == 5
    store.close()
    assert path.read_text().count('"type":"message"') == 5  # the raw history stays


def test_rewind_drops_checkpoints_that_summarise_removed_messages(workspace: Path) -> None:
    msgs = [Message.user(f"q{i}") if i % 2 == 0 else Message(role="assistant", content=f"a{i}") for i in range(8)]
    sid, _ = _write(workspace, *msgs[:4], {"type": "checkpoint", "summary": "s1", "first_kept": 2},
                    *msgs[4:], {"type": "checkpoint", "summary": "s2", "first_kept": 6})
    store, _ = SessionStore.open(workspace, sid)
    store.append_rewind(4)
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.checkpoint == Checkpoint("s1", 2) and len(loaded.messages) == 4
    store.append_rewind(0)
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.checkpoint is None and len(loaded.messages) == 0
    store.close()


@pytest.mark.parametrize("record", [
    {"type": "rewind", "keep": 1},  # an assistant message
    {"type": "rewind", "keep": 9},  # beyond the history
    {"type": "rewind", "keep": -1},
    {"type": "rewind", "keep": "0"},
    {"type": "settings", "thinking": "huge"},
    {"type": "settings", "model": ""},
    {"type": "settings", "model": "a b"},
    {"type": "checkpoint", "summary": "s", "first_kept": 5},  # keeps messages that are not there
    {"type": "mystery"},
])
def test_malformed_new_records_refuse_to_load(workspace: Path, record: dict[str, object]) -> None:
    sid, _ = _write(workspace, Message.user("one"), Message(role="assistant", content="1"), record,
                    Message.user("two"))
    with pytest.raises(SessionError, match="corrupt at line 4"):
        SessionStore.open(workspace, sid)


def test_settings_records_merge_in_order(workspace: Path) -> None:
    sid, _ = _write(workspace, Message.user("one"), {"type": "settings", "model": "m1"},
                    {"type": "settings", "thinking": "high"}, {"type": "settings", "model": "m2"})
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.settings == SessionSettings("m2", "high")
    store.append_settings(SessionSettings(thinking="off"))
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.settings == SessionSettings("m2", "off")
    store.close()


def test_a_message_in_another_key_order_is_parsed_at_once(workspace: Path) -> None:
    sid, path = _write(workspace, Message.user("one"))
    with path.open("a") as f:
        f.write(json.dumps({"role": "assistant", "type": "message", "content": "odd order"}) + "\n")
    store, loaded = SessionStore.open(workspace, sid)
    assert [m.content for m in loaded.messages] == ["one", "odd order"]
    store.close()


def test_reading_without_opening_for_appends_leaves_a_torn_line(workspace: Path) -> None:
    sid, path = _write(workspace, Message.user("one"))
    with path.open("ab") as f:
        f.write(b'{"type":"message","role":"user","con')
    before = path.read_bytes()
    with reading_session(workspace, sid) as loaded:
        assert [m.content for m in loaded.messages] == ["one"]
        assert loaded.warnings and "torn" in loaded.warnings[0]
    assert path.read_bytes() == before


def test_a_message_longer_than_a_read_window(workspace: Path) -> None:
    big = "z" * (20 * 1024 * 1024)  # longer than a read window (16 MiB): the window grows
    sid, _ = _write(workspace, Message.user("one"), Message(role="assistant", content=big), Message.user("three"))
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.messages[1].content == big and loaded.messages[2].content == "three"
    store.close()
