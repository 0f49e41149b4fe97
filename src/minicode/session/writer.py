"""The session file's writer thread: appends (write + fsync) off the event loop, in order.

Owns one single-thread executor per open session. SPEC requires every record to be synced
before the next step, not that the loop freeze while the disk syncs: a slow fsync must not
stall streaming or redraws. One thread keeps the records in submission order.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, TypeVar

__all__ = ["OrderedWriter"]

_T = TypeVar("_T")


class OrderedWriter:
    """Runs blocking writes one at a time, in the order they were submitted."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minicode-session-writer")
        self._last: Future[Any] | None = None  # one thread, in order: when it is done, all are

    async def run(self, write: Callable[[], _T], *, landed: Callable[[], None] | None = None) -> _T:
        """``write()`` on the writer thread; its result, or its exception re-raised here.

        ``landed`` is called once the record is (or is bound to be) in the file, so the
        caller's in-memory state follows the file. On cancellation a write still queued is
        dropped (``landed`` not called); one already under way cannot be stopped and lands
        in order, so ``landed`` is called before the cancellation propagates.
        """
        future: Future[_T] = self._executor.submit(write)
        self._last = future
        try:
            result = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if not future.cancel() and landed is not None and not _failed(future):
                landed()
            raise
        if landed is not None:
            landed()
        return result

    async def aclose(self) -> None:
        """Wait (off the loop) for the writes already submitted, then stop the thread. With
        none still under way (every write was awaited: the usual end) the thread is told to
        stop without a hop to wait for it: it is idle, and the interpreter joins it at exit."""
        if self._last is None or self._last.done():
            self._executor.shutdown(wait=False)
            return
        await asyncio.to_thread(self._executor.shutdown, True)



def _failed(future: Future[_T]) -> bool:
    return future.done() and future.exception() is not None
