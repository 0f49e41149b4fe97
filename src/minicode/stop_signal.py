"""What a stop signal does while no frontend has taken the signals over (``minicode.entry``
installs ``stop_now`` from its first line; the JSON frontend and the plain driver take over).

``stop_now`` flushes what it can, writes the one line ``minicode: interrupted`` and leaves with
``os._exit(130)``: nothing is in flight there that a clean-up would save, and an exit that never
unwinds cannot turn into a traceback. With ``--output json|stream-json`` the last line on stdout
is a ``result`` even then: until the JSON frontend says it took over (``events_taken_over``), a
fixed one is written first (``promise_result``). Inside a running event loop the signals cancel
its task instead (``signals_cancel``). Its own module, so the JSON frontend can tell it
without importing the entry point (which imports the command line, which imports the frontend).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING, Iterator

from minicode.exitcodes import EXIT_INTERRUPTED

if TYPE_CHECKING:
    import asyncio

__all__ = ["INTERRUPTED_LINE", "INTERRUPTED_RESULT", "STOP_SIGNALS", "events_taken_over", "promise_result",
           "result_goes_to", "signals_cancel", "stop_now", "write_pending_result"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop minicode (exit 130)."""
INTERRUPTED_LINE = "minicode: interrupted"
INTERRUPTED_RESULT = (
    b'{"v":1,"type":"result","session":null,"seq":1,"task":null,"status":"interrupted","answer":"",'
    b'"error":"interrupted","exit_code":130,"stats":{"wall_seconds":0.0,"model_calls":0,"tool_calls":0},'
    b'"usage":null}\n'
)
"""The JSON stream of a run stopped before its JSON frontend started: ``cli.frontends.json.event_json``'s closing
``result`` for exit 130 with no session (a test keeps the two equal)."""

_pending_result: bytes | None = None
"""What ``stop_now`` writes to stdout before leaving: the fixed ``result`` line while a JSON
run's own frontend has not taken over, else nothing."""
_result_fd = 1
"""Where that line goes: the real stdout, also once the JSON run has pointed descriptor 1 at
stderr and kept stdout for itself (``cli.frontends.json.run.stdout_guard``)."""


def promise_result() -> None:
    """A JSON run: a stop before its frontend takes over still ends the stream with a ``result``."""
    global _pending_result
    _pending_result = INTERRUPTED_RESULT


def events_taken_over() -> None:
    """The JSON frontend's handlers are in place: from now on it writes the last line itself."""
    global _pending_result
    _pending_result = None


def result_goes_to(fd: int) -> None:
    """The process's real stdout is now descriptor ``fd`` (1 again when it is restored)."""
    global _result_fd
    _result_fd = fd


def stop_now(signum: int, frame: FrameType | None) -> None:
    """Flush what can be flushed, say it, and leave with 130 (no unwinding)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - closed, broken or busy: nothing more to save
            pass
    write_pending_result()
    try:
        os.write(2, (INTERRUPTED_LINE + "\n").encode())
    except OSError:
        pass  # stderr closed: the exit code still says it
    os._exit(EXIT_INTERRUPTED)


def write_pending_result() -> None:
    if _pending_result is not None:
        try:
            os.write(_result_fd, _pending_result)
        except OSError:
            pass  # stdout closed: the exit code still says it


@contextlib.contextmanager
def signals_cancel(task: asyncio.Task[int]) -> Iterator[None]:
    """SIGINT/SIGTERM/SIGHUP cancel ``task`` while inside (a frontend's or the doctor's event loop
    has taken them over); the handlers found before come back after (asyncio would leave SIGTERM
    at its default, which kills without a word)."""
    import asyncio  # only a running event loop gets here: no start-up pays for the import

    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, task.cancel)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            loop.remove_signal_handler(sig)
            if handler is not None:
                signal.signal(sig, handler)
