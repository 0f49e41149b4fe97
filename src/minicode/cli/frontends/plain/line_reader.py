"""Lines of stdin for the pipe and one-shot modes, read on a daemon thread (``LineReader``).

Its own module because the driver (``plain.driver``), the pipe commands and the JSON frontend
read lines as the text frontend does, and the text frontend calls the driver. Stdlib only.
"""

from __future__ import annotations

import asyncio
import os
import termios
import threading
from typing import IO, Iterable

from minicode.cli.stdstreams import is_terminal
from minicode.tools.scrub import scrub

__all__ = ["LineReader"]


class LineReader:
    """Lines of a stream, read by a daemon thread so the event loop never blocks.

    The bytes are read (``stream.buffer`` for a text stream) and each line is decoded on
    its own with errors="replace": one line that isn't UTF-8 must not end the input. A
    daemon thread (not the default executor) because a read blocked on a terminal must
    not keep the process alive after the session ends.
    """

    def __init__(self, stream: IO[str] | IO[bytes]) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._ahead: list[str | None] = []  # lines typed before a question: the next tasks
        self._loop = asyncio.get_running_loop()
        self.eof = False
        self.failure: OSError | ValueError | None = None  # why the input ended early, if it broke
        self.interactive = is_terminal(stream)  # a person types (and the terminal echoes) the lines
        threading.Thread(target=self._pump, name="minicode-stdin", daemon=True).start()

    def _pump(self) -> None:
        source: Iterable[str | bytes] = getattr(self._stream, "buffer", self._stream)
        try:
            for raw in source:
                self._put(raw)
        except (OSError, ValueError) as e:
            # The input ends here either way; kept so the frontend can say it broke
            # instead of passing it off as a normal end of input.
            self.failure = e
        finally:
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            except RuntimeError:  # the loop is already closed: nobody is listening
                pass

    def _put(self, raw: str | bytes) -> None:
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else scrub(raw)
        self._loop.call_soon_threadsafe(self._queue.put_nowait, line.rstrip("\r\n"))

    def failure_text(self) -> str:
        """" (cannot read stdin: …)" when the input ended because reading failed, else ""."""
        if self.failure is None:
            return ""
        reason = getattr(self.failure, "strerror", None) or str(self.failure) or type(self.failure).__name__
        return f" (cannot read stdin: {reason})"

    async def next_line(self) -> str | None:
        """The next line without its newline, or None at end of input (then always None);
        ``failure`` says whether that end was a read error."""
        if self.eof:
            return None
        line = self._ahead.pop(0) if self._ahead else await self._queue.get()
        if line is None:
            self.eof = True
        return line

    def set_aside_typed_ahead(self) -> int:
        """Before a question: lines typed ahead (the user's next tasks, entered while the
        model worked) are kept for ``next_line`` and never answer the question. Returns how
        many were set aside."""
        while not self._queue.empty():
            self._ahead.append(self._queue.get_nowait())
        return sum(line is not None for line in self._ahead)

    async def next_answer(self) -> str | None:
        """The next line typed after ``set_aside_typed_ahead``: the answer to a question just
        asked; None when the input ended first."""
        if None in self._ahead:
            return None  # the input already ended: nobody can answer
        line = await self._queue.get()
        if line is None:
            self._ahead.append(None)  # later ``next_line`` calls see the end too
        return line

    def discard_pending(self) -> None:
        """Forget input typed before now (keys pressed before a prompt must not answer it):
        lines already read, and — on a terminal — what the kernel still holds."""
        self._ahead.clear()
        while not self._queue.empty():
            if self._queue.get_nowait() is None:
                self.eof = True
        try:
            fd = self._stream.fileno()
            if os.isatty(fd):
                termios.tcflush(fd, termios.TCIFLUSH)
        except (OSError, ValueError, termios.error):
            pass
