"""The process entry point (``minicode`` and ``python -m minicode``): signals first, then the rest.

From the first line of minicode's own code, SIGINT and SIGTERM mean "stop": the process exits
130 with the one line ``minicode: interrupted`` on stderr — never a traceback, never a death by
the signal itself — and a session created before the signal is left valid.

Outside a running event loop of a frontend (parsing arguments, loading the config, reading piped
stdin, first-run questions, and the interpreter's own exit) the handler here ends the process at
once: it flushes what it can, writes the line and ``os._exit(130)``. Nothing is in flight there
that a clean-up would save, and an exit that never unwinds cannot turn into a traceback (an
exception raised from a signal handler can land anywhere: in an import lock's callback, in
argparse's own clean-up, in an event loop's finaliser). While a frontend's event loop runs, it
takes the signals over (``cli.driver``: they cancel the running task, the session is saved and
closed, then exit 130; the full-screen app: SIGTERM leaves like Ctrl+C) and gives these handlers
back afterwards.

Not covered, and cannot be from Python: the first milliseconds after ``exec``, while the
interpreter itself starts and before any of this code runs, the operating system's defaults
apply. Imports only built-in modules at module level, so that window stays as short as it can.
"""

from __future__ import annotations

# `_signal` (built in, loaded by the interpreter itself) rather than `signal`, whose import
# builds enums for a few milliseconds: every millisecond before `main` installs the handlers
# is a millisecond in which a signal gets the OS default. No `typing` either (tens of ms).
import _signal  # type: ignore[import-not-found]  # no stubs; the same API as signal
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from types import FrameType
    from typing import NoReturn

__all__ = ["INTERRUPTED_LINE", "STOP_SIGNALS", "leave", "main", "run", "stop_now"]

STOP_SIGNALS = (_signal.SIGINT, _signal.SIGTERM)
"""The signals that stop minicode (exit 130)."""
INTERRUPTED_LINE = "minicode: interrupted"
_EXIT_INTERRUPTED = 130  # exitcodes.EXIT_INTERRUPTED, not imported: nothing before the handlers


def stop_now(signum: int, frame: FrameType | None) -> None:
    """Flush what can be flushed, say it, and leave with 130 (no unwinding)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - closed, broken or busy: nothing more to save
            pass
    try:
        os.write(2, (INTERRUPTED_LINE + "\n").encode())
    except OSError:
        pass  # stderr closed: the exit code still says it
    os._exit(_EXIT_INTERRUPTED)


def main() -> int:
    """Run minicode and return its exit code; signals follow the module doc from here on."""
    for sig in STOP_SIGNALS:
        try:
            _signal.signal(sig, stop_now)
        except (ValueError, OSError):  # not the main thread (embedding): leave them be
            break
    try:
        from minicode.cli import main as run

        return run()
    except KeyboardInterrupt:  # a SIGINT handler someone else installed raised it
        print(INTERRUPTED_LINE, file=sys.stderr)
        return _EXIT_INTERRUPTED


def run() -> NoReturn:
    """The executable (``bin/minicode``, ``python -m minicode``): ``main()``, then ``leave``."""
    leave(main())


def leave(code: int) -> NoReturn:
    """End the process with ``code`` the way the interpreter's own exit would, minus its
    teardown of every module and object (~0.1 s of a one-shot run on the dev container: an
    agent imports some 400 modules, and nothing of their state needs freeing at exit).

    What that exit does and minicode relies on is kept, in its order: the threads that are
    not daemons are waited for (``threading._shutdown``, which first lets thread pools stop
    their idle workers), the ``atexit`` handlers run, stdout and stderr are flushed (a flush
    that fails turns a success into 120, as CPython does). Only reached after ``main``
    returned: a frontend has closed its session, files and subprocesses by then.
    """
    threading = sys.modules.get("threading")  # not loaded (--version): no threads to wait for
    if threading is not None:
        threading._shutdown()  # what Py_FinalizeEx calls first (private, in every CPython 3)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - closed or broken: nothing more can be said there
            if stream is sys.stdout and code == 0:
                code = 120
    os._exit(code)
