"""What a newcomer sees in plain mode: resumed sessions, empty sessions, a redirected stdout."""

from __future__ import annotations

import subprocess

import pexpect

from tests.e2e.conftest import Env
from tests.support.fake_openai import Reply


def test_resume_says_resumed_and_how_many_messages(e2e: Env) -> None:
    e2e.server.script(Reply.text("first answer"))
    first = e2e.run("first task")
    assert f"minicode: session {first.session_id}" in first.stderr.splitlines()
    e2e.server.script(Reply.text("second answer"))
    second = e2e.run("--session", first.session_id, "second task")
    assert second.stderr.splitlines()[0] == f"minicode: resumed session {first.session_id} (2 messages)"


def test_session_without_messages_leaves_no_file_and_no_resume_hint(e2e: Env) -> None:
    r = e2e.run(stdin="\n\n")  # pipe mode, blank lines only: no task
    assert r.code == 0 and "resume with" not in r.stderr
    sessions = e2e.workspace / ".minicode" / "sessions"
    assert list(sessions.glob("*.jsonl")) == []
    assert e2e.run("-c", "x").code == 2  # and -c still has nothing to continue


def test_session_with_messages_still_prints_the_resume_hint(e2e: Env) -> None:
    e2e.server.script(Reply.text("ok"))
    r = e2e.run(stdin="do it\n")
    assert r.stderr.splitlines()[-1] == f"minicode: resume with: minicode --session {r.session_id}"
    assert e2e.session_file(r.session_id).exists()


def test_terminal_input_with_redirected_stdout_says_it_is_reading(e2e: Env) -> None:
    e2e.server.script(Reply.text("the answer"))
    out = e2e.workspace / "out.txt"
    child = pexpect.spawn(
        "/bin/sh", ["-c", f'exec "$0" > {out}', e2e.argv()[0]], cwd=str(e2e.workspace),
        env=e2e.environ(), encoding="utf-8", timeout=20,
    )
    try:
        child.expect("reading tasks from the terminal, one per line; Ctrl\\+D ends")
        child.sendline("a task")
        child.expect("minicode: done")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert out.read_text() == "the answer\n"


def test_started_in_the_home_directory_it_refuses_without_a_terminal_and_dash_c_goes_on(e2e: Env) -> None:
    e2e.server.script(Reply.text("hello from home"))
    env = {**e2e.environ(), "HOME": str(e2e.workspace)}
    from minicode.trust.project_config import confirm_written

    confirm_written(e2e.workspace / "config" / "config.toml", e2e.workspace, env)  # the user's own file, in this HOME
    refused = subprocess.run(e2e.argv("say hi"), cwd=e2e.workspace, env=env, capture_output=True, text=True,
                             timeout=30, start_new_session=True, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and "your home directory" in refused.stderr
    assert f"-C {e2e.workspace}" in refused.stderr and e2e.server.requests == []
    named = subprocess.run(e2e.argv("-C", str(e2e.workspace), "say hi"), cwd=e2e.workspace, env=env,
                           capture_output=True, text=True, timeout=30, start_new_session=True,
                           stdin=subprocess.DEVNULL)
    assert named.returncode == 0 and named.stdout == "hello from home\n", named.stderr
    assert "minicode: warning: the workspace is your home directory" in named.stderr
