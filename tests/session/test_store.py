"""The JSONL session file: round trip, damage handling, permissions, cap, ids, latest."""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path

import pytest

from minicode.agent.repair import INTERRUPTED_RESULT, missing_results
from minicode.agent.stats import TaskStats
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.provider.types import Message, ToolCall
from minicode.session import store as store_mod
from minicode.session.store import SessionStore, latest_session_id, validate_session_id

CALL = Message(role="assistant", content=None, tool_calls=(ToolCall("c1", "bash", '{"command": "ls"}'),
                                                           ToolCall("c2", "read", '{"path": "a"}')))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path.resolve()


def _new(ws: Path) -> tuple[SessionStore, str]:
    return SessionStore.create(ws)


def test_round_trip(ws):
    store, sid = _new(ws)
    msgs = [Message.user("héllo"), CALL, Message.tool("c1", ""), Message.tool("c2", "x"),
            Message(role="assistant", content="done", reasoning="because")]
    for m in msgs:
        store.append_message(m)
    store.append_checkpoint(Checkpoint("sum", 2))
    store.append_turn_end("done", TaskStats(model_calls=2))
    store.close()
    again, loaded = SessionStore.open(ws, sid)
    again.close()
    assert loaded.messages == msgs and loaded.checkpoint == Checkpoint("sum", 2)
    assert loaded.warnings == [] and loaded.session_id == sid


def test_header_and_permissions(ws):
    store, sid = _new(ws)
    store.close()
    path = ws / ".minicode" / "sessions" / f"{sid}.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert (path.parent / ".gitignore").read_text() == "*\n"
    header = json.loads(path.read_text().splitlines()[0])
    assert header["v"] == 1 and header["id"] == sid and header["workspace"] == str(ws)
    assert uuid.UUID(sid).version == 4 and sid == sid.lower()


def test_system_messages_are_never_stored(ws):
    store, _ = _new(ws)
    with pytest.raises(SessionError):
        store.append_message(Message.system("rules"))
    store.close()


def test_torn_last_line_is_ignored_and_cut(ws):
    store, sid = _new(ws)
    store.append_message(Message.user("one"))
    store.close()
    path = store.path
    with path.open("ab") as f:
        f.write(b'{"type":"message","role":"user","con')
    again, loaded = SessionStore.open(ws, sid)
    assert [m.content for m in loaded.messages] == ["one"]
    assert loaded.warnings and "torn" in loaded.warnings[0]
    again.append_message(Message.user("two"))  # starts on a clean line
    again.close()
    _, reloaded = SessionStore.open(ws, sid)
    assert [m.content for m in reloaded.messages] == ["one", "two"] and reloaded.warnings == []


def test_complete_last_line_without_newline_is_kept(ws):
    store, sid = _new(ws)
    store.close()
    with store.path.open("ab") as f:
        f.write(b'{"type":"message","role":"user","content":"kept"}')
    again, loaded = SessionStore.open(ws, sid)
    again.append_message(Message.user("next"))
    again.close()
    _, reloaded = SessionStore.open(ws, sid)
    assert [m.content for m in reloaded.messages] == ["kept", "next"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda lines: lines[:1] + [b"{broken"] + lines[1:],
        lambda lines: [json.dumps({"type": "header", "v": 2}).encode()] + lines[1:],
        lambda lines: lines[1:],
        lambda lines: lines[:1] + [b'{"type":"mystery"}'] + lines[1:],
        lambda lines: lines[:1] + [b'{"type":"message","role":"system","content":"x"}'] + lines[1:],
    ],
    ids=["bad-json-mid-file", "unknown-version", "missing-header", "unknown-record", "bad-role"],
)
def test_corruption_refuses_and_leaves_file_untouched(ws, damage):
    store, sid = _new(ws)
    store.append_message(Message.user("a"))
    store.append_message(Message.user("b"))
    store.close()
    lines = store.path.read_bytes().rstrip(b"\n").split(b"\n")
    damaged = b"\n".join(damage(lines)) + b"\n"
    store.path.write_bytes(damaged)
    with pytest.raises(SessionError, match="refusing to load"):
        SessionStore.open(ws, sid)
    assert store.path.read_bytes() == damaged


def test_wrong_workspace_is_refused(ws, tmp_path):
    store, sid = _new(ws)
    store.close()
    other = tmp_path / "other"
    (other / ".minicode" / "sessions").mkdir(parents=True)
    target = other / ".minicode" / "sessions" / f"{sid}.jsonl"
    target.write_bytes(store.path.read_bytes())
    with pytest.raises(SessionError, match="another workspace"):
        SessionStore.open(other.resolve(), sid)


