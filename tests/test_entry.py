"""minicode.entry and minicode.stop_signal: outside a frontend's event loop a stop signal ends the process at once with
exit 130 and one line; the handlers are installed before anything else runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import minicode.cli.main
from minicode import entry, old_bundles, stop_signal
from minicode.cli.frontends.json.event_json import EventMapper, encode_line
from tests.support.events import check_stream


@pytest.fixture(autouse=True)
def _restore_handlers() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in stop_signal.STOP_SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_while_starting_exits_130_with_one_line_and_no_traceback(sig: str) -> None:
    done = _run(f"""
        import os, signal, sys
        import minicode.cli.main
        def run():
            print("partial answer", end="")  # buffered: flushed before the exit
            os.kill(os.getpid(), signal.{sig})
            raise AssertionError("not reached")
        minicode.cli.main.main = run
        from minicode.entry import main
        sys.exit(main())
    """)
    assert done.returncode == 130
    assert done.stderr == "minicode: interrupted\n"
    assert done.stdout == "partial answer"


def test_a_signal_blocked_in_a_read_still_exits_at_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import os, signal, sys, threading
            import minicode.cli.main
            def run():
                threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
                r, w = os.pipe()
                os.read(r, 1)  # a pipe that never ends (piped context being read)
            minicode.cli.main.main = run
            from minicode.entry import main
            sys.exit(main())
        """)],
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 130 and done.stderr == "minicode: interrupted\n"


def test_the_handlers_are_installed_before_the_cli_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []

    def run() -> int:
        seen.append(signal.getsignal(signal.SIGTERM))
        return 0

    monkeypatch.setattr(minicode.cli.main, "main", run)
    assert entry.main() == 0
    assert seen == [stop_signal.stop_now]


def test_a_keyboard_interrupt_from_elsewhere_is_exit_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def run() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(minicode.cli.main, "main", run)
    assert entry.main() == 130
    assert capsys.readouterr().err == "minicode: interrupted\n"


def test_run_ends_with_mains_code_after_the_threads_and_atexit_as_any_python_program(tmp_path: Path) -> None:
    marker = tmp_path / "thread-finished"
    done = _run(f"""
        import atexit, os, threading, time
        import minicode.cli.main
        def late():
            time.sleep(0.3)
            open({str(marker)!r}, "w").close()
        def run():
            threading.Thread(target=late).start()  # not a daemon: the exit waits for it
            atexit.register(lambda: print("atexit ran after the thread:", os.path.exists({str(marker)!r}), end=""))
            print("answer ", end="")
            return 3
        minicode.cli.main.main = run
        from minicode.entry import run as entry_run
        entry_run()
        raise AssertionError("not reached")
    """)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "answer atexit ran after the thread: True"
    assert done.stderr == ""


def test_the_bundles_an_earlier_version_left_are_removed_at_start_and_nothing_else(tmp_path: Path) -> None:
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    old = ["bundle.cpython-311.3f2a9c.bin", "bundle.cpython-312.00ff.bin", "bundle.cpython-311.3f2a9c.bin.a1b2c3.tmp"]
    kept = ["entry.cpython-311.pyc", "bundle.txt", "bundles.bin", "notabundle.bin"]
    for name in old + kept:
        (cache / name).write_bytes(b"x")
    old_bundles.remove(str(tmp_path))
    assert sorted(p.name for p in cache.iterdir()) == sorted(kept)


