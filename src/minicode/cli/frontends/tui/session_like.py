"""``SessionLike``: the part of ``minicode.session.Session`` the full-screen UI uses.

The seam between the UI (``controller.py``, ``session_commands.py``, ``app.py``) and the
session, so the UI's tests drive it with a scripted session instead of a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

from minicode.agent.approval import Approver
from minicode.agent.asking import Asker
from minicode.agent.deps import ToolOutcome
from minicode.agent.events import AgentEvent, TurnFinished
from minicode.permissions.store import PermissionStore
from minicode.provider.types import Message
from minicode.session.notes import RewindPoint
from minicode.session.undo import Nothing, UndoPlan, UndoResult
from minicode.tools.todo_list import TodoList

__all__ = ["SessionLike"]


class SessionLike(Protocol):
    """The part of ``minicode.session.Session`` the UI uses."""

    id: str
    workspace: Path
    model: str
    warnings: list[str]

    is_new: bool
    """Started by this run (not resumed): with no message, its file is removed on close."""

    @property
    def resume_command(self) -> str: ...

    @property
    def is_empty(self) -> bool: ...

    @property
    def messages(self) -> Sequence[Message]: ...

    def tool_outcomes(self) -> Mapping[str, ToolOutcome]: ...

    async def turn(self, user_text: str, *, approver: Approver, emit: Callable[[AgentEvent], None],
                   max_turns: int = ..., timeout: float | None = ..., asker: Asker | None = ...) -> TurnFinished: ...

    async def compact(self, *, emit: Callable[[AgentEvent], None]) -> None: ...

    def context_usage(self) -> tuple[int, int]: ...

    @property
    def context_source(self) -> str:
        """Where the context window came from: config, the server (llama.cpp /props …), the default."""

    def learn_context_window(self, on_learned: Callable[[], None] | None = None) -> None:
        """Ask the server for the context window in the background; ``on_learned`` after."""

    checks: list[str]
    """The acceptance checks each task ends with (``/check`` changes them)."""

    permissions: PermissionStore
    """The permission rules in effect (/permissions lists them, removes saved ones)."""

    @property
    def project_files(self) -> tuple[str, ...]:
        """AGENTS.md/CLAUDE.md and MiniCode.md as the model is given them (the opening line)."""

    # /undo, /rewind, /model, /think, /resume, /new (see session_commands.py)
    @property
    def thinking(self) -> str | None: ...

    async def plan_undo(self) -> UndoPlan | Nothing: ...

    async def undo(self, plan: UndoPlan, why: str = ...) -> UndoResult: ...

    async def pass_over(self, plan: UndoPlan) -> str: ...

    def rewind_points(self) -> list[RewindPoint]: ...

    async def plan_rewind_files(self, index: int) -> UndoPlan | Nothing: ...

    async def rewind(self, index: int, files: UndoPlan | None = None) -> tuple[str, UndoResult | None]: ...

    def note(self, text: str) -> None: ...

    async def set_model(self, name: str) -> None: ...

    async def set_thinking(self, level: str) -> None: ...

    async def aclose(self) -> bool: ...

    # the task list and plan mode (see plan_commands.py)
    @property
    def todo(self) -> TodoList: ...

    @property
    def mode(self) -> str: ...

    async def enter_plan(self, emit: Callable[[AgentEvent], None]) -> None: ...

    async def accept_plan(self, emit: Callable[[AgentEvent], None]) -> str: ...

    async def reject_plan(self, emit: Callable[[AgentEvent], None]) -> None: ...
