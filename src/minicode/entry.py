"""The process entry point (``minicode`` and ``python -m minicode``): signals first, then the rest.

From the first line of minicode's own code, SIGINT, SIGTERM and SIGHUP (a closed terminal, a
dropped ssh connection) mean "stop": the process exits 130 with the one line
``minicode: interrupted`` on stderr — never a traceback, never a death by the signal itself —
and a session created before the signal is left valid. With ``--output json|stream-json`` the
last line on stdout is a ``result`` even then: until the JSON frontend takes the signals over
(``events_taken_over``), the handler here writes a fixed one (no session, ``seq`` 1,
``status: interrupted``, ``exit_code`` 130) before it leaves.

Outside a running event loop of a frontend (parsing arguments, loading the config, reading piped
stdin, first-run questions) the handler here ends the process at once: it flushes what it can,
writes the line and ``os._exit(130)``. Nothing is in flight there that a clean-up would save,
and an exit that never unwinds cannot turn into a traceback (an exception raised from a signal
handler can land anywhere: in an import lock's callback, in argparse's own clean-up, in an
event loop's finaliser). While a frontend's event loop runs, it takes the signals over
(``cli.frontends.plain.driver``: they cancel the running task, the session is saved and closed, then exit 130;
the full-screen app: SIGTERM leaves like Ctrl+C) and gives these handlers back afterwards.
Every other end is the interpreter's own: ``run`` returns ``main``'s code through ``sys.exit``.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

from minicode import old_bundles, stop_signal
from minicode.exitcodes import EXIT_INTERRUPTED

__all__ = ["asks_for_events", "main", "run"]

_OUTPUT_OPTION = "--output"
_EVENT_FORMATS = ("json", "stream-json")


def asks_for_events(args: list[str]) -> bool:
    """Whether the command line asks for ``--output json|stream-json`` (argparse's spellings:
    ``--output FORMAT``, ``--output=FORMAT`` and unambiguous prefixes such as ``--out``)."""
    events = False
    for i, arg in enumerate(args):
        if arg == "--":
            break
        name, equals, value = arg.partition("=")
        if len(name) < 3 or not _OUTPUT_OPTION.startswith(name):
            continue
        if not equals:
            value = args[i + 1] if i + 1 < len(args) else ""
        events = value in _EVENT_FORMATS  # the last one counts, as for argparse
    return events


def main() -> int:
    """Run minicode and return its exit code; signals follow the module doc from here on."""
    if asks_for_events(sys.argv[1:]):
        stop_signal.promise_result()
    for sig in stop_signal.STOP_SIGNALS:
        try:
            signal.signal(sig, stop_signal.stop_now)
        except (ValueError, OSError):  # not the main thread (embedding): leave them be
            break
    old_bundles.remove(os.path.dirname(__file__))
    try:
        from minicode.cli.main import main as run

        code = run()
    except KeyboardInterrupt:  # a SIGINT handler someone else installed raised it
        stop_signal.write_pending_result()  # a JSON run that had not taken over still ends with its result
        print(stop_signal.INTERRUPTED_LINE, file=sys.stderr)
        code = EXIT_INTERRUPTED
    return _settle_streams(code)


def run() -> NoReturn:
    """The executable (pyproject's console script ``minicode``, ``python -m minicode``)."""
    sys.exit(main())


def _settle_streams(code: int) -> int:
    """Flush stdout and stderr before the interpreter does: a stream that cannot take it any
    more (the terminal hung up, ``>/dev/full``) is pointed at /dev/null, so its failure does not
    become the interpreter's own exit code 120 with a message on a dead stream. Text lost on
    stdout makes a success exit 1 (stderr only ever held the human lines)."""
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        try:
            if stream is not None:
                stream.flush()
        except ValueError:  # closed by its owner: the interpreter skips it too
            pass
        except OSError:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, fd)
                os.close(devnull)
            except OSError:
                pass
            if fd == 1 and code == 0:
                code = 1
    return code
