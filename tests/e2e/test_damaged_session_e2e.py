"""End-to-end: damaged session files never crash minicode (finding J10). A lone ``\\ud800``
escape (a string no request, terminal or file can hold) is read as U+FFFD, so resume, the
next request, ``--export`` and ``--sessions`` all work; a record nested 100,000 levels deep is
reported as "corrupt at line N" — in text and JSON mode, never a traceback. A damaged message
anywhere in the file refuses the resume before anything is written (issue 24 item 7)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Env
from tests.support.events import check_stream
from tests.support.fake_openai import Reply

LONE = r'{"type":"message","role":"user","content":"x\ud800y"}'
DEEP = '{"type":"message","role":"user","content":' + "[" * 100_000 + "]" * 100_000 + "}"


def _session_then_append(e2e: Env, line: str) -> str:
    e2e.server.script(Reply.text("fine"))
    first = e2e.run("first task")
    assert first.code == 0, first.stderr
    with e2e.session_file(first.session_id).open("a", encoding="utf-8") as f:
        f.write(line + "\n")
    return first.session_id


def test_a_lone_surrogate_is_repaired_and_the_session_goes_on(e2e: Env) -> None:
    sid = _session_then_append(e2e, LONE)
    e2e.server.script(Reply.text("resumed fine"))
    r = e2e.run("-c", "next")
    assert r.code == 0, r.stderr
    assert r.stdout == "resumed fine\n" and "Traceback" not in r.stderr
    sent = [m.get("content") for m in e2e.server.requests[-1].messages]
    assert "x\ufffdy" in sent and sent[-1] == "next"

    exported = e2e.run("--export", sid[:8])
    assert exported.code == 0, exported.stderr
    assert "x\ufffdy" in exported.stdout and "Traceback" not in exported.stderr


def test_a_lone_surrogate_in_the_first_message_is_listed_and_resumed_in_json_mode(e2e: Env) -> None:
    e2e.server.script(Reply.text("fine"))
    first = e2e.run("placeholder")
    path = e2e.session_file(first.session_id)
    path.write_text(path.read_text(encoding="utf-8").replace('"placeholder"', r'"bad \udc00 start"'), encoding="utf-8")

    listed = e2e.run("--sessions")
    assert listed.code == 0, listed.stderr
    assert "bad \ufffd start" in listed.stdout

    e2e.server.script(Reply.text("still fine"))
    r = e2e.run("--output", "json", "--session", first.session_id, "next")
    assert r.code == 0, r.stderr
    events = check_stream(r.stdout)
    assert events[-1]["status"] == "done" and events[-1]["answer"] == "still fine"


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_record_nested_absurdly_deep_is_corrupt_at_its_line(e2e: Env, output: str) -> None:
    sid = _session_then_append(e2e, DEEP)
    args = ["--output", "json"] if output == "json" else []
    r = e2e.run(*args, "--session", sid, "next")
    assert r.code == 1
    assert "Traceback" not in r.stderr and "RecursionError" not in r.stderr + r.stdout
    assert "corrupt at line 5" in r.stderr
    if output == "json":
        events = check_stream(r.stdout)
        assert "corrupt at line 5" in events[-1]["error"]

    exported = e2e.run("--export", sid)
    assert exported.code == 1 and "corrupt at line 5" in exported.stderr
    assert "Traceback" not in exported.stderr
    listed = e2e.run("--sessions")
    assert listed.code == 0 and sid[:8] in listed.stdout


def test_the_short_id_of_a_damaged_session_says_what_is_wrong_with_it(e2e: Env) -> None:
    e2e.server.script(Reply.text("fine"))
    first = e2e.run("first task")
    path = e2e.session_file(first.session_id)
    path.write_bytes(b"not a record\n" + path.read_bytes())  # damaged after --sessions showed it
    for args in (("--session", first.session_id[:8], "next"), ("--export", first.session_id[:8])):
        r = e2e.run(*args)
        assert r.code != 0 and "corrupt at line 1" in r.stderr and "no session starting" not in r.stderr, r.stderr
    assert path.read_bytes().startswith(b"not a record\n")  # never modified


# issue 24 item 7: each damage a lazy resume only met after it had appended the new task
DAMAGED_MESSAGES = {
    "invalid UTF-8": b'{"type":"message","role":"user","content":"caf\xe9"}',
    "a call without an id": b'{"type":"message","role":"assistant","content":null,'
                            b'"tool_calls":[{"name":"bash","arguments":"{}"}]}',
}


def test_a_damaged_message_refuses_the_resume_and_the_file_stays_byte_identical(e2e: Env) -> None:
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    first = e2e.run("first task")
    assert first.code == 0, first.stderr
    sid, path = first.session_id, e2e.session_file(first.session_id)
    assert e2e.run("--session", sid, "second task").code == 0
    healthy = path.read_bytes()
    lines = healthy.splitlines(keepends=True)
    assert lines[2].startswith(b'{"type":"message","role":"assistant"')  # the first answer
    requests = len(e2e.server.requests)
    # two kinds through the real executable, each resumed twice; all eight are rows of
    # tests/session/test_damaged_message.py (in-process, the same load)
    for kind, line in DAMAGED_MESSAGES.items():
        damaged = b"".join([*lines[:2], line + b"\n", *lines[3:]])  # line 3, followed by a whole task
        path.write_bytes(damaged)
        for _ in range(2):  # and the next resume the same: nothing was appended
            r = e2e.run("--session", sid, "next")
            assert r.code == 1, (kind, r.stderr)
            assert f"session file {path} is corrupt at line 3 (" in r.stderr, (kind, r.stderr)
            assert "Traceback" not in r.stderr and r.stdout == ""
            assert path.read_bytes() == damaged, kind
    assert len(e2e.server.requests) == requests  # no task was sent

    path.write_bytes(healthy)  # the normal path: a healthy session resumes and appends
    e2e.server.script(Reply.text("three"))
    r = e2e.run("--session", sid, "third task")
    assert r.code == 0 and r.stdout == "three\n", r.stderr
    grown = path.read_bytes()
    assert grown.startswith(healthy) and b'"content":"third task"' in grown[len(healthy):]
    assert [m.get("content") for m in e2e.server.requests[-1].messages[1:]] == [
        "first task", "one", "second task", "two", "third task"]
