"""Commands die with minicode: the guard kills the whole group when minicode's end of its pipe
closes; a cancellation that arrives while the process is being created still kills it."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from minicode.tools.spawn import spawn_command, terminate_group


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(name))
    return found


async def _until(condition, limit: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit  # a hang guard, not a timing assertion
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.02)


async def test_closing_minicodes_end_kills_the_command_and_its_grandchildren(tmp_path: Path) -> None:
    proc = await spawn_command(["bash", "-c", "sleep 100 & sleep 100 & echo started; wait"], cwd=tmp_path, env=dict(os.environ))
    assert proc.stdout is not None and proc.stdin is not None
    assert await proc.stdout.readline() == b"started\n"
    assert len(group_members(proc.pid)) >= 4  # guard, bash, two sleeps
    proc.stdin.close()  # what minicode's death does to the guard's pipe
    await _until(lambda: group_members(proc.pid) == [])
    await proc.wait()


async def test_the_guard_reports_the_commands_exit_and_signal(tmp_path: Path) -> None:
    for command, expected in (("exit 3", 3), ("kill -TERM $$", -15), ("true", 0)):
        proc = await spawn_command(["bash", "-c", command], cwd=tmp_path, env=dict(os.environ))
        assert await proc.wait() == expected, command
        await terminate_group(proc)


async def test_a_command_that_cannot_start_says_so(tmp_path: Path) -> None:
    proc = await spawn_command(["no-such-program-xyz"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert proc.stdout is not None
    output = await proc.stdout.read()
    assert await proc.wait() == 127
    assert b"cannot start no-such-program-xyz" in output


def _running(token: bytes) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if token in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                continue
    return found


async def test_cancelled_while_spawning_the_process_is_killed_at_once(tmp_path: Path) -> None:
    token = f"sleep 31.{os.getpid()}"
    for _ in range(5):
        task = asyncio.ensure_future(spawn_command(["bash", "-c", token], cwd=tmp_path, env=dict(os.environ)))
        await asyncio.sleep(0)  # the spawn is under way
        task.cancel()
        try:
            proc = await task
        except asyncio.CancelledError:
            pass
        else:  # the spawn won the race: clean up as bash would
            await terminate_group(proc)
        await _until(lambda: _running(token.encode()) == [])  # asyncio alone would wait 31 s


def test_the_guard_starts_without_importing_minicode(tmp_path: Path) -> None:
    """Every command pays the guard's start-up: it runs as a script, so neither the minicode
    package nor its heavy imports (typing, re) load in it."""
    import subprocess
    import sys

    from minicode.tools.spawn import _guarded

    argv = _guarded(["true"])
    # stdin stays open until the guard ends: its end-of-file would mean "minicode is gone".
    guard = subprocess.Popen([argv[0], "-X", "importtime", *argv[1:]], cwd=tmp_path, stdin=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert guard.stderr is not None and guard.stdin is not None
    stderr = guard.stderr.read()
    assert guard.wait(timeout=30) == 0, stderr
    guard.stdin.close()
    imported = {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    assert "signal" in imported  # the guard's own imports are listed
    assert not {name for name in imported if name.startswith("minicode")}
    assert not {"typing", "re"} & imported
    assert argv[0] == sys.executable


def test_the_guard_refuses_an_empty_command(tmp_path: Path) -> None:
    import subprocess

    from minicode.tools.spawn import _guarded

    guard = subprocess.Popen(_guarded([]), cwd=tmp_path, stdin=subprocess.PIPE, start_new_session=True)
    assert guard.wait(timeout=30) == 2
    assert guard.stdin is not None
    guard.stdin.close()
