"""The conversation of an open session, kept in step with its file: ``StoredHistory``.

Every change is written first (on the session's writer thread: an fsync must not stall the
event loop) and applied in memory once it is bound to be in the file: messages, compaction
checkpoints, turn ends, rewinds, settings and the task list. Implements ``agent.deps.History``.
"""

from __future__ import annotations

from typing import Sequence

from minicode.agent.deps import ToolOutcome
from minicode.agent.events import CheckResult
from minicode.agent.stats import TaskStats
from minicode.compaction.checkpoint import Checkpoint
from minicode.provider.types import Message
from minicode.session.log import MessageLog, Slot
from minicode.session.reader import LoadedSession
from minicode.session import records
from minicode.session.records import SessionSettings
from minicode.session.store import SessionStore
from minicode.session.turn_ends import turn_end_from_record
from minicode.session.writer import OrderedWriter
from minicode.tools.todo_list import TodoList

__all__ = ["StoredHistory"]


class StoredHistory:
    """The session's messages, checkpoints and settings, persisted as they change."""

    def __init__(self, store: SessionStore, writer: OrderedWriter, loaded: LoadedSession) -> None:
        self._store = store
        self._writer = writer
        self._loaded = loaded
        self.outcomes = loaded.messages.outcomes

    @property
    def messages(self) -> MessageLog:
        return self._loaded.messages

    @property
    def checkpoint(self) -> Checkpoint | None:
        return self._loaded.checkpoint

    @property
    def settings(self) -> SessionSettings:
        return self._loaded.settings

    @property
    def todo(self) -> TodoList:
        return self._loaded.todo

    async def save_todo(self, todo: TodoList) -> None:
        def keep() -> None:
            self._loaded.set_todo(todo)

        await self._writer.run(lambda: self._store.append_todo(todo), landed=keep)

    async def append(self, message: Message, outcome: ToolOutcome | None = None) -> None:
        where: list[Slot | None] = []  # set on the writer thread; empty if cancelled mid-write

        def write() -> None:
            where.append(self._store.append_message(message, outcome))

        def keep() -> None:
            self._loaded.messages.append(message, where[0] if where else None)
            if outcome is not None and message.tool_call_id is not None:
                self.outcomes[message.tool_call_id] = outcome

        await self._writer.run(write, landed=keep)

    async def save_checkpoint(self, checkpoint: Checkpoint) -> None:
        """Record a compaction; the messages it summarised leave memory (they stay in the
        file, where a rewind or a look back reads them again)."""

        def keep() -> None:
            self._loaded.checkpoints.append(checkpoint)
            self._loaded.messages.release(checkpoint.first_kept)

        await self._writer.run(lambda: self._store.append_checkpoint(checkpoint), landed=keep)

    async def save_turn_end(self, status: str, stats: TaskStats, checks: Sequence[CheckResult] = ()) -> None:
        def keep() -> None:  # the replay after a /rewind or /resume in this run shows it
            record = records.turn_end_record(status, stats, checks)
            self._loaded.messages.turn_ends.add(len(self.messages), turn_end_from_record(record))

        await self._writer.run(lambda: self._store.append_turn_end(status, stats, checks), landed=keep)

    async def rewind(self, keep: int) -> None:
        """Continue the conversation from its first ``keep`` messages (``keep`` must index a
        user message); the dropped messages stay in the file, a rewind record says so."""
        if not 0 <= keep < len(self.messages) or self.messages.role(keep) != "user":
            raise ValueError(f"cannot rewind to message {keep}: it is not a user message of this conversation")
        await self._writer.run(lambda: self._store.append_rewind(keep), landed=lambda: self._loaded.rewind(keep))

    async def save_settings(self, settings: SessionSettings) -> None:
        def keep() -> None:
            self._loaded.settings = self._loaded.settings.merged(settings)

        await self._writer.run(lambda: self._store.append_settings(settings), landed=keep)
