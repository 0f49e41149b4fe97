"""Sub-agents (the agent tool) end to end: the real executable against the scripted server.

A sub-agent's requests go to the same server, after the task's own: the scripts below list
the replies in the order minicode asks for them (the task, then its sub-agent, then the task).
"""

from __future__ import annotations

import json
import signal
import time

from tests.e2e.test_json_e2e import _StdoutLines, _popen
from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply


def _limits(e2e, **limits: int) -> None:
    config = e2e.workspace / "config" / "config.toml"
    table = "".join(f"{key} = {value}\n" for key, value in limits.items())
    config.write_text(config.read_text() + f"\n[subagents]\n{table}")
    from minicode.trust.project_config import confirm_written

    confirm_written(config, e2e.workspace, {"HOME": str(e2e.home)})  # the user's own change


def test_a_sub_agent_reads_a_file_and_reports(e2e):
    (e2e.workspace / "notes.txt").write_text("the port is 8042\n")
    e2e.server.script(
        Reply.tool("agent", task="Which port does notes.txt name?"),
        Reply.tool("read", path="notes.txt"),
        Reply.text("notes.txt:1 names port 8042."),
        Reply.text("The port is 8042."),
    )
    r = e2e.run("--output", "json", "which port?")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    child_request = e2e.server.requests[1]
    # a fresh context: its own system prompt and the task; nothing of the task's conversation
    assert child_request.messages[0]["content"].startswith("You are a sub-agent of minicode")
    assert child_request.messages[-1] == {"role": "user", "content": "Which port does notes.txt name?"}
    assert "which port?" not in json.dumps(child_request.messages)
    assert [t["function"]["name"] for t in child_request.body["tools"]] == ["read", "ls", "glob", "grep"]
    agent_call = of_type(events, "tool_call")[0]
    started, finished = of_type(events, "subagent")
    assert started == {**started, "phase": "started", "parent_call_id": agent_call["id"], "agent_id": "agent-1",
                       "task": "Which port does notes.txt name?"}
    assert finished["status"] == "done" and finished["answer"] == "notes.txt:1 names port 8042."
    child_calls = [e for e in of_type(events, "tool_call") if "parent_call_id" in e]
    assert [c["name"] for c in child_calls] == ["read"] and child_calls[0]["parent_call_id"] == agent_call["id"]
    results = of_type(events, "tool_result")
    assert [x.get("parent_call_id") for x in results] == [agent_call["id"], None]
    assert "8042" in results[0]["text"] and results[1]["text"] == "notes.txt:1 names port 8042."
    # the report is what the task's model got back for its call
    parent_next = e2e.server.requests[3].messages
    assert parent_next[-1] == {"role": "tool", "tool_call_id": agent_call["id"], "content": "notes.txt:1 names port 8042."}
    final = events[-1]
    assert final["answer"] == "The port is 8042."
    assert final["stats"] == {**final["stats"], "model_calls": 4, "tool_calls": 2, "subagents": 1}
    assert final["usage"]["total_tokens"] == 4 * 120  # the sub-agent's tokens are the task's
    assert "(1 sub-agent included)" in r.stderr


def test_a_looping_sub_agent_ends_at_its_limit_with_a_clear_result(e2e):
    _limits(e2e, max_turns=3)
    (e2e.workspace / "a.txt").write_text("a\n")
    same = Reply.tool("grep", pattern="never found")
    e2e.server.script(
        Reply.tool("agent", task="find it"),
        same, same, same,  # the same call again and again, until its limit
        Reply.text("I searched three times and found nothing."),  # its summary request (no tools)
        Reply.text("It is not there."),
    )
    r = e2e.run("--output", "json", "find it")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    assert not e2e.server.requests[4].has_tools  # the summary request offers no tools
    agent_result = [x for x in of_type(events, "tool_result") if "parent_call_id" not in x][0]
    assert agent_result["text"].startswith("the sub-agent stopped at its limit of 3 model requests ([subagents].max_turns)")
    assert "found nothing" in agent_result["text"] and agent_result["summary"].startswith("stopped at its limit")
    assert of_type(events, "subagent")[1]["status"] == "max_turns"
    assert events[-1]["status"] == "done" and len(e2e.server.requests) == 6


def test_a_sub_agent_over_its_time_is_stopped_and_says_what_it_found(e2e):
    _limits(e2e, timeout=1)
    (e2e.workspace / "a.txt").write_text("a\n")
    e2e.server.script(
        Reply.tool("agent", task="look slowly"),
        Reply.tools(("read", {"path": "a.txt"}), content="Reading a.txt first."),
        Reply.hang(),
        Reply.text("The sub-agent ran out of time."),
    )
    r = e2e.run("--output", "json", "look")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    agent_result = [x for x in of_type(events, "tool_result") if "parent_call_id" not in x][0]
    assert agent_result["status"] == "failed"
    assert agent_result["text"].startswith("the sub-agent was stopped after 1 s ([subagents].timeout).")
    assert "Reading a.txt first." in agent_result["text"] and "✓ read a.txt" in agent_result["text"]
    assert events[-1]["status"] == "done"


