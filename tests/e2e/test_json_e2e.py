"""--output json / stream-json end to end: the real executable against the fake server.

Every run's stdout is checked by ``check_stream``: only JSON Lines, each valid under
docs/events.schema.json with no undeclared field, ``seq`` 1, 2, 3…, one session, and a
``result`` as the last line.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time

import pytest

from tests.support.filler import prose
from tests.e2e.conftest import API_KEY
from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply


class _StdoutLines:
    """The lines of a running process's stdout, read by a thread, so a test can wait for one."""

    def __init__(self, stream) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, predicate, timeout: float = 15.0) -> dict:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            event = json.loads(line)
            if predicate(event):
                return event
        raise AssertionError(f"no such event; stdout so far:\n{''.join(self.seen)}")

    def rest(self) -> str:
        while (line := self.lines.get(timeout=15)) is not None:
            self.seen.append(line)
        return "".join(self.seen)


def _popen(e2e, *args, stdin=subprocess.DEVNULL):
    return subprocess.Popen(
        e2e.argv(*args), cwd=e2e.workspace, env=e2e.environ(), stdin=stdin, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )


def _tool_messages(request) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request.messages if m["role"] == "tool"}


def test_multi_tool_task(e2e):
    (e2e.workspace / "notes.txt").write_text("alpha\nbeta\n")
    e2e.server.script(
        Reply.tools(("read", {"path": "notes.txt"}), ("write", {"path": "out.txt", "content": "done\n"})),
        Reply.tools(("bash", {"command": "cat out.txt; echo oops >&2; exit 4"}), content="Checking."),
        Reply.text("Wrote out.txt; the check exits 4.", reasoning="the command failed"),
    )
    r = e2e.run("--output", "json", "--yes", "copy things")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    kinds = [e["type"] for e in events]
    assert kinds == [
        "session", "user",
        "assistant", "tool_call", "tool_call",
        "tool_result", "approval", "approval", "tool_result",
        "assistant", "tool_call", "approval", "approval", "tool_result",
        "assistant", "result",
    ]  # fmt: skip
    session, user = events[0], events[1]
    assert session["id"] == r.session_id and session["resumed"] is False and session["approvals"] == "auto"
    assert session["workspace"] == str(e2e.workspace) and session["model"] == "fake-model"
    assert set(session["tools"]) == {"read", "ls", "glob", "grep", "write", "edit", "bash", "agent", "todo"}  # nobody to ask: no ask_user
    assert user["text"] == "copy things" and user["task"] == 1
    calls = of_type(events, "tool_call")
    assert [c["name"] for c in calls] == ["read", "write", "bash"]
    assert calls[1]["arguments"] == {"path": "out.txt", "content": "done\n"}
    # each result is exactly what the model got in its next request
    seen_by_model = _tool_messages(e2e.server.requests[1]) | _tool_messages(e2e.server.requests[2])
    results = of_type(events, "tool_result")
    assert [r_["status"] for r_ in results] == ["done", "done", "failed"]
    for result in results:
        assert result["text"] == seen_by_model[result["id"]]
    assert "alpha" in results[0]["text"] and results[2]["exit_code"] == 4 and "oops" in results[2]["text"]
    assert of_type(events, "assistant")[1]["text"] == "Checking."
    final = events[-1]
    assert final["status"] == "done" and final["answer"] == "Wrote out.txt; the check exits 4."
    assert final["exit_code"] == 0 and final["stats"]["model_calls"] == 3 and final["stats"]["tool_calls"] == 3
    assert final["usage"] == {"prompt_tokens": 300, "completion_tokens": 60, "total_tokens": 360, "partial": False}
    assert of_type(events, "assistant")[2]["reasoning"] == "the command failed"
    assert (e2e.workspace / "out.txt").read_text() == "done\n"
    assert "minicode: done" in r.stderr  # the human lines stay on stderr
    assert API_KEY not in r.stdout and API_KEY not in r.stderr


