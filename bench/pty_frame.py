"""The first full-screen frame, timed on the bytes themselves (issue 16 item 2).

A pseudo-terminal this process opens and reads itself: the child (the real executable)
gets the slave side as its controlling terminal, stdin and stdout at COLUMNS x ROWS; this
side blocks in ``select`` on the master and stamps every chunk with ``time.monotonic()`` as
it arrives. Nothing is parsed while the child starts — no terminal emulator, no polling
process (each tmux ``capture-pane`` poll is a client process competing with the child for
the two cores, which is what inflated the tmux figure) — only a ``bytes`` search for the
application's own frame (its status bar's context share) to know when to stop. Afterwards
the chunks are fed to ``tests/pty/screen.py`` one by one: the first frame is the first chunk
after which the status bar (state, model, session id) and the prompt are on the screen.

Used by ``bench/startup.py`` (part "frame") and ``bench/tui.py --first-frame``.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.pty.screen import Screen  # noqa: E402

COLUMNS, ROWS = 120, 40
APP_MARK = b"context"
"""On the application's status bar only (the context share): the early frame has no such word."""
_STATUS = re.compile(r"^ idle +\S.* · [0-9a-f]{8}")


@dataclass(frozen=True)
class FrameRun:
    status_at: float
    """Seconds from spawn to the chunk that completed the status bar and the prompt."""
    app_at: float | None
    """Seconds to the application's own frame (None: stopped at the first frame)."""
    chunks: int
    """Chunks read up to the first frame (1 when the early frame came in one write)."""
    blank_between: bool
    """Whether the screen was ever blank between the first frame and the application's."""


def _child_setup() -> None:  # in the child, before exec: the slave becomes its controlling terminal
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def spawn(argv: list[str], cwd: Path | str, env: dict[str, str], *, stderr: int | None = None,
          columns: int = COLUMNS, rows: int = ROWS) -> tuple[subprocess.Popen[bytes], int, float]:
    """(the child, the master descriptor, the monotonic time just before the spawn)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave,
                            stderr=slave if stderr is None else stderr, preexec_fn=_child_setup, close_fds=True)
    os.close(slave)
    return proc, master, started


def read_until(master: int, started: float, stop: bytes, timeout: float = 60) -> list[tuple[float, bytes]]:
    """Every chunk (seconds since ``started``, bytes) until ``stop`` has been seen, EOF or timeout."""
    chunks: list[tuple[float, bytes]] = []
    tail = b""
    deadline = started + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append((time.monotonic() - started, data))
        if stop in tail + data:
            break
        tail = data[-len(stop):]
    return chunks


def first_frame(chunks: list[tuple[float, bytes]], columns: int = COLUMNS, rows: int = ROWS
                ) -> tuple[float, int, bool] | None:
    """(when the status bar and prompt were complete, chunks up to then, blank after?) or None."""
    screen = Screen(columns, rows)
    decoder = _decoder()
    found: tuple[float, int] | None = None
    blank = False
    for index, (at, data) in enumerate(chunks, start=1):
        screen.feed(decoder.decode(data))
        lines = screen.lines()
        if found is None:
            if _STATUS.match(lines[rows - 2]) and lines[rows - 1].startswith("›"):
                found = (at, index)
        elif not "".join(lines).strip():
            blank = True
    return None if found is None else (found[0], found[1], blank)


def _decoder():  # type: ignore[no-untyped-def]
    import codecs

    return codecs.getincrementaldecoder("utf-8")("replace")


def run_once(argv: list[str], cwd: Path | str, env: dict[str, str], *, until_app: bool = True) -> FrameRun:
    """One start of the full screen in a fresh pty; the child is stopped afterwards."""
    proc, master, started = spawn(argv, cwd, env)
    try:
        chunks = read_until(master, started, APP_MARK if until_app else b"\x1b[?25h")
    finally:
        _stop(proc)
        os.close(master)
    found = first_frame(chunks)
    if found is None:
        text = b"".join(data for _, data in chunks).decode("utf-8", "replace")
        raise SystemExit(f"no first frame from {argv[0]}; it wrote: {text[-2000:]!r}")
    seen = until_app and APP_MARK in b"".join(data for _, data in chunks)
    app_at = chunks[-1][0] if seen else None  # read_until stops at the chunk that completed it
    return FrameRun(found[0], app_at, found[1], found[2])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the child leads its own session
        except ProcessLookupError:
            pass
    proc.wait(30)
