"""The ``agent`` tool: a sub-task handed to a child loop (docs/subagents.md).

The tool itself only knows the task's text and the context's ``delegate``: the child loop,
its limits and its report are the agent loop's (``agent.subagent``), which gives the
delegate to an ``agent`` call. Tools know the workspace, not the agent.
"""

from __future__ import annotations

from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.specs import AGENT

__all__ = ["AgentTool"]


class AgentTool:
    name = AGENT.name
    description = AGENT.description
    parameters = AGENT.parameters
    side_effects = AGENT.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target="", detail=str(args["task"]))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.delegate is None:
            raise ToolError("agent: no sub-agent can be started here (a sub-agent cannot start another);"
                            " do this part yourself with the tools you have")
        task = str(args["task"])
        if not task.strip():
            raise ToolError("agent: the task is empty; say what the sub-agent should find out, with all it needs to know")
        return await ctx.delegate(task)
