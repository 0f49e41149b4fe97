"""Session writes are all-or-nothing and every damaged field is named with its line:
an append that fails part-way (ENOSPC injected into the real write) is cut back so the file
always loads; a checkpoint outside the history and malformed fields are refused, file untouched."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session import store as store_mod
from minicode.session.store import SessionStore


def _fail_after(monkeypatch: pytest.MonkeyPatch, keep: int, error: int = errno.ENOSPC) -> None:
    """The next os.write writes ``keep`` bytes for real, then the disk is "full"."""
    real = os.write
    state = {"armed": True}

    def write(fd: int, data: Any) -> int:
        if not state["armed"]:
            return real(fd, data)
        state["armed"] = False
        written = real(fd, bytes(data)[:keep])
        raise OSError(error, os.strerror(error)) if written == keep else AssertionError

    monkeypatch.setattr(store_mod.os, "write", write)


def test_a_failed_append_is_cut_back_and_the_file_still_loads(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("first"))
    good = store.path.stat().st_size
    _fail_after(monkeypatch, keep=17)
    with pytest.raises(SessionError, match="No space left on device; the partial record was removed"):
        store.append_message(Message(role="assistant", content="x" * 10_000))
    assert store.path.stat().st_size == good  # the 17 bytes are gone
    store.append_message(Message(role="assistant", content="second"))  # the next append lands on a clean line
    store.close()
    again, loaded = SessionStore.open(workspace, sid)
    again.close()
    assert list(loaded.messages) == [Message.user("first"), Message(role="assistant", content="second")]
    assert loaded.warnings == []


def test_a_failed_fsync_after_a_full_write_is_cut_back_too(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, sid = SessionStore.create(workspace)
    good = store.path.stat().st_size

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(store_mod.os, "fsync", failing_fsync)
    with pytest.raises(SessionError, match="Input/output error"):
        store.append_message(Message.user("maybe not on disk"))
    monkeypatch.undo()
    assert store.path.stat().st_size == good
    store.close()


def test_when_the_cut_fails_too_nothing_more_is_appended(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("first"))
    _fail_after(monkeypatch, keep=9)

    def no_truncate(fd: int, size: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(store_mod.os, "ftruncate", no_truncate)
    with pytest.raises(SessionError, match="could not be removed"):
        store.append_message(Message.user("torn"))
    monkeypatch.undo()
    with pytest.raises(SessionError, match="nothing more is saved in this run"):
        store.append_message(Message.user("would land mid-file"))
    store.close()
    again, loaded = SessionStore.open(workspace, sid)  # the torn tail is cut at load
    again.close()
    assert list(loaded.messages) == [Message.user("first")]
    assert any("torn last line" in w for w in loaded.warnings)


def _session_with(workspace: Path, extra: Callable[[list[str]], None]) -> tuple[str, Path]:
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("task"))
    store.append_message(Message(role="assistant", content="answer"))
    store.close()
    path = store.path
    lines = path.read_text().splitlines()
    extra(lines)
    path.write_text("\n".join(lines) + "\n")
    return sid, path


def _open_all(workspace: Path, sid: str) -> None:
    store, loaded = SessionStore.open(workspace, sid)
    try:
        list(loaded.messages)  # messages are parsed when first needed
    finally:
        store.close()


def test_a_checkpoint_outside_the_history_is_refused_with_its_line(workspace: Path) -> None:
    record = {"type": "checkpoint", "summary": "s", "first_kept": 9}
    sid, path = _session_with(workspace, lambda lines: lines.append(json.dumps(record)))
    before = path.read_bytes()
    with pytest.raises(SessionError) as info:
        _open_all(workspace, sid)
    assert "line 4" in str(info.value)
    assert "checkpoint field 'first_kept' is 9 but only 2 messages come before it" in str(info.value)
    assert path.read_bytes() == before  # damage is refused, never "repaired"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("tool_calls", None, "message field 'tool_calls' must be a list of tool calls, got null"),
        ("tool_calls", [{"id": "c1", "name": 5, "arguments": "{}"}], "'tool_calls[0].name' must be text, got the number 5"),
        ("tool_calls", ["c1"], "'tool_calls[0]' must be an object, got the text 'c1'"),
        ("content", 7, "message field 'content' must be text or null, got the number 7"),
        ("role", "system", "message field 'role' must be one of user, assistant, tool, got the text 'system'"),
        ("reasoning", ["x"], "message field 'reasoning' must be text or null, got a list"),
    ],
)
def test_a_malformed_message_field_is_named_with_its_line(workspace: Path, field: str, value: object, expected: str) -> None:
    def damage(lines: list[str]) -> None:
        rec = json.loads(lines[2])
        rec[field] = value
        lines[2] = json.dumps(rec, separators=(",", ":"))

    sid, path = _session_with(workspace, damage)
    before = path.read_bytes()
    with pytest.raises(SessionError) as info:
        _open_all(workspace, sid)
    assert "line 3" in str(info.value) and expected in str(info.value)
    assert path.read_bytes() == before


def test_malformed_checkpoint_and_outcome_fields_are_named(workspace: Path) -> None:
    bad = {"type": "checkpoint", "summary": "s", "first_kept": -1}
    sid, _ = _session_with(workspace, lambda lines: lines.append(json.dumps(bad)))
    with pytest.raises(SessionError, match=r"line 4 \(checkpoint field 'first_kept' must be a whole number >= 0, got the number -1\)"):
        _open_all(workspace, sid)


def test_a_line_nested_absurdly_deep_is_damage_not_a_crash(workspace: Path) -> None:
    sid, _ = _session_with(workspace, lambda lines: lines.append('{"type":"settings","x":' + "[" * 100_000 + "]" * 100_000 + "}"))
    with pytest.raises(SessionError, match="line 4"):
        _open_all(workspace, sid)


def test_checkpoint_at_the_very_end_is_valid(workspace: Path) -> None:
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("task"))
    store.append_checkpoint(Checkpoint("summary of everything", 1))
    store.close()
    again, loaded = SessionStore.open(workspace, sid)
    again.close()
    assert loaded.checkpoint == Checkpoint("summary of everything", 1)


def test_a_message_nested_absurdly_deep_is_named_with_its_line(workspace: Path) -> None:
    deep = '{"type":"message","role":"user","content":' + "[" * 100_000 + "]" * 100_000 + "}"
    sid, path = _session_with(workspace, lambda lines: lines.append(deep))
    before = path.read_bytes()
    with pytest.raises(SessionError, match=r"corrupt at line 4 \(JSON nested deeper than 64 levels"):
        _open_all(workspace, sid)
    assert path.read_bytes() == before


def test_lone_surrogate_escapes_load_as_replacement_characters(workspace: Path) -> None:
    """A ``\\ud800`` escape with no partner (a damaged file, an old version's) would make every
    later request, export or screen fail to encode: it is read as U+FFFD; a real pair stays."""
    records = [
        r'{"type":"message","role":"user","content":"x\ud800y \ud83d\ude00"}',
        r'{"type":"message","role":"assistant","content":"\uDC00","tool_calls":[{"id":"c\udfff","name":"bash","arguments":"{\"command\": \"echo \\ud800\"}"}]}',
        r'{"type":"message","role":"tool","content":"out\udbff","tool_call_id":"c\udfff"}',
        r'{"type":"checkpoint","summary":"sum\ud800","first_kept":3}',
    ]
    sid, path = _session_with(workspace, lambda lines: lines.extend(records))
    store, loaded = SessionStore.open(workspace, sid)
    store.close()
    texts = [m.content for m in loaded.messages][-3:]
    assert texts == ["x\ufffdy \U0001f600", "\ufffd", "out\ufffd"]
    call = loaded.messages[-2].tool_calls[0]
    assert call.id == "c\ufffd" and loaded.messages[-1].tool_call_id == "c\ufffd"
    # the arguments are JSON text whose own escape is only decoded by who reads them
    assert call.arguments == '{"command": "echo \\ud800"}'
    assert loaded.checkpoint is not None and loaded.checkpoint.summary == "sum\ufffd"
    for message in loaded.messages:
        (message.content or "").encode("utf-8")  # every string can be written again
