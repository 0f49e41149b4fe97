"""The configured MCP servers of one session: started in the background, at most 4 connecting
at once, closed with the session; their notices reach whoever listens (a running turn's
event stream), else wait for the next listener.

Everything the rest of minicode knows of MCP comes from here: ``links`` (state, tools, last
error per server), ``resolve`` (a ``server__tool`` name to its server and tool), and the
notices. ``tools.py`` turns it into tools, ``status.py`` into rows.

A remote server's OAuth sign-in address goes to ``show_signin``'s display at once (the person
must see it while the sign-in waits), or waits for one to be given, like the notices.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable, Sequence

from minicode.config import McpServerConfig
from minicode.mcp_client.link import RemoteTool, ServerLink, State
from minicode.mcp_client.signin_settings import SignInSettings

__all__ = ["MAX_CONNECTING", "SEPARATOR", "McpManager", "split_name"]

MAX_CONNECTING = 4
"""Servers that start at once (ten ``npx`` servers starting together would starve the machine)."""
SEPARATOR = "__"


def split_name(qualified: str) -> tuple[str, str] | None:
    """``git__git_status`` -> ("git", "git_status"); None for a name without a server part."""
    server, sep, tool = qualified.partition(SEPARATOR)
    return (server, tool) if sep and server and tool else None


class McpManager:
    def __init__(self, servers: Sequence[McpServerConfig], workspace: Path,
                 signin: SignInSettings = SignInSettings()) -> None:
        self._slots = asyncio.Semaphore(MAX_CONNECTING)
        self._pending: list[str] = []
        self._listener: Callable[[str], None] | None = None
        self._signin_lines: list[str] = []
        self._signin_display: Callable[[str], None] | None = None
        self.links = {s.name: ServerLink(s, workspace, slots=self._slots, on_notice=self._notice, signin=signin,
                                         show_signin=self._show_signin) for s in servers}
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

    def show_signin(self, display: Callable[[str], None]) -> None:
        """Where sign-in addresses are shown from now on (what waited is shown at once)."""
        self._signin_display = display
        waiting, self._signin_lines = self._signin_lines, []
        for line in waiting:
            display(line)

    def _show_signin(self, line: str) -> None:
        if self._signin_display is not None:
            self._signin_display(line)
        else:
            self._signin_lines.append(line)

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