def test_cap_refuses_appends_and_loads(ws, monkeypatch):
    monkeypatch.setattr(store_mod, "MAX_FILE_BYTES", 400)
    store, sid = _new(ws)
    with pytest.raises(SessionError, match="exceed"):
        store.append_message(Message.user("x" * 500))
    store.append_message(Message.user("small"))
    store.close()
    with store.path.open("ab") as f:
        f.write(b" " * 400 + b"\n")
    with pytest.raises(SessionError, match="larger than"):
        SessionStore.open(ws, sid)


@pytest.mark.parametrize("bad", ["", "  ", "../etc/passwd", "/tmp/x.jsonl", "not-a-uuid",
                                 "1b4e28ba-2fa1-1d3b-a3f5-ef19b5a7633b", "1b4e28ba2fa14d3ba3f5ef19b5a7633b"])
def test_invalid_ids_exit_2(bad):
    with pytest.raises(SessionError) as info:
        validate_session_id(bad)
    assert info.value.exit_code == 2


def test_valid_id_is_normalised():
    sid = str(uuid.uuid4())
    assert validate_session_id(sid.upper()) == sid


def test_unknown_id_exit_2(ws):
    with pytest.raises(SessionError, match="no session") as info:
        SessionStore.open(ws, str(uuid.uuid4()))
    assert info.value.exit_code == 2


def test_latest_picks_most_recently_updated(ws):
    assert latest_session_id(ws) is None
    a, aid = _new(ws)
    b, bid = _new(ws)
    a.append_message(Message.user("newer"))
    os.utime(b.path, ns=(1, 1))
    a.close()
    b.close()
    assert latest_session_id(ws) == aid
    (ws / ".minicode" / "sessions" / "notes.jsonl").write_text("x")  # not a session name
    assert latest_session_id(ws) == aid


def test_repair_answers_only_the_open_trailing_batch():
    history = [Message.user("x"), CALL, Message.tool("c2", "ok")]
    repaired = missing_results(history)
    assert repaired == [Message.tool("c1", INTERRUPTED_RESULT)]
    assert missing_results(history + repaired) == []
    assert missing_results([Message.user("x")]) == []
    assert missing_results([]) == []


def test_surrogates_in_a_message_are_stored_as_replacement_characters(ws: Path) -> None:
    store, sid = _new(ws)
    store.append_message(Message.user("file caf\udce9.txt and \ud800"))
    store.append_message(Message.user("clean é"))
    store.close()
    raw = session_path_of(ws, sid).read_bytes()
    raw.decode("utf-8")  # strict: the file is valid UTF-8
    _, loaded = SessionStore.open(ws, sid)
    assert [m.content for m in loaded.messages] == ["file caf\ufffd.txt and \ufffd", "clean é"]


def session_path_of(ws: Path, sid: str) -> Path:
    return store_mod.session_path(ws, sid)


def test_latest_skips_sessions_without_messages(ws: Path) -> None:
    old, old_id = _new(ws)
    old.append_message(Message.user("real work " + "x" * 10000))
    os.utime(old.path, ns=(1, 1))
    empty, _ = _new(ws)  # newer, but only a header (a start that failed)
    old.close()
    empty.close()
    assert latest_session_id(ws) == old_id
    os.unlink(old.path)
    assert latest_session_id(ws) is None


def test_tool_outcomes_are_stored_beside_results_and_loaded(ws):
    from minicode.agent.deps import ToolOutcome

    store, sid = _new(ws)
    store.append_message(Message.user("go"))
    store.append_message(CALL)
    store.append_message(Message.tool("c1", "boom\n[exit code 2]"), ToolOutcome(True, 2))
    store.append_message(Message.tool("c2", "text"), ToolOutcome(False))
    store.close()
    lines = [json.loads(x) for x in store.path.read_text().splitlines()]
    assert lines[3]["is_error"] is True and lines[3]["exit_code"] == 2
    assert lines[4]["is_error"] is False and "exit_code" not in lines[4]
    again, loaded = SessionStore.open(ws, sid)
    list(loaded.messages)  # messages (and their outcomes) are parsed when first needed
    again.close()
    assert loaded.messages.outcomes == {"c1": ToolOutcome(True, 2), "c2": ToolOutcome(False, None)}
    assert loaded.messages[2] == Message.tool("c1", "boom\n[exit code 2]")  # not part of the message


