"""MCP OAuth sign-in (issue 26 item 6) against the test authorization server
(tests/mcp/oauth_server.py: the SDK's own ``mcp.server.auth`` on 127.0.0.1), through
``minicode.mcp_client``: how long each way of connecting takes from ``start`` to settled —
a first sign-in (401, discovery, dynamic registration, the browser's round trip answered at
once by plain HTTP, the token exchange), a stored token, an expired stored token refreshed,
and an unattended run without a token (marked "needs sign-in" at once, never waiting).

    .venv/bin/python bench/mcp_oauth.py [--runs 5]

Each run uses a fresh $HOME under a temporary directory; the first connection of the process
(imports) is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from minicode.config import McpServerConfig
from minicode.mcp_client.manager import McpManager
from minicode.mcp_client.signin_settings import SignInSettings
from minicode.mcp_client.token_file import token_path

SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "oauth_server.py"
WAYS = ("first sign-in", "stored token", "expired token, refreshed", "unattended, no token")


async def _browser(url: str) -> None:
    async with httpx2.AsyncClient() as client:
        consent = await client.get(url)
        await client.get(consent.headers["location"])


async def _connect(config: McpServerConfig, home: Path, attended: bool) -> tuple[float, str]:
    answers: list[asyncio.Task[None]] = []
    manager = McpManager([config], home, SignInSettings(attended=attended, home=str(home)))
    manager.show_signin(lambda line: answers.append(asyncio.create_task(_browser(line.rsplit(": ", 1)[1]))))
    began = time.perf_counter()
    manager.start()
    await manager.settle(60)
    took = time.perf_counter() - began
    state = manager.links["web"].state.value
    await manager.close()
    return took, state


async def main(runs: int) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(SERVER), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(400):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.05)
        config = McpServerConfig(name="web", url=f"http://127.0.0.1:{port}/mcp")
        with tempfile.TemporaryDirectory() as scratch:
            await _connect(config, Path(scratch), True)  # imports, not counted
            rows: dict[str, list[tuple[float, str]]] = {way: [] for way in WAYS}
            for run in range(runs):
                home = Path(scratch) / f"home-{run}"
                home.mkdir()
                rows["first sign-in"].append(await _connect(config, home, True))
                rows["stored token"].append(await _connect(config, home, False))
                path = token_path(str(home), config.url)
                assert path is not None
                stored = json.loads(path.read_text())
                stored["tokens"]["expires_at"] = 0  # long expired
                path.write_text(json.dumps(stored))
                rows["expired token, refreshed"].append(await _connect(config, home, False))
                (home / "empty").mkdir()
                rows["unattended, no token"].append(await _connect(config, home / "empty", False))
        print(f"{'way':28s} {'median ms':>9s} {'min ms':>7s}  state")
        for way, results in rows.items():
            times = sorted(t for t, _ in results)
            states = ", ".join(sorted({s for _, s in results}))
            print(f"{way:28s} {times[len(times) // 2] * 1000:9.0f} {times[0] * 1000:7.0f}  {states}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
