"""The SDK client for one configured server: a stdio server started under minicode's command
guard, a remote one over Streamable HTTP with its headers (and its OAuth sign-in, ``signin``).
The only module that builds ``mcp.Client``; imported when a server first connects."""

from __future__ import annotations

import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, TextIO

from minicode import __version__
from minicode.config import McpServerConfig

__all__ = ["GUARD_SCRIPT", "guarded_argv", "open_client"]

GUARD_SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "cmdguard.py"
"""The command guard (``tools/cmdguard.py --stdio``): the server leads a process group of its
own, and the guard ends that group when minicode dies, even by ``kill -9``."""
_HTTP_TIMEOUT_S = 30.0
_HTTP_READ_S = 300.0  # a server may hold a response stream open while a tool runs


def guarded_argv(command: tuple[str, ...]) -> list[str]:
    """The server's argv under the guard (as is where no Python executable is known)."""
    if not sys.executable:
        return list(command)
    return [sys.executable, "-I", "-S", str(GUARD_SCRIPT), "--stdio", "--", *command]


@asynccontextmanager
async def open_client(config: McpServerConfig, workspace: Path, stderr: TextIO,
                      auth: Any = None) -> AsyncIterator[Any]:
    """The connected (handshake done) ``mcp.Client``; raises whatever the connection raised.
    ``auth``: a remote server's ``httpx2.Auth`` (the OAuth sign-in, ``signin.py``)."""
    from mcp import Client
    from mcp_types import Implementation

    info = Implementation(name="minicode", version=__version__)
    if config.command:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        argv = guarded_argv(config.command)
        cwd = workspace / config.cwd if config.cwd else workspace
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(config.env) or None, cwd=cwd)
        async with Client(stdio_client(params, errlog=stderr), client_info=info, cache=None) as client:
            yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=dict(config.headers), auth=auth, timeout=httpx2.Timeout(_HTTP_TIMEOUT_S, read=_HTTP_READ_S))
    async with http, Client(streamable_http_client(config.url, http_client=http), client_info=info, cache=None) as client:
        yield client
