"""Plan mode: the model investigates with read-only tools and proposes a plan as its task list.

``PlanningTools`` is the tool runner of a planning turn: only the tools without side effects
are declared (read, ls, glob, grep, todo, ask_user, and agent: its sub-agent only reads), and a call to
any other — by a name it remembers from before, or an MCP tool — is refused before it is
prepared, so nothing is written while planning whatever the model asks for. The texts tell the model what the mode means when it
is entered (``PLAN_NOTE``, in front of each planning message), when the user accepts the
plan (``ACCEPTED``) and when the user rejects it (``REJECTED_NOTE``).
"""

from __future__ import annotations

from typing import Sequence

from minicode.provider.types import ToolCall, ToolSpec
from minicode.tools.base import ToolContext, ToolResult
from minicode.tools.registry import PreparedCall, ToolRegistry

__all__ = ["ACCEPTED", "PLAN_NOTE", "PLAN_TOOL", "REJECTED_NOTE", "PlanningTools", "refusal"]

PLAN_TOOL = "todo"
"""The tool a plan is given with: declared while planning even where it is not otherwise."""

PLAN_NOTE = ("plan mode: investigate with read, ls, glob and grep only (nothing can be written or run), "
             "then propose the plan as a todo list with every step pending and say it in a few lines; "
             "do not carry it out")
ACCEPTED = ("The user accepted your plan: carry it out now, step by step. Keep the todo list current: "
            "one step in_progress, each marked done when finished (blocked, saying why, if it cannot be).")
REJECTED_NOTE = "the user rejected the plan and left plan mode; the task list is cleared"


def refusal(name: str) -> str:
    """What a planning model is told of a call that could change something."""
    return (f"refused: {name} is not available in plan mode (nothing is written or run while planning). "
            "Use read, ls, glob or grep to investigate, then give the plan with the todo tool.")


class PlanningTools:
    """A ``ToolRunner`` (``agent.deps``) that offers and runs only the tools of ``inner`` without
    side effects."""

    def __init__(self, inner: ToolRegistry) -> None:
        self._inner = inner
        specs = [spec for spec in inner.specs() if not _changes(inner, spec.name)]
        todo = inner.get(PLAN_TOOL)
        if todo is not None and all(spec.name != PLAN_TOOL for spec in specs):
            # left undeclared for a small model, declared here: the list is what planning is for
            specs.append(ToolSpec(todo.name, todo.description, todo.parameters))
        self._specs = tuple(specs)

    def specs(self) -> Sequence[ToolSpec]:
        return self._specs

    def prepare(self, call: ToolCall) -> PreparedCall | ToolResult:
        prepared = self._inner.prepare(call)
        if isinstance(prepared, PreparedCall) and prepared.side_effects:
            return ToolResult(text=refusal(prepared.tool.name), is_error=True, summary="refused: plan mode")
        return prepared

    async def describe(self, prepared: PreparedCall, ctx: ToolContext) -> PreparedCall:
        return await self._inner.describe(prepared, ctx)

    async def check(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult | None:
        return await self._inner.check(prepared, ctx)

    async def execute(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult:
        if prepared.side_effects:  # never prepared here; a runner handed one from elsewhere still refuses
            return ToolResult(text=refusal(prepared.tool.name), is_error=True, summary="refused: plan mode")
        return await self._inner.execute(prepared, ctx)


def _changes(registry: ToolRegistry, name: str) -> bool:
    tool = registry.get(name)
    return tool is None or tool.side_effects
