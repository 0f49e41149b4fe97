"""The agent loop through the Session API, with a scripted provider and the real tools."""

from __future__ import annotations

import asyncio
import json

import pytest

from minicode.agent.approval import Approval, ApprovedBy, AutoApprover, Decision
from minicode.agent.events import (
    ApprovalResolved,
    AssistantDone,
    ModelCallStarted,
    ReasoningChunk,
    TaskStatus,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from minicode.agent.loop import CANCELLED_RESULT, FINAL_SUMMARY_PROMPT
from minicode.errors import APIError
from minicode.provider.types import Usage
from minicode.session.store import SessionStore
from tests.agent.conftest import SECRET, Events, ScriptedApprover, yes
from tests.agent.scripted import fail, hang, text, tools


async def run(session, task, approver=None, **kw):
    events = Events()
    finished = await session.turn(task, approver=approver or AutoApprover(), emit=events.append, **kw)
    return finished, events


async def test_text_answer_is_final(open_session, provider):
    provider.script(text("Hello there, all done.", reasoning="hmm"))
    session = await open_session()
    finished, events = await run(session, "say hi")
    assert finished.status is TaskStatus.DONE
    assert finished.final_text == "Hello there, all done."
    assert isinstance(events[0], TurnStarted) and events[-1] is finished
    assert "".join(e.text for e in events.of(TextChunk)) == "Hello there, all done."
    assert [e.text for e in events.of(ReasoningChunk)] == ["hmm"]
    assert [m.role for m in session.messages] == ["user", "assistant"]
    request = provider.requests[0]
    # no absolute path in the system prompt: the prefix stays the same in every workspace (cache-stable)
    assert request.messages[0].role == "system" and str(session.workspace) not in request.messages[0].content
    assert request.messages[-1].content == "say hi"
    assert {t.name for t in request.tools} == {"read", "ls", "glob", "grep", "write", "edit", "bash", "agent", "ask_user", "todo"}
    assert finished.stats.model_calls == 1 and finished.stats.total_tokens == 110
    assert "tokens: 110 total" in finished.stats.format()


async def test_write_bash_answer(open_session, provider, workspace):
    provider.script(
        tools(("write", {"path": "hello.py", "content": "print('hi')\n"})),
        tools(("bash", {"command": "python3 hello.py"})),
        text("Wrote hello.py; it prints hi."),
    )
    session = await open_session()
    finished, events = await run(session, "make hello")
    assert finished.status is TaskStatus.DONE
    assert (workspace / "hello.py").read_text() == "print('hi')\n"
    results = [m for m in session.messages if m.role == "tool"]
    assert len(results) == 2 and "hi" in results[1].content
    assert finished.stats.tool_calls == 2 and finished.stats.model_calls == 3
    started = events.of(ToolStarted)
    assert [s.name for s in started] == ["write", "bash"]
    assert events.of(ToolFinished)[1].exit_code == 0


async def test_invalid_calls_are_recoverable(open_session, provider):
    provider.script(
        tools(("nope", {}), ("read", "{not json"), ("read", {"path": "a", "bogus": 1}), ("read", {"path": "missing.txt"})),
        text("recovered"),
    )
    session = await open_session()
    finished, events = await run(session, "x")
    assert finished.status is TaskStatus.DONE and finished.final_text == "recovered"
    results = [m.content for m in session.messages if m.role == "tool"]
    assert len(results) == 4
    assert "unknown tool" in results[0]
    assert "not valid JSON" in results[1]
    assert "bogus" in results[2]
    assert "missing.txt" in results[3]
    assert all(f.is_error for f in events.of(ToolFinished))
    # the model saw all four errors
    assert [m.role for m in provider.requests[1].messages[-4:]] == ["tool"] * 4


async def test_denial_executes_nothing(open_session, provider, workspace):
    provider.script(tools(("write", {"path": "x.txt", "content": "x"})), text("ok, not writing"))
    session = await open_session()
    approver = ScriptedApprover([Approval(Decision.DENY, "use y.txt instead")])
    finished, events = await run(session, "write x", approver)
    assert not (workspace / "x.txt").exists()
    assert approver.requests[0].tool == "write" and approver.requests[0].target.endswith("x.txt")
    result = session.messages[-2]
    assert result.role == "tool" and result.content == "denied by the user: use y.txt instead"
    assert events.of(ToolFinished)[0].denied
    assert events.of(ApprovalResolved) == [
        ApprovalResolved(approver.requests[0].call_id, "write", False, ApprovedBy.USER, reason="use y.txt instead")
    ]
    assert finished.status is TaskStatus.DONE


async def test_allow_for_session_is_remembered(open_session, provider, workspace):
    provider.script(
        tools(("write", {"path": "a.txt", "content": "a"})),
        text("one"),
        tools(("write", {"path": "b.txt", "content": "b"}), ("bash", {"command": "true"})),
        text("two"),
    )
    session = await open_session()
    approver = ScriptedApprover([Approval(Decision.ALLOW_SESSION), yes()])
    _, first = await run(session, "first", approver)
    _, second = await run(session, "second", approver)
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    # who decided each side-effect call: the user, then the earlier "for the session", then the user
    decided = [(e.tool, e.allowed, e.by) for e in first.of(ApprovalResolved) + second.of(ApprovalResolved)]
    assert decided == [("write", True, ApprovedBy.USER), ("write", True, ApprovedBy.SESSION), ("bash", True, ApprovedBy.USER)]
    # write asked once (allowed for the session), bash asked on its own
    assert [r.tool for r in approver.requests] == ["write", "bash"]
    # bash runs in the workspace: the approval names that directory, not "."
    assert approver.requests[1].target == str(workspace.resolve())


async def test_yes_is_reported_as_the_approver(open_session, provider, workspace):
    provider.script(tools(("write", {"path": "a.txt", "content": "a"})), text("done"))
    session = await open_session()
    _, events = await run(session, "write a")  # AutoApprover: --yes
    assert [(e.allowed, e.by) for e in events.of(ApprovalResolved)] == [(True, ApprovedBy.AUTO)]


async def test_read_only_tools_need_no_approval(open_session, provider, workspace):
    (workspace / "f.txt").write_text("content\n")
    provider.script(tools(("read", {"path": "f.txt"}), ("ls", {})), text("read it"))
    session = await open_session()
    approver = ScriptedApprover([])  # would hang if asked
    finished, events = await run(session, "x", approver)
    assert finished.status is TaskStatus.DONE and not approver.requests
    assert not events.of(ApprovalResolved)


async def test_max_turns_then_summary_without_tools(open_session, provider):
    provider.default = tools(("ls", {}))
    session = await open_session()
    provider.script(tools(("ls", {})), tools(("ls", {})), text("Summary: listed twice."))
    finished, events = await run(session, "loop forever", max_turns=2)
    assert finished.status is TaskStatus.MAX_TURNS and finished.status.exit_code == 1
    assert finished.final_text == "Summary: listed twice."
    assert len(provider.requests) == 3
    last = provider.requests[-1]
    assert last.tools == () and last.messages[-1].content == FINAL_SUMMARY_PROMPT
    assert [e.final_summary for e in events.of(ModelCallStarted)] == [False, False, True]
    assert finished.stats.model_calls == 3
    # the summary prompt is not stored; the summary answer is
    assert session.messages[-1].role == "assistant" and session.messages[-1].content == "Summary: listed twice."
    assert all(m.content != FINAL_SUMMARY_PROMPT for m in session.messages)


async def test_timeout_during_stream(open_session, provider):
    provider.script(hang())
    session = await open_session()
    finished, events = await run(session, "x", timeout=0.2)
    assert finished.status is TaskStatus.TIMED_OUT and "timed out" in finished.error
    assert [m.role for m in session.messages] == ["user"]  # no partial assistant message
    assert provider.closed_streams == 1
    assert finished.stats.model_calls == 1 and finished.stats.format_tokens() == "tokens: unavailable"


async def test_timeout_counts_approval_wait(open_session, provider, workspace):
    provider.script(tools(("write", {"path": "w.txt", "content": "w"}), ("ls", {})))
    session = await open_session()
    finished, _ = await run(session, "x", ScriptedApprover([]), timeout=0.2)
    assert finished.status is TaskStatus.TIMED_OUT
    assert not (workspace / "w.txt").exists()
    results = [m for m in session.messages if m.role == "tool"]
    assert [r.content for r in results] == [CANCELLED_RESULT, CANCELLED_RESULT]


async def test_api_error_stops_with_message(open_session, provider):
    provider.script(fail(APIError("invalid api key", status=401)))
    session = await open_session()
    finished, _ = await run(session, "x")
    assert finished.status is TaskStatus.ERROR
    assert finished.error == (
        "HTTP 401: invalid api key (check the API key: [model].api_key, or the variable named by"
        " [model].api_key_env, in the config)"
    )
    assert [m.role for m in session.messages] == ["user"]


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        (APIError("no such model", status=404), "check [model].name"),
        (APIError("quota", status=429, quota_exhausted=True), "add credit"),
        (APIError("cannot reach the model endpoint", network=True), "is the server running?"),
        (APIError("bad request", status=400), None),
        # the error names the setting itself: no second hint after it
        (APIError("cannot reach the model endpoint: cannot resolve x: no such host — check the host in "
                  "[model].base_url", network=True, lasting=True), None),
        (APIError("Not Found; is [model].base_url the API's URL?", status=404), None),
    ],
)
async def test_api_errors_say_what_to_do(open_session, provider, error, hint):
    provider.script(fail(error))
    session = await open_session()
    finished, _ = await run(session, "x")
    assert finished.status is TaskStatus.ERROR and finished.error.startswith(str(error))
    if hint is None:
        assert finished.error == str(error)  # nothing useful to add: no noise
    else:
        assert hint in finished.error


