"""Real MCP servers (tests/mcp/server.py, written with the SDK) through ServerLink/McpManager:
list, call, content, progress, failure isolation, a hanging server, cancellation, reconnect,
Streamable HTTP with headers, and no orphan after kill -9 of minicode."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minicode.config import McpServerConfig
from minicode.errors import ToolError
from minicode.mcp_client.link import State
from minicode.mcp_client.manager import McpManager

SERVER = Path(__file__).with_name("server.py")


def stdio(name: str = "t", *, env: tuple[tuple[str, str], ...] = (), startup: float = 30, call: float = 30) -> McpServerConfig:
    return McpServerConfig(name=name, command=(sys.executable, str(SERVER)), env=env, startup_timeout=startup,
                           call_timeout=call)


async def started(*servers: McpServerConfig, tmp_path: Path) -> tuple[McpManager, list[str]]:
    manager = McpManager(servers, tmp_path)
    notices: list[str] = []
    manager.listen(notices.append)
    manager.start()
    await manager.settle(30)
    return manager, notices


async def test_lists_and_calls_a_stdio_server(tmp_path: Path) -> None:
    manager, notices = await started(stdio(), tmp_path=tmp_path)
    try:
        link = manager.links["t"]
        assert link.state is State.READY and notices == []
        assert {"echo", "add", "image", "slow"} <= {tool.name for tool in link.tools}
        assert await link.call("echo", {"text": "hi"}) == ("echo: hi", False)
        assert await link.call("image", {}) == ("[image/png, 34 KB]", False)
        progress: list[str] = []
        assert (await link.call("slow", {"seconds": 0.3}, progress.append))[0] == "slept"
        assert progress and progress[0].startswith("progress 0/3")
    finally:
        await manager.close()


async def test_a_failing_and_a_hanging_server_leave_the_others_alone(tmp_path: Path) -> None:
    manager, notices = await started(
        stdio(), stdio("broken", env=(("MCP_TEST_FAIL", "1"),)), stdio("hangs", env=(("MCP_TEST_HANG", "1"),), startup=1),
        McpServerConfig(name="missing", command=("/nonexistent/mcp-server",)), tmp_path=tmp_path)
    try:
        assert manager.links["t"].state is State.READY
        broken, hangs, missing = manager.links["broken"], manager.links["hangs"], manager.links["missing"]
        # failed, or already trying again after the first second of backoff: the reason stays until it connects
        assert all(link.state is not State.READY for link in (broken, hangs, missing))
        assert "refusing to start" in broken.error
        assert "did not start within 1 s" in hangs.error
        assert "cannot start /nonexistent/mcp-server" in missing.error
        assert sorted(n.split()[2] for n in notices) == ["broken", "hangs", "missing"]
        with pytest.raises(ToolError, match="MCP server broken is failed: .*refusing"):
            await broken.call("echo", {"text": "x"})
        assert await manager.links["t"].call("echo", {"text": "still"}) == ("echo: still", False)
    finally:
        await manager.close()


async def test_cancelling_a_call_cancels_the_request_on_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    manager, _ = await started(stdio(env=(("MCP_TEST_CANCELLED", str(marker)),)), tmp_path=tmp_path)
    try:
        link = manager.links["t"]
        progressed = asyncio.Event()
        call = asyncio.ensure_future(link.call("slow", {"seconds": 30}, lambda _: progressed.set()))
        await asyncio.wait_for(progressed.wait(), 10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(100):  # the server learns of it through notifications/cancelled
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        assert marker.read_text() == "cancelled"
        assert await link.call("echo", {"text": "after"}) == ("echo: after", False)  # the lock was released
    finally:
        await manager.close()


async def test_a_call_that_outlasts_call_timeout_fails_clearly(tmp_path: Path) -> None:
    manager, _ = await started(stdio(call=1), tmp_path=tmp_path)
    try:
        with pytest.raises(ToolError, match="did not answer slow within 1 s"):
            await manager.links["t"].call("slow", {"seconds": 30})
    finally:
        await manager.close()


async def test_a_server_that_exits_is_reconnected(tmp_path: Path) -> None:
    manager, notices = await started(stdio(), tmp_path=tmp_path)
    try:
        link = manager.links["t"]
        first = (await link.call("pid", {}))[0]
        with pytest.raises(ToolError, match="lost its connection"):
            await link.call("crash", {})
        for _ in range(200):  # failed (said once), then after 1 s connecting again, then ready
            if notices and link.state is State.READY:
                break
            await asyncio.sleep(0.05)
        assert link.state is State.READY
        assert len(notices) == 1 and notices[0].startswith("MCP server t failed: the connection ended")
        second = (await link.call("pid", {}))[0]
        assert second != first
    finally:
        await manager.close()


async def test_a_call_while_connecting_waits_for_the_server(tmp_path: Path) -> None:
    manager = McpManager([stdio()], tmp_path)
    manager.start()
    try:
        assert manager.links["t"].state is State.CONNECTING
        assert await manager.links["t"].call("echo", {"text": "early"}) == ("echo: early", False)
    finally:
        await manager.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streamable_http_with_headers(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.05)
        server = McpServerConfig(name="web", url=f"http://127.0.0.1:{port}/mcp", headers=(("X-Test", "yes"),),
                                 startup_timeout=30)
        manager, notices = await started(server, tmp_path=tmp_path)
        try:
            assert manager.links["web"].state is State.READY, notices
            assert await manager.links["web"].call("add", {"a": 2, "b": 3}) == ("5.0", False)
            assert await manager.links["web"].call("header", {"name": "X-Test"}) == ("yes", False)
        finally:
            await manager.close()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


async def test_an_unreachable_remote_server_fails_with_a_reason(tmp_path: Path) -> None:
    server = McpServerConfig(name="gone", url=f"http://127.0.0.1:{_free_port()}/mcp", startup_timeout=10)
    manager, notices = await started(server, tmp_path=tmp_path)
    try:
        assert manager.links["gone"].state is State.FAILED and notices
    finally:
        await manager.close()


_HOLDER = """
import asyncio, sys
from pathlib import Path
from minicode.config import McpServerConfig
from minicode.mcp_client.manager import McpManager
async def main():
    m = McpManager([McpServerConfig(name="t", command=(sys.executable, sys.argv[1]))], Path.cwd())
    m.start()
    print((await m.links["t"].call("pid", {}))[0], flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its reaper is gone too
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_no_server_outlives_a_kill_9_of_minicode(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(SERVER)], stdout=subprocess.PIPE, text=True,
                              cwd=tmp_path, start_new_session=True)
    try:
        assert holder.stdout is not None
        server_pid = int(holder.stdout.readline())
        assert _alive(server_pid)
        holder.kill()  # SIGKILL: no cleanup of minicode's runs
        holder.wait()
        deadline = time.monotonic() + 10
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server_pid)
    finally:
        if holder.poll() is None:
            holder.kill()



