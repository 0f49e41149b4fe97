"""Every request is a valid conversation: after a task that failed, was interrupted, timed out,
hit max turns or lost its input, the next request never carries two user messages in a row —
nor does a request with project memory or a resumed session (strict-alternation servers)."""

from __future__ import annotations

import signal
import time
from typing import Any

from tests.support.fake_openai import Reply

ERROR_400 = Reply.error(400, {"error": {"message": "rejected", "type": "invalid_request_error"}})


def _alternates(messages: list[dict[str, Any]]) -> bool:
    """Strict alternation: after the system prompt, no two user (or assistant) messages in a
    row; tool results only right after the assistant message that called them (or each other)."""
    roles = [m["role"] for m in messages if m["role"] != "system"]
    for before, after in zip(roles, roles[1:]):
        if before == after and before in ("user", "assistant"):
            return False
        if after == "tool" and before not in ("assistant", "tool"):
            return False
    return True


def test_after_every_kind_of_failed_task_the_next_request_alternates(e2e) -> None:
    (e2e.workspace / "MiniCode.md").write_text("# memory\nfacts\n")  # memory is a user message too
    e2e.server.script(
        ERROR_400,                                                     # 1: an API error
        Reply.raw_sse(b'data: {"choices":"x"}\n\ndata: [DONE]\n\n'),  # 2: a protocol error
        Reply.hang(),                                                  # 3: timed out (--timeout)
        Reply.tool("bash", command="echo hi"),                         # 4: max turns (1) ...
        ERROR_400,                                                     #    ... and its summary fails
        Reply.text("finally"),                                         # 5
    )
    r = e2e.run("--yes", "--max-turns", "1", "--timeout", "3",
                stdin="one\ntwo\nthree\nfour\nfive\n", timeout=60)
    assert r.stdout == "finally\n", r.stderr
    assert len(e2e.server.requests) == 6
    for request in e2e.server.requests:
        assert _alternates(request.messages), [m["role"] for m in request.messages]
    last = e2e.server.requests[-1].messages
    assert last[1]["role"] == "user" and last[1]["content"].startswith("<project-memory>")
    assert last[1]["content"].endswith("one")  # memory and the first task are one message
    notes = [m for m in last if m["role"] == "assistant" and "stopped before" in (m.get("content") or "")]
    assert len(notes) == 4  # one per task that ended without an answer


def test_an_interrupted_task_then_a_resumed_session_alternates(e2e) -> None:
    e2e.server.script(Reply.hang("partial"))
    proc = e2e.popen("--yes", "first task")
    assert proc.stderr is not None
    # The session line first: the session is open before the first request goes out.
    opened = proc.stderr.readline()
    assert opened.startswith("minicode: session "), opened
    assert e2e.server.wait_for_requests(1)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    sid = opened.split()[-1]
    e2e.server.script(Reply.text("resumed fine"))
    r = e2e.run("--session", sid, "second task")
    assert r.code == 0 and r.stdout == "resumed fine\n", r.stderr
    messages = e2e.server.requests[-1].messages
    assert _alternates(messages), [m["role"] for m in messages]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "user"]


def test_input_ended_during_an_approval_then_the_next_run_alternates(e2e) -> None:
    e2e.server.script(Reply.tool("bash", command="echo hi"))
    r = e2e.run("run it")  # no --yes, stdin ends: the approval is denied and the task ends
    assert r.code == 1, r.stderr
    e2e.server.script(Reply.text("ok"))
    again = e2e.run("-c", "next")
    assert again.code == 0, again.stderr
    messages = e2e.server.requests[-1].messages
    assert _alternates(messages), [m["role"] for m in messages]


def test_the_note_for_a_stopped_task_exports_as_minicodes_not_the_models(e2e) -> None:
    from minicode.agent.stopped import STOPPED_NOTE, STOPPED_SHOWN

    e2e.server.script(ERROR_400, Reply.text("second answer"))
    r = e2e.run("--yes", stdin="first task\nsecond task\n")
    assert r.stdout == "second answer\n", r.stderr
    notes = [m for m in e2e.server.requests[-1].messages if m.get("content") == STOPPED_NOTE]
    assert len(notes) == 1  # the model is told, as before
    sid = next(line.split()[-1] for line in r.stderr.splitlines() if line.startswith("minicode: session "))
    exported = e2e.run("--export", sid)
    assert exported.code == 0, exported.stderr
    assert f"*{STOPPED_SHOWN}*" in exported.stdout and "second answer" in exported.stdout
    assert STOPPED_NOTE not in exported.stdout
