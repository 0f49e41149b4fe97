"""The task list and plan mode on the Session: kept in the file (resume and rewind restore
it), the read-only tools of a planning turn, accept and reject, fewer tools for small models."""

from __future__ import annotations

from dataclasses import replace

import pytest

from minicode.agent.approval import AutoApprover
from minicode.agent.events import ModeChanged, TodoUpdated
from minicode.agent.plan_mode import ACCEPTED
from minicode.errors import SessionError
from minicode.tools.todo_list import TodoItem, TodoList
from tests.agent.conftest import Events, make_config
from tests.agent.scripted import text, tools

ONE = [{"text": "read a.py", "status": "in_progress"}]
TWO = [{"text": "read a.py", "status": "done"}, {"text": "fix a.py", "status": "pending"}]


async def _run(session, task):  # type: ignore[no-untyped-def]
    events = Events()
    finished = await session.turn(task, approver=AutoApprover(), emit=events.append)
    return finished, events


async def test_the_list_and_the_mode_are_kept_and_a_resume_restores_them(open_session, provider):
    provider.script(tools(("todo", {"items": ONE})), text("listed"))
    s1 = await open_session()
    _, events = await _run(s1, "plan")
    assert [e for e in events if isinstance(e, TodoUpdated)] == [TodoUpdated(TodoList((TodoItem("read a.py", "in_progress"),)))]
    await s1.enter_plan(events.append)
    assert events[-1] == ModeChanged("plan", "entered") and s1.mode == "plan"
    await s1.aclose()
    s2 = await open_session(resume=s1.id)
    assert s2.todo.lines() == ["▶ read a.py"] and s2.mode == "plan"


async def test_a_rewind_brings_back_the_list_of_that_point(open_session, provider):
    provider.script(tools(("todo", {"items": ONE})), text("one"), tools(("todo", {"items": TWO})), text("two"))
    session = await open_session()
    await _run(session, "first")
    await _run(session, "second")
    assert session.todo.summary == "1/2 done"
    second = session.rewind_points()[1].index
    await session.rewind(second)
    assert session.todo.lines() == ["▶ read a.py"]
    await session.rewind(session.rewind_points()[0].index)
    assert not session.todo


async def test_a_planning_turn_offers_and_runs_only_read_only_tools(open_session, provider, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    provider.script(tools(("edit", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}),
                          ("todo", {"items": ONE})), text("the plan"))
    session = await open_session()
    events = Events()
    await session.enter_plan(events.append)
    finished, _ = await _run(session, "plan the change")
    assert finished.final_text == "the plan" and (workspace / "a.py").read_text() == "x = 1\n"
    assert [t.name for t in provider.requests[0].tools] == ["read", "ls", "glob", "grep", "agent", "ask_user", "todo"]
    results = [m.content for m in provider.requests[1].messages if m.role == "tool"]
    assert results[0].startswith("refused: edit is not available in plan mode") and results[1].startswith("task list saved")
    assert provider.requests[0].messages[-1].content.startswith("[minicode note: plan mode:")


async def test_accept_needs_a_plan_and_then_acts_with_every_tool(open_session, provider):
    session = await open_session()
    events = Events()
    with pytest.raises(SessionError, match="not in plan mode"):
        await session.accept_plan(events.append)
    await session.enter_plan(events.append)
    with pytest.raises(SessionError, match="no plan to accept yet"):
        await session.accept_plan(events.append)
    provider.script(tools(("todo", {"items": ONE})), text("plan"), text("acting"))
    await _run(session, "plan it")
    assert await session.accept_plan(events.append) == ACCEPTED
    assert events[-1] == ModeChanged("act", "accepted") and session.todo  # the plan is the list
    await _run(session, ACCEPTED)
    assert "write" in [t.name for t in provider.requests[-1].tools]


async def test_reject_drops_the_list_and_tells_the_model(open_session, provider):
    session = await open_session()
    events = Events()
    await session.enter_plan(events.append)
    provider.script(tools(("todo", {"items": ONE})), text("plan"), text("fine"))
    await _run(session, "plan it")
    proposed = session.todo
    await session.reject_plan(events.append)
    assert events[-2:] == [ModeChanged("act", "rejected"), TodoUpdated(TodoList(), proposed)]
    assert session.mode == "act" and not session.todo
    await _run(session, "just do it")
    assert provider.requests[-1].messages[-1].content.startswith("[minicode note: the user rejected the plan")
    with pytest.raises(SessionError, match="no plan to reject"):
        await session.reject_plan(events.append)


async def test_small_models_are_not_offered_todo_but_a_call_to_it_works(open_session, provider):
    config = make_config()
    config = replace(config, model=replace(config.model, assists="on"))
    provider.script(tools(("todo", {"items": ONE})), text("ok"), tools(("todo", {"items": ONE})), text("plan"))
    session = await open_session(config=config)
    await _run(session, "say ok")
    assert "todo" not in [t.name for t in provider.requests[0].tools] and session.todo
    await session.enter_plan(Events().append)
    await _run(session, "plan it")
    assert "todo" in [t.name for t in provider.requests[-1].tools]  # planning: the list is the deliverable


async def test_a_planning_turn_runs_no_checks_and_gets_no_second_chance(open_session, provider, workspace):
    config = make_config()
    config = replace(config, model=replace(config.model, assists="on"))
    provider.script(text("Plan: change x in a.py, then run the tests."))
    session = await open_session(config=config)
    session.checks.append("false")  # would fail: nothing is changed while planning
    await session.enter_plan(Events().append)
    finished, _ = await _run(session, "fix the bug in a.py")  # a change asked for, none made
    assert finished.status.value == "done" and finished.checks == ()
    assert len(provider.requests) == 1  # no "make the change now"
    assert provider.requests[0].answer_schema is None  # and no answer forced to be a call