def test_denied_call_without_yes(e2e):
    e2e.server.script(Reply.tool("bash", command="touch hacked"), Reply.text("I could not run it."))
    r = e2e.run("--output", "json", "run something")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    asked, answered = of_type(events, "approval")
    assert asked["phase"] == "asked" and asked["detail"] == "touch hacked"
    assert answered["phase"] == "answered" and answered["allowed"] is False and answered["by"] == "policy"
    assert "--yes" in answered["reason"] and "--allow 'bash(touch *)'" in answered["reason"]
    assert asked["suggested_rule"] == "bash(touch *)"
    (result,) = of_type(events, "tool_result")
    assert result["status"] == "denied" and result["text"] == f"denied: {answered['reason']}"
    assert _tool_messages(e2e.server.requests[1])[result["id"]] == result["text"]  # the model is told why
    assert not (e2e.workspace / "hacked").exists()
    assert events[0]["approvals"] == "deny" and events[-1]["status"] == "done"
    assert "minicode: denied bash" in r.stderr


def test_permission_rules_decide_without_asking(e2e):
    e2e.server.script(
        Reply.tools(("bash", {"command": "touch allowed.txt"}), ("bash", {"command": "rm -rf build"})),
        Reply.text("one ran, one was refused"),
    )
    r = e2e.run("--output", "json", "--allow", "bash(touch *)", "--deny", "bash(rm *)", "tidy up")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    approvals = of_type(events, "approval")
    assert [(a["phase"], a["allowed"], a["by"], a["rule"]) for a in approvals] == [
        ("answered", True, "rule", "bash(touch *)"), ("answered", False, "rule", "bash(rm *)")]
    assert [x["status"] for x in of_type(events, "tool_result")] == ["done", "denied"]
    assert (e2e.workspace / "allowed.txt").exists()


def test_api_error(e2e):
    e2e.server.script(Reply.error(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}))
    r = e2e.run("--output", "json", "hello")
    assert r.code == 1
    events = check_stream(r.stdout)
    assert [e["type"] for e in events] == ["session", "user", "result"]
    final = events[-1]
    assert final["status"] == "error" and final["exit_code"] == 1 and final["answer"] == ""
    assert "Incorrect API key provided" in final["error"] and "api_key" in final["error"]
    assert final["stats"]["model_calls"] == 1 and final["usage"] is None


def test_retry_then_success(e2e):
    busy = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
    e2e.server.script(Reply.error(429, busy, headers={"Retry-After": "0"}), Reply.text("made it"))
    r = e2e.run("--output", "json", "do it")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    (retry,) = of_type(events, "retry")
    assert retry["attempt"] == 2 and retry["max_attempts"] == 4 and retry["wait_seconds"] == 0
    assert "429" in retry["reason"]
    assert events[-1]["answer"] == "made it"


def test_timeout(e2e):
    e2e.server.script(Reply.hang())
    r = e2e.run("--output", "json", "--timeout", "1", "slow")
    assert r.code == 1
    events = check_stream(r.stdout)
    final = events[-1]
    assert final["status"] == "timed_out" and final["exit_code"] == 1 and "1 s" in final["error"]


def test_config_error_is_a_result_too(e2e):
    (e2e.workspace / "config" / "config.toml").write_text('[model]\nbase_url = "http://127.0.0.1:9/v1"\nname = 5\n')
    r = e2e.run("--output", "json", "hello")
    assert r.code == 2
    (event,) = check_stream(r.stdout)
    assert event["session"] is None and event["task"] is None and event["status"] == "error"
    assert event["exit_code"] == 2 and "name" in event["error"]
    assert "minicode: error:" in r.stderr


@pytest.mark.parametrize("bad", ["no-such-session", "00000000-0000-4000-8000-000000000000"])
def test_unknown_session_is_a_result(e2e, bad):
    r = e2e.run("--output", "json", "--session", bad, "hello")
    assert r.code == 2
    (event,) = check_stream(r.stdout)
    assert event["status"] == "error" and event["exit_code"] == 2


def test_resumed_session(e2e):
    e2e.server.script(Reply.text("first answer"), Reply.text("second answer"))
    first = e2e.run("--output", "json", "remember 42")
    sid = check_stream(first.stdout)[0]["id"]
    second = e2e.run("--output", "json", "--session", sid, "what did I say?")
    assert second.code == 0, second.stderr
    events = check_stream(second.stdout)
    session = events[0]
    assert session["id"] == sid and session["resumed"] is True and session["messages"] == 2
    assert all(e["session"] == sid for e in events)
    assert events[-1]["answer"] == "second answer" and events[-1]["task"] == 1
    sent = e2e.server.requests[1].messages
    assert [m["content"] for m in sent if m["role"] in ("user", "assistant")][-3:] == [
        "remember 42", "first answer", "what did I say?"]


