"""Sub-agents (agent/subagent.py) through the Session API, with a scripted provider and the real tools."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from minicode.agent.approval import AutoApprover
from minicode.agent.events import SubAgentEvent, TaskStatus, ToolFinished, ToolStarted, TurnFinished, TurnStarted
from minicode.agent.prompt import SUBAGENT_PROMPT
from minicode.agent.stats import TaskStats
from minicode.config import SubagentConfig
from minicode.provider.types import Usage
from minicode.session.records import outcome_from_record, turn_end_record
from minicode.tools.base import ToolResult
from tests.agent.conftest import Events, make_config
from tests.agent.scripted import hang, text, tools


async def run(session, task, **kw):
    events = Events()
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append, **kw)
    return finished, events


def config(**limits):
    return replace(make_config(), subagents=SubagentConfig(**limits))


async def test_a_sub_agent_reads_a_file_and_its_report_is_the_result(open_session, provider, workspace):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    provider.script(
        tools(("agent", {"task": "find the answer in notes.txt"})),
        tools(("read", {"path": "notes.txt"})),  # the child
        text("notes.txt line 1 says the answer is 42."),  # the child's report
        text("The answer is 42."),  # the parent
    )
    session = await open_session()
    finished, events = await run(session, "what is the answer?")
    assert finished.status is TaskStatus.DONE and finished.final_text == "The answer is 42."
    child_request = provider.requests[1]
    # a fresh context: its own system prompt and the task, nothing of the parent's history
    assert child_request.messages[0].content == SUBAGENT_PROMPT
    assert [m.role for m in child_request.messages if m.role != "system"] == ["user"]
    assert child_request.messages[-1].content == "find the answer in notes.txt"
    assert [t.name for t in child_request.tools] == ["read", "ls", "glob", "grep"]
    # the report is the agent call's result; the child's messages never enter the parent's history
    results = [m for m in session.messages if m.role == "tool"]
    assert [m.content for m in results] == ["notes.txt line 1 says the answer is 42."]
    assert len(session.messages) == 4
    assert "the answer is 42\n" not in json.dumps([m.content for m in session.messages])
    nested = [e for e in events if isinstance(e, SubAgentEvent)]
    assert {e.agent_id for e in nested} == {"agent-1"}
    agent_call = events.of(ToolStarted)[0]
    assert agent_call.name == "agent" and {e.call_id for e in nested} == {agent_call.call_id}
    inner = [type(e.event) for e in nested]
    assert inner[0] is TurnStarted and inner[-1] is TurnFinished and ToolStarted in inner
    outcome = session.tool_outcomes()[agent_call.call_id]
    assert outcome.nested == ("✓ read notes.txt — 1 line",)
    # the child's model calls, tool calls and tokens are the task's too
    assert finished.stats.model_calls == 4 and finished.stats.tool_calls == 2
    assert finished.stats.total_tokens == 4 * 110 and finished.stats.subagents == 1
    assert "(1 sub-agent included)" in finished.stats.format()


async def test_the_child_cannot_write_or_start_another_agent(open_session, provider, workspace):
    provider.script(
        tools(("agent", {"task": "change a.txt"})),
        tools(("write", {"path": "a.txt", "content": "x"}), ("agent", {"task": "deeper"})),
        text("I could not write."),
        text("done"),
    )
    session = await open_session()
    finished, events = await run(session, "x")
    assert finished.status is TaskStatus.DONE and not (workspace / "a.txt").exists()
    child_results = [e.event for e in events if isinstance(e, SubAgentEvent) and isinstance(e.event, ToolFinished)]
    assert [r.is_error for r in child_results] == [True, True]
    assert all("unknown tool" in r.result_text for r in child_results)


async def test_a_looping_child_ends_at_its_limit_with_a_summary(open_session, provider, workspace):
    (workspace / "a.txt").write_text("a\n")
    same = ("read", {"path": "a.txt"})
    provider.script(
        tools(("agent", {"task": "loop"})),
        tools(same), tools(same), tools(same),  # max_turns = 3: then the summary request
        text("I read a.txt three times; it holds 'a'."),
        text("parent done"),
    )
    session = await open_session(config=config(max_turns=3))
    finished, events = await run(session, "x")
    result = next(m for m in session.messages if m.role == "tool").content
    assert result.startswith("the sub-agent stopped at its limit of 3 model requests ([subagents].max_turns)")
    assert "it holds 'a'" in result
    assert provider.requests[4].tools == ()  # the child's summary request offers no tools
    assert finished.status is TaskStatus.DONE and finished.stats.model_calls == 6


async def test_a_child_over_its_time_says_what_it_found_so_far(open_session, provider, workspace):
    (workspace / "a.txt").write_text("a\n")
    provider.script(
        tools(("agent", {"task": "slow"})),
        tools(("read", {"path": "a.txt"}), content="Looking at a.txt first."),
        hang(),
        text("parent goes on"),
    )
    session = await open_session(config=config(timeout=1))
    finished, events = await run(session, "x")
    result = next(m for m in session.messages if m.role == "tool").content
    assert result.startswith("the sub-agent was stopped after 1 s ([subagents].timeout).")
    assert "Looking at a.txt first." in result and "✓ read a.txt" in result
    agent_end = [e for e in events.of(ToolFinished) if e.name == "agent"][0]
    assert agent_end.is_error and agent_end.summary.startswith("timed out")
    assert finished.status is TaskStatus.DONE and finished.final_text == "parent goes on"


async def test_cancelling_the_task_cancels_the_child_at_once(open_session, provider, workspace):
    provider.script(tools(("agent", {"task": "wait"})), hang())
    session = await open_session()
    events = Events()
    task = asyncio.ensure_future(session.turn("x", approver=AutoApprover(), emit=events.append))
    for _ in range(200):
        if len(provider.requests) == 2:
            break
        await asyncio.sleep(0.01)
    assert len(provider.requests) == 2
    task.cancel()
    try:
        await asyncio.wait_for(task, 5)
    except asyncio.CancelledError:
        pass
    child_end = [e.event for e in events if isinstance(e, SubAgentEvent) and isinstance(e.event, TurnFinished)]
    assert [f.status for f in child_end] == [TaskStatus.INTERRUPTED]
    parent_end = events.of(TurnFinished)
    assert parent_end[-1].status is TaskStatus.INTERRUPTED and parent_end[-1].stats.subagents == 1
    result = next(m for m in session.messages if m.role == "tool").content
    assert result.startswith("interrupted after") and "the sub-agent was stopped with its task" in result


async def test_the_cap_refuses_the_next_sub_agent_with_a_message(open_session, provider):
    provider.script(
        tools(("agent", {"task": "one"}), ("agent", {"task": "two"})),
        text("report one"),
        text("parent done"),
    )
    session = await open_session(config=config(per_task=1))
    finished, events = await run(session, "x")
    results = [m.content for m in session.messages if m.role == "tool"]
    assert results[0] == "report one"
    assert results[1].startswith("refused: this task already started its 1 sub-agent ([subagents].per_task)")
    assert finished.stats.subagents == 1
    # the cap is per task: the next task may start one again
    provider.script(tools(("agent", {"task": "three"})), text("report three"), text("ok"))
    await run(session, "y")
    assert [m.content for m in session.messages if m.role == "tool"][-1] == "report three"


async def test_per_task_zero_turns_them_away(open_session, provider):
    provider.script(tools(("agent", {"task": "one"})), text("ok"))
    session = await open_session(config=config(per_task=0))
    await run(session, "x")
    assert "sub-agents are turned off here" in next(m for m in session.messages if m.role == "tool").content
    assert len(provider.requests) == 2  # no child request


async def test_a_failing_child_is_an_error_result_not_a_dead_task(open_session, provider):
    from minicode.errors import APIError
    from tests.agent.scripted import fail

    provider.script(tools(("agent", {"task": "x"})), fail(APIError("boom", status=400)), text("parent ok"))
    session = await open_session()
    finished, events = await run(session, "x")
    result = next(m for m in session.messages if m.role == "tool").content
    assert result.startswith("the sub-agent failed: HTTP 400: boom.") and "It had found nothing yet." in result
    assert finished.status is TaskStatus.DONE


def test_the_nested_lines_and_sub_agent_count_round_trip_the_record():
    from minicode.agent.deps import ToolOutcome
    from minicode.session.records import _outcome_fields

    outcome = ToolOutcome(False, None, "done", 1.0, "reported · 1 call", nested=("✓ read a.txt — 1 line",))
    assert outcome_from_record(_outcome_fields(outcome)) == outcome
    assert outcome_from_record({"is_error": False, "nested": "not a list"}).nested == ()
    assert outcome_from_record({"is_error": False, "nested": ["ok", 3]}).nested == ("ok",)
    stats = TaskStats(model_calls=2)
    stats.add_subagent(TaskStats(model_calls=3, tool_calls=1, calls_with_usage=3, total_tokens=30))
    assert turn_end_record("done", stats)["stats"]["subagents"] == 1
    assert stats.model_calls == 5 and stats.total_tokens == 30


async def test_the_agent_tool_without_a_delegate_or_with_an_empty_task_says_why(workspace):
    from minicode.provider.types import ToolCall
    from minicode.tools.base import ToolContext
    from minicode.tools.registry import default_registry

    registry = default_registry()
    ctx = ToolContext(workspace=workspace, env={})
    prepared = registry.prepare(ToolCall("c1", "agent", '{"task": "look"}'))
    result = await registry.execute(prepared, ctx)
    assert result.is_error and "no sub-agent can be started here" in result.text
    called = []

    async def delegate(task):
        called.append(task)
        return ToolResult("never")

    prepared = registry.prepare(ToolCall("c2", "agent", '{"task": "  \\n "}'))
    result = await registry.execute(prepared, replace(ctx, delegate=delegate))
    assert result.is_error and "the task is empty" in result.text and called == []


async def test_a_report_over_the_cap_is_cut_like_any_tool_output(open_session, provider):
    from tests.support.filler import prose

    long_report = prose(200_000, line=12)
    provider.script(tools(("agent", {"task": "talk a lot"})), text(long_report), text("ok"))
    session = await open_session()
    await run(session, "x")
    report = next(m for m in session.messages if m.role == "tool").content
    assert 10_000 < len(report) < 100_000 and report.startswith(long_report[:1000])


async def test_the_sub_agents_turn_span_is_a_child_of_the_tasks(open_session, provider):
    from tests.agent.test_session import RecTracer

    tracer = RecTracer()
    provider.script(tools(("agent", {"task": "look"})), text("seen"), text("ok"))
    session = await open_session(tracer=tracer)
    await run(session, "x")
    turns = [s for s in tracer.spans if s.name == "minicode.turn"]
    assert len(turns) == 2 and turns[1].parent is turns[0]
    assert turns[1].attributes["agent.id"] == "agent-1" and turns[1].attributes["agent.parent_call"]
    assert all(s.ended for s in tracer.spans)
