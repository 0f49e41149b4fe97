"""``minicode --mcp``: connect to the configured MCP servers, print each one's state, tools and
last error, and exit (0, or 1 when a server failed or needs sign-in). Waits for each server up
to its start-up time-out, all at once; a remote server's OAuth sign-in address goes to stderr
and is waited for when stderr is a terminal.

``minicode --mcp-login NAME``: sign in to that one remote server anew (its stored tokens are
dropped first: an explicit sign-in, e.g. as another account or after a revoked grant), the
address on stderr, waiting up to its ``signin_timeout`` whatever stderr is (the person asked for
it); then the same listing of that server. An unknown or stdio server is a usage error (2).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Mapping

from minicode.config import Config
from minicode.errors import ConfigError
from minicode.exitcodes import EXIT_FAILURE, EXIT_OK

__all__ = ["run"]


def run(config: Config, workspace: Path, env: Mapping[str, str], *, login: str | None = None) -> int:
    if login is not None:
        server = next((s for s in config.mcp if s.name == login), None)
        if server is None or not server.url:
            remote = ", ".join(s.name for s in config.mcp if s.url) or "none"
            what = "is a stdio server (no sign-in)" if server is not None else "is not configured"
            raise ConfigError(f"--mcp-login {login}: that MCP server {what}; the remote servers: {remote}")
        config = dataclasses.replace(config, mcp=(dataclasses.replace(server, disabled=False),))
    return asyncio.run(_listed(config, workspace, env, login is not None))


async def _listed(config: Config, workspace: Path, env: Mapping[str, str], login: bool) -> int:
    from minicode.cli.frontends.shared.shown_call import reveal
    from minicode.cli.stdstreams import is_terminal

    if not config.mcp:
        print("no MCP servers configured ([mcp.servers.NAME] in the config, or --mcp-config PATH; docs/mcp.md)")
        return EXIT_OK
    from minicode.mcp_client.link import State
    from minicode.mcp_client.manager import McpManager
    from minicode.mcp_client.signin_settings import SignInSettings
    from minicode.mcp_client.status import status_lines

    signin = SignInSettings.from_env(env, attended=login or is_terminal(sys.stderr))
    if login:
        from minicode.mcp_client.token_file import TokenFile, token_path

        url = config.mcp[0].url
        await TokenFile(token_path(signin.home, url), url).forget_tokens()
    manager = McpManager(config.mcp, workspace, signin)
    manager.show_signin(lambda line: print(f"minicode: {reveal(line)}", file=sys.stderr, flush=True))
    manager.start()
    try:
        await manager.settle(max(s.startup_timeout + (s.signin_timeout if s.url else 0) for s in config.mcp))
        for line in status_lines(manager, tools=True):
            print(reveal(line))
        sys.stdout.flush()
        failed = any(link.state in (State.FAILED, State.SIGNIN) for link in manager.links.values())
    finally:
        await manager.close()
    return EXIT_FAILURE if failed else EXIT_OK
