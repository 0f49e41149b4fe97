"""Tool calls written as text, through the loop (scripted provider, real tools): run like a
native call (approval, rules), shown and recorded as recovered, sent back as a real call."""

from __future__ import annotations

import json
from dataclasses import replace

from minicode.agent.approval import Approval, ApprovedBy, AutoApprover, Decision
from minicode.agent.events import ApprovalResolved, AssistantDone, TaskStatus, ToolFinished, ToolStarted
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule
from minicode.provider.messages import to_openai
from minicode.provider.types import Message
from tests.agent.conftest import Events, ScriptedApprover, make_config, yes
from tests.agent.scripted import text, tools

WRITE_AS_TEXT = (
    "I'll create the file:\n"
    '```json\n{"name": "write", "arguments": {"path": "hello.py", "content": "print(\'Hello, world!\')\\n"}}\n```'
)


def _off():  # type: ignore[no-untyped-def]
    """Recovery alone: the small-model assists it turns on (auto) are tests/agent/test_assists.py's."""
    config = make_config()
    return replace(config, model=replace(config.model, assists="off"))


async def run(session, task, approver=None, **kw):
    events = Events()
    finished = await session.turn(task, approver=approver or AutoApprover(), emit=events.append, **kw)
    return finished, events


async def test_a_call_written_as_text_runs_after_approval(open_session, provider, workspace):
    provider.script(text(WRITE_AS_TEXT), text("Created hello.py."))
    session = await open_session(config=_off())
    approver = ScriptedApprover([yes()])
    finished, events = await run(session, "create hello.py", approver)
    assert finished.status is TaskStatus.DONE and finished.final_text == "Created hello.py."
    assert (workspace / "hello.py").read_text() == "print('Hello, world!')\n"
    assert [r.tool for r in approver.requests] == ["write"]  # asked like any side effect
    done = events.of(AssistantDone)[0]
    assert done.text == "I'll create the file:" and done.tool_call_count == 1 and done.tool_calls[0].from_text
    started = events.of(ToolStarted)[0]
    assert started.from_text and started.call_id == "text_call_1_1"
    assert finished.stats.tool_calls == 1
    # the next request carries the call as a real one, and its result; not the JSON as text
    sent = [to_openai(m) for m in provider.requests[1].messages[1:]]
    assert sent[1] == {
        "role": "assistant", "content": "I'll create the file:",
        "tool_calls": [{"id": "text_call_1_1", "type": "function", "function": {
            "name": "write", "arguments": json.dumps({"path": "hello.py", "content": "print('Hello, world!')\n"})}}],
    }  # fmt: skip
    assert sent[2]["role"] == "tool" and sent[2]["tool_call_id"] == "text_call_1_1"


async def test_the_session_records_the_call_as_recovered_and_resumes_byte_for_byte(open_session, provider):
    provider.script(text(WRITE_AS_TEXT), text("Created hello.py."))
    s1 = await open_session(config=_off())
    await run(s1, "create hello.py")
    s1._store.close()
    records = [json.loads(line) for line in s1._store.path.read_text().splitlines()]
    calls = [r["tool_calls"] for r in records if r.get("role") == "assistant" and r.get("tool_calls")]
    assert calls == [[{"id": "text_call_1_1", "name": "write", "from_text": True,
                       "arguments": json.dumps({"path": "hello.py", "content": "print('Hello, world!')\n"})}]]
    before = [to_openai(m) for m in provider.requests[1].messages[1:]]
    provider.script(text("again"))
    s2 = await open_session(config=_off(), resume=s1.id)
    await run(s2, "next")
    after = [to_openai(m) for m in provider.requests[2].messages[1:]]
    assert json.dumps(after[: len(before)]) == json.dumps(before)
    assert [c.from_text for m in s2.messages for c in m.tool_calls] == [True]


async def test_a_denied_call_written_as_text_executes_nothing(open_session, provider, workspace):
    provider.script(text(WRITE_AS_TEXT), text("Not written."))
    session = await open_session(config=_off())
    approver = ScriptedApprover([Approval(Decision.DENY, "not now")])
    finished, events = await run(session, "create hello.py", approver)
    assert not (workspace / "hello.py").exists()
    assert events.of(ToolFinished)[0].denied and finished.status is TaskStatus.DONE
    assert [m.content for m in session.messages if m.role == "tool"] == ["denied by the user: not now"]


async def test_permission_rules_decide_a_call_written_as_text(open_session, provider, workspace):
    deny = SourcedRule(parse_rule("bash(rm *)"), Effect.DENY, Origin.CONFIG)
    provider.script(text('{"name": "bash", "arguments": {"command": "rm -rf src"}}'), text("ok"))
    (workspace / "src").mkdir()
    session = await open_session(config=replace(make_config(), permissions=(deny,)))
    approver = ScriptedApprover([])  # would hang if asked
    _, events = await run(session, "clean", approver)
    assert (workspace / "src").is_dir() and approver.requests == []
    assert [(e.allowed, e.by) for e in events.of(ApprovalResolved)] == [(False, ApprovedBy.RULE)]


async def test_prose_that_quotes_json_stays_the_final_answer(open_session, provider):
    answer = 'Your package.json now reads:\n\n```json\n{"name": "app", "scripts": {"test": "jest"}}\n```'
    provider.script(text(answer))
    session = await open_session(config=_off())
    finished, events = await run(session, "add a test script")
    assert finished.status is TaskStatus.DONE and finished.final_text == answer
    assert events.of(ToolStarted) == [] and session.messages[-1] == Message(role="assistant", content=answer)


async def test_native_calls_are_never_reinterpreted(open_session, provider, workspace):
    # a native call whose content also holds a call as text: only the native one runs
    provider.script(
        tools(("ls", {}), content='{"name": "write", "arguments": {"path": "x.txt", "content": "x"}}'),
        text("done"),
    )
    session = await open_session(config=_off())
    _, events = await run(session, "look")
    assert [(s.name, s.from_text) for s in events.of(ToolStarted)] == [("ls", False)]
    assert not (workspace / "x.txt").exists()
    assert all(not c.from_text for m in session.messages for c in m.tool_calls)


async def test_the_final_summary_is_never_a_call(open_session, provider, workspace):
    as_text = '{"name": "write", "arguments": {"path": "late.txt", "content": "x"}}'
    provider.script(tools(("ls", {})), text(as_text))
    session = await open_session(config=_off())
    finished, _ = await run(session, "go", max_turns=1)
    assert finished.status is TaskStatus.MAX_TURNS and finished.final_text == as_text
    assert not (workspace / "late.txt").exists()


async def test_several_calls_written_as_text_run_in_order(open_session, provider, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    reply = '<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>\n' \
            '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    provider.script(text(reply), text("a.txt says alpha"))
    session = await open_session(config=_off())
    _, events = await run(session, "what does a.txt say?")
    assert [(s.name, s.call_id) for s in events.of(ToolStarted)] == [("read", "text_call_1_1"), ("ls", "text_call_1_2")]
    assert "alpha" in [m.content for m in session.messages if m.role == "tool"][0]
    assistant = provider.requests[1].messages[2]
    assert assistant.content is None and [c.name for c in assistant.tool_calls] == ["read", "ls"]