async def test_failed_stream_appends_nothing_and_runs_no_tools(open_session, provider, workspace):
    step = tools(("write", {"path": "never.txt", "content": "x"}), content="I will write now")
    step.error = APIError("stream broke")
    step.after_chunks = 2
    provider.script(step)
    session = await open_session()
    finished, events = await run(session, "x")
    assert finished.status is TaskStatus.ERROR and "stream broke" in finished.error
    assert events.of(TextChunk)  # partial text was shown while streaming ...
    assert [m.role for m in session.messages] == ["user"]  # ... but never stored
    assert not (workspace / "never.txt").exists() and not events.of(ToolStarted)


async def test_internal_error_becomes_error_status(open_session, provider):
    provider.script(fail(RuntimeError("boom")))
    session = await open_session()
    finished, _ = await run(session, "x")
    assert finished.status is TaskStatus.ERROR and finished.error == "internal error: RuntimeError: boom"


async def test_cancel_during_stream_emits_interrupted_and_reraises(open_session, provider):
    provider.script(hang())
    session = await open_session()
    events = Events()
    task = asyncio.create_task(session.turn("x", approver=AutoApprover(), emit=events.append))
    for _ in range(1000):  # until the stream is being read (a fixed sleep was too short on a loaded machine)
        if events.of(TextChunk):
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert isinstance(events[-1], TurnFinished) and events[-1].status is TaskStatus.INTERRUPTED
    assert [m.role for m in session.messages] == ["user"]
    assert provider.closed_streams == 1


