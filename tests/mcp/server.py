"""A small MCP server written with the SDK, for the tests (``python server.py [stdio|http PORT]``).

Tools: ``echo`` (text back), ``add`` (two numbers), ``image`` (a PNG block), ``slow`` (sleeps,
reporting progress; writes a marker file when it is cancelled), ``pid`` (its process id),
``header`` (an HTTP request header), ``crash`` (exits the process). ``MCP_TEST_HANG=1`` makes it hang before serving;
``MCP_TEST_FAIL=1`` exits at once with a message on stderr.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time

if os.environ.get("MCP_TEST_FAIL"):
    print("test server: refusing to start (MCP_TEST_FAIL)", file=sys.stderr, flush=True)
    sys.exit(3)
if os.environ.get("MCP_TEST_HANG"):
    time.sleep(3600)

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent

server = MCPServer("minicode-test")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back.

    A second line that the catalog leaves out."""
    return f"echo: {text}"


@server.tool()
def add(a: float, b: float) -> str:
    """Add two numbers."""
    return str(a + b)


@server.tool()
def image() -> ImageContent:
    """A small PNG image."""
    return ImageContent(type="image", data=base64.b64encode(b"\x89PNG" + b"\0" * 34 * 1024).decode(), mime_type="image/png")


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress."""
    try:
        for step in range(int(seconds * 10)):
            await ctx.report_progress(step, seconds * 10, "sleeping")
            await asyncio.sleep(0.1)
    except asyncio.CancelledError:
        marker = os.environ.get("MCP_TEST_CANCELLED")
        if marker:
            with open(marker, "w") as f:
                f.write("cancelled")
        raise
    return "slept"


@server.tool()
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one HTTP request header (Streamable HTTP only)."""
    return str((ctx.headers or {}).get(name.lower(), "(none)"))


@server.tool()
def crash() -> str:
    """Exit the server process."""
    os._exit(1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
