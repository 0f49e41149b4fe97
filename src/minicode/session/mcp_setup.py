"""The session's MCP servers (issue 26): a manager started in the background and the tool
registry that offers them. Imported only when servers are configured, so a session without
any never loads the SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from minicode.config import Config
from minicode.mcp_client.signin_settings import SignInSettings
from minicode.mcp_client.manager import McpManager
from minicode.mcp_client.tools import McpTools
from minicode.tools.base import Tool
from minicode.tools.registry import ToolRegistry, default_tools

__all__ = ["mcp_registry"]


def mcp_registry(config: Config, workspace: Path, env: Mapping[str, str], extra: Sequence[Tool] = (), *,
                 attended: bool) -> tuple[ToolRegistry, McpManager]:
    """The default tools, ``extra`` (``skill``) and
    ``mcp_tools`` declared, ``server__tool`` names resolved; the manager has begun connecting
    (the caller closes it). ``attended``: an OAuth sign-in may wait for the person
    (``mcp_client.signin``); tokens are kept under ``$HOME``."""
    manager = McpManager(config.mcp, workspace, SignInSettings.from_env(env, attended=attended))
    named = McpTools(manager)
    manager.start()
    return ToolRegistry([*default_tools(extra), named.catalog], named=named), manager