async def test_cancel_during_tool_batch_keeps_finished_results(open_session, provider, workspace):
    provider.script(
        tools(("write", {"path": "done.txt", "content": "d"}), ("bash", {"command": "sleep 30"}), ("ls", {}))
    )
    session = await open_session()
    events = Events()
    task = asyncio.create_task(session.turn("x", approver=AutoApprover(), emit=events.append))
    for _ in range(200):
        await asyncio.sleep(0.02)
        if any(isinstance(e, ToolStarted) and e.name == "bash" for e in events):
            break
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = [m for m in session.messages if m.role == "tool"]
    assert len(results) == 3
    assert not results[0].content.startswith("interrupted")
    assert results[1].content.startswith("interrupted after ") and results[1].content.endswith("; no output so far")
    assert results[2].content == CANCELLED_RESULT  # never started
    outcomes = session.tool_outcomes()
    assert outcomes[results[1].tool_call_id].status == "interrupted"
    assert outcomes[results[1].tool_call_id].duration_seconds > 0
    assert outcomes[results[2].tool_call_id].status == "interrupted"
    assert outcomes[results[2].tool_call_id].duration_seconds is None
    assert events[-1].status is TaskStatus.INTERRUPTED
    # the running bash call is reported as interrupted, the finished write is not
    assert [(f.name, f.interrupted) for f in events.of(ToolFinished)] == [("write", False), ("bash", True)]
    # the file on disk is a valid conversation
    session._store.close()
    _, loaded = SessionStore.open(workspace, session.id)
    assert loaded.messages == list(session.messages)


