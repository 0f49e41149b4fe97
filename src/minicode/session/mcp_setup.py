"""The session's MCP servers (issue 26): a manager started in the background and the tool
registry that offers them. Imported only when servers are configured, so a session without
any never loads the SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from minicode.config import Config
from minicode.mcp_client.manager import McpManager
from minicode.mcp_client.tools import McpTools
from minicode.tools.base import Tool
from minicode.tools.registry import ToolRegistry, default_tools

__all__ = ["mcp_registry"]


def mcp_registry(config: Config, workspace: Path, extra: Sequence[Tool] = (), *,
                 small_model: bool = False) -> tuple[ToolRegistry, McpManager]:
    """The default tools (``small_model``: as ``default_tools`` says), ``extra`` (``skill``) and
    ``mcp_tools`` declared, ``server__tool`` names resolved; the manager has begun connecting
    (the caller closes it)."""
    manager = McpManager(config.mcp, workspace)
    named = McpTools(manager)
    manager.start()
    return ToolRegistry([*default_tools(extra, small_model=small_model), named.catalog], named=named), manager
