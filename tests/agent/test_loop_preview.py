"""Preview bodies and failure tails carried by the loop's events and approval requests."""

from __future__ import annotations

from minicode.agent.approval import AutoApprover
from minicode.agent.events import ToolFinished, ToolStarted
from minicode.agent.loop import output_tail
from tests.agent.conftest import Events, ScriptedApprover, yes
from tests.agent.scripted import text, tools


async def _run(session, task, approver=None):
    events = Events()
    await session.turn(task, approver=approver or AutoApprover(), emit=events.append)
    return events


async def test_approval_and_tool_started_carry_the_body(open_session, provider, workspace):
    provider.script(tools(("write", {"path": "a.txt", "content": "one\ntwo\n"}), ("bash", {"command": "true"})), text("ok"))
    session = await open_session()
    approver = ScriptedApprover([yes(), yes()])
    events = await _run(session, "x", approver)
    assert approver.requests[0].body == "one\ntwo"
    started = events.of(ToolStarted)
    assert started[0].body == "one\ntwo"
    # "." is named as the workspace in both the event and the approval request
    assert started[1].target == str(workspace) == approver.requests[1].target


async def test_failed_bash_carries_the_output_tail(open_session, provider):
    command = "for i in 1 2 3 4 5 6 7 8; do echo line$i; done; exit 3"
    provider.script(tools(("bash", {"command": command}), ("bash", {"command": "echo fine"})), text("ok"))
    session = await open_session()
    events = await _run(session, "x")
    failed, fine = events.of(ToolFinished)
    assert failed.exit_code == 3
    assert "line8" in failed.output_tail and "line2" not in failed.output_tail
    assert len(failed.output_tail.splitlines()) <= 6
    assert fine.output_tail == ""


async def test_error_results_carry_the_output_tail(open_session, provider):
    provider.script(tools(("read", {"path": "missing.txt"}), ("nope", {})), text("ok"))
    session = await open_session()
    events = await _run(session, "x")
    missing, unknown = events.of(ToolFinished)
    assert "missing.txt" in missing.output_tail
    assert "unknown tool" in unknown.output_tail


def test_output_tail_caps_characters():
    tail = output_tail("x" * 2000)
    assert len(tail) == 600 and tail.startswith("…")
    assert output_tail("a\nb\n\n") == "a\nb"
