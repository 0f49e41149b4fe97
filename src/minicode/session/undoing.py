"""/undo and /rewind on a Session: what they would restore, restoring it, and the rewind.

A mixin of ``session.Session`` (``session.py``). The planning and restoring are
``session.undo`` (loaded when first used, not at every start) over the run's
``SnapshotStore``; the rewind appends a record to the history and tells the context; what the
model must hear about it goes out in front of the next user message (``notes``). The state
the Session shares with it is declared below.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from minicode.agent.context import ModelContext
from minicode.errors import SessionError
from minicode.session.history import StoredHistory
from minicode.session.notes import RewindPoint, rewind_points, strip_notes, undo_note
from minicode.session.snapshots import SnapshotStore

if TYPE_CHECKING:  # /undo and /rewind load the undo planner when first used, not every start
    from minicode.session.undo import Nothing, UndoPlan, UndoResult

__all__ = ["UndoAndRewind"]


class UndoAndRewind:
    """/undo, /rewind and the notes they leave for the model (the Session sets this state up)."""

    workspace: Path
    _snapshots: SnapshotStore
    _history: StoredHistory
    _context: ModelContext
    _notes: list[str]
    """What the next user message tells the model first (files changed by /undo, /rewind)."""

    async def plan_undo(self) -> UndoPlan | Nothing:
        """What /undo would restore: the files of the newest task not undone yet (read only)."""
        from minicode.session import undo

        users = self._history.messages.user_indexes()
        newest = self._history.messages.raw_id(users[-1]) if users else None
        return await asyncio.to_thread(undo.plan_last, self._snapshots, self.workspace, newest)

    async def undo(self, plan: UndoPlan, why: str = "the user undid file changes with /undo") -> UndoResult:
        """Restore ``plan``'s files (each checked again first); the next message tells the model."""
        from minicode.session import undo

        result = await asyncio.to_thread(undo.apply, self._snapshots, self.workspace, plan)
        if result.restored or result.deleted:
            self._notes.append(undo_note(result.restored, result.deleted, why))
        return result

    async def pass_over(self, plan: UndoPlan) -> str:
        """Mark a plan with nothing to put back (every file skipped) as dealt with, so the next
        /undo goes one task further back instead of stopping here forever; says so."""
        from minicode.session.undo import PASSED_OVER

        await asyncio.to_thread(self._snapshots.mark_undone, list(plan.tasks))
        return PASSED_OVER

    def rewind_points(self) -> list[RewindPoint]:
        """The user messages the conversation can be rewound to, oldest first."""
        return rewind_points(self._history.messages)

    async def plan_rewind_files(self, index: int) -> UndoPlan | Nothing:
        """What restoring the files to just before user message ``index`` would do."""
        from minicode.session import undo

        task = self._history.messages.raw_id(index)
        return await asyncio.to_thread(undo.plan_since, self._snapshots, self.workspace, task)

    async def rewind(self, index: int, files: UndoPlan | None = None) -> tuple[str, UndoResult | None]:
        """Continue the conversation from just before user message ``index`` (a rewind record
        is appended; the raw history stays) and, with ``files``, restore the files changed
        since. Returns the rewound message (notes taken off, for the draft) and the restore."""
        log = self._history.messages
        if not 0 <= index < len(log) or log.role(index) != "user":
            raise SessionError(f"cannot rewind to message {index}: it is not a user message", exit_code=2)
        text = strip_notes(log.peek(index).content or "")
        await self._history.rewind(index)
        self._context.rewound(self._history.checkpoint)
        result = None
        if files is not None:
            result = await self.undo(files, "the conversation was rewound and files were restored")
            kept = [path for path, _ in result.skipped]
            if kept:
                self._notes.append(f"the conversation was rewound; these files still hold changes made after this "
                                   f"point: {', '.join(kept)}. Re-read a file before relying on or editing it.")
        return text, result

    def note(self, text: str) -> None:
        """Tell the model ``text`` in front of the next user message (e.g. files kept after a rewind)."""
        self._notes.append(text)
