"""After a compaction the summarised messages leave memory (issue 16 item 4): the log turns them
back into slots of the file, read again (lazily) by a rewind, a look back or a resume."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import pytest

from minicode.agent.deps import ToolOutcome
from minicode.errors import SessionError
from minicode.provider.types import Message, ToolCall
from minicode.session.log import MessageLog
from minicode.session.store import SessionStore
from tests.agent.conftest import Events
from tests.agent.scripted import text
from tests.session.test_rewind import _long_history, _task


class Weak(Message):
    __slots__ = ("__weakref__",)  # Message has slots and no weak references


def test_an_appended_message_knows_where_its_record_is(workspace: Path) -> None:
    store, _ = SessionStore.create(workspace)
    messages = [Message.user("first ✓"), Message(role="assistant", content="answer \"quoted\"")]
    slots = [store.append_message(m) for m in messages]
    raw = store.path.read_bytes()
    for message, slot in zip(messages, slots):
        assert slot is not None
        offset, length, line = slot
        record = json.loads(raw[offset : offset + length])
        assert record["content"] == message.content
        assert raw.splitlines()[line - 1] == raw[offset : offset + length]  # line 1 is the header
    store.close()


def test_a_resumed_store_counts_its_lines_on(workspace: Path) -> None:
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("one"))
    store.close()
    store, _ = SessionStore.open(workspace, sid)
    offset, length, line = store.append_message(Message(role="assistant", content="two")) or (0, 0, 0)
    assert line == 3 and store.path.read_bytes().splitlines()[2] == store.path.read_bytes()[offset : offset + length]
    store.close()


def test_release_drops_parsed_messages_and_reads_them_back_with_their_outcomes(workspace: Path) -> None:
    store, _ = SessionStore.create(workspace)
    log = MessageLog(store.file_reader(), "session file")
    call = Message(role="assistant", tool_calls=(ToolCall("c1", "bash", '{"command": "ls"}'),))
    items = [Weak(role="user", content="go"), call, Message.tool("c1", "out"), Weak(role="assistant", content="done"),
             Message.user("next")]
    outcome = ToolOutcome(False, 0, "done", 0.5, "exit 0")
    for message in items:
        log.append(message, store.append_message(message, outcome if message.role == "tool" else None))
    log.outcomes["c1"] = outcome
    first = __import__("weakref").ref(items[0])
    assert log.release(3) == 3 and log.parsed_count() == 2
    assert not log.is_parsed(0) and log.is_parsed(3)
    assert "c1" not in log.outcomes  # read back with its message
    del items
    gc.collect()
    assert first() is None  # nothing else holds it
    assert log.peek(0).content == "go" and log.parsed_count() == 2  # peek reads without keeping
    assert log[2].content == "out" and log.outcomes["c1"] == outcome
    assert log.parsed_count() == 2  # a summarised message read again is not kept again
    assert log.release(3) == 0
    store.close()
    log.close()


def test_release_keeps_messages_it_cannot_read_back() -> None:
    log = MessageLog()
    for i in range(4):
        log.append(Message.user(f"m{i}"), (0, 10, 2))  # no reader: the slot could not be read
    assert log.release(4) == 0 and log.parsed_count() == 4


def test_truncate_after_release_and_release_again(workspace: Path) -> None:
    store, _ = SessionStore.create(workspace)
    log = MessageLog(store.file_reader())
    for i in range(6):
        message = Message.user(f"m{i}") if i % 2 == 0 else Message(role="assistant", content=f"a{i}")
        log.append(message, store.append_message(message))
    log.release(4)
    log.truncate(2)  # a rewind to before the released part
    assert [m.content for m in log] == ["m0", "a1"] and log.parsed_count() == 2
    message = Message.user("m2'")
    log.append(message, store.append_message(message))
    assert log.release(3) == 3 and log.peek(2).content == "m2'"
    store.close()
    log.close()


async def test_a_compaction_drops_the_summarised_messages_from_memory(open_session, provider, workspace: Path) -> None:
    session = await open_session()
    await _long_history(session, provider, 6)
    provider.script(text("SUMMARY OF EARLY WORK"))
    await session.compact(emit=Events().append)
    first_kept = session._history.checkpoint.first_kept
    log = session.messages
    assert first_kept > 2
    assert not any(log.is_parsed(i) for i in range(first_kept))  # type: ignore[attr-defined]
    assert log.parsed_count() == len(log) - first_kept  # type: ignore[attr-defined]
    assert len(session._context._counter) <= len(log) - first_kept + 3  # the memo let them go too
    provider.script(text("after"))
    await _task(session, "go on")
    assert not any(log.is_parsed(i) for i in range(first_kept))  # type: ignore[attr-defined]
    # the raw history is all still there, read from the file when asked
    assert [m.content[:10] for m in log if m.role == "user"][:2] == ["question 0", "question 1"]


async def test_a_session_file_deleted_while_open_keeps_the_new_messages_in_memory(
    open_session, provider, workspace: Path
) -> None:
    session = await open_session()
    provider.script(text("one"))
    await _task(session, "first")
    os.unlink(session._store.path)
    provider.script(text("two"))
    await _task(session, "second")  # written to a new file; the reader sees the old one
    log = session.messages
    assert log.release(len(log)) == 2  # type: ignore[attr-defined]  # only those of the first file
    assert [m.content for m in log] == ["first", "one", "second", "two"]


def test_messages_of_a_resumed_session_are_released_once_read(workspace: Path) -> None:
    store, sid = SessionStore.create(workspace)
    for i in range(6):
        store.append_message(Message.user(f"m{i}") if i % 2 == 0 else Message(role="assistant", content=f"a{i}"))
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    log = loaded.messages
    assert log.parsed_count() == 0
    assert [m.content for m in log[1:5]] == ["a1", "m2", "a3", "m4"] and log.parsed_count() == 4
    assert log.size_hint(0) > 0 and log.size_hint(5) > 0  # a never-read slot, a read one
    assert log.release(4) == 3  # 1, 2, 3 were read and kept; 0 was never read
    assert log.parsed_count() == 1 and [m.content for m in log] == ["m0", "a1", "m2", "a3", "m4", "a5"]
    assert log.parsed_count() == 2  # the released ones are read without being kept (4 and 5 are)
    log.verify()
    store.close()


def test_where_and_read_at_read_a_record_back_also_after_a_rewind(workspace: Path) -> None:
    """What a screen needs to drop a shown answer and read it again: the record's place (known
    for appended and for located messages), stable when a rewind drops the message."""
    store, sid = SessionStore.create(workspace)
    log = MessageLog(store.file_reader(), "session file")
    answer = Message(role="assistant", content="the answer ✓", reasoning="thought")
    for message in (Message.user("go"), answer, Message.user("next")):
        log.append(message, store.append_message(message))
    unfiled = MessageLog()  # no file: nothing can be read back
    unfiled.append(answer)
    assert unfiled.where(0) is None
    slot = log.where(1)
    assert slot is not None and slot[2] == 3  # line 1 is the header
    log.truncate(1)  # a rewind before the answer: its record stays where it was
    assert log.read_at(slot) == answer
    store.close()
    store, loaded = SessionStore.open(workspace, sid)
    assert loaded.messages.where(1) == slot and loaded.messages.read_at(slot) == answer  # located, not parsed
    store.close()
    loaded.messages.close()


def test_read_at_a_place_the_file_no_longer_holds_is_a_session_error(workspace: Path) -> None:
    store, _ = SessionStore.create(workspace)
    log = MessageLog(store.file_reader(), "session file")
    message = Message(role="assistant", content="x" * 100)
    log.append(message, store.append_message(message))
    slot = log.where(0)
    assert slot is not None
    os.truncate(store.path, slot[0] + 10)  # cut under the open file
    with pytest.raises(SessionError, match="shorter"):
        log.read_at(slot)
    store.close()
