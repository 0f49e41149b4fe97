"""The standard streams as minicode may rely on them: open, and a stderr that never fails.

A process can be started with stdin, stdout or stderr closed (``<&-``, ``>&-``, ``2>&-``) or
with a stderr that refuses every write (``2>/dev/full``). Python then leaves ``sys.stdin`` /
``sys.stderr`` as None, or raises on the first status line — and a closed descriptor 0, 1 or 2
is handed to the next file minicode opens, so a child process or a library writing to "its
stderr" would write into a session file, or into the JSON stream. ``standard_streams`` fixes
that for the run:

- every closed descriptor 0–2 is pointed at ``/dev/null``;
- a closed stdin reads as empty input (one-shot: no piped context; pipe mode: no tasks);
- stderr drops what it cannot write (``QuietStream``): status lines are a courtesy, the exit
  code and — with ``--output json`` — stdout are the contract. After a failed write descriptor
  2 is pointed at ``/dev/null`` too, so child processes and the interpreter's final flush stop
  failing (a failed flush at exit would turn the exit code into 120);
- a closed stdout stays ``sys.stdout is None``: each frontend reports it (exit 1).

Stdlib only, nothing at import beyond ``io``/``os``/``sys`` (not ``typing`` nor ``contextlib``:
every run enters this before its first request or frame).
"""

from __future__ import annotations

import io
import os
import sys
from types import TracebackType
from typing import IO, TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable


__all__ = ["QuietStream", "is_terminal", "private_stdout", "standard_streams"]

_STANDARD = (0, 1, 2)


def is_terminal(stream: IO[str] | IO[bytes] | None) -> bool:
    """Whether ``stream`` is a terminal; a missing or closed one is not (every frontend asks)."""
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):  # a closed stream is not a terminal
        return False


class QuietStream(io.TextIOBase):
    """``stream`` for status lines: a write or flush that fails is dropped, once and for all
    (``broken``), and the descriptor behind it is pointed at ``/dev/null``."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self._stream.write(text)
            except (OSError, ValueError):  # closed, full, gone
                self._break()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._break()

    def isatty(self) -> bool:
        try:
            return self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # io.TextIOBase declares it read-only
        return getattr(self._stream, "encoding", None) or "utf-8"

    def _break(self) -> None:
        """Nothing more is written here; the descriptor and the stream's buffer are emptied
        into ``/dev/null``, so nobody else fails on them later (children, the final flush)."""
        self.broken = True
        try:
            _to_devnull(self._stream.fileno())
            self._stream.flush()  # what failed is still buffered: it goes to /dev/null now
        except (OSError, ValueError, AttributeError):
            pass


class standard_streams:  # noqa: N801 - used as the function-like context manager it was
    """For the run inside: descriptors 0–2 open, ``sys.stdin`` readable, ``sys.stderr`` quiet
    (see the module doc); the previous ``sys.stdin``/``sys.stderr`` objects come back after."""

    def __enter__(self) -> None:
        for fd in _STANDARD:
            if _closed(fd):
                try:
                    _to_devnull(fd)
                except OSError:
                    pass
        self._saved = sys.stdin, sys.stderr
        self._opened: list[TextIO] = []
        if sys.stdin is None:  # started with stdin closed: empty input
            sys.stdin = _devnull("r", self._opened)
        quiet: TextIO = QuietStream(sys.stderr if sys.stderr is not None else _devnull("w", self._opened))  # type: ignore[assignment]
        sys.stderr = quiet

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        sys.stdin, sys.stderr = self._saved
        for stream in self._opened:
            try:
                stream.close()
            except OSError:
                pass


class private_stdout:  # noqa: N801 - a context manager used like a function, as standard_streams
    """For a frontend whose stdout is a protocol (``--output json``, ``--acp``): the real stdout
    is handed to its writer alone (a private descriptor, not inherited by child processes:
    PEP 446) and descriptor 1 and ``sys.stdout`` lead to stderr for everything else (prints,
    libraries, child processes); both are restored afterwards. ``moved(fd)`` is told where the
    real stdout is (then 1 again). Enters as None when the process was started with stdout
    closed (``sys.stdout`` is None; descriptor 1 then leads to /dev/null, see above)."""

    def __init__(self, moved: "Callable[[int], None] | None" = None) -> None:
        self._moved = moved

    def __enter__(self) -> "IO[bytes] | None":
        private: int | None = None
        if sys.stdout is not None:  # None: started with stdout closed
            try:
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
            try:
                private = os.dup(1)
            except OSError:
                pass
        if private is not None and self._moved is not None:
            self._moved(private)
        try:
            os.dup2(2, 1)
        except OSError:
            pass
        self._saved, sys.stdout = sys.stdout, sys.stderr
        self._out = os.fdopen(private, "wb") if private is not None else None
        return self._out

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        sys.stdout = self._saved
        out = self._out
        if out is None:
            return
        for step in (out.flush, lambda: os.dup2(out.fileno(), 1)):
            try:
                step()
            except (OSError, ValueError):
                pass
        if self._moved is not None:
            self._moved(1)
        try:
            out.close()
        except (OSError, ValueError):
            pass


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _to_devnull(fd: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        if devnull != fd:
            os.dup2(devnull, fd)
    finally:
        if devnull != fd:
            os.close(devnull)


def _devnull(mode: str, opened: list[TextIO]) -> TextIO:
    stream: TextIO = open(os.devnull, mode, encoding="utf-8")  # type: ignore[assignment]  # noqa: SIM115 - closed by the caller
    opened.append(stream)
    return stream