def test_cancelling_the_task_cancels_its_sub_agent_at_once(e2e):
    e2e.server.script(Reply.tool("agent", task="wait forever"), Reply.hang())
    proc = _popen(e2e, "--output", "stream-json", "go")
    lines = _StdoutLines(proc.stdout)
    try:
        lines.wait_for(lambda e: e["type"] == "subagent" and e["phase"] == "started")
        assert e2e.server.wait_for_requests(2)
        stopped = time.monotonic()
        proc.send_signal(signal.SIGINT)  # Ctrl+C (the full screen's Esc cancels the same task)
        out = lines.rest()
        proc.wait(timeout=15)
        took = time.monotonic() - stopped
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, proc.stderr.read()
    assert took < 5
    events = check_stream(out)
    assert of_type(events, "subagent")[-1]["status"] == "interrupted"
    agent_result = [x for x in of_type(events, "tool_result") if "parent_call_id" not in x][0]
    assert agent_result["status"] == "interrupted" and "the sub-agent was stopped with its task" in agent_result["text"]
    assert events[-1]["status"] == "interrupted" and events[-1]["stats"]["subagents"] == 1
    assert len(e2e.server.requests) == 2  # nothing more was asked of the model


def test_the_cap_refuses_the_next_sub_agent_with_a_message(e2e):
    _limits(e2e, per_task=1)
    e2e.server.script(
        Reply.tools(("agent", {"task": "first part"}), ("agent", {"task": "second part"})),
        Reply.text("first report"),
        Reply.text("Did the second part myself."),
    )
    r = e2e.run("--output", "json", "two parts")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    first, second = [x for x in of_type(events, "tool_result") if "parent_call_id" not in x]
    assert first["text"] == "first report"
    assert second["status"] == "failed" and second["text"].startswith(
        "refused: this task already started its 1 sub-agent ([subagents].per_task)")
    assert len(of_type(events, "subagent")) == 2 and len(e2e.server.requests) == 3


def test_a_bad_limit_is_a_config_error(e2e):
    _limits(e2e, max_turns=0)
    r = e2e.run("go")
    assert r.code == 2 and "[subagents].max_turns must be 1-100" in r.stderr


def test_the_session_records_the_sub_agent_and_a_resume_keeps_its_history_out(e2e):
    (e2e.workspace / "notes.txt").write_text("alpha\n")
    e2e.server.script(
        Reply.tool("agent", task="read notes.txt"),
        Reply.tool("read", path="notes.txt"),
        Reply.text("notes.txt holds one line: alpha."),
        Reply.text("It says alpha."),
    )
    first = e2e.run("say what notes.txt holds")
    assert first.code == 0, first.stderr
    records = [json.loads(line) for line in e2e.session_file(first.session_id).read_text().splitlines()]
    results = [rec for rec in records if rec.get("type") == "message" and rec.get("role") == "tool"]
    assert len(results) == 1 and results[0]["content"] == "notes.txt holds one line: alpha."
    assert results[0]["nested"] == ["✓ read notes.txt — 1 line"]
    assert [rec["stats"]["subagents"] for rec in records if rec.get("type") == "turn_end"] == [1]
    # resumed: the next request has the report, never the sub-agent's own messages
    e2e.server.script(Reply.text("still alpha"))
    again = e2e.run("--session", first.session_id, "and now?")
    assert again.code == 0, again.stderr
    sent = json.dumps(e2e.server.requests[-1].messages)
    assert "notes.txt holds one line: alpha." in sent and "1\\talpha" not in sent and "sub-agent of minicode" not in sent
    export = e2e.run("--export", first.session_id)
    assert "Its sub-agent's calls:" in export.stdout and "✓ read notes.txt — 1 line" in export.stdout


def test_a_small_model_is_not_offered_the_agent_tool(e2e):
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text().replace('name = "fake-model"', 'name = "qwen2.5-coder-1.5b-instruct"'))
    from minicode.trust.project_config import confirm_written

    confirm_written(config, e2e.workspace, {"HOME": str(e2e.home)})
    e2e.server.script(Reply.text("hi"))
    r = e2e.run("hello")
    assert r.code == 0, r.stderr
    assert "agent" not in [t["function"]["name"] for t in e2e.server.requests[0].body["tools"]]
