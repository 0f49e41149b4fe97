"""minicode.entry: outside a frontend's event loop a stop signal ends the process at once with
exit 130 and one line; the handlers are installed before anything else runs."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from typing import Iterator

import pytest

import minicode.cli
from minicode import entry


@pytest.fixture(autouse=True)
def _restore_handlers() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in entry.STOP_SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_while_starting_exits_130_with_one_line_and_no_traceback(sig: str) -> None:
    done = _run(f"""
        import os, signal, sys
        import minicode.cli
        def run():
            print("partial answer", end="")  # buffered: flushed before the exit
            os.kill(os.getpid(), signal.{sig})
            raise AssertionError("not reached")
        minicode.cli.main = run
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
            import minicode.cli
            def run():
                threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
                r, w = os.pipe()
                os.read(r, 1)  # a pipe that never ends (piped context being read)
            minicode.cli.main = run
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

    monkeypatch.setattr(minicode.cli, "main", run)
    assert entry.main() == 0
    assert seen == [entry.stop_now]


def test_a_keyboard_interrupt_from_elsewhere_is_exit_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def run() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(minicode.cli, "main", run)
    assert entry.main() == 130
    assert capsys.readouterr().err == "minicode: interrupted\n"
