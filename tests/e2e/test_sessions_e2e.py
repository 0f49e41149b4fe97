"""End-to-end: --sessions, id prefixes for --session, and --export, with the real executable."""

from __future__ import annotations

import json
import subprocess

from minicode.provider.types import Message
from minicode.session.store import SessionStore
from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def _make(e2e: Env, sid: str, text: str) -> None:
    store, _ = SessionStore.create(e2e.workspace, new_id=lambda: sid)
    store.append_message(Message.user(text))
    store.append_message(Message(role="assistant", content="ok"))
    store.close()


def test_sessions_lists_newest_first_without_needing_a_config(e2e: Env) -> None:
    e2e.server.script(Reply.text("first answer"), Reply.text("second answer"), Reply.text("third"))
    one = e2e.run(stdin="write the parser\n")
    two = e2e.run(stdin="document the\x1b[31m parser\nand more\n")
    assert one.code == 0 and two.code == 0, one.stderr + two.stderr
    empty = e2e.run(stdin="")  # a session with no message: removed, never listed
    (e2e.workspace / "config" / "config.toml").unlink()  # listing reads session files only
    r = e2e.run("--sessions")
    assert r.code == 0, r.stderr
    rows = r.stdout.splitlines()
    assert rows[0].split()[:2] == ["ID", "LAST"]
    assert rows[1].startswith(two.session_id[:8]) and rows[2].startswith(one.session_id[:8])
    assert len(rows) == 3 and empty.session_id[:8] not in r.stdout
    assert "document the[31m parser" in rows[1] and "\x1b" not in r.stdout
    assert " 4  " in rows[1] and " 2  " in rows[2]  # message counts
    assert "resume one with" in r.stderr


def test_sessions_in_an_empty_workspace(e2e: Env) -> None:
    r = e2e.run("--sessions")
    assert r.code == 0 and r.stdout == "" and "no sessions" in r.stderr


def test_session_accepts_a_unique_prefix(e2e: Env) -> None:
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    first = e2e.run(stdin="remember 42\n")
    r = e2e.run("--session", first.session_id[:6].upper(), stdin="what was it?\n")
    assert r.code == 0, r.stderr
    assert f"resumed session {first.session_id} (2 messages)" in r.stderr
    assert e2e.server.requests[1].messages[-3]["content"] == "remember 42"


def test_ambiguous_prefix_lists_candidates_and_exits_2(e2e: Env) -> None:
    _make(e2e, "abcd0001-0000-4000-8000-000000000001", "task one")
    _make(e2e, "abcd0002-0000-4000-8000-000000000002", "task two")
    r = e2e.run("--session", "abcd", stdin="hi\n")
    assert r.code == 2 and e2e.server.requests == []
    assert "ambiguous" in r.stderr and "abcd0001-" in r.stderr and "task two" in r.stderr
    r = e2e.run("--export", "abcd")
    assert r.code == 2 and "ambiguous" in r.stderr and r.stdout == ""


def test_unknown_and_malformed_prefixes_exit_2(e2e: Env) -> None:
    _make(e2e, "abcd0001-0000-4000-8000-000000000001", "task one")
    for given in ("beef", "../x", ""):
        r = e2e.run("--session", given, stdin="hi\n")
        assert r.code == 2, (given, r.stderr)
        assert "session" in r.stderr and "Traceback" not in r.stderr
    assert e2e.server.requests == []


def test_export_writes_markdown_to_stdout(e2e: Env) -> None:
    e2e.server.script(
        Reply.tool("bash", command="echo hello-from-bash"),
        Reply.text("The command printed **hello**."),
    )
    run = e2e.run("--yes", "say hello with bash")
    assert run.code == 0, run.stderr
    r = e2e.run("--export", run.session_id[:8])
    assert r.code == 0, r.stderr
    md = r.stdout
    assert md.startswith(f"# minicode session {run.session_id}")
    assert "> say hello with bash" in md
    assert "```sh\necho hello-from-bash\n```" in md
    assert "bash result (exit 0):" in md and "hello-from-bash" in md
    assert "The command printed **hello**." in md


def test_sessions_into_a_closed_pipe_is_quiet(e2e: Env) -> None:
    for i in range(800):  # more than a pipe holds
        _make(e2e, f"abcd{i:04d}-0000-4000-8000-000000000000", f"task {i}")
    proc = subprocess.run(f"{e2e.argv('--sessions')[0]} --sessions | head -1", shell=True, cwd=e2e.workspace,
                          env=e2e.environ(), capture_output=True, text=True, timeout=30)
    assert proc.stdout.startswith("ID") and "Traceback" not in proc.stderr


def test_a_second_minicode_on_an_open_session_is_refused(e2e: Env) -> None:
    e2e.server.script(Reply.text("first answer"), Reply.text("later answer"))
    first = e2e.run("say one")
    assert first.code == 0, first.stderr
    holder = subprocess.Popen(e2e.argv("--session", first.session_id[:8]), cwd=e2e.workspace, env=e2e.environ(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        assert holder.stderr is not None
        assert "resumed session" in holder.stderr.readline()  # it holds the session, waiting for tasks
        other = e2e.run("--session", first.session_id[:8], "say two")
        assert other.code == 2 and "is open in another minicode" in other.stderr, other.stderr
        assert len(e2e.server.requests) == 1
    finally:
        out, err = holder.communicate("say three\n", timeout=30)
    assert holder.returncode == 0 and out == "later answer\n", err
