"""The grep worker process: the search runs here so that minicode can always stop it.

Started by ``grep`` as ``python -I -S -c BOOT <package parent dir> <minicode's pid>`` in its own
session; reads one ``GrepJob`` as a JSON line on stdin; writes JSON lines ``[kind, value]`` on
stdout (see ``grep_scan``; plus ``["error", message]`` for a refused path); exits 0.

Why a process: ``re`` holds the GIL for the whole of one match, so a catastrophic pattern in a
thread would freeze minicode's event loop (no Esc, no SIGTERM, no ``--timeout``). Here:
- a per-file alarm (``GREP_FILE_BUDGET_S``) interrupts a match that runs too long — ``re``
  checks for signals while it backtracks — and the search goes on with the next file;
- minicode kills the process on cancellation or after ``GREP_TOTAL_BUDGET_S``;
- ``PR_SET_PDEATHSIG`` (Linux) kills it if minicode itself dies, even by SIGKILL.
Stdlib only, and only the light modules of ``minicode.tools`` are imported.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from minicode.errors import ToolError
from minicode.tools.cmdguard import die_with
from minicode.tools.grep_scan import FileTooSlow, GrepJob, scan
from minicode.tools.truncate import GREP_FILE_BUDGET_S

__all__ = ["BOOT", "main"]

BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from minicode.tools.grep_worker import main; sys.exit(main())"
"""The ``-c`` program that starts the worker (``-S`` skips site-packages: argv[1] is where
``minicode`` lives)."""


class _FileTimer:
    """The per-file budget: an alarm that raises ``FileTooSlow`` inside the match, but only at
    a safe point (never in the middle of writing a report)."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.armed = False
        self.expired = False
        signal.signal(signal.SIGALRM, self._alarm)

    def _alarm(self, signum: int, frame: Any) -> None:
        self.expired = True
        if self.armed:
            self.armed = False
            raise FileTooSlow

    def start(self) -> None:
        self.expired = False
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, self.budget)

    def pause(self) -> None:
        self.armed = False

    def resume(self) -> None:
        self.armed = True
        if self.expired:
            self.armed = False
            raise FileTooSlow

    def stop(self) -> None:
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> int:
    die_with(int(sys.argv[2]))
    job = GrepJob.from_json(json.loads(sys.stdin.readline()))
    timer = _FileTimer(GREP_FILE_BUDGET_S)
    out = sys.stdout

    def write(kind: str, value: object) -> None:
        out.write(json.dumps([kind, value]) + "\n")
        if kind != "big":
            out.flush()  # a match must reach minicode even if the worker is killed later

    def emit(kind: str, value: object) -> None:
        if kind == "file":
            timer.start()
        elif kind == "end":
            timer.stop()
        elif kind == "slow":
            write(kind, value)
        else:
            timer.pause()
            write(kind, value)
            timer.resume()

    try:
        scan(job, emit)
    except ToolError as e:
        write("error", str(e))
    out.flush()
    return 0
