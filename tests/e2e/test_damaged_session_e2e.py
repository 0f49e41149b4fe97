"""End-to-end: damaged session files never crash minicode (finding J10). A lone ``\\ud800``
escape (a string no request, terminal or file can hold) is read as U+FFFD, so resume, the
next request, ``--export`` and ``--sessions`` all work; a record nested 100,000 levels deep is
reported as "corrupt at line N" — in text and JSON mode, never a traceback."""

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