def test_malformed_tool_outcome_refuses_to_load(ws):
    store, sid = _new(ws)
    store.append_message(CALL)
    store.close()
    with open(store.path, "a") as f:
        f.write(json.dumps({"type": "message", "role": "tool", "content": "x", "tool_call_id": "c1",
                            "is_error": "yes"}) + "\n")
        f.write(json.dumps({"type": "message", "role": "tool", "content": "y", "tool_call_id": "c2"}) + "\n")
    with pytest.raises(SessionError, match="corrupt at line 3"):
        SessionStore.open(ws, sid)


def test_replay_fields_of_an_outcome_round_trip(ws):
    from minicode.agent.deps import ToolOutcome

    store, sid = _new(ws)
    store.append_message(CALL)
    full = ToolOutcome(True, None, "interrupted", 4.91234, "interrupted after 4.9 s", "")
    edit = ToolOutcome(False, None, "done", 0.1, "1 replacement", "@@ -1 +1 @@\n-x = 1\n+x = 2")
    store.append_message(Message.tool("c1", "interrupted after 4.9 s; output so far:\ntick 1"), full)
    store.append_message(Message.tool("c2", "1 replacement"), edit)
    store.close()
    lines = [json.loads(x) for x in store.path.read_text().splitlines()]
    assert lines[2]["status"] == "interrupted" and lines[2]["duration"] == 4.912 and "diff" not in lines[2]
    _, loaded = SessionStore.open(ws, sid)
    list(loaded.messages)  # read when first needed
    assert loaded.outcomes["c1"] == ToolOutcome(True, None, "interrupted", 4.912, "interrupted after 4.9 s")
    assert loaded.outcomes["c2"] == edit


def test_malformed_replay_fields_are_left_out_not_fatal(ws):
    store, sid = _new(ws)
    store.append_message(CALL)
    store.close()
    with open(store.path, "a") as f:
        f.write(json.dumps({"type": "message", "role": "tool", "content": "x", "tool_call_id": "c1",
                            "is_error": True, "status": "exploded", "duration": "long", "summary": 3,
                            "diff": ["no"]}) + "\n")
        f.write(json.dumps({"type": "message", "role": "tool", "content": "y", "tool_call_id": "c2",
                            "is_error": False, "duration": -1}) + "\n")
    _, loaded = SessionStore.open(ws, sid)
    from minicode.agent.deps import ToolOutcome

    list(loaded.messages)  # read when first needed
    assert loaded.outcomes == {"c1": ToolOutcome(True), "c2": ToolOutcome(False)}


def test_random_uuid_is_a_version_4_uuid_and_differs_each_time() -> None:
    import uuid

    from minicode.session.store import is_session_id, random_uuid

    made = {random_uuid() for _ in range(200)}
    assert len(made) == 200
    for text in made:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert is_session_id(text)


def test_a_session_open_in_one_minicode_is_refused_to_another_until_closed(ws):
    store, sid = _new(ws)
    store.append_message(Message.user("first"))
    with pytest.raises(SessionError, match="is open in another minicode") as info:
        SessionStore.open(ws, sid)
    assert info.value.exit_code == 2
    store.close()
    again, loaded = SessionStore.open(ws, sid)  # closed (or its process gone): free again
    again.close()
    assert [m.content for m in loaded.messages] == ["first"]


def test_a_header_time_parses_back(ws):
    store, _ = _new(ws)
    store.close()
    created = json.loads(store.path.read_text().splitlines()[0])["created"]
    from datetime import datetime

    assert datetime.fromisoformat(created).utcoffset().total_seconds() == 0


def test_a_call_recovered_from_text_is_stored_as_such_and_loaded(ws):
    recovered = Message(role="assistant", content="Let me look:",
                        tool_calls=(ToolCall("text_call_1_1", "ls", "{}", from_text=True),))
    store, sid = _new(ws)
    store.append_message(Message.user("look"))
    store.append_message(recovered)
    store.append_message(CALL)  # a native call's record has no from_text
    store.close()
    records = [json.loads(line) for line in store.path.read_text().splitlines()]
    assert records[2]["tool_calls"] == [{"id": "text_call_1_1", "name": "ls", "arguments": "{}", "from_text": True}]
    assert all("from_text" not in call for call in records[3]["tool_calls"])
    again, loaded = SessionStore.open(ws, sid)
    again.close()
    assert list(loaded.messages)[1:] == [recovered, CALL]


def test_a_malformed_from_text_refuses_to_load(ws):
    store, sid = _new(ws)
    store.append_message(Message.user("look"))
    store.close()
    with open(store.path, "a") as f:
        f.write(json.dumps({"type": "message", "role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "name": "ls", "arguments": "{}", "from_text": "yes"}]}) + "\n")
    with pytest.raises(SessionError, match=r"corrupt at line 3 .*from_text"):
        SessionStore.open(ws, sid)
