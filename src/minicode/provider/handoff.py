"""Handing items from one worker thread to one event-loop consumer, a batch per wake-up.

Owns the only thread-to-loop crossing of the provider: the worker ``put``s items from its
own thread; the consumer ``await``s :meth:`Handoff.get`, which returns everything put since
its last call. The loop is woken (``call_soon_threadsafe``) only when the consumer is
actually waiting, so a worker that puts while the consumer is busy costs no wake-up at all.
Standard library only; knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Handoff"]

T = TypeVar("T")


class Handoff(Generic[T]):
    """An unbounded single-producer, single-consumer channel from a thread to a loop.

    Create it on the loop thread. ``put`` is the only method the worker calls; it never
    blocks, and returns ``False`` once the loop is closed (nobody can receive any more).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._items: deque[T] = deque()
        self._lock = threading.Lock()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: T) -> bool:
        """Worker side: queue ``item`` and wake the consumer if it is waiting."""
        with self._lock:
            self._items.append(item)
            waiter, self._waiter = self._waiter, None
        if waiter is None:
            return True
        try:
            self._loop.call_soon_threadsafe(_release, waiter)
        except RuntimeError:  # the loop is closed: the consumer is gone
            return False
        return True

    async def get(self) -> list[T]:
        """Loop side: every item put since the last call, waiting until there is one."""
        while True:
            with self._lock:
                if self._items:
                    items = list(self._items)
                    self._items.clear()
                    return items
                waiter = self._waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                with self._lock:
                    if self._waiter is waiter:  # cancelled while waiting: forget the future
                        self._waiter = None


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
