"""Permission rules in the tool batch: decided before anyone is asked, reported as
``ApprovalResolved(by=RULE)``, "always allow" saves the suggested rule, nobody-to-ask denials
name the rule that would allow the call, and rule files are always asked."""

from __future__ import annotations


from minicode.agent.approval import Approval, ApprovedBy, AutoApprover, Decision, HeadlessApprover
from minicode.agent.events import ApprovalResolved, Notice, ToolFinished
from dataclasses import replace
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule
from minicode.permissions.store import PROJECT_RULES_FILE
from tests.agent.conftest import Events, ScriptedApprover, make_config, yes
from tests.agent.scripted import text, tools


def _config(allow=(), deny=()):
    rules = [SourcedRule(parse_rule(r), Effect.ALLOW, Origin.CONFIG) for r in allow]
    rules += [SourcedRule(parse_rule(r), Effect.DENY, Origin.CONFIG) for r in deny]
    return replace(make_config(), permissions=tuple(rules))


async def run(session, task, approver):
    events = Events()
    finished = await session.turn(task, approver=approver, emit=events.append)
    return finished, events


def _tool_results(session):
    return [m.content for m in session.messages if m.role == "tool"]


async def test_allow_and_deny_rules_decide_without_asking(open_session, provider, workspace):
    provider.script(
        tools(("bash", {"command": "echo hi > out.txt"}), ("bash", {"command": "ls && rm -rf src"})),
        text("done"),
    )
    session = await open_session(config=_config(allow=["bash(echo *)", "write(out.txt)", "bash(ls *)"],
                                                 deny=["bash(rm *)"]))
    approver = ScriptedApprover([])  # would hang if asked
    _, events = await run(session, "go", approver)
    assert approver.requests == []
    assert (workspace / "out.txt").read_text() == "hi\n"
    decided = [(e.allowed, e.by, e.rule) for e in events.of(ApprovalResolved)]
    assert decided == [(True, ApprovedBy.RULE, "bash(echo *), write(out.txt)"), (False, ApprovedBy.RULE, "bash(rm *)")]
    assert _tool_results(session)[1] == "denied by rule bash(rm *)"
    assert events.of(ToolFinished)[1].denied


async def test_deny_rules_win_over_yes_and_over_the_session(open_session, provider, workspace):
    provider.script(tools(("bash", {"command": "git push origin main"})), text("ok"))
    session = await open_session(config=_config(allow=["bash"], deny=["bash(git push *)"]))
    await run(session, "push", AutoApprover())
    assert _tool_results(session) == ["denied by rule bash(git push *)"]


async def test_unmatched_calls_are_asked_with_the_suggested_rule(open_session, provider, workspace):
    provider.script(
        tools(("bash", {"command": "pytest -q"}), ("bash", {"command": "pytest && ls"}),
              ("edit", {"path": "src/a.py", "old_text": "x", "new_text": "y"})),
        text("ok"),
    )
    (workspace / "src").mkdir()
    session = await open_session(config=_config())
    approver = ScriptedApprover([yes(), yes(), yes()])
    await run(session, "go", approver)
    suggested = [r.suggested_rule for r in approver.requests]
    assert suggested[:2] == ["bash(pytest *)", None]  # a compound command has no sensible rule


async def test_always_allow_saves_the_rule_and_later_calls_are_not_asked(open_session, provider, workspace):
    provider.script(
        tools(("bash", {"command": "true --first"})), text("one"),
        tools(("bash", {"command": "true --second"})), text("two"),
    )
    session = await open_session(config=_config())
    approver = ScriptedApprover([Approval(Decision.ALLOW_ALWAYS)])
    _, first = await run(session, "first", approver)
    _, second = await run(session, "second", approver)
    assert len(approver.requests) == 1 and approver.requests[0].suggested_rule == "bash(true *)"
    saved = [(e.by, e.rule) for e in first.of(ApprovalResolved)]
    assert saved == [(ApprovedBy.USER, "bash(true *)")]
    assert any("saved rule bash(true *) in .minicode/local/permissions.toml" in n.text for n in first.of(Notice))
    assert [(e.by, e.rule) for e in second.of(ApprovalResolved)] == [(ApprovedBy.RULE, "bash(true *)")]
    assert '"bash(true *)"' in (workspace / PROJECT_RULES_FILE).read_text()


async def test_a_rule_that_cannot_be_saved_still_allows_the_call_once(open_session, provider, workspace):
    (workspace / ".minicode").mkdir()
    (workspace / ".minicode" / "local").write_text("not a directory")
    provider.script(tools(("bash", {"command": "true"})), text("ok"))
    session = await open_session(config=_config())
    _, events = await run(session, "go", ScriptedApprover([Approval(Decision.ALLOW_ALWAYS)]))
    assert not _tool_results(session)[0].startswith("denied")
    assert any("could not be saved" in n.text for n in events.of(Notice))
    assert [e.rule for e in events.of(ApprovalResolved)] == [None]


async def test_nobody_to_ask_denies_naming_the_rule(open_session, provider, workspace):
    provider.script(tools(("bash", {"command": "pytest -q"})), text("could not run the tests"))
    session = await open_session(config=_config())
    finished, events = await run(session, "test", HeadlessApprover())
    expected = ("denied: no terminal to ask for approval; the rule bash(pytest *) would allow it "
                "(--allow 'bash(pytest *)', or [permissions] allow in the config)")
    assert _tool_results(session) == [expected]
    assert [(e.allowed, e.by, e.reason) for e in events.of(ApprovalResolved)] == [
        (False, ApprovedBy.POLICY, expected.removeprefix("denied: "))
    ]
    assert finished.final_text == "could not run the tests"  # the task went on


async def test_rule_files_are_asked_even_with_an_allow_rule_or_the_session(open_session, provider, workspace):
    target = str(PROJECT_RULES_FILE)
    provider.script(
        tools(("write", {"path": "a.txt", "content": "a"})), text("one"),
        tools(("write", {"path": target, "content": "[permissions]\nallow = [\"bash\"]\n"})), text("two"),
    )
    session = await open_session(config=_config(allow=["write(a.txt)"]))
    approver = ScriptedApprover([Approval(Decision.DENY)])
    await run(session, "one", approver)  # a.txt: allowed by its rule, not asked
    session._allowed.add("write")  # as if "allow write for the session" had been answered
    await run(session, "two", approver)
    assert [r.arguments["path"] for r in approver.requests] == [target]
    assert approver.requests[0].suggested_rule is None  # never offered for saving either
    assert not (workspace / PROJECT_RULES_FILE).exists()
