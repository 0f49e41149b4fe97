"""End-to-end: the real `minicode` executable in pipe and one-shot modes against FakeOpenAI."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid

import pytest

from minicode.agent.repair import INTERRUPTED_RESULT
from minicode.provider.messages import validate_messages
from minicode.provider.types import Message, ToolCall
from minicode.session.store import SessionStore
from tests.e2e.conftest import API_KEY, KEY_VAR
from tests.support.fake_openai import Reply


def _as_messages(raw):
    out = []
    for m in raw:
        calls = tuple(ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls", []))
        out.append(Message(role=m["role"], content=m.get("content"), tool_calls=calls, tool_call_id=m.get("tool_call_id")))
    return out


def test_write_run_answer_with_yes(e2e):
    e2e.server.script(
        Reply.tool("write", path="calc.py", content="print(6 * 7)\n"),
        Reply.tool("bash", command="python3 calc.py"),
        Reply.text("calc.py prints **42**."),
    )
    r = e2e.run("--yes", "write calc.py and run it")
    assert r.code == 0, r.stderr
    assert r.stdout == "calc.py prints **42**.\n"
    assert (e2e.workspace / "calc.py").read_text() == "print(6 * 7)\n"
    bash_result = e2e.server.requests[2].messages[-1]
    assert bash_result["role"] == "tool" and bash_result["content"].startswith("42")
    assert "minicode: done" in r.stderr and "3 model calls · 2 tool calls" in r.stderr
    assert f"minicode --session {r.session_id}" in r.stderr.splitlines()[-1]
    assert "\x1b[" not in r.stderr


def test_pipe_without_terminal_denies_an_unruled_call_naming_the_rule(e2e):
    # Issue 14: without a terminal nobody can answer, so the call is denied at once (not
    # asked on stdin): the model and stderr say which rule would allow it; the task goes on.
    e2e.server.script(Reply.tool("write", path="nope.txt", content="x"), Reply.text("Understood, nothing written."))
    r = e2e.run(stdin="please write nope.txt\n")
    assert r.code == 0, r.stderr
    assert not (e2e.workspace / "nope.txt").exists()
    told = e2e.server.requests[1].messages[-1]["content"]
    assert told.startswith("denied: no terminal to ask for approval; the rule write(./nope.txt) would allow it")
    assert "minicode: denied write nope.txt: no terminal to ask for approval" in r.stderr
    assert "[y/" not in r.stderr and r.stdout == "Understood, nothing written.\n"


def test_pipe_mode_runs_each_line_in_order_and_a_later_line_is_a_task(e2e):
    # A "y" line is no approval answer any more (no terminal): it is the next task.
    e2e.server.script(Reply.text("one"), Reply.tool("write", path="w.txt", content="w"), Reply.text("two"),
                      Reply.text("three"))
    r = e2e.run("--allow", "write(w.txt)", stdin="first task\n\nsecond task\ny\n")
    assert r.code == 0, r.stderr
    assert r.stdout == "one\ntwo\nthree\n"
    assert (e2e.workspace / "w.txt").read_text() == "w"
    assert e2e.server.requests[1].messages[-1]["content"] == "second task"
    assert e2e.server.requests[3].messages[-1]["content"] == "y"


def test_oneshot_without_terminal_denies_and_the_task_goes_on(e2e):
    e2e.server.script(Reply.tool("bash", command="touch x"), Reply.text("ok, I could not run it"))
    r = e2e.run("do it")  # one-shot, no terminal: nobody can be asked
    assert r.code == 0, r.stderr
    assert not (e2e.workspace / "x").exists()
    assert len(e2e.server.requests) == 2 and r.stdout == "ok, I could not run it\n"
    store, loaded = SessionStore.open(e2e.workspace, r.session_id)
    store.close()
    denial = next(m.content for m in loaded.messages if m.role == "tool")
    assert denial.startswith("denied: no terminal to ask for approval; the rule bash(touch *) would allow it")


def test_pipe_mode_keeps_going_after_a_denied_call(e2e):
    e2e.server.script(Reply.tool("bash", command="touch x"), Reply.text("ok"), Reply.text("later"))
    r = e2e.run(stdin="do it\nnext\n")
    assert r.code == 0, r.stderr
    assert r.stdout == "ok\nlater\n" and len(e2e.server.requests) == 3


def test_oneshot_attaches_piped_text(e2e):
    e2e.server.script(Reply.text("looks fine"))
    r = e2e.run("review this", stdin="diff --git a/x b/x\n+added\n")
    assert r.code == 0 and r.stdout == "looks fine\n"
    user = e2e.server.requests[0].messages[-1]["content"]
    assert user == "review this\n\n<stdin>\ndiff --git a/x b/x\n+added\n</stdin>"


def test_max_turns_ends_with_summary_request_without_tools(e2e):
    e2e.server.default = Reply.tool("ls")
    r = e2e.run("--yes", "--max-turns", "3", "loop")
    assert r.code == 1
    assert len(e2e.server.requests) == 4
    assert not e2e.server.requests[-1].has_tools and all(q.has_tools for q in e2e.server.requests[:3])
    assert "max turns reached" in r.stderr


def test_timeout(e2e):
    e2e.server.script(Reply.hang())
    start = time.monotonic()
    r = e2e.run("--timeout", "1", "wait")
    assert r.code == 1 and "timed out" in r.stderr and r.stdout == ""
    assert time.monotonic() - start < 15


def test_api_401_shows_server_message(e2e):
    e2e.server.script(Reply.error(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}))
    r = e2e.run("hi")
    assert r.code == 1 and "Incorrect API key provided" in r.stderr and r.stdout == ""


def test_resume_sends_whole_history_and_continue(e2e):
    e2e.server.script(Reply.text("first answer"))
    first = e2e.run("first task")
    e2e.server.script(Reply.text("second answer"))
    second = e2e.run("--session", first.session_id, "second task")
    assert second.code == 0 and second.session_id == first.session_id
    contents = [m["content"] for m in e2e.server.requests[-1].messages[1:]]
    assert contents == ["first task", "first answer", "second task"]
    e2e.server.script(Reply.text("third answer"))
    third = e2e.run("-c", "third task")
    assert third.session_id == first.session_id
    assert [m["content"] for m in e2e.server.requests[-1].messages[1:]][-1] == "third task"
    assert len(e2e.server.requests[-1].messages) == 6


@pytest.mark.parametrize("bad", [str(uuid.uuid4()), "../../etc/passwd", "not-a-uuid"])
def test_unknown_or_malformed_session_exits_2(e2e, bad):
    r = e2e.run("--session", bad, "x")
    assert r.code == 2 and "session" in r.stderr and not e2e.server.requests


def test_continue_without_sessions_exits_2(e2e):
    r = e2e.run("-c", "x")
    assert r.code == 2 and not e2e.server.requests


def test_torn_last_line_resumes(e2e):
    e2e.server.script(Reply.text("first"))
    first = e2e.run("task one")
    with e2e.session_file(first.session_id).open("ab") as f:
        f.write(b'{"type":"message","role":"user","content":"tor')
    e2e.server.script(Reply.text("second"))
    r = e2e.run("--session", first.session_id, "task two")
    assert r.code == 0 and "torn" in r.stderr
    assert [m["content"] for m in e2e.server.requests[-1].messages[1:]] == ["task one", "first", "task two"]


def test_sigkill_mid_batch_then_resume_is_valid(e2e):
    e2e.server.script(Reply.tools(("ls", {}), ("bash", {"command": "sleep 30"}), ("ls", {})))
    proc = e2e.popen("--yes", "list and wait")
    sid = None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        files = list((e2e.workspace / ".minicode" / "sessions").glob("*.jsonl"))
        if files and '"role":"tool"' in files[0].read_text():
            sid = files[0].stem
            break
        time.sleep(0.05)
    assert sid, "the first tool result was never saved"
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    e2e.server.script(Reply.text("resumed fine"))
    r = e2e.run("--session", sid, "go on")
    assert r.code == 0, r.stderr
    sent = e2e.server.requests[-1].messages
    validate_messages(_as_messages(sent))
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert len(results) == 3 and results[1:] == [INTERRUPTED_RESULT, INTERRUPTED_RESULT]


def test_sigterm_during_long_bash(e2e):
    marker = e2e.workspace / "child.pid"
    e2e.server.script(Reply.tool("bash", command=f"echo $$ > {marker}; sleep 60"))
    proc = e2e.popen("--yes", "wait a minute")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not (marker.exists() and marker.read_text().strip()):
        time.sleep(0.05)
    child = int(marker.read_text())
    time.sleep(0.1)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=10)
    assert time.monotonic() - start < 2.0
    assert proc.returncode == 130, err
    assert err.count("minicode: interrupted") == 1, err
    with pytest.raises(ProcessLookupError):
        os.killpg(child, 0)
    sid = next(line.split()[-1] for line in err.splitlines() if line.startswith("minicode: session "))
    _, loaded = SessionStore.open(e2e.workspace, sid)
    validate_messages(loaded.messages)
    assert loaded.messages[-1].role == "tool"
    assert "minicode --session" in err


def test_api_key_never_in_session_file_or_stderr(e2e):
    boom = Reply.error(500, {"error": {"message": "boom"}}, headers={"Retry-After": "0"})  # retried at once
    e2e.server.script(Reply.tool("bash", command="env"), boom)
    e2e.server.default = boom
    r = e2e.run("--yes", "print env")
    assert r.code == 1
    text = e2e.session_file(r.session_id).read_text()
    assert API_KEY not in text and KEY_VAR not in text and API_KEY not in r.stderr
    tool_result = json.loads([l for l in text.splitlines() if '"role":"tool"' in l][0])["content"]
    assert "PATH=" in tool_result


def test_pipe_compact_line(e2e):
    e2e.server.script(Reply.text("answer"))
    r = e2e.run(stdin="/compact\nreal task\n")
    assert r.code == 0 and r.stdout == "answer\n"
    assert "nothing to compact" in r.stderr
    assert len(e2e.server.requests) == 1 and e2e.server.requests[0].messages[-1]["content"] == "real task"


def test_retries_are_reported_on_stderr_once_per_attempt(e2e):
    busy = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
    e2e.server.script(
        Reply.error(429, busy, headers={"Retry-After": "0"}),
        Reply.error(503, "<html>busy</html>", headers={"Retry-After": "0"}),
        Reply.text("made it"),
    )
    r = e2e.run("do it")
    assert r.code == 0, r.stderr
    assert r.stdout == "made it\n"  # stdout keeps only the answer
    retries = [line for line in r.stderr.splitlines() if "retrying" in line]
    assert retries == [
        "minicode: retrying now (attempt 2 of 4): HTTP 429 rate limited",
        "minicode: retrying now (attempt 3 of 4): HTTP 503 service unavailable",
    ]


def test_retries_that_all_fail_end_with_the_error(e2e):
    e2e.server.script(*[Reply.error(500, {"error": {"message": "down"}}, headers={"Retry-After": "0"})] * 4)
    r = e2e.run("do it")
    assert r.code == 1
    assert sum("retrying" in line for line in r.stderr.splitlines()) == 3
    assert "HTTP 500: down" in r.stderr
