"""End-to-end robustness of pipe/one-shot: bad bytes, closed pipes, EOF at approval, startup errors."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.e2e.conftest import Env, Run
from tests.support.filler import prose
from tests.support.fake_openai import Reply


def run_bytes(e2e, *args: str | bytes, stdin: bytes = b"", env: dict[str, str] | None = None) -> Run:
    proc = subprocess.run(
        [e2e.argv()[0], *args], cwd=e2e.workspace, env={**e2e.environ(), **(env or {})}, input=stdin,
        capture_output=True, timeout=30, start_new_session=True,
    )
    return Run(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


def _session_lines(e2e, run: Run) -> list[dict]:
    raw = e2e.session_file(run.session_id).read_bytes()
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # strict UTF-8


def test_a_line_that_is_not_utf8_does_not_end_the_pipe(e2e):
    e2e.server.script(Reply.text("A1"), Reply.text("A2"), Reply.text("A3"))
    r = run_bytes(e2e, stdin=b"task one\n\xff bad\ntask three\n", env={"PYTHONIOENCODING": "utf-8:strict"})
    assert r.code == 0, r.stderr
    assert r.stdout == "A1\nA2\nA3\n"
    assert e2e.server.requests[1].messages[-1]["content"] == "\ufffd bad"
    assert "Traceback" not in r.stderr


def test_argv_task_that_is_not_utf8_runs(e2e):
    e2e.server.script(Reply.text("fixed"))
    r = run_bytes(e2e, b"fix caf\xe9")  # type: ignore[arg-type]
    assert r.code == 0, r.stderr
    assert e2e.server.requests[0].messages[-1]["content"] == "fix caf\ufffd"
    assert any(rec.get("content") == "fix caf\ufffd" for rec in _session_lines(e2e, r))


def test_undecodable_file_name_in_ls_is_stored_and_sent(e2e):
    os.close(os.open(os.fsencode(e2e.workspace) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    e2e.server.script(Reply.tool("ls"), Reply.tool("glob", pattern="*.txt"), Reply.text("listed"))
    r = run_bytes(e2e, "list files")
    assert r.code == 0, r.stderr
    assert r.stdout == "listed\n"
    results = [m["content"] for m in e2e.server.requests[2].messages if m["role"] == "tool"]
    assert all("bad\ufffd.txt" in text for text in results)
    assert any("bad\ufffd.txt" in (rec.get("content") or "") for rec in _session_lines(e2e, r))


def _run_with_stdout(e2e, stdout, *args: str, preexec=None) -> tuple[int, str]:
    proc = subprocess.run(
        e2e.argv(*args), cwd=e2e.workspace, env=e2e.environ(), stdin=subprocess.DEVNULL, stdout=stdout,
        stderr=subprocess.PIPE, timeout=30, start_new_session=True, preexec_fn=preexec,
    )
    return proc.returncode, proc.stderr.decode("utf-8")


def test_stdout_reader_gone_is_quiet_and_exits_1(e2e):
    e2e.server.script(Reply.text(prose(140_000, line=8)))  # large, and never repeating (no runaway cut)
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `minicode go | true`: nobody reads the answer
    try:
        code, stderr = _run_with_stdout(e2e, write_end, "go")
    finally:
        os.close(write_end)
    assert code == 1, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert "could not be written to stdout" in stderr
    assert "minicode: done" in stderr and "minicode: resume with:" in stderr.splitlines()[-1]


def test_closed_stdout_is_quiet_and_exits_1(e2e):
    e2e.server.script(Reply.text("hi"))
    code, stderr = _run_with_stdout(e2e, None, "go", preexec=lambda: os.close(1))
    assert code == 1, stderr
    assert "Traceback" not in stderr and "could not be written to stdout" in stderr


def test_sigint_while_waiting_for_a_line_says_interrupted_once(e2e):
    import signal
    import time

    proc = subprocess.Popen(
        e2e.argv(), cwd=e2e.workspace, env=e2e.environ(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 15
        session_dir = e2e.workspace / ".minicode" / "sessions"
        while time.monotonic() < deadline and not (session_dir.exists() and any(session_dir.glob("*.jsonl"))):
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)  # stdin stays open: the interrupt, not the end of input, ends it
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    text = err.decode()
    assert proc.returncode == 130, text
    assert text.count("minicode: interrupted") == 1, text


def test_answer_cut_at_the_output_limit_is_flagged(e2e):
    e2e.server.script(Reply.text("half an ans", finish_reason="length"))
    r = run_bytes(e2e, "write a lot")
    assert r.code == 0, r.stderr
    assert r.stdout == "half an ans\n"
    assert "minicode: the answer was cut off at the output limit" in r.stderr


@pytest.mark.parametrize("args", [["say hi"], ["--output", "json", "say hi"], ["--doctor"]])
def test_an_unusable_proxy_is_a_clear_error_never_a_traceback(e2e: Env, args: list[str]) -> None:
    env = {**e2e.environ(), "HTTPS_PROXY": "http://user:pw-secret@::::garbage", "HTTP_PROXY": "http://::::garbage"}
    proc = subprocess.run(e2e.argv(*args), cwd=e2e.workspace, env=env, capture_output=True, text=True,
                          timeout=30, start_new_session=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in out and "pw-secret" not in out
    assert "the proxy set in HTTPS_PROXY, HTTP_PROXY cannot be used" in out
    assert e2e.server.requests == []
