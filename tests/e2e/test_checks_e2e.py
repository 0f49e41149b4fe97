"""The acceptance gate end to end: the real executable, real checks, the scripted server."""

from __future__ import annotations

import json
import signal
import time

from tests.e2e.conftest import API_KEY, Env
from tests.support.fake_openai import Reply

FEEDBACK_HEADER = "[acceptance checks failed]"


def turn_end(env: Env, session_id: str) -> dict:
    lines = env.session_file(session_id).read_text().splitlines()
    return [json.loads(line) for line in lines if '"turn_end"' in line][-1]


def test_checks_pass_the_task_ends_done_checks_passed(e2e: Env) -> None:
    e2e.server.script(Reply.tool("write", path="out.txt", content="ok\n"), Reply.text("Wrote out.txt."))
    r = e2e.run("-y", "--check", "grep -q ok out.txt", "--check", "test -s out.txt", "write out.txt")
    assert r.code == 0, r.stderr
    assert r.stdout == "Wrote out.txt.\n"
    assert "minicode: check passed: grep -q ok out.txt (exit 0," in r.stderr
    assert "minicode: check passed: test -s out.txt (exit 0," in r.stderr
    assert "minicode: done (checks passed)\n" in r.stderr
    assert "checks 2/2 passed" in r.stderr  # the stats line
    assert len(e2e.server.requests) == 2
    record = turn_end(e2e, r.session_id)
    assert record["status"] == "done" and [c["passed"] for c in record["checks"]] == [True, True]


def test_check_fails_then_the_model_fixes_it(e2e: Env) -> None:
    e2e.server.script(
        Reply.text("All done."),  # claims done without doing it
        Reply.tool("write", path="out.txt", content="ok\n"),
        Reply.text("Now out.txt exists."),
    )
    r = e2e.run("-y", "--check", "cat out.txt", "write out.txt")
    assert r.code == 0, r.stderr
    assert r.stdout == "Now out.txt exists.\n"
    assert "minicode: check failed: cat out.txt (exit 1," in r.stderr
    assert "No such file or directory" in r.stderr  # why, under the check line
    assert "their output went back to the model (1 of 2)" in r.stderr
    assert "minicode: done (checks passed)" in r.stderr
    told = e2e.server.requests[1].messages[-1]
    assert told["role"] == "user" and told["content"].startswith(FEEDBACK_HEADER)
    assert "$ cat out.txt" in told["content"] and "[exit code 1]" in told["content"]
    assert "checks 1/1 passed (2 runs)" in r.stderr


def test_checks_failing_twice_then_fixed_on_the_last_chance_pass(e2e: Env) -> None:
    e2e.server.script(
        Reply.text("Done."),  # fails: feedback 1 of 2
        Reply.text("Really done."),  # fails again: feedback 2 of 2
        Reply.tool("write", path="out.txt", content="ok\n"),
        Reply.text("Fixed for real."),  # the third final answer: passes
    )
    r = e2e.run("-y", "--check", "test -f out.txt", "write out.txt")
    assert r.code == 0, r.stderr
    assert r.stdout == "Fixed for real.\n"
    assert "(1 of 2)" in r.stderr and "(2 of 2)" in r.stderr
    assert "minicode: done (checks passed)" in r.stderr and "checks 1/1 passed (3 runs)" in r.stderr
    last = e2e.server.requests[2].messages[-1]["content"]
    assert last.startswith(FEEDBACK_HEADER) and "Feedback 2 of 2: after this, a failure ends the task." in last


def test_checks_failing_every_time_end_the_task_checks_failed_exit_1(e2e: Env) -> None:
    e2e.server.default = Reply.text("Done, all tests pass.")
    r = e2e.run("-y", "--check", "exit 3", "claim success")
    assert r.code == 1, r.stderr
    assert r.stderr.count("minicode: check failed: exit 3 (exit 3,") == 3
    assert "(1 of 2)" in r.stderr and "(2 of 2)" in r.stderr
    assert "minicode: checks failed: exit 3 (exit 3," in r.stderr
    assert "checks 0/1 passed (3 runs)" in r.stderr
    assert len(e2e.server.requests) == 3  # the answer, and two answers after feedback
    record = turn_end(e2e, r.session_id)
    assert record["status"] == "checks failed" and record["checks"][0]["exit_code"] == 3


