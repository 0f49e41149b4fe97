"""The early first request (issue 16, ``cli/early_start.py``) seen from the server: a one-shot
or pipe run of the real executable sends exactly one first request, byte for byte the request
the normal path sends (``MINICODE_EARLY_REQUEST=0``), with the same events, session and exit."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pytest

from tests.support.events import check_stream
from tests.support.fake_openai import RecordedRequest, Reply


def _run(e2e, *args: str, stdin: str = "", early: bool = True):
    env = e2e.environ()
    if not early:
        env["MINICODE_EARLY_REQUEST"] = "0"
    proc = subprocess.run(e2e.argv(*args), cwd=e2e.workspace, env=env, input=stdin, capture_output=True,
                          text=True, timeout=30, start_new_session=True)
    return proc


def _first_requests(e2e, *args: str, stdin: str = "", replies: int = 1, code: int = 0) -> list:
    """The requests of the run with the early request, then of the same run without it."""
    seen = []
    for early in (True, False):
        e2e.server.requests.clear()
        e2e.server.script(*[Reply.text(f"answer {i}") for i in range(replies)])
        proc = _run(e2e, *args, stdin=stdin, early=early)
        assert proc.returncode == code, proc.stderr
        seen.append(list(e2e.server.requests))
    return seen


def _same_body(with_early: dict, without: dict) -> None:
    assert json.dumps(with_early, sort_keys=True) == json.dumps(without, sort_keys=True)


def test_one_shot_sends_one_first_request_identical_to_the_normal_one(e2e) -> None:
    (e2e.workspace / "AGENTS.md").write_text("Use tabs.\n")
    (e2e.workspace / "MiniCode.md").write_text("The build is make.\n")
    early, normal = _first_requests(e2e, "fix the build")
    assert len(early) == 1 and len(normal) == 1
    _same_body(early[0].body, normal[0].body)
    assert early[0].body["messages"][-1]["content"].endswith("fix the build")
    assert early[0].headers["Authorization"] == normal[0].headers["Authorization"]


def _records(e2e, stderr: str) -> list[dict]:
    """The session file's records without the run's own values (id, times, durations)."""
    sid = next(line.split()[-1] for line in stderr.splitlines() if line.startswith("minicode: session "))
    text = re.sub(r"call_\d+", "call_N", e2e.session_file(sid).read_text())  # the server numbers its calls
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        for key in ("id", "created", "stats", "shown", "duration"):  # durations: 0.0 or 0.001 s (a turn end shows its time)
            record.pop(key, None)
    return records


def test_the_session_file_is_the_same_with_the_early_request(e2e) -> None:
    files = []
    for early in (True, False):
        e2e.server.script(Reply.tool("read", path="notes.txt"), Reply.text("read it"))
        (e2e.workspace / "notes.txt").write_text("a note\n")
        proc = _run(e2e, "read the notes", early=early)
        assert proc.returncode == 0, proc.stderr
        files.append(_records(e2e, proc.stderr))
    assert files[0] == files[1]
    assert [r.get("role") for r in files[0] if r["type"] == "message"] == ["user", "assistant", "tool", "assistant"]


def test_one_shot_with_piped_context_sends_one_request(e2e) -> None:
    early, normal = _first_requests(e2e, "review this", stdin="diff --git a/x b/x\n")
    assert len(early) == 1 and len(normal) == 1
    _same_body(early[0].body, normal[0].body)
    assert "<stdin>" in early[0].body["messages"][-1]["content"]


def test_pipe_mode_sends_one_first_request_per_task(e2e) -> None:
    early, normal = _first_requests(e2e, stdin="\n  \nfirst task\nsecond task\n", replies=2)
    assert len(early) == 2 and len(normal) == 2
    for a, b in zip(early, normal):
        _same_body(a.body, b.body)
    assert early[0].body["messages"][-1]["content"] == "first task"


def test_a_first_pipe_line_that_is_a_command_sends_no_early_request(e2e) -> None:
    early, normal = _first_requests(e2e, stdin="/permissions\n/compcat\nthe task\n", code=1)
    assert len(early) == 1 and len(normal) == 1
    _same_body(early[0].body, normal[0].body)


def test_memory_edited_while_the_early_request_is_out_sends_the_new_request(e2e) -> None:
    """MiniCode.md changes between the early request and the turn's own read: the request the
    turn builds differs, so the early one is dropped and the new one sent (the answer is the
    second reply's)."""
    (e2e.workspace / "MiniCode.md").write_text("- OLD FACT\n")

    def edit(request: RecordedRequest) -> Reply:
        (e2e.workspace / "MiniCode.md").write_text("- NEW FACT\n")
        return Reply.text("from the early request")

    e2e.server.script(Reply.dynamic(edit), Reply.text("from the new request"))
    proc = _run(e2e, "the task")
    assert proc.returncode == 0, proc.stderr
    if len(e2e.server.requests) == 1:  # the turn read the file before the server's edit (a loaded machine)
        assert proc.stdout == "from the early request\n"
        return
    assert proc.stdout == "from the new request\n"
    assert len(e2e.server.requests) == 2
    assert "OLD FACT" in e2e.server.requests[0].messages[1]["content"]
    assert "NEW FACT" in e2e.server.requests[1].messages[1]["content"]


def test_json_mode_events_are_the_same_with_the_early_request(e2e) -> None:
    streams = []
    for early in (True, False):
        e2e.server.requests.clear()
        e2e.server.requests.clear()
        e2e.server.script(Reply.text("the answer"))
        proc = _run(e2e, "--output", "stream-json", "say hi", early=early)
        assert proc.returncode == 0, proc.stderr
        events = check_stream(proc.stdout)
        streams.append([e["type"] for e in events])
        assert len(e2e.server.requests) == 1
    assert streams[0] == streams[1]


def test_a_resumed_session_sends_no_early_request(e2e) -> None:
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    first = _run(e2e, "first")
    session = next(line.split()[-1] for line in first.stderr.splitlines() if line.startswith("minicode: session "))
    e2e.server.requests.clear()
    again = _run(e2e, "--session", session, "second")
    assert again.returncode == 0, again.stderr
    assert len(e2e.server.requests) == 1


def test_an_error_status_on_the_early_request_reads_as_today(e2e) -> None:
    outputs = []
    for early in (True, False):
        e2e.server.requests.clear()
        e2e.server.script(Reply.error(401, {"error": {"message": "Incorrect API key provided", "type": "auth"}}))
        proc = _run(e2e, "hello", early=early)
        # the summary's elapsed time ("0.0s" / "0.1s") depends on the machine's load
        lines = [re.sub(r"^minicode: \d+(\.\d+)?s ·", "minicode: Ns ·", line) for line in proc.stderr.splitlines()]
        outputs.append((proc.returncode, [line for line in lines if "session" not in line]))
        assert len(e2e.server.requests) == 1
    assert outputs[0] == outputs[1]
    assert outputs[0][0] != 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_early_request_waits_exits_130(e2e, sig: signal.Signals) -> None:
    e2e.server.script(Reply.hang())
    proc = subprocess.Popen(e2e.argv("hello"), cwd=e2e.workspace, env=e2e.environ(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not e2e.server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        assert e2e.server.requests, "the request never arrived"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.strip().endswith("minicode: interrupted")
    assert "Traceback" not in err
