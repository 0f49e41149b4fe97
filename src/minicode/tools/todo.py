"""The ``todo`` tool: the model replaces its task list (``tools.todo_list``) with the one it sends.

No side effect on the workspace, so no approval: the list goes to whoever keeps it through
``ToolContext.on_todo`` (the session records it, shows it, and keeps it through compaction).
"""

from __future__ import annotations

from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.specs import TODO
from minicode.tools.todo_list import parse_items

__all__ = ["TodoTool"]


class TodoTool:
    name = TODO.name
    description = TODO.description
    parameters = TODO.parameters
    side_effects = TODO.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        items = args.get("items")
        count = len(items) if isinstance(items, list) else 0
        return ToolPreview(target="", detail=f"{count} item{'' if count == 1 else 's'}")

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        todo = parse_items(args.get("items"))
        if isinstance(todo, str):
            raise ToolError(f"task list not changed: {todo}")
        if ctx.on_todo is not None:
            await ctx.on_todo(todo)
        now = f"; in progress: {todo.current.text}" if todo.current is not None else ""
        return ToolResult(text=f"task list saved ({todo.summary}{now})", summary=todo.summary)
