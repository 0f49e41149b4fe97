"""--output json under hostile conditions, end to end: the real executable, the fake server.

Servers that repeat tool-call ids, pipe-mode commands that fail, closed or full standard
streams, signals after the last line, line separators inside strings and interleaved
deltas. Every stdout is checked by ``check_stream`` (only JSON Lines, the schema, ``seq``,
the last line a ``result``) and the last ``exit_code`` against the process's.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess

from tests.support.filler import prose
from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply


def _ended(run, events: list[dict]) -> None:
    assert events[-1]["type"] == "result" and events[-1]["exit_code"] == run.code, run.stderr


def _sse(*deltas: dict, finish: str) -> bytes:
    out = b""
    for delta in deltas:
        out += b"data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}).encode() + b"\n\n"
    out += b"data: " + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}).encode() + b"\n\n"
    return out + b"data: [DONE]\n\n"


def _same_id_calls(*commands: str) -> Reply:
    """One response whose bash calls all carry the id ``same`` (as some servers send)."""
    calls = [{"tool_calls": [{"index": i, "id": "same", "type": "function",
                              "function": {"name": "bash", "arguments": json.dumps({"command": c})}}]}
             for i, c in enumerate(commands)]  # fmt: skip
    return Reply.raw_sse(_sse(*calls, finish="tool_calls"))


# --- J9: repeated tool-call ids ---------------------------------------------------------


def test_repeated_call_ids_run_each_call_once_and_the_session_stays_resumable(e2e):
    e2e.server.script(_same_id_calls("echo one >> log", "echo two >> log"), Reply.text("fine"), Reply.text("again"))
    r = e2e.run("--output", "json", "--yes", "t")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    _ended(r, events)
    assert [c["id"] for c in of_type(events, "tool_call")] == ["same", "same-2"]
    results = of_type(events, "tool_result")
    assert [(x["id"], x["status"]) for x in results] == [("same", "done"), ("same-2", "done")]
    assert (e2e.workspace / "log").read_text() == "one\ntwo\n"
    sent = e2e.server.requests[1].messages
    assert [c["id"] for c in sent[-3]["tool_calls"]] == ["same", "same-2"]
    assert [m["tool_call_id"] for m in sent[-2:]] == ["same", "same-2"]
    assert events[-1]["answer"] == "fine"
    again = e2e.run("--output", "json", "-c", "next")
    assert again.code == 0, again.stderr
    assert check_stream(again.stdout)[-1]["answer"] == "again"
    assert (e2e.workspace / "log").read_text() == "one\ntwo\n"  # nothing ran twice


def test_a_session_written_with_repeated_ids_by_an_older_version_resumes(e2e):
    """The file holds two calls ``same`` and two results ``same`` (as versions before the
    rename wrote them): resuming sends a valid conversation instead of failing every time."""
    e2e.server.script(_same_id_calls("echo one >> log", "echo two >> log"), Reply.text("fine"),
                      Reply.text("resumed fine"), Reply.text("and again"), Reply.text("plain"))  # fmt: skip
    first = e2e.run("--output", "json", "--yes", "t")
    assert first.code == 0, first.stderr
    path = e2e.session_file(first.session_id)
    path.write_text(path.read_text().replace('"same-2"', '"same"'))
    for text, answer in (("next", "resumed fine"), ("then", "and again")):
        r = e2e.run("--output", "json", "-c", text)
        assert r.code == 0, r.stderr
        events = check_stream(r.stdout)
        _ended(r, events)
        assert events[-1]["answer"] == answer
        sent = e2e.server.requests[-1].messages
        batch = next(m for m in sent if m.get("tool_calls"))
        assert [c["id"] for c in batch["tool_calls"]] == ["same", "same-2"]
        assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["same", "same-2"]
    text_mode = e2e.run("-c", "plain too")
    assert text_mode.code == 0 and text_mode.stdout == "plain\n", text_mode.stderr
    assert (e2e.workspace / "log").read_text() == "one\ntwo\n"


# --- J7: line separators inside strings ------------------------------------------------


def test_line_separators_in_model_text_never_split_a_line(e2e):
    """U+2028, U+2029, NEL and the other characters str.splitlines breaks at travel escaped:
    a reader that splits with splitlines() sees one event per line (check_stream asserts it)."""
    text = "a\u2028b\u2029c\x85d\x1ce\x0bf\x0cg\x7fh\x9bi"
    for output in ("json", "stream-json"):
        e2e.server.script(Reply.tool("bash", command=f"printf '{text}'"), Reply.text(text, reasoning=text, chunk_size=3))
        r = e2e.run("--output", output, "--yes", "t")
        assert r.code == 0, r.stderr
        events = check_stream(r.stdout)
        assert len(r.stdout.splitlines()) == len(events) == r.stdout.count("\n")
        assert events[-1]["answer"] == text
        if output == "stream-json":
            deltas = of_type(events, "delta")
            assert "".join(d["text"] for d in deltas if d["kind"] == "text") == text
            assert "".join(d["text"] for d in deltas if d["kind"] == "reasoning") == text
        else:
            assert of_type(events, "assistant")[-1]["reasoning"] == text
        assert "\u2028" in of_type(events, "tool_call")[0]["arguments"]["command"]


# --- J8: a server that interleaves reasoning and text ------------------------------------


def test_interleaved_reasoning_and_text_stay_under_three_times_their_size(e2e):
    """4-character reasoning and text chunks in turn (2 × 2,000 chunks): each kind is
    coalesced on its own, so the stream is not one delta per chunk."""
    reasoning, text = prose(8000, seed=1), prose(8000, seed=2).upper()  # never repeating: no runaway cut
    e2e.server.script(Reply.text(text, reasoning=reasoning, interleave=True, chunk_size=4))
    r = e2e.run("--output", "stream-json", "t")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    _ended(r, events)
    deltas = of_type(events, "delta")
    assert "".join(d["text"] for d in deltas if d["kind"] == "text") == text
    assert "".join(d["text"] for d in deltas if d["kind"] == "reasoning") == reasoning
    assert len(deltas) < 200  # 4,000 chunks
    (assistant,) = of_type(events, "assistant")
    assert "text" not in assistant and "reasoning" not in assistant
    assert len(r.stdout.encode()) <= 3 * len((reasoning + text).encode())


# --- J4: pipe-mode commands in the stream -------------------------------------------------


def test_a_failed_command_before_a_task_is_in_the_stream_and_in_the_tasks_exit_code(e2e):
    e2e.server.script(Reply.text("fine"))
    r = e2e.run("--output", "json", stdin="/think bogus\nhello\n")
    assert r.code == 1, r.stderr
    events = check_stream(r.stdout)
    _ended(r, events)
    assert [e["type"] for e in events] == ["session", "command", "user", "assistant", "result"]
    command, result = events[1], events[-1]
    assert (command["command"], command["line"], command["status"], command["exit_code"]) == (
        "/think", "/think bogus", "failed", 1)
    assert "bogus" in command["error"] and "unknown thinking level" in command["text"]
    assert (result["task"], result["status"], result["answer"], result["exit_code"]) == (1, "done", "fine", 1)


def test_every_failing_command_alone_ends_in_a_result_that_says_why(e2e):
    for line, words in (("/model a b", "contains spaces"), ("/permissions remove nothing-here", "nothing-here"),
                        ("/permissions bogus", "/permissions remove"), ("/think", None)):  # fmt: skip
        r = e2e.run("--output", "json", stdin=f"{line}\n")
        events = check_stream(r.stdout)
        _ended(r, events)
        (command,) = of_type(events, "command")
        assert command["line"] == line
        if words is None:  # a command that works: nothing failed
            assert r.code == 0 and command["status"] == "done" and command["error"] is None
            assert events[-1]["status"] == "done" and events[-1]["error"] is None
            continue
        assert r.code == 1 and command["status"] == "failed" and words in command["error"], r.stdout
        closing = events[-1]
        assert closing["task"] is None and closing["status"] == "error" and closing["exit_code"] == 1
        assert closing["error"].startswith(f"{line}: ") and words in closing["error"]


def test_a_failed_task_then_a_command_that_works_ends_naming_the_task(e2e):
    e2e.server.script(Reply.error(400, {"error": {"message": "bad request here", "type": "invalid_request_error"}}))
    r = e2e.run("--output", "json", stdin="hello\n/think\n")
    assert r.code == 1, r.stderr
    events = check_stream(r.stdout)
    _ended(r, events)
    assert [e["type"] for e in events] == ["session", "user", "result", "command", "result"]
    task, command, closing = events[2], events[3], events[4]
    assert (task["status"], task["exit_code"]) == ("error", 1)
    assert (command["status"], command["error"], command["exit_code"]) == ("done", None, 1)
    assert closing["task"] is None and closing["error"].startswith("task 1: ") and "bad request here" in closing["error"]


def test_undo_with_nobody_to_say_yes_is_a_failed_command(e2e):
    e2e.server.script(Reply.tool("write", path="a.txt", content="new\n"), Reply.text("wrote it"))
    (e2e.workspace / "a.txt").write_text("old\n")
    r = e2e.run("--output", "json", "--allow", "write", stdin="change a.txt\n/undo\n")
    assert r.code == 1, r.stderr
    events = check_stream(r.stdout)
    _ended(r, events)
    (command,) = of_type(events, "command")
    assert command["status"] == "failed" and "--yes" in command["error"] and "a.txt" in command["text"]
    assert of_type(events, "result")[0]["exit_code"] == 0  # the task before it was fine
    assert events[-1]["task"] is None and events[-1]["error"].startswith("/undo: ")
    assert (e2e.workspace / "a.txt").read_text() == "new\n"


# --- J3: a signal after the last line ---------------------------------------------------


def test_a_signal_right_after_the_last_line_leaves_the_exit_code_it_promised(e2e):
    """Sent the moment the closing ``result`` is read, while the process is still exiting:
    the exit code stays the one the line says (before, −15/−2 or 130 instead of 0)."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM):
        e2e.server.script(Reply.text("fine"))
        proc = subprocess.Popen(
            e2e.argv("--output", "json"), cwd=e2e.workspace, env=e2e.environ(), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("hello\n/think\n")  # a command after the task: its closing result is the last line
        proc.stdin.close()
        out = ""
        try:
            for line in proc.stdout:
                out += line
                if json.loads(line)["type"] == "result" and json.loads(line)["task"] is None:
                    proc.send_signal(sig)
                    break
            out += proc.stdout.read()
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
        events = check_stream(out)
        assert proc.returncode == events[-1]["exit_code"] == 0, (sig, proc.stderr.read() if proc.stderr else "")


# --- J5, J6: closed or full standard streams ----------------------------------------------


def _shell(e2e, redirect: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The executable with the shell redirection ``redirect`` (``2>&-``, ``<&-`` …)."""
    command = " ".join(shlex.quote(a) for a in e2e.argv(*args)) + " " + redirect
    return subprocess.run(["bash", "-c", command], cwd=e2e.workspace, env=e2e.environ(), input=stdin,
                          capture_output=True, text=True, timeout=60, start_new_session=True)  # fmt: skip


def test_a_closed_or_full_stderr_leaves_the_stream_whole(e2e):
    """stdout is the contract: status lines that cannot be written are dropped, the events
    and the exit code are as usual; a child's stderr never reaches stdout."""
    child = "echo to-stdout; echo to-stderr >&2; python3 -c 'import sys; print(1, file=sys.stderr)'"
    for redirect in ("2>&-", "2>/dev/full"):
        for output in ("json", "stream-json"):
            e2e.server.script(Reply.tool("bash", command=child), Reply.text("done it"))
            r = _shell(e2e, redirect, "--output", output, "--yes", "task")
            assert r.returncode == 0, (redirect, r.stdout)
            events = check_stream(r.stdout)
            assert events[-1]["type"] == "result" and events[-1]["exit_code"] == 0 and events[-1]["answer"] == "done it"
            assert "to-stderr" in of_type(events, "tool_result")[0]["text"]
    e2e.server.script(Reply.text("fine"))
    r = _shell(e2e, "2>/dev/full", "--output", "json", stdin="/think bogus\nhello\n")
    events = check_stream(r.stdout)
    assert r.returncode == events[-1]["exit_code"] == 1 and of_type(events, "command")[0]["status"] == "failed"


def test_a_full_stderr_in_text_mode_still_gives_the_answer(e2e):
    e2e.server.script(Reply.text("the answer"))
    r = _shell(e2e, "2>/dev/full", "task")
    assert (r.returncode, r.stdout) == (0, "the answer\n")


def test_a_closed_stdout_is_still_reported_when_stderr_is_closed_too(e2e):
    e2e.server.script(Reply.text("lost"))
    r = _shell(e2e, ">&- 2>&-", "--output", "json", "task")
    assert r.returncode == 1 and r.stdout == ""


def test_a_closed_stdin_is_empty_input(e2e):
    """One-shot: the task runs (nothing piped); pipe mode: no tasks; text mode alike. No
    traceback, no internal error."""
    e2e.server.script(Reply.text("one-shot"))
    r = _shell(e2e, "<&-", "--output", "json", "task")
    events = check_stream(r.stdout)
    assert r.returncode == 0 and events[-1]["answer"] == "one-shot" and events[-1]["error"] is None, r.stderr
    assert "stdin" not in of_type(events, "user")[0]["text"]
    r = _shell(e2e, "<&-", "--output", "json")
    events = check_stream(r.stdout)
    assert r.returncode == 0 and [e["type"] for e in events] == ["session", "result"], r.stderr
    assert events[-1]["task"] is None and events[-1]["status"] == "done"
    e2e.server.script(Reply.text("text mode"))
    r = _shell(e2e, "<&-", "task")
    assert (r.returncode, r.stdout) == (0, "text mode\n")
    for run_stderr in (r.stderr,):
        assert "Traceback" not in run_stderr and "Exception" not in run_stderr


# --- D2, D3: what gives no stream (docs/events.md) ----------------------------------------


def test_commands_that_are_not_runs_give_no_stream_as_documented(e2e):
    for command in (["--sessions"], ["--export", "x"], ["--doctor"], ["--init"]):
        r = e2e.run("--output", "json", *command)
        assert (r.code, r.stdout) == (2, ""), command
        assert "--output goes with tasks" in r.stderr
    r = e2e.run("--output", "json", "--version")
    assert r.code == 0 and r.stdout.startswith("minicode ")  # plain text, not an event
    r = e2e.run("--output", "stream-json", "--help")
    assert r.code == 0 and r.stdout.startswith("usage: minicode")
