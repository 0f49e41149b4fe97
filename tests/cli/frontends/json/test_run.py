"""The JSON frontend's own duties (cli/frontends/json/run.py): stdout belongs to the JSON writer alone,
the last line is a result whatever ends the run, and nobody is asked for approval."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minicode.agent.approval import ApprovalRequest, ApprovedBy, Decision
from minicode.cli.args import parse_args
from minicode.cli.frontends.json.run import POLICY_REASON, JsonWriter, main
from minicode.errors import ConfigError, SessionError
from tests.support.events import check_stream

SRC = Path(__file__).resolve().parents[2] / "src"


def test_stdout_guard_lets_only_the_json_writer_reach_stdout():
    script = textwrap.dedent(
        """
        import os, subprocess, sys
        from minicode.cli.frontends.json.run import stdout_guard
        with stdout_guard() as out:
            print("a print")
            os.write(1, b"a raw write\\n")
            subprocess.run(["echo", "a child process"], check=True)
            out.write(b'{"v":1}\\n')
            out.flush()
        print("after the guard")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"v":1}\nafter the guard\n'
    assert "a print\n" in proc.stderr and "a raw write\n" in proc.stderr and "a child process\n" in proc.stderr


def test_stdout_guard_with_stdout_closed_gives_no_stream():
    script = "from minicode.cli.frontends.json.run import stdout_guard\nwith stdout_guard() as out:\n    print(out is None)\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0 and proc.stderr == "True\n"


def _main(prepare, argv=("--output", "json", "go")) -> tuple[int, str]:
    out = io.BytesIO()
    code = main(parse_args(list(argv)), prepare, out=out)
    return code, out.getvalue().decode()


def _raise(error: BaseException):
    def prepare():
        raise error

    return prepare


@pytest.mark.parametrize("error,code", [
    (ConfigError("config/config.toml: [model] name must be a string"), 2),
    (SessionError("no session abc in this workspace", exit_code=2), 2),
])
def test_start_up_errors_are_a_result(error, code, capsys):
    got, stdout = _main(_raise(error))
    assert got == code
    (event,) = check_stream(stdout)
    assert (event["session"], event["task"], event["status"], event["exit_code"]) == (None, None, "error", code)
    assert event["error"] == str(error)
    assert capsys.readouterr().err == f"minicode: error: {error}\n"


def test_an_internal_error_is_a_valid_result_line(capsys):
    got, stdout = _main(_raise(RuntimeError("boom")))
    assert got == 1
    (event,) = check_stream(stdout)
    assert event["status"] == "error" and event["error"] == "internal error: RuntimeError: boom"
    assert "Traceback" in capsys.readouterr().err  # for the bug report, on stderr


def test_a_signal_inside_a_class_being_built_is_still_an_interrupted_result(capsys):
    """Python 3.11 turns what a class's ``__set_name__`` raises into RuntimeError: a stop signal
    landing while an import builds a dataclass must not read as an internal error."""

    class Hook:
        def __set_name__(self, owner: type, name: str) -> None:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler raises inside __set_name__
            for _ in range(1000):  # bytecode for the pending handler to run on
                pass

    def prepare():
        type("Record", (), {"field": Hook()})
        raise AssertionError("not reached")

    got, stdout = _main(prepare)
    assert got == 130
    (event,) = check_stream(stdout)
    assert event["status"] == "interrupted" and event["exit_code"] == 130
    assert "Traceback" not in capsys.readouterr().err


def test_an_error_without_a_signal_is_still_an_internal_error(capsys):
    def prepare():
        type("Record", (), {"field": _FailingHook()})

    got, stdout = _main(prepare)
    assert got == 1
    (event,) = check_stream(stdout)
    assert event["status"] == "error" and "RuntimeError" in event["error"]


class _FailingHook:
    def __set_name__(self, owner: type, name: str) -> None:
        raise ValueError("a real bug")