def test_removing_old_bundles_ignores_a_missing_cache_and_a_file_it_cannot_remove(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old_bundles.remove(str(tmp_path / "nowhere"))  # no __pycache__: nothing happens
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    (cache / "bundle.cpython-311.3f2a9c.bin").write_bytes(b"x")

    def refuse(path: object) -> None:
        raise PermissionError(13, "read-only install")

    monkeypatch.setattr(old_bundles.os, "unlink", refuse)
    old_bundles.remove(str(tmp_path))  # no error: the file stays
    assert (cache / "bundle.cpython-311.3f2a9c.bin").exists()


def test_main_removes_the_old_bundles_of_its_own_package(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(old_bundles, "remove", seen.append)
    monkeypatch.setattr(minicode.cli.main, "main", lambda: 0)
    assert entry.main() == 0
    assert seen == [os.path.dirname(entry.__file__)]


@pytest.mark.parametrize("args", [
    ["--output", "json", "task"], ["--output=stream-json", "task"], ["task", "--out", "json"],
    ["--outp=json"], ["--output", "text", "--output", "json"],
])
def test_the_command_line_asks_for_events(args: list[str]) -> None:
    assert entry.asks_for_events(args)


@pytest.mark.parametrize("args", [
    [], ["task"], ["--output", "text"], ["--output"], ["--output", "json", "--output", "text"],
    ["--", "--output", "json"], ["--o", "jsonx"], ["-y", "json"], ["--outputs", "json"],
])
def test_the_command_line_does_not_ask_for_events(args: list[str]) -> None:
    assert not entry.asks_for_events(args)


@pytest.mark.parametrize("stream", [False, True])
def test_the_fixed_result_line_is_the_json_frontends_own_for_an_interrupted_start(stream: bool) -> None:
    line = encode_line(EventMapper(stream=stream).closing(130, "interrupted"))
    assert stop_signal.INTERRUPTED_RESULT == line
    (event,) = check_stream(line.decode())
    assert (event["status"], event["exit_code"], event["session"]) == ("interrupted", 130, None)


_SIGNAL_IN_MAIN = """
    import os, signal, sys
    import minicode.cli.main
    from minicode import entry, old_bundles, stop_signal
    def run():
        if {taken_over}:
            stop_signal.events_taken_over()
        os.kill(os.getpid(), signal.{sig})
        raise AssertionError("not reached")
    minicode.cli.main.main = run
    sys.argv = ["minicode", *{args!r}]
    sys.exit(entry.main())
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_before_the_json_frontend_runs_still_ends_the_stream_with_a_result(sig: str) -> None:
    done = _run(_SIGNAL_IN_MAIN.format(taken_over=False, sig=sig, args=["--output", "json", "t"]))
    assert done.returncode == 130
    assert done.stderr == "minicode: interrupted\n"
    (event,) = check_stream(done.stdout)
    assert event["type"] == "result" and event["exit_code"] == 130


def test_once_the_json_frontend_took_over_the_entry_point_writes_no_result() -> None:
    done = _run(_SIGNAL_IN_MAIN.format(taken_over=True, sig="SIGTERM", args=["--output", "json", "t"]))
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "minicode: interrupted\n")


def test_text_mode_gets_no_json_line() -> None:
    done = _run(_SIGNAL_IN_MAIN.format(taken_over=False, sig="SIGTERM", args=["t"]))
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "minicode: interrupted\n")


_WRITE_THEN_WAIT = """
    import os, sys
    import minicode.cli.main
    def run():
        sys.stdout.write("an answer left in the buffer")
        os.write({ready}, b"written")
        sys.stdin.readline()  # the test closes the reading end meanwhile
        return 0
    minicode.cli.main.main = run
    from minicode.entry import main
    sys.exit(main())
"""


def test_a_stdout_that_broke_is_exit_1_not_the_interpreters_120() -> None:
    """Text left in stdout's buffer that can no longer be written (the reader went away, the
    terminal hung up): the entry point's last flush points the dead descriptor at /dev/null and
    makes the exit 1, instead of the interpreter's exit 120 and an "Exception ignored" report."""
    ready_r, ready_w = os.pipe()
    script = textwrap.dedent(_WRITE_THEN_WAIT.format(ready=ready_w))
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, pass_fds=(ready_w,), env=buffered)
    os.close(ready_w)
    try:
        assert os.read(ready_r, 100) == b"written"
    finally:
        os.close(ready_r)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone: the next write to stdout fails (EPIPE)
    proc.stdin.write(b"go\n")
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 1
    assert err == b""