def test_pipe_mode_runs_each_line_and_the_last_failure_decides(e2e):
    e2e.server.script(Reply.error(400, {"error": {"message": "bad request"}}), Reply.text("two"))
    r = e2e.run("--output", "json", stdin="one\n\ntwo\n")
    assert r.code == 1
    events = check_stream(r.stdout)
    users, results = of_type(events, "user"), of_type(events, "result")
    assert [u["text"] for u in users] == ["one", "two"] and [u["task"] for u in users] == [1, 2]
    assert [(x["task"], x["status"], x["exit_code"]) for x in results] == [(1, "error", 1), (2, "done", 1)]


def test_pipe_mode_with_no_task_still_ends_with_a_result(e2e):
    r = e2e.run("--output", "json", stdin="")
    assert r.code == 0
    events = check_stream(r.stdout)
    assert [e["type"] for e in events] == ["session", "result"]
    assert events[-1]["task"] is None and events[-1]["status"] == "done"


def test_pipe_compact_failure_after_the_last_task_is_in_the_closing_result(e2e):
    e2e.server.script(Reply.text("answer"))
    (e2e.workspace / "MiniCode.md").write_text("x" * 70_000)  # over the memory limit
    r = e2e.run("--output", "json", stdin="/compact\n")
    assert r.code == 1
    events = check_stream(r.stdout)
    assert of_type(events, "notice")  # the broken memory file, and the failed /compact
    final = events[-1]
    assert final["task"] is None and final["status"] == "error" and final["exit_code"] == 1
    assert "MiniCode.md" in final["error"]


def test_stream_json_deltas_add_up_to_the_answer(e2e):
    answer = prose(3_000)  # long, never repeating itself (a repeated sentence is cut as a runaway)
    e2e.server.script(Reply.text(answer, reasoning="let me think " * 30, chunk_size=5))
    r = e2e.run("--output", "stream-json", "explain")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    deltas = of_type(events, "delta")
    text = "".join(d["text"] for d in deltas if d["kind"] == "text")
    reasoning = "".join(d["text"] for d in deltas if d["kind"] == "reasoning")
    assert text == answer and reasoning == "let me think " * 30
    assert len(deltas) < 20  # coalesced: 600 chunks of 5 characters are not 600 events
    (assistant,) = of_type(events, "assistant")
    assert "text" not in assistant and "reasoning" not in assistant  # the deltas carried them
    assert events[-1]["answer"] == answer
    assert len(r.stdout.encode()) <= 3 * len(answer.encode())


def test_stream_json_tool_output_deltas(e2e):
    e2e.server.script(Reply.tool("bash", command="for i in 1 2 3; do echo line$i; done"), Reply.text("ok"))
    r = e2e.run("--output", "stream-json", "--yes", "count")
    events = check_stream(r.stdout)
    outputs = [d for d in of_type(events, "delta") if d["kind"] == "tool_output"]
    (call,) = of_type(events, "tool_call")
    assert outputs and all(d["id"] == call["id"] for d in outputs)
    assert "".join(d["text"] for d in outputs) == "line1\nline2\nline3\n"
    # the output comes before its call's result
    assert events.index(of_type(events, "tool_result")[0]) > max(events.index(d) for d in outputs)


def test_sigterm_mid_stream(e2e):
    e2e.server.script(Reply.hang("The beginning of an answer that never ends. " * 8))
    proc = _popen(e2e, "--output", "stream-json", "talk")
    lines = _StdoutLines(proc.stdout)
    try:
        delta = lines.wait_for(lambda e: e["type"] == "delta")
        assert delta["text"].startswith("The beginning")
        proc.send_signal(signal.SIGTERM)
        out = lines.rest()
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read()
    assert proc.returncode == 130, err
    events = check_stream(out)
    final = events[-1]
    assert final["status"] == "interrupted" and final["exit_code"] == 130 and final["task"] == 1
    assert not of_type(events, "assistant")  # the response never completed
    assert err.count("minicode: interrupted") == 1


