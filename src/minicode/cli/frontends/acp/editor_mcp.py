"""The MCP servers an editor hands a session (``session/new``'s ``mcpServers``) as minicode's own
server configs: ACP's stdio servers (the ones every agent must take) become ``[mcp.servers.NAME]``
entries of the session's config, started and approved like any other (their calls are asked:
never trusted); HTTP and SSE servers are not offered in the capabilities and are skipped, said."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any, Sequence

from acp.schema import McpServerStdio

from minicode.config import MCP_SERVER_NAME, Config, McpServerConfig, merge_mcp

__all__ = ["with_editor_servers"]

log = logging.getLogger("minicode.acp")


def with_editor_servers(config: Config, servers: Sequence[Any] | None) -> Config:
    """``config`` with the editor's stdio servers added (an editor's server of a configured
    name replaces it for this session)."""
    taken: list[McpServerConfig] = []
    for server in servers or ():
        if not isinstance(server, McpServerStdio):
            log.warning("the editor's MCP server %r is not stdio: skipped (minicode takes stdio servers from "
                        "an editor, and any kind from its config: docs/mcp.md)", getattr(server, "name", "?"))
            continue
        name = _name(server.name, {s.name for s in taken})
        taken.append(McpServerConfig(name=name, command=(server.command, *server.args),
                                     env=tuple((v.name, v.value) for v in server.env)))
    return replace(config, mcp=merge_mcp(config.mcp, tuple(taken))) if taken else config


def _name(wanted: str, taken: set[str]) -> str:
    """A server name minicode's tool names can carry (``NAME__tool``): letters, digits, single
    ``-``/``_``, at most 32; made unique among the editor's servers."""
    name = re.sub(r"_{2,}", "_", re.sub(r"[^A-Za-z0-9_-]", "-", wanted)).strip("-_")[:32] or "editor"
    if not MCP_SERVER_NAME.fullmatch(name):
        name = "editor"
    base, n = name, 2
    while name in taken:
        suffix = f"-{n}"
        name, n = base[: 32 - len(suffix)] + suffix, n + 1
    return name
