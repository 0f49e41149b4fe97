"""The task list and plan mode on a Session: what they are now, and the switches between modes.

A mixin of ``session.Session`` (``session.py``), like ``undoing.py``. The task list is the
model's (``todo`` calls, ``tool_changed_todo``), kept in the session file (a ``todo`` record:
a resume restores it) and reachable as ``Session.todo``; the mode is a setting (``settings``
record with ``mode``) reachable as ``Session.mode``. Each change is said with an event
(``TodoUpdated``, ``ModeChanged``) to whoever asked for it, so every frontend — and an editor
driving the session — can follow both.
"""

from __future__ import annotations

from typing import Callable

from minicode.agent.events import AgentEvent, ModeChanged, TodoUpdated
from minicode.agent.plan_mode import ACCEPTED, REJECTED_NOTE
from minicode.errors import SessionError
from minicode.session.history import StoredHistory
from minicode.session.records import SessionSettings
from minicode.tools.todo_list import TodoList

__all__ = ["Planning"]

Emit = Callable[[AgentEvent], None]


class Planning:
    """``todo``, ``mode`` and ``/plan``'s enter / accept / reject (the Session sets this state up)."""

    _history: StoredHistory
    _notes: list[str]

    @property
    def todo(self) -> TodoList:
        """The model's task list now (empty: none)."""
        return self._history.todo

    @property
    def mode(self) -> str:
        """``plan`` (read-only tools, the model proposes a task list) or ``act``."""
        return self._history.settings.mode or "act"

    async def tool_changed_todo(self, todo: TodoList, emit: Emit) -> None:
        """A ``todo`` call's list: recorded, then said (the tool waits for the record)."""
        before = self.todo
        await self._history.save_todo(todo)
        emit(TodoUpdated(todo, before))

    async def enter_plan(self, emit: Emit) -> None:
        """Plan mode from the next task on; the task list is the model's to propose (the old one
        stays until it sends one). Nothing changes when already planning."""
        if self.mode != "plan":
            await self._set_mode("plan", "entered", emit)

    async def accept_plan(self, emit: Emit) -> str:
        """Act on the plan: back to every tool, the list kept as the task list; returns the
        message that tells the model to carry it out (the frontend sends it as the next task).
        SessionError when not planning, or with no plan to accept."""
        if self.mode != "plan":
            raise SessionError("not in plan mode: /plan starts planning")
        if not self.todo:
            raise SessionError("there is no plan to accept yet: the model has not proposed a task list")
        await self._set_mode("act", "accepted", emit)
        return ACCEPTED

    async def reject_plan(self, emit: Emit) -> None:
        """Leave plan mode and drop the proposed list; the next message tells the model."""
        if self.mode != "plan":
            raise SessionError("not in plan mode: there is no plan to reject")
        await self._set_mode("act", "rejected", emit)
        if self.todo:
            before = self.todo
            await self._history.save_todo(TodoList())
            emit(TodoUpdated(TodoList(), before))
        self._notes.append(REJECTED_NOTE)

    async def _set_mode(self, mode: str, why: str, emit: Emit) -> None:
        await self._history.save_settings(SessionSettings(mode=mode))
        emit(ModeChanged(mode, why))