async def cancel_while_saving(session, which) -> Events:  # type: ignore[no-untyped-def]
    """Run a turn and cancel it while the message ``which(message)`` picks is being written
    (the write still lands); returns the turn's events."""
    import threading

    writing, release = threading.Event(), threading.Event()
    append_message = session._store.append_message

    def slow_append(message, outcome=None):  # type: ignore[no-untyped-def]
        if which(message):
            writing.set()
            release.wait(10)
        return append_message(message, outcome)

    session._store.append_message = slow_append
    events = Events()
    task = asyncio.create_task(session.turn("x", approver=AutoApprover(), emit=events.append))
    assert await asyncio.to_thread(writing.wait, 10)
    task.cancel()
    await asyncio.sleep(0)
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    return events


async def test_cancel_while_the_tool_calls_are_saved_answers_them(open_session, provider, workspace):
    """The cancellation lands while the model's tool-call answer is being written: the write
    still lands, the batch never starts — the calls are answered all the same (a SIGTERM in
    that moment used to leave a session file ending in unanswered calls)."""
    provider.script(tools(("ls", {}), ("bash", {"command": "echo hi"})))
    session = await open_session()
    events = await cancel_while_saving(session, lambda message: bool(message.tool_calls))
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool"]
    assert [m.content for m in session.messages[2:]] == [CANCELLED_RESULT, CANCELLED_RESULT]
    assert not events.of(ToolStarted)  # nothing ran
    assert events[-1].status is TaskStatus.INTERRUPTED
    session._store.close()
    _, loaded = SessionStore.open(workspace, session.id)
    assert loaded.messages == list(session.messages)


async def test_cancel_while_the_final_answer_is_saved_still_reports_it_kept(open_session, provider, workspace):
    """A Ctrl+C that lands while a complete answer is being written (the user saw it and
    pressed Ctrl+C to leave): the write lands, so the answer is reported done (``AssistantDone``)
    before the task ends interrupted — the full screen said "not kept in the conversation"
    about an answer that resume then showed and the model was sent."""
    provider.script(text("The whole answer."))
    session = await open_session()
    events = await cancel_while_saving(session, lambda message: message.role == "assistant")
    assert [e.text for e in events.of(AssistantDone)] == ["The whole answer."]
    assert events[-1].status is TaskStatus.INTERRUPTED
    assert [m.role for m in session.messages] == ["user", "assistant"]
    session._store.close()
    _, loaded = SessionStore.open(workspace, session.id)
    assert loaded.messages == list(session.messages)


async def test_a_second_cancel_while_answering_leaves_the_next_task_to_repair(open_session, provider, workspace):
    """The answers themselves are stopped (a second Ctrl+C): the task still ends interrupted,
    and the next task's repair answers the calls before its request."""
    import threading

    provider.script(tools(("ls", {})), text("second task done"))
    session = await open_session()
    writing, release = threading.Event(), threading.Event()
    append_message = session._store.append_message
    held = {"tool_calls": True}

    def slow_append(message, outcome=None):  # type: ignore[no-untyped-def]
        if held["tool_calls"] and (message.tool_calls or message.role == "tool"):
            writing.set()
            release.wait(10)
        return append_message(message, outcome)

    session._store.append_message = slow_append
    task = asyncio.create_task(session.turn("x", approver=AutoApprover(), emit=lambda _: None))
    assert await asyncio.to_thread(writing.wait, 10)
    task.cancel()
    for _ in range(3):
        await asyncio.sleep(0)
    task.cancel()  # again, while the interrupted answers are being saved
    held["tool_calls"] = False
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    finished, _ = await run(session, "y")
    assert finished.status is TaskStatus.DONE
    sent = provider.requests[-1].messages
    assert [m.role for m in sent if m.role != "system"][:3] == ["user", "assistant", "tool"]


async def test_partial_usage_is_marked(open_session, provider):
    provider.script(tools(("ls", {}), usage=None), text("done", usage=Usage(50, 5, 55)))
    session = await open_session()
    finished, _ = await run(session, "x")
    assert finished.stats.format_tokens() == "tokens: 55 total (50 in, 5 out) (partial)"


async def test_tool_result_and_events_never_show_api_key(open_session, provider):
    provider.script(tools(("bash", {"command": "env"})), text("env shown"))
    session = await open_session()
    await run(session, "x")
    result = [m for m in session.messages if m.role == "tool"][0].content
    assert "PATH=" in result
    assert SECRET not in result and "TEST_KEY" not in result
    assert SECRET not in session._store.path.read_text()


