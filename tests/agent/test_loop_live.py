"""Live tool output through the loop: ToolOutput events between ToolStarted and ToolFinished."""

from __future__ import annotations

from minicode.agent.approval import AutoApprover
from minicode.agent.events import ToolFinished, ToolOutput, ToolStarted
from tests.agent.conftest import SECRET, Events
from tests.agent.scripted import text, tools


async def test_bash_output_arrives_live_in_order_and_redacted(open_session, provider):
    command = f"for i in 1 2 3 4 5 6; do echo line$i; sleep 0.15; done; echo {SECRET}"
    provider.script(tools(("bash", {"command": command})), text("ok"))
    session = await open_session()
    events = Events()
    await session.turn("x", approver=AutoApprover(), emit=events.append)
    outputs = events.of(ToolOutput)
    started, finished = events.of(ToolStarted)[0], events.of(ToolFinished)[0]
    assert len(outputs) >= 3 and {o.call_id for o in outputs} == {started.call_id}
    assert events.index(started) < events.index(outputs[0]) and events.index(outputs[-1]) < events.index(finished)
    joined = "".join(o.text for o in outputs)
    assert joined == "".join(f"line{i}\n" for i in range(1, 7)) + "[redacted]\n"
    assert all(SECRET not in o.text for o in outputs)
    result = [m.content for m in session.messages if m.role == "tool"][0]
    assert "line1\n" in result and "line6\n" in result and SECRET not in result  # still whole


async def test_tools_without_live_output_emit_none(open_session, provider, workspace):
    (workspace / "a.txt").write_text("hello\n")
    provider.script(tools(("read", {"path": "a.txt"}), ("bash", {"command": "exit 2"})), text("ok"))
    session = await open_session()
    events = Events()
    await session.turn("x", approver=AutoApprover(), emit=events.append)
    assert events.of(ToolOutput) == []  # read has no hook use; bash printed nothing
    assert [f.exit_code for f in events.of(ToolFinished)] == [None, 2]
