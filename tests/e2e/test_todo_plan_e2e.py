"""End-to-end: the todo tool and plan mode with the real executable against the scripted
server — the list on stderr, in JSON events and in the session (resume restores it), and a
planning model refused every write and command (the file unchanged), then accept and reject."""

from __future__ import annotations

import json

from tests.e2e.conftest import Env
from tests.support.events import check_stream
from tests.support.fake_openai import Reply

STEPS = [{"text": "read app.py", "status": "done"}, {"text": "fix the sum", "status": "in_progress"},
         {"text": "run the tests", "status": "pending"}]


def _tool_names(request_body: dict) -> list[str]:  # type: ignore[type-arg]
    return [t["function"]["name"] for t in request_body.get("tools", [])]


def test_todo_changes_are_printed_kept_and_restored(e2e: Env) -> None:
    e2e.server.script(Reply.tool("todo", items=STEPS), Reply.text("Working on it."))
    run = e2e.run("keep a list")
    assert run.code == 0, run.stderr
    assert "minicode: task list (1/3 done):\n  ✓ read app.py\n  ▶ fix the sum\n  ☐ run the tests\n" in run.stderr
    assert "todo" in _tool_names(e2e.server.requests[0].body)
    records = [json.loads(line) for line in e2e.session_file(run.session_id).read_text().splitlines()]
    assert {"type": "todo", "items": STEPS} in records
    # a resumed session still has it: the next change prints only against it
    e2e.server.script(Reply.tool("todo", items=[{**s, "status": "done"} for s in STEPS]), Reply.text("Done."))
    again = e2e.run("-c", "finish")
    assert again.code == 0, again.stderr
    assert "minicode: task list (3/3 done):" in again.stderr


def test_nonsense_lists_are_refused_with_a_message_the_model_can_act_on(e2e: Env) -> None:
    two = [{"text": "a", "status": "in_progress"}, {"text": "b", "status": "in_progress"}]
    e2e.server.script(Reply.tool("todo", items=two), Reply.text("ok"))
    run = e2e.run("keep a list")
    assert run.code == 0, run.stderr
    result = next(m for m in e2e.server.requests[1].messages if m["role"] == "tool")
    assert "task list not changed: items 1, 2 are all in_progress" in result["content"]
    assert "task list (" not in run.stderr
    records = [json.loads(line) for line in e2e.session_file(run.session_id).read_text().splitlines()]
    assert not any(r["type"] == "todo" for r in records)


def test_json_events_carry_the_list_and_the_mode(e2e: Env) -> None:
    e2e.server.script(Reply.tool("todo", items=STEPS[:1]), Reply.text("The plan: one step."))
    run = e2e.run("--output", "json", "--plan", "plan it")
    assert run.code == 0, run.stderr
    events = check_stream(run.stdout)  # every line valid under docs/events.schema.json
    kinds = [e["type"] for e in events]
    assert kinds.index("mode") < kinds.index("user") < kinds.index("todo")
    assert next(e for e in events if e["type"] == "mode") | {"seq": 0} == {
        "v": 1, "type": "mode", "session": events[0]["session"], "seq": 0, "mode": "plan", "why": "entered"}
    todo = next(e for e in events if e["type"] == "todo")
    assert todo["items"] == STEPS[:1] and todo["summary"] == "1/1 done"


def test_planning_refuses_writes_and_commands_and_prints_the_plan(e2e: Env) -> None:
    (e2e.workspace / "app.py").write_text("x = 1\n")
    plan = [{"text": "change x to 2 in app.py", "status": "pending"}, {"text": "run the tests", "status": "pending"}]
    e2e.server.script(
        Reply.tools(("write", {"path": "app.py", "content": "x = 2\n"}), ("bash", {"command": "touch made.txt"}),
                    ("read", {"path": "app.py"})),
        Reply.tool("todo", items=plan),
        Reply.text("Plan: change x, then test."),
    )
    run = e2e.run("--plan", "--allow", "bash(*)", "plan: set x to 2")  # even a rule cannot let bash run
    assert run.code == 0, run.stderr
    assert (e2e.workspace / "app.py").read_text() == "x = 1\n" and not (e2e.workspace / "made.txt").exists()
    first = e2e.server.requests[0].body
    assert _tool_names(first) == ["read", "ls", "glob", "grep", "agent", "todo"]
    assert "[minicode note: plan mode:" in first["messages"][-1]["content"]
    results = [m["content"] for m in e2e.server.requests[1].messages if m["role"] == "tool"]
    assert results[0].startswith("refused: write is not available in plan mode")
    assert results[1].startswith("refused: bash is not available in plan mode")
    assert "x = 1" in results[2]  # reading works
    assert run.stdout == "Plan: change x, then test.\nplan:\n☐ change x to 2 in app.py\n☐ run the tests\n"
    assert "minicode: plan mode: read-only tools" in run.stderr and "plan ready (nothing was changed)" in run.stderr
    assert len(e2e.server.requests) == 3  # printed, not acted on