async def test_each_main_request_is_a_valid_conversation_after_interrupt(open_session, provider, workspace):
    """A timed-out batch leaves synthetic results; the next turn's request validates."""
    provider.script(tools(("bash", {"command": "sleep 30"})))
    session = await open_session()
    finished, _ = await run(session, "x", timeout=0.3)
    assert finished.status is TaskStatus.TIMED_OUT
    provider.script(text("fine"))
    finished, _ = await run(session, "again")
    assert finished.status is TaskStatus.DONE
    roles = [m.role for m in provider.requests[-1].messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]  # the stopped task's note


async def test_write_bound_to_fail_is_not_put_to_the_user(open_session, provider, workspace):
    (workspace / "adir").mkdir()
    provider.script(
        tools(("write", {"path": "../outside.txt", "content": "x"})),  # leaves the workspace
        tools(("write", {"path": "adir", "content": "x"})),  # an existing directory
        tools(("write", {"path": "ok.txt", "content": "x"})),
        text("done"),
    )
    session = await open_session()
    approver = ScriptedApprover([yes(), yes(), yes()])  # enough answers: a regression fails, not hangs
    finished, events = await run(session, "write", approver)
    assert finished.status is TaskStatus.DONE and (workspace / "ok.txt").read_text() == "x"
    assert [r.target for r in approver.requests] == ["ok.txt"]  # only the write that can succeed
    assert not (workspace.parent / "outside.txt").exists()
    failed = [e for e in events.of(ToolFinished) if e.is_error]
    assert len(failed) == 2 and "inside the workspace" in failed[0].output_tail
    assert "existing directory" in failed[1].output_tail


async def test_edit_bound_to_fail_is_not_put_to_the_user(open_session, provider, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    provider.script(
        tools(("edit", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})),  # never read: fails
        tools(("read", {"path": "a.py"})),
        tools(("edit", {"path": "a.py", "old_text": "x = 9", "new_text": "x = 2"})),  # not found: fails
        tools(("edit", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})),
        text("done"),
    )
    session = await open_session()
    approver = ScriptedApprover([yes()])
    finished, events = await run(session, "edit", approver)
    assert finished.status is TaskStatus.DONE and (workspace / "a.py").read_text() == "x = 2\n"
    assert len(approver.requests) == 1  # only the edit that can succeed was asked
    failed = [e for e in events.of(ToolFinished) if e.is_error]
    assert len(failed) == 2 and "read it" in failed[0].output_tail and "not found" in failed[1].output_tail
    results = [m.content for m in session.messages if m.role == "tool"]
    assert "read" in results[0] and "old_text was not found" in results[2]


async def test_each_request_is_estimated_once_and_the_span_carries_that_estimate(open_session, provider, monkeypatch):
    from minicode.agent import context as context_module
    from tests.agent.test_session import RecTracer

    estimates: list[int] = []
    real = context_module.ModelContext._estimate

    def counting(*args, **kwargs):
        estimates.append(real(*args, **kwargs))
        return estimates[-1]

    monkeypatch.setattr(context_module.ModelContext, "_estimate", counting)
    tracer = RecTracer()
    provider.script(tools(("ls", {})), text("done"))
    session = await open_session(tracer=tracer)
    await run(session, "list")
    calls = [s for s in tracer.spans if s.name == "minicode.model_call"]
    assert len(estimates) == 2  # one per request: the budget check and the span share it
    assert [s.attributes["request.estimated_tokens"] for s in calls] == estimates


async def test_only_executed_tool_calls_are_counted(open_session, provider, workspace):
    from minicode.agent.approval import Approval, Decision
    from tests.agent.conftest import ScriptedApprover

    provider.script(
        tools(("nope", {}), ("edit", {"path": "x", "old_text": "a", "new_text": "b"}),
              ("write", {"path": "denied.txt", "content": "d"}), ("ls", {}), ("bash", {"command": "exit 1"})),
        text("done"),
    )
    session = await open_session()
    approver = ScriptedApprover([Approval(Decision.DENY), Approval(Decision.ALLOW_ONCE)])
    finished = await session.turn("x", approver=approver, emit=lambda e: None)
    assert finished.stats.tool_calls == 2  # ls and the failing bash ran; the others never did
    assert "2 tool calls" in finished.stats.format() and not (workspace / "denied.txt").exists()


async def test_a_call_interrupted_at_its_approval_prompt_is_not_counted(open_session, provider):
    from tests.agent.conftest import ScriptedApprover

    provider.script(tools(("ls", {}), ("bash", {"command": "true"})))
    session = await open_session()
    approver = ScriptedApprover([])  # never answers
    events = Events()
    task = asyncio.create_task(session.turn("x", approver=approver, emit=events.append))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if approver.requests:
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    finished = events[-1]
    assert finished.status is TaskStatus.INTERRUPTED and approver.requests
    assert finished.stats.tool_calls == 1  # ls only


