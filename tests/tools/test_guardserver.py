"""The guard server as a process of its own: what it imports, how it ends, and kill -9 of the
process that started it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

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


def test_the_server_starts_without_importing_minicode(tmp_path: Path) -> None:
    """It runs as a script: nothing of the minicode package loads in it, also not while it
    starts a command."""
    server, control = _start_server("-X", "importtime")
    assert control.recv(64) == b"ready"
    read_end, write_end = os.pipe()
    socket.send_fds(control, [b"run\x001\0" + bytes(tmp_path) + b"\x001\0true\0PATH=/usr/bin:/bin"], [write_end])
    os.close(write_end)
    assert control.recv(64).split(b"\0")[:2] == [b"started", b"1"]
    assert control.recv(64) == b"exited\x001\x000"
    os.close(read_end)
    control.close()  # end-of-file: it exits
    assert server.stderr is not None
    stderr = server.stderr.read()
    assert server.wait(timeout=30) == 0, stderr
    imported = {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    assert "socket" in imported  # the server's own imports are listed
    assert not {name for name in imported if name.startswith("minicode")}


def test_the_search_path_is_the_commands_own_as_exec_would_use_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from minicode.tools import guardserver

    assert guardserver._program(b"true", {}).endswith(b"/true")  # no PATH: the default one
    script = tmp_path / "here.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)  # the server runs the lookup in the command's cwd
    assert guardserver._program(b"here.sh", {b"PATH": b":/nowhere"}) == b"here.sh"
    with pytest.raises(FileNotFoundError):
        guardserver._program(b"here.sh", {b"PATH": b"/nowhere"})


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
from minicode.tools import guardlife
from minicode.tools.spawn import spawn_command, terminate_group

async def main():
    proc = await spawn_command(["bash", "-c", "echo done"], cwd=Path(sys.argv[1]), env=dict(os.environ))
    assert await proc.stdout.read() == b"done\\n"
    await proc.wait()
    await terminate_group(proc)
    print(guardlife.current().pid, flush=True)

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


# --- what a command leaves behind (the server is a child subreaper) ---------------------------

def _run(control: socket.socket, request: bytes, cwd: Path, command: str) -> tuple[int, int]:
    """Start ``bash -c command``; (its pid, the read end of its output pipe)."""
    read_end, write_end = os.pipe()
    socket.send_fds(control, [b"run\0" + request + b"\0" + bytes(cwd) + b"\x003\0bash\0-c\0" + command.encode()
                              + b"\0PATH=/usr/bin:/bin"], [write_end])  # fmt: skip
    os.close(write_end)
    started = control.recv(64).split(b"\0")
    assert started[:2] == [b"started", request], started
    return int(started[2]), read_end


def _pids(read_end: int, count: int) -> list[int]:
    """The ``count`` pids the command prints (what it leaves behind still holds the pipe)."""
    out = b""
    while len(out.split()) < count and (chunk := os.read(read_end, 64)):
        out += chunk
    return [int(word) for word in out.split()]


def _state(pid: int) -> str | None:
    """The process's state letter (``Z`` for a zombie), or None once it is gone (reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def _wait_gone(pids: list[int], limit: float = 10.0) -> list[int]:
    """The pids still present (alive or zombie) once all are gone or ``limit`` passed (a hang guard)."""
    deadline = time.monotonic() + limit
    while any(_state(pid) is not None for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [pid for pid in pids if _state(pid) is not None]


# Each prints the pid of what it leaves behind outside its group: a job in a group of its own
# (set -m), a daemon in a session of its own (setsid; double-forked), and an orphan two levels down
# in nested job groups.
_ESCAPES = [
    ("set -m; sleep 100 & echo $!", 1),
    ("setsid sleep 100 & echo $!", 1),
    ("set -m; (set -m; sleep 100 & echo $!; exec sleep 100) & echo $!", 2),
    ("(setsid sh -c 'sleep 100 & echo $!' &)", 1),
]
"""(command, how many pids it prints); the sleeps keep the output pipe, as a server started
with ``&`` does."""


def test_what_a_released_command_left_outside_its_group_is_killed(tmp_path: Path) -> None:
    """``release`` (minicode has killed the command's group) also ends the command's orphans
    that left the group — they became the server's children, so it finds them."""
    server, control = _start_server()
    assert control.recv(64) == b"ready"
    try:
        for number, (command, count) in enumerate(_ESCAPES, 1):
            request = str(number).encode()
            pid, read_end = _run(control, request, tmp_path, command + "; sleep 0.2")  # (setsid done)
            left = _pids(read_end, count)
            assert control.recv(64) == b"exited\0" + request + b"\x000"
            with contextlib.suppress(ProcessLookupError):  # what minicode's terminate_group does
                os.killpg(pid, signal.SIGKILL)
            time.sleep(0.1)  # the orphans of what died are handed over to the server
            assert len(left) == count and all(_state(p) not in (None, "Z") for p in left), command  # still running
            control.send(b"release\0" + request)
            assert _wait_gone(left) == [], command
            os.close(read_end)
    finally:
        control.close()
        assert server.wait(timeout=30) == 0


def test_an_orphan_of_a_command_still_running_is_left_alone(tmp_path: Path) -> None:
    """Another command's release or an orphan's end kills only what finished commands left."""
    server, control = _start_server()
    assert control.recv(64) == b"ready"
    try:
        running, running_out = _run(control, b"1", tmp_path, "(sleep 100 & echo $!); exec sleep 100")
        [orphan] = _pids(running_out, 1)
        deadline = time.monotonic() + 10  # the subshell that started it exits right after
        while _parent(orphan) != server.pid and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _parent(orphan) == server.pid  # adopted by the server (it reaps it), not by init
        _, other_out = _run(control, b"2", tmp_path, "(sleep 0.01 & echo $!)")  # its orphan ends: a sweep
        short = _pids(other_out, 1)
        os.close(other_out)
        assert control.recv(64) == b"exited\x002\x000"
        assert _wait_gone(short) == []  # reaped by the server, not left a zombie for init
        control.send(b"release\x002")
        time.sleep(0.2)
        assert _state(orphan) not in (None, "Z")
        assert _state(running) not in (None, "Z")
    finally:
        control.close()  # minicode is gone: the running command and its orphan go too
        assert server.wait(timeout=30) == 0
    assert _wait_gone([running, orphan]) == []
    os.close(running_out)


def test_when_minicode_is_gone_the_orphans_of_every_command_go_too(tmp_path: Path) -> None:
    server, control = _start_server()
    assert control.recv(64) == b"ready"
    left: list[int] = []
    outputs = []
    for number, (command, count) in enumerate(_ESCAPES, 1):
        _, read_end = _run(control, str(number).encode(), tmp_path, command + "; exec sleep 100")
        outputs.append(read_end)
        left += _pids(read_end, count)
    control.close()
    assert server.wait(timeout=30) == 0
    assert _wait_gone(left) == []
    for read_end in outputs:
        os.close(read_end)


def test_a_daemon_of_a_command_that_ignores_sigterm_goes_when_minicode_is_gone(tmp_path: Path) -> None:
    """The command dies only by the SIGKILL after the grace; its daemon (a session of its own,
    ignoring SIGTERM and SIGHUP) is handed to the server only once the command is dead — the
    server waits for that before its last sweep instead of exiting and leaving it to init
    (found by r5-attack: 5 runs in 6 left the daemon behind a python command)."""
    server, control = _start_server()
    assert control.recv(64) == b"ready"
    command = ("setsid sh -c 'trap \"\" TERM HUP; sleep 100' >/dev/null & echo $!; exec python3 -c "
               "'import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(os.getpid(), flush=True); "
               "time.sleep(100)'")
    pid, read_end = _run(control, b"1", tmp_path, command)
    [daemon, ignoring] = _pids(read_end, 2)  # the command ignores SIGTERM from here on
    assert ignoring == pid
    try:
        control.close()  # kill -9 of minicode
        assert server.wait(timeout=30) == 0
        assert _wait_gone([pid, daemon], limit=3) == []
    finally:
        for left in (pid, daemon):
            with contextlib.suppress(ProcessLookupError):
                os.kill(left, signal.SIGKILL)
        os.close(read_end)
