"""A damaged message anywhere in a session file refuses the load before anything is written
(issue 24 item 7): messages are parsed lazily, but every message line is checked on load with
the check the lazy parse applies later, so a resume never appends to a file it must refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minicode.agent.deps import ToolOutcome
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore, reading_session


def _line(**fields: object) -> bytes:
    return json.dumps({"type": "message", **fields}, separators=(",", ":")).encode()


CALL = {"id": "c1", "name": "bash", "arguments": '{"command": "ls"}'}
DAMAGE = {
    "invalid UTF-8": (b'{"type":"message","role":"user","content":"caf\xe9"}', "'utf-8' codec can't decode byte 0xe9"),
    "content a number": (_line(role="user", content=5), "message field 'content' must be text or null, got the number 5"),
    "content an object": (_line(role="assistant", content={"text": "hi"}),
                          "message field 'content' must be text or null, got an object"),
    "tool_calls a string": (_line(role="assistant", content=None, tool_calls="bash"),
                            "message field 'tool_calls' must be a list of tool calls, got the text 'bash'"),
    "a call without an id": (_line(role="assistant", content=None, tool_calls=[{"name": "bash", "arguments": "{}"}]),
                             "message field 'tool_calls[0].id' must be text, got null"),
    "arguments an object": (_line(role="assistant", content=None, tool_calls=[{**CALL, "arguments": {"command": "ls"}}]),
                            "message field 'tool_calls[0].arguments' must be text, got an object"),
    "tool_call_id a number": (_line(role="tool", content="ok", tool_call_id=7),
                              "message field 'tool_call_id' must be text or null, got the number 7"),
    "is_error a string": (_line(role="tool", content="ok", tool_call_id="c1", is_error="no"),
                          "tool result field 'is_error' must be true or false, got the text 'no'"),
}


def _healthy(workspace: Path) -> tuple[str, Path]:
    """Two tasks, the first with a tool call, compacted: line 3 (the first task's call) lies
    before the checkpoint, where a lazy resume never reads it."""
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("list the files"))
    store.append_message(Message(role="assistant", tool_calls=(ToolCall(**CALL),)))
    store.append_message(Message.tool("c1", "a.py"), ToolOutcome(False, 0))
    store.append_message(Message(role="assistant", content="one file"))
    store.append_message(Message.user("and now?"))
    store.append_message(Message(role="assistant", content="done"))
    store.append_checkpoint(Checkpoint("the user listed the files", 4))
    store.close()
    return sid, store.path


def _damaged(workspace: Path, line: bytes, at: int = 3) -> tuple[str, Path]:
    sid, path = _healthy(workspace)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[at - 1] = line + b"\n"
    path.write_bytes(b"".join(lines))
    return sid, path


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_message_before_the_checkpoint_refuses_the_resume_and_the_file_is_unchanged(
        workspace: Path, kind: str) -> None:
    line, why = DAMAGE[kind]
    sid, path = _damaged(workspace, line)
    before = path.read_bytes()
    with pytest.raises(SessionError) as info:
        SessionStore.open(workspace, sid)
    message = str(info.value)
    assert message.startswith(f"session file {path} is corrupt at line 3 (")
    assert why in message and message.endswith("; refusing to load it")
    assert info.value.exit_code == 1
    assert path.read_bytes() == before
    with pytest.raises(SessionError, match="corrupt at line 3"):  # --export reads it the same way
        with reading_session(workspace, sid):
            pass


@pytest.mark.parametrize("kind", ["content a number", "is_error a string"])
def test_a_damaged_whole_last_record_without_its_newline_is_damage_not_a_torn_line(workspace: Path,
                                                                                   kind: str) -> None:
    """Torn is what a crash mid-write leaves, never a whole JSON object: a whole record with a
    damaged field is refused, not cut off as if torn."""
    sid, path = _healthy(workspace)
    with path.open("ab") as f:
        f.write(DAMAGE[kind][0])
    before = path.read_bytes()
    with pytest.raises(SessionError, match=r"corrupt at line 9 \(") as info:
        SessionStore.open(workspace, sid)
    assert DAMAGE[kind][1] in str(info.value)
    assert path.read_bytes() == before


def test_a_torn_last_line_is_still_ignored_and_cut_off(workspace: Path) -> None:
    sid, path = _healthy(workspace)
    healthy = path.read_bytes()
    with path.open("ab") as f:
        f.write(b'{"type":"message","role":"user","content":"cut sh')
    store, loaded = SessionStore.open(workspace, sid)
    assert any("torn last line" in w for w in loaded.warnings)
    assert path.read_bytes() == healthy  # cut so the next record starts on a clean line
    store.append_message(Message.user("next"))
    store.close()
    assert path.read_bytes() == healthy + b'{"type":"message","role":"user","content":"next"}\n'


def test_a_healthy_session_resumes_lazily_and_appends(workspace: Path) -> None:
    sid, path = _healthy(workspace)
    healthy = path.read_bytes()
    store, loaded = SessionStore.open(workspace, sid)
    assert len(loaded.messages) == 6 and loaded.messages.parsed_count() == 0  # checked, not kept
    assert loaded.checkpoint == Checkpoint("the user listed the files", 4) and not loaded.warnings
    assert loaded.messages[2] == Message.tool("c1", "a.py") and loaded.outcomes == {"c1": ToolOutcome(False, 0)}
    store.append_message(Message.user("third"))
    store.close()
    assert path.read_bytes() == healthy + b'{"type":"message","role":"user","content":"third"}\n'
