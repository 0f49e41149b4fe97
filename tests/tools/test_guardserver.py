"""The guard server as a process of its own: what it imports, how it ends, and kill -9 of the
process that started it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from minicode.tools import guardclient
from tests.tools.test_spawn import group_members


def _start_server(*python_options: str) -> tuple[subprocess.Popen[str], socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server = subprocess.Popen([sys.executable, *python_options, "-I", "-S", str(guardclient._SCRIPT)],
                              stdin=theirs.fileno(), stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    theirs.close()
    return server, ours


def _wait_empty(pgid: int, limit: float = 10.0) -> list[int]:
    deadline = time.monotonic() + limit  # a hang guard: the server needs ~0.5 s
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return group_members(pgid)


def test_the_server_starts_without_importing_minicode() -> None:
    """It runs as a script: neither the minicode package nor its heavy imports load in it."""
    server, control = _start_server("-X", "importtime")
    assert control.recv(64) == b"ready"
    control.close()  # end-of-file: it exits
    assert server.stderr is not None
    stderr = server.stderr.read()
    assert server.wait(timeout=30) == 0, stderr
    imported = {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    assert "_socket" in imported  # the server's own imports are listed
    assert not {name for name in imported if name.startswith("minicode")}
    assert not {"typing", "re", "enum", "socket", "signal", "selectors"} & imported  # ~20 ms more


def test_the_server_ignores_nonsense_and_keeps_serving(tmp_path: Path) -> None:
    server, control = _start_server()
    assert control.recv(64) == b"ready"
    for junk in (b"run\0only", b"release", b"what\0is\0this", b"run\x001\0/\0x", b"\0\0\0"):
        control.send(junk)
    for bad_run in (b"run\x002\0/\0x\0y", b"run\x003\0/\x000\0", b"run\x004\0/\x009\0true"):
        read_end, write_end = os.pipe()
        socket.send_fds(control, [bad_run], [write_end])
        os.close(write_end)
        os.close(read_end)
        assert control.recv(64).split(b"\0")[0] == b"failed"
    read_end, write_end = os.pipe()
    socket.send_fds(control, [b"run\x007\0" + bytes(tmp_path) + b"\x001\0true\0PATH=/usr/bin:/bin"], [write_end])
    os.close(write_end)
    started = control.recv(64).split(b"\0")
    assert started[:2] == [b"started", b"7"]
    assert control.recv(64) == b"exited\x007\x000"
    os.close(read_end)
    control.close()
    assert server.wait(timeout=30) == 0


def test_sigterm_to_the_server_ends_every_group(tmp_path: Path) -> None:
    server, control = _start_server()
    assert control.recv(64) == b"ready"
    read_end, write_end = os.pipe()
    socket.send_fds(control, [b"run\x001\0" + bytes(tmp_path) + b"\x003\0bash\0-c\0sleep 100 & sleep 100\0PATH=/usr/bin:/bin"], [write_end])
    os.close(write_end)
    pgid = int(control.recv(64).split(b"\0")[2])
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=30) == 0
    assert _wait_empty(pgid) == []
    os.close(read_end)
    control.close()


_MINICODE_STAND_IN = """
import asyncio, os, sys
from pathlib import Path
from minicode.tools.spawn import spawn_command

async def main():
    proc = await spawn_command(["bash", "-c", "sleep 100 & sleep 100 & echo started; wait"], cwd=Path(sys.argv[1]), env=dict(os.environ))
    assert await proc.stdout.readline() == b"started\\n"
    print(proc.pid, flush=True)
    await asyncio.sleep(100)

asyncio.run(main())
"""


def test_kill_9_of_minicode_ends_a_command_and_its_sleeping_grandchildren(tmp_path: Path) -> None:
    script = tmp_path / "stand_in.py"
    script.write_text(textwrap.dedent(_MINICODE_STAND_IN))
    minicode = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert minicode.stdout is not None
        pgid = int(minicode.stdout.readline())
        assert len(group_members(pgid)) >= 3  # bash and two sleeps
        minicode.send_signal(signal.SIGKILL)
        minicode.wait(timeout=10)
        assert _wait_empty(pgid) == []
    finally:
        if minicode.poll() is None:
            minicode.kill()
        minicode.communicate()


_MINICODE_THAT_EXITS = """
import asyncio, os, sys
from pathlib import Path
from minicode.tools import guardclient
from minicode.tools.spawn import spawn_command, terminate_group

async def main():
    proc = await spawn_command(["bash", "-c", "echo done"], cwd=Path(sys.argv[1]), env=dict(os.environ))
    assert await proc.stdout.read() == b"done\\n"
    await proc.wait()
    await terminate_group(proc)
    print(guardclient.current().pid, flush=True)

asyncio.run(main())
"""


def test_the_server_ends_with_minicode_and_is_reaped_by_it(tmp_path: Path) -> None:
    script = tmp_path / "stand_in.py"
    script.write_text(textwrap.dedent(_MINICODE_THAT_EXITS))
    minicode = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert minicode.stdout is not None
    server = int(minicode.stdout.readline())
    assert minicode.wait(timeout=30) == 0
    assert not Path(f"/proc/{server}").exists()  # gone and reaped: no orphan, no zombie