def test_plan_yes_accepts_and_acts_on_the_list(e2e: Env) -> None:
    (e2e.workspace / "app.py").write_text("x = 1\n")
    plan = [{"text": "change x to 2 in app.py", "status": "pending"}]
    e2e.server.script(
        Reply.tool("todo", items=plan), Reply.text("Plan: change x."),
        Reply.tool("write", path="app.py", content="x = 2\n"),
        Reply.tool("todo", items=[{**plan[0], "status": "done"}]), Reply.text("Changed x."),
    )
    run = e2e.run("--plan", "--yes", "set x to 2")
    assert run.code == 0, run.stderr
    assert (e2e.workspace / "app.py").read_text() == "x = 2\n"
    assert "minicode: plan accepted: acting on it" in run.stderr
    acting = e2e.server.requests[2].body
    assert "write" in _tool_names(acting) and "bash" in _tool_names(acting)
    assert acting["messages"][-1]["content"].startswith("The user accepted your plan")
    assert "minicode: task list (1/1 done):" in run.stderr
    records = [json.loads(line) for line in e2e.session_file(run.session_id).read_text().splitlines()]
    modes = [r["mode"] for r in records if r["type"] == "settings" and "mode" in r]
    assert modes == ["plan", "act"]


def test_pipe_plan_reject_drops_the_list_and_tells_the_model(e2e: Env) -> None:
    e2e.server.script(Reply.tool("todo", items=STEPS[2:]), Reply.text("Plan: test."), Reply.text("ok"))
    run = e2e.run(stdin="/plan\nplan the tests\n/plan reject\n/plan reject\nnow just say ok\n")
    assert run.code == 1, run.stderr  # the second reject failed: not planning any more
    assert "minicode: plan ready: /plan accept to act on it" in run.stderr  # after the planning line
    assert "minicode: plan rejected: back to acting, the task list is cleared" in run.stderr
    assert "minicode: error: not in plan mode: there is no plan to reject" in run.stderr
    assert "minicode: task list cleared" in run.stderr
    last = e2e.server.requests[-1].body
    assert "write" in _tool_names(last)
    assert last["messages"][-1]["content"].startswith("[minicode note: the user rejected the plan")


def test_a_plan_with_no_list_has_nothing_to_accept(e2e: Env) -> None:
    e2e.server.script(Reply.text("I would just do it."))
    run = e2e.run("--plan", "--yes", "do it")
    assert run.code == 1
    assert "minicode: the model proposed no task list: nothing to act on" in run.stderr
    assert len(e2e.server.requests) == 1


def test_the_list_survives_compaction_verbatim(e2e: Env) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text() + "context_window = 40000\n")
    big = "B" * 70_000  # more than the kept recent part: the todo call is summarised away
    e2e.server.script(Reply.tool("todo", items=STEPS), Reply.text("listed"), Reply.text("a1"), Reply.text("a2"),
                      Reply.text("THE SUMMARY"), Reply.text("a3"))
    run = e2e.run(stdin=f"keep a list\n{big}\nsmall task\n/compact\nwhat is left?\n")
    assert run.code == 0, run.stderr
    sent = json.dumps(e2e.server.requests[-1].messages)
    assert "THE SUMMARY" in sent and '"todo"' not in sent  # the todo call itself was summarised
    expected = "[done] read app.py\n[in_progress] fix the sum\n[pending] run the tests"
    assert f"<task-list>\n{expected}\n</task-list>" in json.loads(sent)[1]["content"]
    records = [json.loads(line) for line in e2e.session_file(run.session_id).read_text().splitlines()]
    assert next(r for r in records if r["type"] == "checkpoint")["todo"] == expected
    # resumed, the checkpoint still says it
    e2e.server.script(Reply.text("a4"))
    again = e2e.run("-c", "and now?")
    assert again.code == 0, again.stderr
    assert f"<task-list>\n{expected}\n</task-list>" in e2e.server.requests[-1].messages[1]["content"]
