"""Session-level behaviour: resume, self-repair, compaction entry points, memory, tracing."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.events import CompactionDone, Notice, TaskStatus
from minicode.agent.repair import INTERRUPTED_RESULT
from minicode.errors import APIError, ConfigError, MemoryFileError, SessionError
from dataclasses import replace
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore
from tests.agent.conftest import SECRET, Events, make_config
from tests.support.filler import prose
from tests.agent.scripted import fail, text, tools


async def run(session, task, **kw):
    events = Events()
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append, **kw)
    return finished, events


async def test_resume_restores_history_into_first_request(open_session, provider):
    provider.script(text("first answer"))
    s1 = await open_session()
    await run(s1, "first task")
    s1._store.close()
    provider.script(text("second answer"))
    s2 = await open_session(resume=s1.id)
    assert s2.id == s1.id and s2.resume_command == f"minicode --session {s1.id}"
    await run(s2, "second task")
    contents = [m.content for m in provider.requests[-1].messages[1:]]
    assert contents == ["first task", "first answer", "second task"]


async def test_continue_latest_and_nothing_to_continue(open_session, provider):
    with pytest.raises(SessionError) as info:
        await open_session(continue_latest=True)
    assert info.value.exit_code == 2
    s1 = await open_session()
    s1._store.append_message(Message.user("some work"))
    s1._store.close()
    s2 = await open_session(continue_latest=True)
    assert s2.id == s1.id


async def test_continue_skips_a_newer_session_without_messages(open_session):
    s1 = await open_session()
    s1._store.append_message(Message.user("some work"))
    s1._store.close()
    empty = await open_session()
    empty._store.close()
    assert (await open_session(continue_latest=True)).id == s1.id


async def test_failed_provider_leaves_no_session_file(open_session, workspace):

    from tests.agent.conftest import make_config

    config = make_config()
    bad = replace(config, model=replace(config.model, provider="bogus"))
    with pytest.raises(ConfigError, match="model.provider"):
        await open_session(config=bad, provider=None)
    sessions = workspace / ".minicode" / "sessions"
    assert not sessions.exists() or not any(sessions.glob("*.jsonl"))


async def test_unknown_session_id(open_session):
    with pytest.raises(SessionError) as info:
        await open_session(resume=str(uuid.uuid4()))
    assert info.value.exit_code == 2


async def test_load_repairs_open_batch(open_session, provider, workspace):
    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("do it"))
    store.append_message(Message(role="assistant", tool_calls=(ToolCall("c1", "ls", "{}"), ToolCall("c2", "ls", "{}"))))
    store.append_message(Message.tool("c1", "listing"))
    store.close()
    session = await open_session(resume=sid)
    assert session.messages[-1] == Message.tool("c2", INTERRUPTED_RESULT)
    session._store.close()
    _, loaded = SessionStore.open(workspace, sid)  # the repair was appended as a record
    assert loaded.messages[-1] == Message.tool("c2", INTERRUPTED_RESULT)


async def test_auto_compaction_before_request(open_session, provider, workspace):
    provider.script(text(prose(80_000), usage=None))  # no calibration: the local estimate decides
    session = await open_session(config=make_config(window=40_000))
    await run(session, "first task")
    provider.script(text("SUMMARY of the first task"), text("second done"))
    finished, events = await run(session, "b" * 80_000)
    assert finished.status is TaskStatus.DONE
    assert len(provider.chat_requests) == 1 and provider.chat_requests[0].tools == ()
    done = events.of(CompactionDone)
    assert len(done) == 1 and done[0].messages_summarised == 2 and done[0].tokens_after < done[0].tokens_before
    sent = provider.requests[-1].messages
    assert "<context-summary>" in sent[1].content and "SUMMARY of the first task" in sent[1].content
    assert sent[-1].content == "b" * 80_000
    assert finished.stats.model_calls == 2  # the compaction call counts
    records = [json.loads(l) for l in session._store.path.read_text().splitlines()]
    assert [r for r in records if r["type"] == "checkpoint"][0]["first_kept"] == 2


async def test_overflow_recovery_compacts_and_retries_once(open_session, provider):
    provider.script(text("one"))
    session = await open_session(config=make_config(window=40_000))
    await run(session, "f" * 64_000)
    provider.script(
        fail(APIError("context too long", status=400, context_overflow=True)),
        text("SUMMARY"),
        text("recovered"),
    )
    finished, events = await run(session, "second")
    assert finished.status is TaskStatus.DONE and finished.final_text == "recovered"
    assert events.of(CompactionDone)
    assert "<context-summary>" in provider.requests[-1].messages[1].content


async def test_overflow_without_anything_to_compact_is_an_error(open_session, provider):
    provider.script(fail(APIError("context too long", status=400, context_overflow=True)))
    session = await open_session()
    finished, _ = await run(session, "only message")
    assert finished.status is TaskStatus.ERROR and "context too long" in finished.error


async def test_rate_limit_does_not_trigger_compaction(open_session, provider):
    provider.script(text("one"))
    session = await open_session(config=make_config(window=40_000))
    await run(session, "first")
    provider.script(fail(APIError("slow down", status=429)))
    finished, events = await run(session, "second")
    assert finished.status is TaskStatus.ERROR and not provider.chat_requests
    assert not events.of(CompactionDone)


async def test_manual_compaction(open_session, provider):
    session = await open_session(config=make_config(window=40_000))
    events = Events()
    await session.compact(emit=events.append)
    assert "nothing to compact" in events.of(Notice)[0].text and not provider.chat_requests
    provider.script(text("one"))
    await run(session, "f" * 64_000)
    provider.script(text("two"))
    await run(session, "second")
    provider.script(text("MANUAL SUMMARY"))
    await session.compact(emit=events.append)
    done = events.of(CompactionDone)
    assert done and done[0].manual
    assert '"MANUAL SUMMARY"' in session._store.path.read_text()


async def test_failed_manual_compaction_keeps_old_context(open_session, provider):
    provider.script(text("one"), text("two"))
    session = await open_session(config=make_config(window=40_000))
    await run(session, "f" * 64_000)
    await run(session, "second")
    provider.script(text("cut off", finish="length"))
    events = Events()
    await session.compact(emit=events.append)
    assert "compaction failed" in events.of(Notice)[0].text
    assert session._context.checkpoint is None


async def test_memory_is_injected_and_reloaded_after_write(open_session, provider, workspace):
    (workspace / "MiniCode.md").write_text("- use tabs\n")
    provider.script(tools(("write", {"path": "MiniCode.md", "content": "- use spaces\n"})), text("updated"))
    session = await open_session()
    await run(session, "remember spaces")
    first, second = provider.requests
    assert "<project-memory>" in first.messages[1].content and "use tabs" in first.messages[1].content
    assert "use spaces" in second.messages[1].content
    assert all("<project-memory>" not in (m.content or "") for m in session.messages)


async def test_invalid_memory_stops_turn_before_any_request(open_session, provider, workspace):
    session = await open_session()
    (workspace / "MiniCode.md").write_bytes(b"bad \x00 nul")
    finished, _ = await run(session, "x")
    assert finished.status is TaskStatus.ERROR and "MiniCode.md" in finished.error
    assert not provider.requests and session.messages == []


async def test_context_usage(open_session, provider):
    session = await open_session()
    used, window = session.context_usage()
    assert window == 256 * 1024 and 100 < used < 10_000


# --- tracing ----------------------------------------------------------------------------


@dataclass
class RecSpan:
    name: str
    attributes: dict[str, Any]
    parent: "RecSpan | None"
    errors: list[BaseException] = field(default_factory=list)
    ended: bool = False

    def set(self, attributes):
        self.attributes.update({k: v for k, v in attributes.items() if v is not None})

    def record_error(self, error):
        self.errors.append(error)

    def end(self):
        self.ended = True


@dataclass
class RecTracer:
    spans: list[RecSpan] = field(default_factory=list)
    shut_down: bool = False

    def start_span(self, name, attributes=None, parent=None):
        span = RecSpan(name, {k: v for k, v in (attributes or {}).items() if v is not None}, parent)
        self.spans.append(span)
        return span

    def shutdown(self):
        self.shut_down = True


async def test_a_session_that_fails_to_open_shuts_its_tracer_down(open_session):
    tracer = RecTracer()
    with pytest.raises(SessionError):
        await open_session(tracer=tracer, resume="00000000-0000-4000-8000-000000000000")
    assert tracer.shut_down


async def test_spans_and_attributes(open_session, provider):
    tracer = RecTracer()
    provider.script(tools(("write", {"path": "s.txt", "content": "SECRET-CONTENT"})), text("done"))
    session = await open_session(tracer=tracer)
    await run(session, "trace me")
    names = [s.name for s in tracer.spans]
    assert names == ["minicode.turn", "minicode.model_call", "minicode.tool", "minicode.model_call"]
    turn = tracer.spans[0]
    assert turn.ended and turn.attributes["status"] == "done" and turn.attributes["session.id"] == session.id
    assert turn.attributes["model_calls"] == 2 and turn.attributes["tokens.total"] == 220
    call = tracer.spans[1]
    assert call.parent is turn and call.attributes["purpose"] == "main"
    assert call.attributes["usage.prompt_tokens"] == 100 and call.attributes["finish_reason"] == "tool_calls"
    tool = tracer.spans[2]
    assert tool.attributes["tool.name"] == "write" and tool.attributes["outcome"] == "ok"
    flat = repr([s.attributes for s in tracer.spans])
    assert "SECRET-CONTENT" not in flat and SECRET not in flat and "trace me" not in flat


async def test_failed_model_call_records_error(open_session, provider):
    tracer = RecTracer()
    provider.script(fail(APIError("bad", status=500)))
    session = await open_session(tracer=tracer)
    await run(session, "x")
    call = tracer.spans[1]
    assert call.errors and call.ended and tracer.spans[0].attributes["status"] == "error"


async def test_tool_outcomes_recorded_per_call_and_restored_on_resume(open_session, provider, workspace):
    from minicode.agent.approval import Approval, Decision
    from minicode.agent.deps import ToolOutcome

    (workspace / "a.txt").write_text("hi\n")

    class DenyWrites:
        async def approve(self, request):
            return Approval(Decision.DENY if request.tool == "write" else Decision.ALLOW_ONCE)

    provider.script(
        tools(("read", {"path": "a.txt"}), ("bash", {"command": "exit 3"}), ("nope", {}),
              ("write", {"path": "b.txt", "content": "x"}), ("read", {"path": "missing.txt"})),
        text("done"),
    )
    s1 = await open_session()
    await s1.turn("go", approver=DenyWrites(), emit=Events().append)
    ids = [c.id for c in s1.messages[1].tool_calls]

    def shown(outcomes):  # what replay needs; durations only where the call ran
        return {k: (o.is_error, o.exit_code, o.status, o.summary, o.duration_seconds is not None)
                for k, o in outcomes.items()}

    expected = {ids[0]: (False, None, "done", "1 line", True), ids[1]: (True, 3, "failed", "exit 3", True),
                ids[2]: (True, None, "failed", "invalid call", False), ids[3]: (True, None, "denied", "", False),
                ids[4]: (True, None, "failed", "error", True)}
    assert shown(s1.tool_outcomes()) == expected
    s1._store.close()
    s2 = await open_session(resume=s1.id)
    list(s2.messages)  # a resumed message (and its outcome) is read when first needed
    assert shown(s2.tool_outcomes()) == expected
    for key, outcome in s1.tool_outcomes().items():
        if outcome.duration_seconds is not None:  # stored to the millisecond
            assert abs(s2.tool_outcomes()[key].duration_seconds - outcome.duration_seconds) < 0.001
    s2._store.close()


async def test_an_edit_keeps_its_diff_for_replay(open_session, provider, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    provider.script(tools(("read", {"path": "a.py"})),
                    tools(("edit", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})), text("done"))
    s1 = await open_session()
    await s1.turn("go", approver=AutoApprover(), emit=Events().append)
    s1._store.close()
    s2 = await open_session(resume=s1.id)
    list(s2.messages)  # read when first needed
    edit_id = s2.messages[3].tool_calls[0].id
    outcome = s2.tool_outcomes()[edit_id]
    assert outcome.status == "done" and "-x = 1" in outcome.diff and "+x = 2" in outcome.diff
    s2._store.close()


async def test_repaired_results_are_recorded_as_errors(open_session, workspace):
    from minicode.agent.deps import ToolOutcome

    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("do it"))
    store.append_message(Message(role="assistant", tool_calls=(ToolCall("c1", "ls", "{}"),)))
    store.close()
    session = await open_session(resume=sid)
    assert session.tool_outcomes()["c1"] == ToolOutcome(True, status="interrupted")
    session._store.close()
    _, loaded = SessionStore.open(workspace, sid)
    list(loaded.messages)  # parsed (with their outcomes) when first needed
    assert loaded.messages.outcomes == {"c1": ToolOutcome(True, status="interrupted")}


async def test_tool_output_with_the_api_key_never_reaches_the_file_or_a_request(open_session, provider, workspace):
    (workspace / "config").mkdir()
    (workspace / "config" / "config.toml").write_text(f'[model]\napi_key = "{SECRET}"\n')
    provider.script(
        tools(("read", {"path": "config/config.toml"}), ("bash", {"command": "grep -r sk- config; echo \"$AUTH\"; env"})),
        text("done"),
    )
    session = await open_session(env={"PATH": "/usr/bin:/bin", "AUTH": f"Bearer {SECRET}", "HOME": str(workspace)})
    finished, _ = await run(session, "show the config")
    assert finished.status is TaskStatus.DONE
    results = [m.content or "" for m in session.messages if m.role == "tool"]
    assert 'api_key = "[redacted]"' in results[0] and 'api_key = "[redacted]"' in results[1]
    assert "AUTH=" not in results[1]  # a variable containing the key is not even passed on
    sent = json.dumps([[m.content for m in r.messages] for r in provider.requests])
    assert SECRET not in sent and "[redacted]" in sent
    session._store.close()
    assert SECRET not in session._store.path.read_text()


class ThreadTracer(RecTracer):
    """Records the thread shutdown() ran on (it may wait on the network: not the loop's)."""

    shutdown_thread: object = None

    def shutdown(self):
        import threading

        self.shut_down = True
        self.shutdown_thread = threading.current_thread()


async def test_aclose_shuts_the_tracer_down_off_the_event_loop(open_session, provider):
    import threading

    tracer = ThreadTracer()
    session = await open_session(tracer=tracer)
    await session.aclose()
    assert tracer.shut_down and tracer.shutdown_thread is not threading.current_thread()
    assert provider.closed
    with pytest.raises(SessionError, match="closed"):
        session._store.append_message(Message.user("after close"))


async def test_open_failing_after_the_provider_is_made_closes_it_and_the_file(open_session, workspace, monkeypatch):
    from minicode.compaction.checkpoint import Checkpoint
    from minicode.session import session as session_module
    from tests.agent.scripted import ScriptedProvider

    store, sid = SessionStore.create(workspace)
    store.append_message(Message.user("do it"))
    store.append_message(Message(role="assistant", tool_calls=(ToolCall("c1", "ls", "{}"),)))
    store.close()
    made = ScriptedProvider()
    monkeypatch.setattr(session_module, "create_provider", lambda model, env: made)
    stores: list[SessionStore] = []
    real_open = SessionStore.open

    def open_and_fail(workspace, session_id):
        opened, loaded = real_open(workspace, session_id)
        stores.append(opened)
        opened.append_message = lambda *a: (_ for _ in ()).throw(SessionError("would exceed 64 MiB"))
        return opened, loaded

    monkeypatch.setattr(SessionStore, "open", staticmethod(open_and_fail))
    tracer = RecTracer()
    with pytest.raises(SessionError, match="64 MiB"):  # the repair append of the open batch fails
        await open_session(resume=sid, provider=None, tracer=tracer)
    assert made.closed and tracer.shut_down
    with pytest.raises(SessionError, match="closed"):
        stores[0].append_checkpoint(Checkpoint("summary", 1))  # the file descriptor was closed