def test_task_checks_from_the_config_and_check_flags_both_run(e2e: Env) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text() + '\n[task]\nchecks = ["true"]\n')
    e2e.server.script(Reply.text("ok"))
    r = e2e.run("--config", "config/config.toml", "--check", "test -d config", "noop")  # named: the user's choice
    assert r.code == 0, r.stderr
    assert "check passed: true (exit 0" in r.stderr and "check passed: test -d config" in r.stderr


def test_a_bad_task_table_is_a_config_error(e2e: Env) -> None:
    config = e2e.workspace / "config" / "config.toml"
    config.write_text(config.read_text() + '\n[task]\nchecks = "pytest"\n')
    r = e2e.run("noop")
    assert r.code == 2 and "[task].checks must be an array of strings" in r.stderr
    assert e2e.server.requests == []


def test_checks_run_in_pipe_mode_for_every_task_and_never_see_the_key(e2e: Env) -> None:
    e2e.server.script(Reply.text("one"), Reply.text("two"))
    r = e2e.run("--check", f"env | grep -c {API_KEY[:12]} || true", stdin="first\nsecond\n")
    assert r.code == 0, r.stderr
    assert r.stdout == "one\ntwo\n"
    assert r.stderr.count("done (checks passed)") == 2
    assert API_KEY not in r.stderr + r.stdout


def test_sigterm_during_a_check_stops_at_once_and_kills_the_check(e2e: Env) -> None:
    marker, running = e2e.workspace / "late.txt", e2e.workspace / "running.txt"
    e2e.server.script(Reply.text("done"))
    proc = e2e.popen("--check", f"touch {running}; sleep 20; touch {marker}", "wait")
    deadline = time.monotonic() + 20
    while not running.exists() and time.monotonic() < deadline:  # the check runs now
        time.sleep(0.05)
    assert running.exists()
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 5
    assert "interrupted" in err
    time.sleep(0.5)
    assert not marker.exists()


def test_pipe_mode_check_lines_edit_the_checks_and_near_misses_are_never_tasks(e2e: Env) -> None:
    e2e.server.script(Reply.text("first done"), Reply.text("second done"), Reply.text("fixed"),
                      Reply.text("path noted"))
    stdin = ("task a\n/check false\n/check\ntask b\n/check --clear\n/compcat\n/undoo\n"
             "/usr/lib is missing\n/check true\n/check true\n")
    r = e2e.run("--check", "true", stdin=stdin)
    assert r.code == 1, r.stderr  # the checks failing twice, the near misses and the bad /check
    assert "minicode: check added: false — it runs when the model says it is done" in r.stderr
    assert "  1. true\n  2. false" in r.stderr
    assert "minicode: check failed: false" in r.stderr  # task b ran both checks
    assert "minicode: acceptance checks cleared" in r.stderr
    assert "unknown command /compcat — did you mean /compact?" in r.stderr
    assert "unknown command /undoo — did you mean /undo?" in r.stderr
    assert "minicode: error: already a check: true" in r.stderr
    sent = [req.messages[-1]["content"] for req in e2e.server.requests]
    assert not any(s.startswith(("/check", "/compcat", "/undoo")) for s in sent)
    assert "/usr/lib is missing" in sent  # a path is a task


def test_pipe_mode_full_screen_commands_and_their_near_misses_are_never_tasks(e2e: Env) -> None:
    """Finding B10: ``/exit``, ``/quit``, ``/help`` … in a pipe went to the model as tasks (the
    first line in the early request too), while ``/COMPACT`` was refused."""
    e2e.server.script(Reply.text("first done"), Reply.text("path noted"))
    stdin = "/exit\n/help\ntask a\n/quit\n/exti\n/rewnd\n/resume\n/etc/hosts is empty\n"
    r = e2e.run(stdin=stdin)
    assert r.code == 1, r.stderr
    assert "minicode: error: /exit works in the full screen only; in pipe mode the session ends with the input" in r.stderr
    assert "minicode: error: /help works in the full screen only (minicode -c opens the last session there)" in r.stderr
    assert ("unknown command /exti — did you mean /exit? It works in the full screen only; in pipe mode the "
            "session ends with the input") in r.stderr
    assert ("unknown command /rewnd — did you mean /rewind? It works in the full screen only (minicode -c opens "
            "the last session there)") in r.stderr
    sent = [req.messages[-1]["content"] for req in e2e.server.requests]
    assert sent == ["task a", "/etc/hosts is empty"]  # a path is a task; no command went to the model
