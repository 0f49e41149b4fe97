"""``minicode --mcp``: connect to the configured MCP servers, print each one's state, tools and
last error, and exit (0, or 1 when a server failed). Waits for each server up to its start-up
time-out, all at once."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Mapping

from minicode.config import Config
from minicode.exitcodes import EXIT_FAILURE, EXIT_OK

__all__ = ["run"]


def run(config: Config, workspace: Path, env: Mapping[str, str]) -> int:
    return asyncio.run(_listed(config, workspace))


async def _listed(config: Config, workspace: Path) -> int:
    from minicode.cli.frontends.shared.shown_call import reveal

    if not config.mcp:
        print("no MCP servers configured ([mcp.servers.NAME] in the config, or --mcp-config PATH; docs/mcp.md)")
        return EXIT_OK
    from minicode.mcp_client.link import State
    from minicode.mcp_client.manager import McpManager
    from minicode.mcp_client.status import status_lines

    manager = McpManager(config.mcp, workspace)
    manager.start()
    try:
        await manager.settle(max(s.startup_timeout for s in config.mcp))
        for line in status_lines(manager, tools=True):
            print(reveal(line))
        sys.stdout.flush()
        failed = any(link.state is State.FAILED for link in manager.links.values())
    finally:
        await manager.close()
    return EXIT_FAILURE if failed else EXIT_OK
