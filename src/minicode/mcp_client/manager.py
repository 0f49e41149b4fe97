"""The configured MCP servers of one session: started in the background, at most 4 connecting
at once, closed with the session; their notices reach whoever listens (a running turn's
event stream), else wait for the next listener.

Everything the rest of minicode knows of MCP comes from here: ``links`` (state, tools, last
error per server), ``resolve`` (a ``server__tool`` name to its server and tool), and the
notices. ``tools.py`` turns it into tools, ``status.py`` into rows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable, Sequence

from minicode.config import McpServerConfig
from minicode.mcp_client.link import RemoteTool, ServerLink, State

__all__ = ["MAX_CONNECTING", "SEPARATOR", "McpManager", "split_name"]

MAX_CONNECTING = 4
"""Servers that start at once (ten ``npx`` servers starting together would starve the machine)."""
SEPARATOR = "__"


def split_name(qualified: str) -> tuple[str, str] | None:
    """``git__git_status`` -> ("git", "git_status"); None for a name without a server part."""
    server, sep, tool = qualified.partition(SEPARATOR)
    return (server, tool) if sep and server and tool else None


class McpManager:
    def __init__(self, servers: Sequence[McpServerConfig], workspace: Path) -> None:
        self._slots = asyncio.Semaphore(MAX_CONNECTING)
        self._pending: list[str] = []
        self._listener: Callable[[str], None] | None = None
        self.links = {s.name: ServerLink(s, workspace, slots=self._slots, on_notice=self._notice) for s in servers}
        self._started = False

    def start(self) -> None:
        """Begin connecting every enabled server (returns at once)."""
        if not self._started:
            self._started = True
            for link in self.links.values():
                link.start()

    async def close(self) -> None:
        """Disconnect all (stdio servers' groups ended); never raises."""
        await asyncio.gather(*(link.close() for link in self.links.values()))

    def listen(self, listener: Callable[[str], None] | None) -> None:
        """Where notices go now (None: kept until the next listener); what waited goes at once."""
        self._listener = listener
        if listener is not None:
            pending, self._pending = self._pending, []
            for notice in pending:
                listener(notice)

    def _notice(self, text: str) -> None:
        if self._listener is not None:
            self._listener(text)
        else:
            self._pending.append(text)

    def resolve(self, qualified: str) -> tuple[ServerLink, RemoteTool | None] | None:
        """The server of ``qualified`` and its tool (None while the server has not listed it
        yet: connecting, or the tool is not there); None when no server has that name."""
        parts = split_name(qualified)
        if parts is None or parts[0] not in self.links:
            return None
        link = self.links[parts[0]]
        return link, next((t for t in link.tools if t.name == parts[1]), None)

    async def settle(self, timeout: float) -> None:
        """Until every enabled server is ready or failed once, at most ``timeout`` seconds
        (``--mcp``, ``--doctor``, the bench)."""
        waiting = [link.wait_settled() for link in self.links.values() if link.state is State.CONNECTING]
        if waiting:
            await asyncio.wait([asyncio.ensure_future(w) for w in waiting], timeout=timeout)
