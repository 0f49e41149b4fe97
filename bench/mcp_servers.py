"""(Not bench/mcp.py: run as a script, that name would shadow the SDK's ``mcp`` package.)

MCP against real third-party servers (issue 26): discovery, one call each, and what they
cost the prompt — declared natively (every tool's schema in every request) against minicode's
way (one ``mcp_tools`` declaration; the catalog and schemas only when the model asks).

    .venv/bin/python bench/mcp_servers.py                     # npx / uvx fetch the servers
    .venv/bin/python bench/mcp_servers.py --everything "node_modules/.bin/mcp-server-everything" \\
        --git "venv/bin/mcp-server-git" --time "venv/bin/mcp-server-time"

Token counts are minicode's own estimate (``minicode.tokens``: what the context budget uses).
The request prefix check compares the declared tools (JSON) before any server connected and
after all did.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minicode.agent.prompt import system_message
from minicode.config import McpServerConfig
from minicode.mcp_client.link import State
from minicode.mcp_client.manager import McpManager
from minicode.mcp_client.tools import McpTools
from minicode.provider.types import ToolSpec
from minicode.tokens import estimate_messages, estimate_tools
from minicode.tools.registry import ToolRegistry, default_tools

CALLS = {
    "everything": ("echo", {"message": "hello from minicode"}),
    "git": ("git_status", {"repo_path": "{repo}"}),
    "time": ("get_current_time", {"timezone": "UTC"}),
}


def _prompt_tokens(workspace: Path, specs: tuple[ToolSpec, ...]) -> int:
    return estimate_messages([system_message(workspace, specs)]) + estimate_tools(specs)


def _repo() -> Path:
    repo = Path(tempfile.mkdtemp(prefix="mcp-bench-repo-"))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    return repo


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--everything", default="npx -y @modelcontextprotocol/server-everything")
    parser.add_argument("--git", default="uvx mcp-server-git")
    parser.add_argument("--time", default="uvx mcp-server-time")
    parser.add_argument("--startup-timeout", type=float, default=120)
    options = parser.parse_args()
    repo = _repo()
    servers = [McpServerConfig(name=name, command=tuple(shlex.split(getattr(options, name))),
                               startup_timeout=options.startup_timeout, call_timeout=60)
               for name in ("everything", "git", "time")]
    workspace = repo
    base = tuple(ToolRegistry(default_tools()).specs())
    manager = McpManager(servers, workspace)
    named = McpTools(manager)
    registry = ToolRegistry([*default_tools(), named.catalog], named=named)
    before = json.dumps([s.__dict__ if hasattr(s, "__dict__") else [s.name, s.description, s.parameters]
                         for s in registry.specs()], default=str)
    started = time.monotonic()
    manager.start()
    ready_at: dict[str, float] = {}

    async def watch(name: str) -> None:
        link = manager.links[name]
        await link.wait_settled()
        ready_at[name] = time.monotonic() - started

    await asyncio.gather(*(watch(name) for name in manager.links))
    after = json.dumps([s.__dict__ if hasattr(s, "__dict__") else [s.name, s.description, s.parameters]
                        for s in registry.specs()], default=str)
    print(f"{'server':<12}{'state':<8}{'tools':>6}{'ready s':>9}  call (first 60 characters of the result)")
    native: list[ToolSpec] = []
    for name, link in manager.links.items():
        tool, args = CALLS[name]
        args = {k: (str(repo) if v == "{repo}" else v) for k, v in args.items()}
        result = link.error
        call_s = 0.0
        if link.state is State.READY:
            t0 = time.monotonic()
            try:
                text, failed = await link.call(tool, args)
                result = ("ERROR " if failed else "") + " ".join(text.split())[:60]
            except Exception as e:  # noqa: BLE001 - a bench reports it
                result = f"failed: {e}"
            call_s = time.monotonic() - t0
            native += [ToolSpec(f"{name}__{t.name}", t.description, t.schema) for t in link.tools]
        print(f"{name:<12}{link.state.value:<8}{len(link.tools):>6}{ready_at.get(name, 0):>9.2f}  "
              f"{tool} ({call_s * 1000:.0f} ms): {result}")
    catalog = named.catalog.catalog()
    everything = tuple(ToolSpec(s.name, s.description, s.parameters) for s in native if s.name.startswith("everything__"))
    rows = [
        ("no MCP", _prompt_tokens(workspace, base)),
        ("mcp_tools declared (3 servers)", _prompt_tokens(workspace, tuple(registry.specs()))),
        ("native: server-everything's tools", _prompt_tokens(workspace, (*base, *everything))),
        ("native: all three servers' tools", _prompt_tokens(workspace, (*base, *native))),
    ]
    print()
    print(f"{'prompt (system + tools), estimated tokens':<44}{'tokens':>8}{'vs no MCP':>11}")
    for label, tokens in rows:
        print(f"{label:<44}{tokens:>8}{tokens - rows[0][1]:>+11}")
    print(f"{'the catalog, when the model asks for it':<44}{estimate_tools([ToolSpec('x', catalog, {})]):>8}"
          "   (a tool result, once)")
    print(f"request prefix unchanged after the servers connected: {before == after}")
    await manager.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
