"""Preview bodies and failure tails carried by the loop's events and approval requests."""

from __future__ import annotations

from minicode.agent.approval import AutoApprover
from minicode.agent.events import ToolFinished, ToolStarted
from minicode.agent.events import output_tail
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


async def test_input_ended_denies_the_rest_of_the_batch_and_stops(open_session, provider, workspace):
    from minicode.agent.approval import Approval, Decision
    from minicode.agent.events import TaskStatus
    from minicode.agent.loop import INPUT_ENDED_RESULT

    provider.script(
        tools(("read", {"path": "missing"}), ("write", {"path": "a.txt", "content": "a"}),
              ("bash", {"command": "touch b"})),
        text("never requested"),
    )
    session = await open_session()
    approver = ScriptedApprover([Approval(Decision.DENY, "no answer", input_ended=True)])
    events = Events()
    finished = await session.turn("x", approver=approver, emit=events.append)
    assert finished.status is TaskStatus.INPUT_ENDED and finished.status.exit_code == 1
    assert len(provider.requests) == 1  # no further model request
    assert [r.tool for r in approver.requests] == ["write"]  # bash was never asked
    assert not (workspace / "a.txt").exists() and not (workspace / "b").exists()
    results = [m.content for m in session.messages if m.role == "tool"]
    assert len(results) == 3 and results[1] == "denied by the user: no answer" and results[2] == INPUT_ENDED_RESULT
    assert [f.denied for f in events.of(ToolFinished)] == [False, True, True]


async def test_plain_denial_goes_on_to_the_next_call(open_session, provider, workspace):
    from minicode.agent.approval import Approval, Decision

    provider.script(tools(("write", {"path": "a.txt", "content": "a"}), ("bash", {"command": "touch b"})), text("ok"))
    session = await open_session()
    approver = ScriptedApprover([Approval(Decision.DENY), yes()])
    finished = await session.turn("x", approver=approver, emit=Events().append)
    assert finished.final_text == "ok" and (workspace / "b").exists() and len(provider.requests) == 2


async def test_failed_max_turns_summary_keeps_the_max_turns_status(open_session, provider):
    from minicode.agent.events import TaskStatus
    from minicode.errors import APIError
    from tests.agent.scripted import fail

    provider.script(tools(("ls", {})), fail(APIError("HTTP 500: upstream broke", status=500)))
    session = await open_session()
    events = Events()
    finished = await session.turn("x", approver=AutoApprover(), emit=events.append, max_turns=1)
    assert finished.status is TaskStatus.MAX_TURNS and finished.status.exit_code == 1
    assert finished.error.startswith("max turns reached (1 model requests); the summary request failed:")
    assert "upstream broke" in finished.error and finished.final_text == ""


async def test_answer_cut_at_the_output_limit_emits_a_notice(open_session, provider):
    from minicode.agent.events import Notice

    provider.script(text("half", finish="length"), text("whole"))
    session = await open_session()
    events = await _run(session, "x")
    assert [n.text for n in events.of(Notice)] == ["the answer was cut off at the output limit"]
    events = await _run(session, "y")  # a normal finish says nothing
    assert events.of(Notice) == []


def test_failure_excerpt_keeps_a_tools_reason_and_a_commands_tail():
    from minicode.agent.events import TAIL_CHARS, TAIL_LINES, failure_excerpt

    tool_error = "old_text was not found; it differs because tabs\n" + "\n".join(f"  {i}" for i in range(20))
    head = failure_excerpt(tool_error, None)
    assert head.startswith("old_text was not found") and len(head.splitlines()) == TAIL_LINES
    command = "\n".join(f"line {i}" for i in range(20)) + "\nError: boom\n[exit code 1]"
    tail = failure_excerpt(command, 1)
    assert tail.endswith("Error: boom\n[exit code 1]") and "line 0" not in tail
    long = failure_excerpt("x" * 5000, None)
    assert len(long) == TAIL_CHARS and long.endswith("…")


async def test_overwrite_and_edit_are_previewed_against_the_file(open_session, provider, workspace):
    (workspace / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 8)))
    provider.script(
        tools(("read", {"path": "f.txt"}), ("edit", {"path": "f.txt", "old_text": "l4\n", "new_text": "four\n"})),
        tools(("write", {"path": "f.txt", "content": "a\nb\n"}), ("write", {"path": "../out.txt", "content": "x"})),
        text("ok"),
    )
    session = await open_session()
    approver = ScriptedApprover([yes(), yes(), yes()])
    events = await _run(session, "x", approver)
    edit_request, write_request = approver.requests  # the write outside is refused unasked
    assert edit_request.body.splitlines()[:5] == ["@@ -1,7 +1,7 @@", " l1", " l2", " l3", "-l4"]
    assert write_request.detail == "overwrite · 7 → 2 lines" and write_request.body.startswith("@@ -1,7 +1,2 @@")
    started = {e.name + str(i): e for i, e in enumerate(events.of(ToolStarted))}
    assert started["write2"].detail == write_request.detail and started["write2"].body == write_request.body
    assert started["edit1"].body == edit_request.body
    assert started["write3"].detail == "1 line"  # bad path: the argument-only preview
    assert [e.is_error for e in events.of(ToolFinished)][-1]
    assert (workspace / "f.txt").read_text() == "a\nb\n"
