"""The servers as lines of text: ``/mcp`` in the full screen, ``minicode --mcp``, ``--doctor``.
Server text (names, descriptions, errors) is untrusted: the caller shows it harmlessly."""

from __future__ import annotations

from minicode.mcp_client.link import ServerLink, State
from minicode.mcp_client.manager import SEPARATOR, McpManager

__all__ = ["server_line", "status_lines"]

_DESCRIPTION_CHARS = 80


def server_line(link: ServerLink) -> str:
    """``git  ready  12 tools  (trusted)``, ``docs  failed  <why>``, ``x  connecting…``."""
    parts = [link.name, link.state.value + ("…" if link.state is State.CONNECTING else "")]
    if link.state is State.READY:
        parts.append(f"{len(link.tools)} tool{'s' if len(link.tools) != 1 else ''}")
    if link.error and link.state is not State.READY:
        parts.append(link.error)
    if link.config.trust:
        parts.append("(trusted)")
    return "  ".join(parts)


def status_lines(manager: McpManager, *, tools: bool = False) -> list[str]:
    """One line per server and, with ``tools``, one per tool under it."""
    if not manager.links:
        return ["no MCP servers configured ([mcp.servers.NAME] in the config, or --mcp-config PATH; docs/mcp.md)"]
    lines = []
    for link in manager.links.values():
        lines.append(server_line(link))
        if tools:
            for tool in link.tools:
                first = next((p.strip() for p in tool.description.splitlines() if p.strip()), "")
                if len(first) > _DESCRIPTION_CHARS:
                    first = first[: _DESCRIPTION_CHARS - 1] + "…"
                lines.append(f"  {link.name}{SEPARATOR}{tool.name}" + (f" - {first}" if first else ""))
    return lines
