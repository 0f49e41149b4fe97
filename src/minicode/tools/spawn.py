"""Starting and stopping a shell command so that nothing of it outlives minicode.

``spawn_command`` starts the command through this process's command guard server
(``tools.guardlife`` / ``guardclient`` / ``guardserver.py``: one long-lived process that forks every command
into a session of its own and kills every group when minicode dies, even by SIGKILL), with
stdout and stderr on one pipe and stdin from /dev/null. Where no server can run (it fails to
start twice, or the request cannot be sent) each command runs under its own guard instead
(``cmdguard.py``, started as ``python cmdguard.py -- ARGV``), with the same guarantees and a
Python start-up per command. It is safe to cancel: a cancellation that arrives while the
command is being started still kills it. ``terminate_group`` ends a command however it went:
SIGTERM to the group, a grace period, SIGKILL, reaped. Used by ``bash`` and the acceptance
checks. ``spawn_piped`` starts a command that talks through stdin, stdout and stderr of its own
(a hook: JSON in, a decision out, the reason on stderr) the same two ways: by the server (three
pipes instead of one), else under ``cmdguard.py --stdio``, whose lifeline is minicode itself (a
pidfd); a ``kill -9`` of minicode ends it either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol, Sequence

from minicode.tools import guardclient, guardlife

__all__ = ["TERM_GRACE_S", "PipedCommand", "RunningCommand", "spawn_command", "spawn_piped", "terminate_group"]

TERM_GRACE_S = 1.0
"""How long the group gets to exit after SIGTERM before SIGKILL."""
_POLL_S = 0.05
_GUARD_SCRIPT = Path(__file__).resolve().with_name("cmdguard.py")
"""Run as a script: importing it as ``minicode.tools.cmdguard`` would load the package first."""


class RunningCommand(Protocol):
    """A started command: ``pid`` is also its process group's id."""

    pid: int
    stdout: asyncio.StreamReader

    @property
    def returncode(self) -> int | None: ...

    @property
    def finished(self) -> bool:
        """It exited, or its status can no longer be known."""
        ...

    @property
    def lost(self) -> str | None:
        """Why its exit status is unknown, if it is."""
        ...

    async def wait(self) -> int | None: ...

    def release(self) -> None:
        """Its group is cleaned up: let its guard go."""
        ...


async def spawn_command(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> RunningCommand:
    """Start ``argv`` guarded (see the module doc). Raises ``OSError`` when it cannot start."""
    server = guardlife.current()
    if server is not None:
        try:
            return await server.spawn(argv, cwd, env)
        except guardclient.GuardUnavailable:
            pass  # no server took it: it did not start, so starting it another way is safe
    return _GuardProcess(await _spawn_under_own_guard(argv, cwd=cwd, env=env))


@dataclass(frozen=True, slots=True)
class PipedCommand:
    """A started command with pipes of its own for stdin, stdout and stderr."""

    command: RunningCommand
    """Its status and stdout; ``terminate_group(command)`` ends it."""
    stdin: asyncio.StreamWriter
    stderr: asyncio.StreamReader


async def spawn_piped(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> PipedCommand:
    """Start ``argv`` guarded like ``spawn_command``, but with pipes for stdin, stdout and stderr
    (a hook): through the guard server, else under ``cmdguard --stdio``. Raises ``OSError`` when
    it cannot start."""
    server = guardlife.current()
    if server is not None:
        try:
            started = await server.spawn(argv, cwd, env, own_stdio=True)
        except guardclient.GuardUnavailable:
            pass  # as in spawn_command: it did not start
        else:
            assert started.stdio is not None
            return PipedCommand(started, started.stdio.stdin, started.stdio.stderr)
    proc = await _spawn_under_own_guard(argv, cwd=cwd, env=env, stdio=True)
    assert proc.stdin is not None and proc.stderr is not None
    return PipedCommand(_GuardProcess(proc), proc.stdin, proc.stderr)


class _GuardProcess:
    """A command under its own ``cmdguard`` (the fallback), seen as a ``RunningCommand``."""

    lost = None

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        self._proc = proc
        self.pid = proc.pid
        self.stdout = proc.stdout

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    @property
    def finished(self) -> bool:
        return self._proc.returncode is not None

    async def wait(self) -> int | None:
        return await self._proc.wait()

    def release(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()  # the guard's end-of-file: it ends what is left


def _guarded(argv: Sequence[str], stdio: bool = False) -> list[str]:
    """``argv`` under its own guard, or as is where no Python executable is known (embedding)."""
    if not sys.executable:
        return list(argv)
    return [sys.executable, "-I", "-S", str(_GUARD_SCRIPT), *(["--stdio"] if stdio else []), "--", *argv]


async def _spawn_under_own_guard(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                                 stdio: bool = False) -> asyncio.subprocess.Process:
    errors = asyncio.subprocess.PIPE if stdio else asyncio.subprocess.STDOUT
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *_guarded(argv, stdio), cwd=cwd, env=dict(env), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=errors, start_new_session=True,
        )  # fmt: skip
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        proc = await _spawned(spawn)
        if proc is not None:
            _signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), TERM_GRACE_S)
        raise


async def _spawned(spawn: asyncio.Future[asyncio.subprocess.Process]) -> asyncio.subprocess.Process | None:
    """The process a cancelled spawn created anyway (creating it takes milliseconds)."""
    try:
        return await spawn
    except (OSError, asyncio.CancelledError):
        return None


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # the pgid was recycled by someone else's process: not ours to signal
    return True


async def terminate_group(proc: RunningCommand) -> None:
    """SIGTERM the group, give it a moment, SIGKILL what is left, wait for the leader's status,
    and release the command's guard. The command leads its own session: its pid is the group's id."""
    pgid = proc.pid
    try:
        try:
            if _signal_group(pgid, signal.SIGTERM):
                waited = 0.0
                while waited < TERM_GRACE_S and _signal_group(pgid, 0):
                    await asyncio.sleep(_POLL_S)
                    waited += _POLL_S
        finally:
            # Runs even if the wait above is cancelled a second time.
            _signal_group(pgid, signal.SIGKILL)
        # asyncio.timeout, not wait_for: Python 3.11's wait_for drops a cancellation that
        # lands as the wait ends, and a stop signal at that moment would go unheard.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(TERM_GRACE_S):
                await proc.wait()
    finally:
        proc.release()
