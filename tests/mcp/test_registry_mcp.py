"""server__tool names through the tool registry: resolved without being declared, arguments
passed as sent (the server checks them), an approval preview with one line per argument; the
declarations never change when a server connects."""

from __future__ import annotations

from pathlib import Path

from minicode.config import McpServerConfig
from minicode.mcp_client.link import RemoteTool, State
from minicode.mcp_client.manager import McpManager
from minicode.mcp_client.tools import McpTools
from minicode.provider.types import ToolCall
from minicode.tools.base import ToolResult
from minicode.tools.registry import PreparedCall, ToolRegistry, default_tools


def registry(tmp_path: Path) -> tuple[ToolRegistry, McpManager]:
    manager = McpManager([McpServerConfig(name="t", command=("x",)),
                          McpServerConfig(name="off", command=("x",), disabled=True)], tmp_path)
    named = McpTools(manager)
    return ToolRegistry([*default_tools(), named.catalog], named=named), manager


def test_a_server_tool_is_prepared_with_its_arguments_as_sent(tmp_path: Path) -> None:
    tools, _ = registry(tmp_path)
    prepared = tools.prepare(ToolCall("c1", "t__echo", '{"text": "hi", "items": [1, 2], "deep": {"a": null}}'))
    assert isinstance(prepared, PreparedCall) and prepared.side_effects
    assert prepared.args == {"text": "hi", "items": [1, 2], "deep": {"a": None}}
    assert prepared.preview.target == "MCP server t" and prepared.preview.detail == "echo"
    assert prepared.preview.body == 'text: hi\nitems: [1, 2]\ndeep: {"a": null}'


def test_unknown_and_disabled_servers_are_unknown_tools(tmp_path: Path) -> None:
    tools, _ = registry(tmp_path)
    for name in ("nope__echo", "off__echo", "t__", "echo"):
        result = tools.prepare(ToolCall("c1", name, "{}"))
        assert isinstance(result, ToolResult) and result.is_error and "unknown tool" in result.text
    bad = tools.prepare(ToolCall("c1", "t__echo", "[1]"))
    assert isinstance(bad, ToolResult) and bad.is_error


def test_the_declarations_stay_the_same_when_a_server_connects(tmp_path: Path) -> None:
    tools, manager = registry(tmp_path)
    before = tools.specs()
    link = manager.links["t"]
    link.state, link.tools = State.READY, (RemoteTool("echo", "Echo.", {"type": "object"}),)
    assert tools.specs() == before and before[-1].name == "mcp_tools"
    assert "t, off" in before[-1].description


async def test_the_catalog_forgives_a_server_name_or_a_bare_tool_name(tmp_path: Path) -> None:
    from minicode.tools.base import ToolContext

    tools, manager = registry(tmp_path)
    link = manager.links["t"]
    link.state, link.tools = State.READY, (RemoteTool("echo", "Echo.\nMore.", {"type": "object", "required": ["text"]}),)
    catalog = next(spec for spec in [tools.get("mcp_tools")] if spec is not None)
    ctx = ToolContext(tmp_path, {})
    assert (await catalog.run({"tool": "t"}, ctx)).text.startswith("t (ready)\n  t__echo - Echo.\n\nCall a tool by its full name")
    schema = (await catalog.run({"tool": "echo"}, ctx)).text
    assert schema.startswith("t__echo: Echo.\nMore.\ninput schema: ") and '"required": ["text"]' in schema
    from minicode.errors import ToolError
    import pytest

    with pytest.raises(ToolError, match="no MCP tool 'nope'"):
        await catalog.run({"tool": "nope"}, ctx)