async def test_provider_retries_become_retrying_events_in_order(open_session, provider):
    from dataclasses import replace

    from minicode.agent.events import Retrying
    from minicode.provider.types import RetryNotice

    notices = (RetryNotice(2, 4, 2.0, "HTTP 429 rate limited"), RetryNotice(3, 4, 4.0, "cannot connect"))
    provider.script(replace(text("finally"), retries=notices))
    session = await open_session()
    finished, events = await run(session, "x")
    assert finished.status is TaskStatus.DONE
    retrying = events.of(Retrying)
    assert retrying == [Retrying(2, 4, 2.0, "HTTP 429 rate limited"), Retrying(3, 4, 4.0, "cannot connect")]
    # reported between the request going out and the answer arriving
    kinds = [type(e) for e in events]
    assert kinds.index(ModelCallStarted) < kinds.index(Retrying) < kinds.index(TextChunk)
    assert retrying[0].describe() == "retrying in 2 s (attempt 2 of 4): HTTP 429 rate limited"


async def test_retries_then_failure_still_end_the_turn_with_the_error(open_session, provider):
    from dataclasses import replace

    from minicode.agent.events import Retrying
    from minicode.provider.types import RetryNotice

    notices = tuple(RetryNotice(n, 4, 1.0, "HTTP 500 server error") for n in (2, 3, 4))
    provider.script(replace(fail(APIError("boom", status=500)), retries=notices))
    session = await open_session()
    finished, events = await run(session, "x")
    assert finished.status is TaskStatus.ERROR and "boom" in (finished.error or "")
    assert [e.attempt for e in events.of(Retrying)] == [2, 3, 4]


def test_retrying_describe_counts_down_and_rounds():
    from minicode.agent.events import Retrying

    event = Retrying(2, 4, 12.4, "HTTP 503 service unavailable")
    assert event.describe() == "retrying in 12 s (attempt 2 of 4): HTTP 503 service unavailable"
    assert event.describe(remaining=1.25).startswith("retrying in 1.2 s")
    assert event.describe(remaining=-3).startswith("retrying now (attempt 2 of 4)")


async def test_an_interrupted_command_keeps_its_output_for_the_model(open_session, provider, workspace):
    from minicode.agent.events import ToolOutput

    provider.script(
        tools(("bash", {"command": "for i in 1 2 3; do echo tick $i; done; echo $SECRET_ECHO; sleep 30"})),
        text("I see it printed three ticks before you stopped it."),
    )
    session = await open_session(env={"PATH": "/usr/bin:/bin", "TEST_KEY": SECRET, "HOME": str(workspace),
                                      "SECRET_ECHO": "not-a-secret"})
    events = Events()
    task = asyncio.create_task(session.turn("x", approver=AutoApprover(), emit=events.append))
    for _ in range(500):  # wait on what the command printed, not on time
        await asyncio.sleep(0.02)
        if "tick 3" in "".join(e.text for e in events.of(ToolOutput)):
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = [m for m in session.messages if m.role == "tool"][0]
    assert result.content.startswith("interrupted after ")
    head, _, output = result.content.partition("; output so far:\n")
    assert output.splitlines()[:3] == ["tick 1", "tick 2", "tick 3"]
    finished = events.of(ToolFinished)[0]
    assert finished.interrupted and finished.summary == head and "tick 3" in finished.output_tail
    # the next task's request carries it to the model
    finished2 = await session.turn("what happened?", approver=AutoApprover(), emit=Events().append)
    assert finished2.status is TaskStatus.DONE
    sent = [m for m in provider.requests[-1].messages if m.role == "tool"]
    assert "tick 3" in sent[0].content


async def test_a_stopped_commands_output_is_redacted_like_a_result(open_session, provider, workspace):
    from minicode.agent.events import ToolOutput

    provider.script(tools(("bash", {"command": f"echo key={SECRET}; echo ready; sleep 30"})))
    session = await open_session()
    events = Events()
    task = asyncio.create_task(session.turn("x", approver=AutoApprover(), emit=events.append))
    for _ in range(500):
        await asyncio.sleep(0.02)
        if "ready" in "".join(e.text for e in events.of(ToolOutput)):
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = [m for m in session.messages if m.role == "tool"][0]
    assert "ready" in result.content and SECRET not in result.content
