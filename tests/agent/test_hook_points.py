"""Where hooks run in a task and what their blocks do: before the rules and the approver (a hook
refuses, never allows), after a call, at the prompt and at the final answer; stopped with the task."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from minicode.agent.approval import Approval, AutoApprover, Decision
from minicode.agent.repair import CANCELLED_RESULT
from minicode.agent.events import HookReport, TaskStatus, ToolFinished
from minicode.hooks.spec import HookSpec
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule
from tests.agent.conftest import SECRET, Events, ScriptedApprover, make_config, yes
from tests.agent.scripted import text, tools

APPROVE = """echo '{"decision": "approve", "hookSpecificOutput": {"permissionDecision": "allow"}}'"""


def _config(*hooks: HookSpec, deny: tuple[str, ...] = (), checks: tuple[str, ...] = ()):
    config = replace(make_config(), hooks=hooks,
                     permissions=tuple(SourcedRule(parse_rule(r), Effect.DENY, Origin.CONFIG) for r in deny))
    return replace(config, task=replace(config.task, checks=checks))


async def _turn(session, task, approver):
    events = Events()
    finished = await session.turn(task, approver=approver, emit=events.append)
    return finished, events


def _results(session):
    return [m.content for m in session.messages if m.role == "tool"]


async def test_a_blocked_call_is_never_put_to_the_approver(open_session, provider, workspace):
    provider.script(tools(("bash", {"command": "touch x"}), ("read", {"path": "f.txt"})), text("ok"))
    (workspace / "f.txt").write_text("hi\n")
    hook = HookSpec("PreToolUse", "echo 'not here' >&2; exit 2")
    session = await open_session(config=_config(hook))
    approver = ScriptedApprover([])  # would hang if asked
    finished, events = await _turn(session, "go", approver)
    assert finished.status is TaskStatus.DONE and approver.requests == []
    assert not (workspace / "x").exists()
    assert _results(session) == ["blocked by the PreToolUse hook `echo 'not here' >&2; exit 2`: not here"] * 2
    assert [(r.tool, r.blocked) for r in events.of(HookReport)] == [("bash", True), ("read", True)]
    assert all(f.denied and f.summary == "blocked by a hook" for f in events.of(ToolFinished))


async def test_a_hooks_approval_never_passes_a_deny_rule_or_the_approver(open_session, provider, workspace):
    provider.script(tools(("bash", {"command": "rm -rf build"}), ("bash", {"command": "touch y"})), text("ok"))
    session = await open_session(config=_config(HookSpec("PreToolUse", APPROVE), deny=("bash(rm *)",)))
    approver = ScriptedApprover([yes()])
    _, events = await _turn(session, "go", approver)
    assert _results(session)[0] == "denied by rule bash(rm *)"
    assert [r.arguments["command"] for r in approver.requests] == ["touch y"]  # still asked
    assert events.of(HookReport) == []  # an approval is nothing to report


async def test_a_failing_hook_is_reported_and_the_call_runs(open_session, provider, workspace):
    provider.script(tools(("bash", {"command": "touch ran"})), text("ok"))
    session = await open_session(config=_config(HookSpec("PreToolUse", "exit 5", matcher="bash")))
    _, events = await _turn(session, "go", AutoApprover())
    assert (workspace / "ran").exists()
    assert [(r.blocked, r.text) for r in events.of(HookReport)] == [(False, "exit 5")]


async def test_hooks_run_without_the_api_key_in_their_environment(open_session, provider, workspace):
    provider.script(text("ok"))
    session = await open_session(config=_config(HookSpec("UserPromptSubmit", "env > env.txt")))
    await _turn(session, "go", AutoApprover())
    seen = (workspace / "env.txt").read_text()
    assert SECRET not in seen and "TEST_KEY=" not in seen and f"MINICODE_PROJECT_DIR={workspace}" in seen


async def test_a_stop_hook_runs_once_the_checks_pass(open_session, provider, workspace):
    provider.script(text("done"), text("fixed"), text("really"))
    stop = HookSpec("Stop", "test -f stop-ok || { touch stop-ok; echo again >&2; exit 2; }")
    session = await open_session(config=_config(stop, checks=("test -f fixed || { touch fixed; exit 1; }",)))
    finished, events = await _turn(session, "go", AutoApprover())
    assert finished.status is TaskStatus.DONE and finished.final_text == "really"
    told = [m.content for m in session.messages if m.role == "user"]
    assert told[1].startswith("[acceptance checks failed]") and told[2].startswith("[Stop hook]")
    assert [r.event for r in events.of(HookReport)] == ["Stop"]


async def test_stopped_during_a_pre_tool_use_hook_the_call_is_answered_and_the_hook_killed(open_session, provider,
                                                                                          workspace):
    started = workspace / "hook-started"
    provider.script(tools(("bash", {"command": "touch never"})), text("never"))
    session = await open_session(config=_config(HookSpec("PreToolUse", f"touch {started}; sleep 60")))
    task = asyncio.ensure_future(session.turn("go", approver=AutoApprover(), emit=lambda e: None))
    while not started.exists():
        await asyncio.sleep(0.02)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert not (workspace / "never").exists()
    assert _results(session) == [CANCELLED_RESULT]


async def test_stopped_during_a_post_tool_use_hook_the_call_keeps_its_real_result(open_session, provider, workspace):
    started = workspace / "hook-started"
    provider.script(tools(("bash", {"command": "echo did-it"})), text("never"))
    session = await open_session(config=_config(HookSpec("PostToolUse", f"touch {started}; sleep 60")))
    task = asyncio.ensure_future(session.turn("go", approver=AutoApprover(), emit=lambda e: None))
    while not started.exists():
        await asyncio.sleep(0.02)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert _results(session)[0].startswith("did-it")


async def test_a_blocked_prompt_is_not_recorded(open_session, provider, workspace):
    session = await open_session(config=_config(HookSpec("UserPromptSubmit", "echo nope >&2; exit 2")))
    finished, events = await _turn(session, "go", ScriptedApprover([Approval(Decision.DENY)]))
    assert finished.status is TaskStatus.ERROR and "blocked by the UserPromptSubmit hook" in (finished.error or "")
    assert [m.role for m in session.messages] == [] and provider.requests == []


async def test_a_sub_agents_calls_pass_the_tool_hooks_and_its_task_no_prompt_hook(open_session, provider, workspace):
    (workspace / "secret.txt").write_text("s3cret\n")
    provider.script(
        tools(("agent", {"task": "read secret.txt"})),
        tools(("read", {"path": "secret.txt"})),  # the sub-agent's call
        text("I could not read it."),  # the sub-agent's report
        text("done"),
    )
    pre = HookSpec("PreToolUse", "echo 'no secrets' >&2; exit 2", matcher="read")
    prompt = HookSpec("UserPromptSubmit", "echo x >> prompts.log")
    session = await open_session(config=_config(pre, prompt))
    finished, events = await _turn(session, "go", AutoApprover())
    assert finished.status is TaskStatus.DONE
    from minicode.agent.events import SubAgentEvent

    nested = [e.event for e in events.of(SubAgentEvent) if isinstance(e.event, HookReport)]
    assert [(r.tool, r.blocked) for r in nested] == [("read", True)]  # the sub-agent's read, blocked like the task's
    child_result = provider.requests[2].messages[-1]
    assert child_result.role == "tool" and "no secrets" in (child_result.content or "")
    assert (workspace / "prompts.log").read_text() == "x\n"  # the task's prompt, not the sub-task's