def test_sigterm_during_a_tool_answers_every_call(e2e):
    e2e.server.script(Reply.tools(("bash", {"command": "echo started; sleep 60"}), ("bash", {"command": "true"})))
    proc = _popen(e2e, "--output", "stream-json", "--yes", "wait")
    lines = _StdoutLines(proc.stdout)
    try:
        lines.wait_for(lambda e: e["type"] == "delta" and e["kind"] == "tool_output", timeout=20)
        proc.send_signal(signal.SIGTERM)
        out = lines.rest()
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    events = check_stream(out)
    results = of_type(events, "tool_result")
    assert [x["status"] for x in results] == ["interrupted", "interrupted"]
    assert "started" in results[0]["text"]
    assert {x["id"] for x in results} == {c["id"] for c in of_type(events, "tool_call")}


def test_sigint_between_pipe_tasks_ends_with_an_interrupted_result(e2e):
    e2e.server.script(Reply.text("first"))
    proc = _popen(e2e, "--output", "json", stdin=subprocess.PIPE)
    lines = _StdoutLines(proc.stdout)
    try:
        proc.stdin.write("first task\n")
        proc.stdin.flush()
        lines.wait_for(lambda e: e["type"] == "result")
        proc.send_signal(signal.SIGINT)  # stdin stays open: waiting for the next line
        out = lines.rest()
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
    assert proc.returncode == 130
    events = check_stream(out)
    task_result, closing = of_type(events, "result")
    assert task_result["status"] == "done" and task_result["exit_code"] == 0
    assert closing["task"] is None and closing["status"] == "interrupted" and closing["exit_code"] == 130


def test_closed_stdout_exits_1_quietly(e2e):
    e2e.server.script(Reply.text("hi"))
    proc = subprocess.run(
        e2e.argv("--output", "json", "go"), cwd=e2e.workspace, env=e2e.environ(), stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1), start_new_session=True, timeout=30,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "could not be written to stdout" in proc.stderr


def test_reader_gone_exits_1_and_finishes_the_task(e2e):
    e2e.server.script(Reply.tool("write", path="kept.txt", content="x\n"), Reply.text("done"))
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `minicode --output json … | true`: nobody reads the events
    try:
        proc = subprocess.run(
            e2e.argv("--output", "json", "--yes", "go"), cwd=e2e.workspace, env=e2e.environ(),
            stdin=subprocess.DEVNULL, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=30,
            start_new_session=True,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.stderr.count("could not be written to stdout") == 1
    assert "minicode: done" in proc.stderr and (e2e.workspace / "kept.txt").exists()


def test_usage_error_on_the_command_line_is_not_json(e2e):
    r = e2e.run("--output", "yaml", "go")
    assert r.code == 2 and r.stdout == "" and "invalid choice" in r.stderr
    r = e2e.run("--output", "json", "--init")
    assert r.code == 2 and r.stdout == ""


def test_manual_compaction_in_pipe_mode(e2e):
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text() + "context_window = 40000\n")
    e2e.server.script(Reply.text("a0"), Reply.text("a1"), Reply.text("a2"), Reply.text("THE SUMMARY"))
    r = e2e.run("--output", "json", stdin=f"first task\n{'B' * 70_000}\nsmall task\n/compact\n")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    (compaction,) = of_type(events, "compaction")
    assert compaction["manual"] is True and compaction["messages_summarised"] == 3
    assert compaction["tokens_before"] > compaction["tokens_after"]
    *tasks, closing = of_type(events, "result")
    assert [x["answer"] for x in tasks] == ["a0", "a1", "a2"]
    # the compaction came after the last task, so the run's own result closes the stream
    assert events.index(tasks[-1]) < events.index(compaction) < events.index(closing)
    assert closing["task"] is None and closing["status"] == "done" and closing["exit_code"] == 0


def test_new_in_pipe_mode_starts_a_new_session_event(e2e):
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    r = e2e.run("--output", "json", stdin="first\n/new\nsecond\n")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    first, second = of_type(events, "session")
    assert first["id"] != second["id"] and second["resumed"] is False and second["messages"] == 0
    results = of_type(events, "result")
    assert [(x["session"], x["answer"]) for x in results] == [(first["id"], "one"), (second["id"], "two")]
