"""Signals at any moment: SIGINT or SIGTERM from start-up to the end of a run exit 130 with one
"minicode: interrupted" line on stderr, never a traceback or a death by the signal, and a
session that was announced stays loadable."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

import minicode
from minicode.provider.messages import validate_messages
from minicode.session.store import SessionStore
from tests.support.fake_openai import Reply

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


def _check_session(e2e, err: str) -> None:
    for line in err.splitlines():
        if line.startswith("minicode: session "):
            _, loaded = SessionStore.open(e2e.workspace, line.split()[-1])
            validate_messages(loaded.messages)


def _exited_before_minicode_ran(code: int, err: str, sig: signal.Signals) -> bool:
    """The signal landed while the Python interpreter itself was starting, before any of
    minicode's code ran (see minicode.entry): the OS default (death by the signal) or, for
    SIGINT, the interpreter's own report (a fatal error of its initialisation, exit 1, or a
    KeyboardInterrupt in the console script before minicode.entry ran)."""
    if code not in (-sig, 1):
        return False
    frames = [line.strip() for line in err.splitlines() if line.strip().startswith('File "')]
    package = 'File "' + os.path.dirname(minicode.__file__) + os.sep
    # No frame of minicode's package, except the import of minicode.entry itself (its first
    # line installs nothing yet: the handlers are installed by main()).
    interpreter_only = not any(f.startswith(package) and "entry.py" not in f for f in frames)
    if code == 1:  # the interpreter's own initialisation failed ("init_import_site", "init_sys_streams")
        return interpreter_only and err.startswith("Fatal Python error: init_")
    return interpreter_only


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_at_any_moment_of_a_run_exits_130_with_one_line(e2e, sig: signal.Signals) -> None:
    e2e.server.default = Reply.text("slow answer " * 50, chunk_size=4, chunk_delay=0.01)
    outcomes: list[tuple[float, str]] = []
    for delay in TIMINGS_S:
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