async def test_the_allow_list_limits_the_tools_and_a_disabled_server_never_starts(tmp_path: Path) -> None:
    from minicode.mcp_client.tools import McpTools
    from minicode.tools.base import ToolContext

    limited = McpServerConfig(name="t", command=(sys.executable, str(SERVER)), tools=("echo",), startup_timeout=30)
    off = McpServerConfig(name="off", command=("/nonexistent/never-run",), disabled=True)
    manager, notices = await started(limited, off, tmp_path=tmp_path)
    try:
        assert [tool.name for tool in manager.links["t"].tools] == ["echo"]
        assert manager.links["off"].state is State.DISABLED and notices == []
        tools = McpTools(manager)
        add = tools.resolve("t__add")
        assert add is not None and tools.resolve("off__echo") is None
        with pytest.raises(ToolError, match="has no tool 'add' .*t__echo"):
            await add.run({"a": 1, "b": 2}, ToolContext(tmp_path, {}))
        catalog = (await tools.catalog.run({}, ToolContext(tmp_path, {}))).text
        assert catalog.splitlines()[:3] == ["t (ready)", "  t__echo - Echo the text back.", "off (disabled)"]
    finally:
        await manager.close()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
async def test_what_a_server_leaves_in_its_group_ends_with_it(tmp_path: Path) -> None:
    # a wrapper (like npx) that starts the real server as a child and a sleeper beside it
    pid_file = tmp_path / "sleeper"
    wrapper = tmp_path / "wrapper.sh"
    wrapper.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pid_file}\nexec {sys.executable} {SERVER}\n")
    wrapper.chmod(0o755)
    manager, notices = await started(McpServerConfig(name="w", command=(str(wrapper),), startup_timeout=30),
                                     tmp_path=tmp_path)
    try:
        assert manager.links["w"].state is State.READY, notices
        sleeper = int(pid_file.read_text())
        assert _alive(sleeper)
    finally:
        await manager.close()
    for _ in range(100):
        if not _alive(sleeper):
            break
        await asyncio.sleep(0.05)
    assert not _alive(sleeper)