def test_a_stop_signal_after_stdout_was_taken_but_before_the_handlers_writes_the_result_to_stdout():
    """The window between ``stdout_guard`` pointing descriptor 1 at stderr and the JSON run's
    own handlers: the entry point's fixed result line still goes to the real stdout."""
    script = textwrap.dedent(
        """
        import os, signal
        from minicode import stop_signal
        from minicode.cli.frontends.json.run import stdout_guard
        stop_signal.promise_result()
        signal.signal(signal.SIGTERM, stop_signal.stop_now)
        with stdout_guard():
            os.kill(os.getpid(), signal.SIGTERM)
            while True:
                pass
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert proc.returncode == 130
    from minicode.stop_signal import INTERRUPTED_RESULT

    assert proc.stdout == INTERRUPTED_RESULT
    assert proc.stderr == b"minicode: interrupted\n"


def test_a_signal_during_start_up_is_an_interrupted_result(capsys):
    before = signal.getsignal(signal.SIGTERM)

    def prepare():
        os.kill(os.getpid(), signal.SIGTERM)  # the handler raises at the next bytecode
        raise AssertionError("not reached")

    got, stdout = _main(prepare)
    assert got == 130
    (event,) = check_stream(stdout)
    assert event["status"] == "interrupted" and event["exit_code"] == 130
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are given back
    assert "minicode: interrupted" in capsys.readouterr().err


async def test_json_mode_never_asks_and_says_how_to_allow(capsys):
    from minicode.cli.frontends.json.run import JsonFrontend

    front = JsonFrontend(JsonWriter(io.BytesIO(), io.StringIO()), parse_args(["--output", "json", "go"]), io.StringIO())
    request = ApprovalRequest("c1", "bash", "/ws", "rm -rf build", {"command": "rm -rf build"})
    approval = await front.approver(None).approve(request)
    assert approval.decision is Decision.DENY and approval.by is ApprovedBy.POLICY
    assert approval.reason == POLICY_REASON and "--yes" in POLICY_REASON and "rule" in POLICY_REASON
    yes = JsonFrontend(JsonWriter(io.BytesIO(), io.StringIO()), parse_args(["--output", "json", "-y", "go"]), io.StringIO())
    assert (await yes.approver(None).approve(request)).by is ApprovedBy.AUTO


class _Broken(io.BytesIO):
    def write(self, data):  # type: ignore[override]
        raise BrokenPipeError(32, "Broken pipe")


def test_writer_notes_a_broken_stdout_once():
    err = io.StringIO()
    writer = JsonWriter(_Broken(), err)
    writer.write(b'{"a":1}\n')
    writer.write(b'{"a":2}\n')
    assert writer.undelivered and err.getvalue().count("could not be written to stdout") == 1


def test_writer_writes_whole_lines():
    out = io.BytesIO()
    writer = JsonWriter(out, io.StringIO())
    writer.write(b'{"a":1}\n')
    assert json.loads(out.getvalue()) == {"a": 1} and not writer.undelivered


class _Timers:
    """A clock the test moves, and the timers set on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pending: list[tuple[float, object, list[bool]]] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when, callback):
        cancelled = [False]
        self.pending.append((when, callback, cancelled))

        class Handle:
            def cancel(self) -> None:
                cancelled[0] = True

            def when(self) -> float:
                return when

        return Handle()

    def advance(self, to: float) -> None:
        self.now = to
        for when, callback, cancelled in sorted(self.pending, key=lambda p: p[0]):
            if when <= to and not cancelled[0]:
                cancelled[0] = True
                callback()


def test_held_text_goes_out_on_time_and_before_the_next_event():
    from minicode.agent.events import AssistantDone, TextChunk, TurnStarted
    from minicode.cli.frontends.json.deltas import FLOOR_BYTES, HARD_DELAY, MAX_DELAY
    from minicode.cli.frontends.json.run import JsonFrontend

    out, timers = io.BytesIO(), _Timers()
    front = JsonFrontend(JsonWriter(out, io.StringIO()), parse_args(["--output", "stream-json", "go"]),
                         io.StringIO(), timers)

    def deltas() -> list[str]:
        return [json.loads(line)["text"] for line in out.getvalue().splitlines() if b'"delta"' in line]

    front.emit(TurnStarted("go"))
    front.emit(TextChunk("small"))
    assert [w for w, _, c in timers.pending if not c[0]] == [HARD_DELAY]  # too little to be worth a line yet
    timers.advance(0.5)
    front.emit(TextChunk("x" * FLOOR_BYTES))  # now worth it: the timer moves to MAX_DELAY
    assert [w for w, _, c in timers.pending if not c[0]] == [MAX_DELAY]
    timers.advance(MAX_DELAY)
    assert deltas() == ["small" + "x" * FLOOR_BYTES]
    front.emit(TextChunk("tail"))
    front.emit(AssistantDone("small" + "x" * FLOOR_BYTES + "tail", "", 0))  # flushes first
    assert deltas()[-1] == "tail"
    kinds = [json.loads(line)["type"] for line in out.getvalue().splitlines()]
    assert kinds == ["user", "delta", "delta", "assistant"]


def test_a_failed_command_is_an_event_and_the_reason_closes_the_run():
    from minicode.cli.frontends.json.run import JsonFrontend

    out, err = io.BytesIO(), io.StringIO()
    front = JsonFrontend(JsonWriter(out, err), parse_args(["--output", "json"]), err)
    front.command("/permissions remove 9", 1, ["minicode: error: there is no rule 9"])
    front.command("/undo", 1, [])  # failed without a word: still a reason
    front.finish(1, None)
    events = check_stream(out.getvalue().decode())
    assert [(e["type"], e.get("status"), e["error"]) for e in events] == [
        ("command", "failed", "there is no rule 9"), ("command", "failed", "it failed"),
        ("result", "error", "/undo: it failed")]  # fmt: skip
    assert events[0]["text"] == "error: there is no rule 9" and events[-1]["exit_code"] == 1


def test_once_the_run_owns_the_process_the_signals_stay_ignored_after_the_last_line():
    """The real executable (``out`` None) leaves them ignored through the interpreter's exit,
    so a late signal cannot change the exit code the last line promised; in-process runs get
    their handlers back. (End to end: test_json_robust_e2e.py.)"""
    from minicode.cli.frontends.json.run import _Interrupts

    from minicode.stop_signal import STOP_SIGNALS as stops  # SIGHUP too

    before = {sig: signal.getsignal(sig) for sig in stops}
    try:
        with _Interrupts():
            assert all(signal.getsignal(sig) != before[sig] for sig in stops)
        assert {sig: signal.getsignal(sig) for sig in stops} == before
        with _Interrupts(ignore_after=True) as interrupts:
            interrupts.armed = False
        assert all(signal.getsignal(sig) == signal.SIG_IGN for sig in stops)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
