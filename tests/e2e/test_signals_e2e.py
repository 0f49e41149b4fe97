"""Signals at any moment: SIGINT, SIGTERM or SIGHUP from start-up to the end of a run exit 130
with one "minicode: interrupted" line on stderr, never a traceback or a death by the signal, and
a session that was announced stays loadable; with ``--output json`` the last line is a
``result`` even when the signal came before the JSON frontend started. SIGHUP (a closed
terminal, a dropped ssh connection) is a stop like SIGTERM: the running command is killed and
its call answered in the session."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import minicode
from minicode.provider.messages import validate_messages
from minicode.provider.types import Message
from minicode.session.store import SessionStore
from tests.support.events import check_stream, of_type
from tests.support.fake_openai import Reply

STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]

TIMINGS_S = [i * 0.015 for i in range(20)] + [0.8]  # 0, 15, ..., 285 ms, and one in the task


def _stop_at(e2e, sig: signal.Signals, delay: float, *args: str) -> tuple[int, str]:
    proc = subprocess.Popen(
        e2e.argv(*args), cwd=e2e.workspace, env=e2e.environ(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    time.sleep(delay)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def _check_session(e2e, err: str) -> list[Message]:
    """The session the run announced (if any) loads and is a valid conversation; its messages."""
    for line in err.splitlines():
        if line.startswith("minicode: session "):
            _, loaded = SessionStore.open(e2e.workspace, line.split()[-1])
            validate_messages(loaded.messages)
            return list(loaded.messages)
    return []


_SWALLOWED = "Failed checking if argv[0] is an import path entry"
_NO_LOADER = "python: failed to set __main__.__loader__"
"""CPython's report when SIGINT lands while it builds the console script's loader (in its own
frozen importlib, before the script runs): the traceback of that, exit 1."""


@pytest.fixture(autouse=True)
def _stop_signals_at_their_defaults():
    """The runs start with the stop signals at the OS default, as from a terminal. A suite
    started under ``nohup`` (SIGHUP ignored) or as a shell's background job (SIGINT ignored)
    hands the ignoring down through exec, and a signal that lands before minicode installs its
    handlers is then dropped: the run ends normally — seen at 0 and 30 ms under load, and once
    taken for a signal between fork and exec (``Popen`` returns only after the exec)."""
    ignored = [sig for sig in STOPS if signal.getsignal(sig) == signal.SIG_IGN]
    for sig in ignored:
        signal.signal(sig, signal.SIG_DFL)
    yield
    for sig in ignored:
        signal.signal(sig, signal.SIG_IGN)


def _exited_before_minicode_ran(code: int, err: str, sig: signal.Signals) -> bool:
    """The signal landed while the Python interpreter itself was starting, before any of
    minicode's code ran (see minicode.entry): the OS default (death by the signal) or, for
    SIGINT, the interpreter's own report (a fatal error of its initialisation or a bare
    KeyboardInterrupt while it compiled the console script, exit 1; or a KeyboardInterrupt in
    the console script before minicode.entry ran; or a SIGINT it reported and dropped)."""
    frames = [line.strip() for line in err.splitlines() if line.strip().startswith('File "')]
    package = 'File "' + os.path.dirname(minicode.__file__) + os.sep
    # No frame of minicode's package, except the import of minicode.entry itself (its first
    # line installs nothing yet: the handlers are installed by main()).
    interpreter_only = not any(f.startswith(package) and "entry.py" not in f for f in frames)
    if sig == signal.SIGINT and err.startswith(_SWALLOWED):
        # CPython got the KeyboardInterrupt while it checked whether the script is a zip or a
        # directory: it prints this line and the traceback, drops the signal and runs the
        # script as if nothing happened. Only the interpreter's own frames may be in it.
        before_minicode = err.split("KeyboardInterrupt", 1)[0]
        return not any(line.strip().startswith(package) for line in before_minicode.splitlines())
    if code not in (-sig, 1):
        return False
    if code == 1:
        # the interpreter's own initialisation failed ("init_import_site", "init_sys_streams"),
        # or SIGINT came while it read and compiled the console script: it prints the bare
        # exception and exits 1 (minicode.entry would have said "minicode: interrupted", 130)
        bare = sig == signal.SIGINT and err.strip() == "KeyboardInterrupt"
        no_loader = sig == signal.SIGINT and err.startswith(_NO_LOADER)
        return interpreter_only and (err.startswith("Fatal Python error: init_") or bare or no_loader)
    return interpreter_only


@pytest.mark.parametrize("sig", STOPS)
def test_a_signal_at_any_moment_of_a_run_exits_130_with_one_line(e2e, sig: signal.Signals) -> None:
    e2e.server.default = Reply.text("slow answer " * 50, chunk_size=4, chunk_delay=0.01)
    outcomes: list[tuple[float, str]] = []
    # the three signals share the start-up moments (each every third one, all of them between
    # the three: one handler serves them all) and each also lands in the task
    for delay in TIMINGS_S[STOPS.index(sig):-1:len(STOPS)] + TIMINGS_S[-1:]:
        code, err = _stop_at(e2e, sig, delay, "--yes", "explain")
        if _exited_before_minicode_ran(code, err, sig):
            # The interpreter's own start-up (it varies with the machine's load): no frame of
            # minicode in what it printed, so minicode's handlers were not installed yet.
            outcomes.append((delay, "interpreter"))
            continue
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (delay, err)
        assert code == 130, (delay, code, err)
        assert err.count("minicode: interrupted") == 1, (delay, err)
        _check_session(e2e, err)
        outcomes.append((delay, "130"))
    assert outcomes[-1][1] == "130", outcomes  # 800 ms is well past the interpreter's start-up


def test_a_signal_at_any_moment_of_a_json_run_still_ends_with_a_result(e2e) -> None:
    """--output json over the same timings (the three signals in turn): every run minicode's
    code saw ends its stdout with a ``result`` of exit code 130 — also before the JSON frontend
    started (finding J2: the first ~0.3 s used to give an empty stdout)."""
    e2e.server.default = Reply.text("slow answer " * 50, chunk_size=4, chunk_delay=0.01)
    outcomes: list[tuple[float, str]] = []
    for i, delay in enumerate(TIMINGS_S):
        sig = STOPS[i % len(STOPS)]
        code, out, err = _stop_json_at(e2e, sig, delay, "--output", "json", "--yes", "explain")
        if _exited_before_minicode_ran(code, err, sig) and (out == "" or err.startswith(_SWALLOWED)):
            outcomes.append((delay, "interpreter"))
            continue
        assert "Traceback" not in err and code == 130, (delay, sig, code, err)
        events = check_stream(out)
        assert events[-1]["type"] == "result" and events[-1]["exit_code"] == 130, (delay, sig, out)
        assert events[-1]["status"] == "interrupted" and events[-1]["error"] == "interrupted", (delay, sig, out)
        _check_session(e2e, err)
        outcomes.append((delay, "130"))
    assert outcomes[-1][1] == "130", outcomes


def _stop_json_at(e2e, sig: signal.Signals, delay: float, *args: str) -> tuple[int, str, str]:
    proc = e2e.popen(*args)
    time.sleep(delay)
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


@pytest.mark.parametrize("output", ["text", "json"])
def test_sighup_during_a_command_kills_it_and_answers_the_call(e2e, output: str) -> None:
    """Finding J1: a hang-up used to kill minicode outright — no ``result`` line, a tool call
    without a result in the session. Now it is a stop like SIGTERM."""
    e2e.server.script(Reply.tool("bash", command="echo $$ > cmd.pid; exec sleep 30"), Reply.text("unused"))
    args = ["--output", "json"] if output == "json" else []
    proc = e2e.popen(*args, "--yes", "run it")
    pid_file = e2e.workspace / "cmd.pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline and proc.poll() is None, "the command never started"
        time.sleep(0.05)
    command = int(pid_file.read_text())
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.count("minicode: interrupted") == 1, err
    messages = _check_session(e2e, err)
    assert messages[-1].role == "tool" and (messages[-1].content or "").startswith("interrupted after "), messages
    if output == "json":
        events = check_stream(out)
        (result,) = of_type(events, "tool_result")
        assert result["status"] == "interrupted"
        assert (events[-1]["type"], events[-1]["status"], events[-1]["exit_code"]) == ("result", "interrupted", 130)
    assert not _alive(command), "the command outlived minicode"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_signal_while_the_session_file_is_written_leaves_it_loadable(e2e) -> None:
    e2e.server.default = Reply.tool("bash", command="echo hi")
    stopped: list[float] = []
    for delay in (0.15, 0.2, 0.25, 0.3, 0.35, 0.4):
        code, err = _stop_at(e2e, signal.SIGTERM, delay, "--yes", "loop on bash")
        if _exited_before_minicode_ran(code, err, signal.SIGTERM):
            continue  # a loaded machine was still starting the interpreter: no session file yet
        assert code == 130, (delay, err)
        _check_session(e2e, err)
        stopped.append(delay)
    assert 0.4 in stopped, stopped  # well past the interpreter's start-up


def test_double_dash_runs_a_task_that_starts_with_a_dash(e2e) -> None:
    e2e.server.script(Reply.text("ran it"))
    r = e2e.run("--", "-x")
    assert r.code == 0, r.stderr
    assert r.stdout == "ran it\n"
    assert e2e.server.requests[0].messages[-1]["content"] == "-x"
