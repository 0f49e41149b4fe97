"""MCP tools as minicode tools, within a budget for the prompt.

Declaring every server tool natively costs every request (the seed measured 13 tools = 3.1x
the prompt) and changes the tool list — the start of every request — whenever a server
connects late. So the model is offered one tool, ``mcp_tools``, whose declaration names only
the configured servers (known at start: it never changes while the session runs); calling it
returns the catalog (each tool's name and the first line of its description), or with
``tool`` that tool's full input schema. The model then calls ``server__tool`` by name; the
registry resolves such names here (``McpTools.resolve``), whether or not the server has
connected yet (a call to a server still connecting waits for it).

A call is approved like any side-effect call (``permissions.policy``: ``mcp(server__tool)``
rules, deny first; a server the user's config trusts is allowed by such a rule); the approval
shows every argument on a line of its own. Arguments are checked by the server against its
own schema (minicode's validator knows only the subset its tools use).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from minicode.errors import ToolError
from minicode.mcp_client.link import RemoteTool, ServerLink, State
from minicode.mcp_client.manager import SEPARATOR, McpManager
from minicode.tools.base import ToolContext, ToolPreview, ToolResult

__all__ = ["CATALOG_TOOL", "McpCallTool", "McpCatalogTool", "McpTools", "argument_lines"]

CATALOG_TOOL = "mcp_tools"
_SHOWN_ARGUMENTS = 12
_VALUE_CHARS = 160
_DESCRIPTION_CHARS = 120
_SCHEMA_CHARS = 8000
_NEXT = ("\n\nCall a tool by its full name (server__tool) with its arguments; "
         f"{CATALOG_TOOL} with tool=NAME shows what they are.")


def argument_lines(args: Mapping[str, Any]) -> str:
    """One line per argument (``name: value``), long values cut, at most 12 lines and then how
    many more there are: an approval must show what a remote call will do, and fit."""
    lines = []
    for name, value in list(args.items())[:_SHOWN_ARGUMENTS]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        text = text.replace("\n", "\u2424")
        if len(text) > _VALUE_CHARS:
            text = text[: _VALUE_CHARS - 1] + f"… ({len(text)} characters)"
        lines.append(f"{name}: {text}")
    hidden = len(args) - _SHOWN_ARGUMENTS
    if hidden > 0:
        lines.append(f"… and {hidden} more argument{'s' if hidden != 1 else ''} not shown")
    return "\n".join(lines) if lines else "(no arguments)"


class McpCallTool:
    """``server__tool``: one remote tool, called through its server's link."""

    side_effects = True
    raw_arguments = True
    """The registry passes the arguments object as sent (the server validates them)."""

    def __init__(self, link: ServerLink, tool: str, remote: RemoteTool | None) -> None:
        self.name = f"{link.name}{SEPARATOR}{tool}"
        self.description = remote.description if remote is not None else ""
        self.parameters: Mapping[str, Any] = {"type": "object"}
        self._link = link
        self._tool = tool

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(f"MCP server {self._link.name}", self._tool, argument_lines(args))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        await self._link.wait_settled()
        if self._link.state is State.READY and not any(t.name == self._tool for t in self._link.tools):
            names = ", ".join(f"{self._link.name}{SEPARATOR}{t.name}" for t in self._link.tools[:20]) or "none"
            raise ToolError(f"MCP server {self._link.name} has no tool {self._tool!r} (its tools: {names}); "
                            f"call {CATALOG_TOOL} to list them")
        text, failed = await self._link.call(self._tool, args, ctx.on_output)
        return ToolResult(text, is_error=failed, summary="error" if failed else f"{len(text.splitlines())} lines")


class McpCatalogTool:
    """``mcp_tools``: the catalog of the servers' tools, or one tool's schema. Read-only."""

    name = CATALOG_TOOL
    side_effects = False

    def __init__(self, manager: McpManager) -> None:
        self._manager = manager
        servers = ", ".join(manager.links)
        self.description = (
            f"Tools of the MCP servers {servers}. Call with no arguments to list them (name and one line "
            "each) and the servers' state; with tool=NAME for that tool's input schema. Then call the tool "
            "itself by its name, server__tool, with arguments that fit its schema.")
        self.parameters: Mapping[str, Any] = {
            "type": "object",
            "properties": {"tool": {"type": "string",
                                    "description": "server__tool: its input schema; a server's name: its tools"}},
            "additionalProperties": False,
        }

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview("MCP servers", str(args.get("tool") or "catalog"))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        name = args.get("tool")
        if isinstance(name, str) and name:
            return await self._schema(name)
        # servers still connecting are waited for (each up to its startup_timeout): the list is then whole
        await self._manager.settle(max((l.config.startup_timeout for l in self._manager.links.values()), default=0))
        return ToolResult(self.catalog() + _NEXT, summary=f"{sum(len(l.tools) for l in self._manager.links.values())} tools")

    def catalog(self, only: str | None = None) -> str:
        lines = []
        for link in self._manager.links.values():
            if only is not None and link.name != only:
                continue
            said = link.error if link.state in (State.FAILED, State.SIGNIN) else ""
            state = link.state.value + (f": {said}" if said else "")
            lines.append(f"{link.name} ({state})")
            for tool in link.tools:
                lines.append(f"  {link.name}{SEPARATOR}{tool.name} - {_one_line(tool.description)}")
        return "\n".join(lines)

    async def _schema(self, name: str) -> ToolResult:
        # forgiving, for small models: a server's name lists its tools; a tool's own name finds it
        name = name.strip()
        if name in self._manager.links:
            await self._manager.links[name].wait_settled()
            return ToolResult(self.catalog(only=name) + _NEXT, summary=f"{len(self._manager.links[name].tools)} tools")
        if SEPARATOR not in name:
            owners = [l.name for l in self._manager.links.values() if any(t.name == name for t in l.tools)]
            if len(owners) == 1:
                name = f"{owners[0]}{SEPARATOR}{name}"
        found = self._manager.resolve(name)
        if found is None:
            servers = ", ".join(self._manager.links)
            raise ToolError(f"no MCP tool {name!r}: names are server__tool, and the servers are {servers}; "
                            f"call {CATALOG_TOOL} with no arguments to list their tools")
        link, tool = found
        if tool is None:
            await link.wait_settled()
            found = self._manager.resolve(name)
            tool = found[1] if found is not None else None
        if tool is None:
            raise ToolError(f"MCP server {link.name} ({link.state.value}) has no tool {name!r} now; "
                            f"call {CATALOG_TOOL} to list them")
        schema = json.dumps(tool.schema, ensure_ascii=False, default=str)
        if len(schema) > _SCHEMA_CHARS:
            schema = schema[:_SCHEMA_CHARS] + "… (cut)"
        return ToolResult(f"{name}: {tool.description.strip()}\ninput schema: {schema}", summary="schema")


class McpTools:
    """What the registry asks of MCP: the declared catalog tool, and a tool for any
    ``server__tool`` name of a configured server."""

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager
        self.catalog = McpCatalogTool(manager)

    def resolve(self, name: str) -> McpCallTool | None:
        found = self.manager.resolve(name)
        if found is None:
            return None
        link, remote = found
        if link.state is State.DISABLED:
            return None
        return McpCallTool(link, name.partition(SEPARATOR)[2], remote)


def _one_line(description: str) -> str:
    line = next((part.strip() for part in description.splitlines() if part.strip()), "")
    return line if len(line) <= _DESCRIPTION_CHARS else line[: _DESCRIPTION_CHARS - 1] + "…"
