"""What the events carry for frontends that report everything (the JSON stream): a response's
usage and calls, and each tool result exactly as the history got it, on every path."""

from __future__ import annotations

import asyncio

from minicode.agent.approval import Approval, ApprovedBy, AutoApprover, Decision
from minicode.agent.events import AssistantDone, TaskStatus, ToolFinished, ToolOutput
from minicode.provider.types import Usage
from tests.agent.conftest import Events, ScriptedApprover
from tests.agent.scripted import USAGE, hang, text, tools


async def _run(session, task, approver=None, **kw):
    events = Events()
    finished = await session.turn(task, approver=approver or AutoApprover(), emit=events.append, **kw)
    return finished, events


def _results(session) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in session.messages if m.role == "tool"}


async def test_assistant_done_carries_usage_calls_and_finish_reason(open_session, provider):
    step = tools(("read", {"path": "a.txt"}), ("ls", {}))
    provider.script(step, text("done", usage=None))
    session = await open_session()
    _, events = await _run(session, "look")
    first, last = events.of(AssistantDone)
    assert first.usage == USAGE and first.finish_reason == "tool_calls"
    assert [c.name for c in first.tool_calls] == ["read", "ls"] and first.tool_call_count == 2
    assert first.tool_calls == step.response.message.tool_calls  # the raw arguments, as sent
    assert last.usage is None and last.tool_calls == () and last.finish_reason == "stop"


async def test_result_text_is_what_the_history_got_on_every_path(open_session, provider, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    provider.script(
        tools(
            ("read", {"path": "a.txt"}),  # done
            ("nope", {}),  # invalid: unknown tool
            ("edit", {"path": "never-read.txt", "old_text": "x", "new_text": "y"}),  # refused before approval
            ("bash", {"command": "exit 3"}),  # runs, fails
            ("write", {"path": "b.txt", "content": "b"}),  # denied
        ),
        text("ok"),
    )
    approver = ScriptedApprover([Approval(Decision.ALLOW_ONCE), Approval(Decision.DENY, "not now")])
    session = await open_session()
    finished, events = await _run(session, "mixed", approver)
    assert finished.status is TaskStatus.DONE
    history = _results(session)
    finals = events.of(ToolFinished)
    assert len(finals) == 5
    for event in finals:
        assert event.result_text == history[event.call_id], event.name
    assert "alpha" in finals[0].result_text
    assert finals[3].exit_code == 3 and "exit code 3" in finals[3].result_text
    assert finals[4].denied and finals[4].result_text == "denied by the user: not now"


async def test_a_policy_denial_does_not_claim_a_person_denied(open_session, provider):
    class Policy:
        async def approve(self, request):
            return Approval(Decision.DENY, "nobody can approve here; rerun with --yes", by=ApprovedBy.POLICY)

    provider.script(tools(("bash", {"command": "true"})), text("ok"))
    session = await open_session()
    _, events = await _run(session, "run", Policy())
    (denied,) = events.of(ToolFinished)
    # the batch adds which permission rule would have allowed the call (issue 14)
    assert denied.result_text == ("denied: nobody can approve here; rerun with --yes; the rule bash(true *) "
                                  "would allow it (--allow 'bash(true *)', or [permissions] allow in the config)")
    assert _results(session)[denied.call_id] == denied.result_text


async def test_an_interrupted_call_says_what_the_history_will_hold(open_session, provider):
    provider.script(tools(("bash", {"command": "echo started; sleep 30"})), hang())
    session = await open_session()
    events = Events()
    task = asyncio.create_task(session.turn("wait", approver=AutoApprover(), emit=events.append))
    while not events.of(ToolOutput):  # the command is running
        await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    (interrupted,) = events.of(ToolFinished)
    assert interrupted.interrupted and "output so far:\nstarted" in interrupted.result_text
    assert _results(session)[interrupted.call_id] == interrupted.result_text


def test_usage_is_optional_data():
    done = AssistantDone("t", "", 0)
    assert done.usage is None and done.tool_calls == () and done.finish_reason is None
    assert AssistantDone("t", "", 0, usage=Usage(1, 2, 3)).usage == Usage(1, 2, 3)
