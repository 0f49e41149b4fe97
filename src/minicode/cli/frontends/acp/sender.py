"""The session updates of one ACP session, sent in order from the loop's synchronous ``emit``.

The loop reports through a plain callback; a notification is a coroutine. Updates wait in a
queue that one task empties in order, so a chunk never overtakes the one before it, and
``flush`` lets a permission request or a prompt's answer wait until everything before it
went out. A client that is gone only makes the rest be dropped (said once on stderr): the
turn goes on to its end and the session is saved.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from acp.helpers import SessionUpdate as Update

__all__ = ["Notifier", "UpdateSender"]

log = logging.getLogger("minicode.acp")


class Notifier(Protocol):
    """The part of the SDK's ``AgentSideConnection`` that sends session updates."""

    async def session_update(self, session_id: str, update: Update) -> None: ...


class UpdateSender:
    def __init__(self, conn: Notifier, session_id: str) -> None:
        self._conn = conn
        self._session_id = session_id
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self.gone = False

    def send(self, update: Update) -> None:
        if self.gone:
            return
        self._queue.put_nowait(update)
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._empty())

    async def flush(self) -> None:
        """Every update sent so far has been written (or dropped: the client is gone)."""
        if self._pump is not None and not self._pump.done():
            await asyncio.shield(self._pump)

    async def _empty(self) -> None:
        while not self._queue.empty():
            update = self._queue.get_nowait()
            if self.gone:
                continue
            try:
                await self._conn.session_update(self._session_id, update)
            except Exception as e:  # noqa: BLE001 - ConnectionError, a broken pipe: the client is gone
                self.gone = True
                log.warning("the editor stopped taking updates (%s); the task goes on and is saved", e or type(e).__name__)

    def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
