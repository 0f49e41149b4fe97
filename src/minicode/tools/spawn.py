"""Starting and stopping a shell command so that nothing of it outlives minicode.

``spawn_command`` runs the command under ``cmdguard`` (a guard process that kills the
command's process group when minicode dies, even by SIGKILL) in a session of its own, with
stdout and stderr on one pipe. It is safe to cancel: a cancellation that arrives while the
process is being created still kills it before propagating (asyncio would otherwise wait for
the command to finish). ``terminate_group`` ends a command however it went: SIGTERM to the
group, a grace period, SIGKILL, reaped. Used by ``bash`` and the acceptance checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Mapping, Sequence


__all__ = ["TERM_GRACE_S", "spawn_command", "terminate_group"]

TERM_GRACE_S = 1.0
"""How long the group gets to exit after SIGTERM before SIGKILL."""
_POLL_S = 0.05
_GUARD_SCRIPT = Path(__file__).resolve().with_name("cmdguard.py")
"""Run as a script: importing it as ``minicode.tools.cmdguard`` would load the package first."""


def _guarded(argv: Sequence[str]) -> list[str]:
    """``argv`` under the guard, or as is where no Python executable is known (embedding)."""
    if not sys.executable:
        return list(argv)
    return [sys.executable, "-I", "-S", str(_GUARD_SCRIPT), "--", *argv]


async def spawn_command(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """Start ``argv`` guarded (see the module doc). Raises ``OSError`` when it cannot start."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *_guarded(argv), cwd=cwd, env=dict(env), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
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


async def terminate_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, give it a moment, SIGKILL what is left, reap the leader, and close
    the guard's pipe. The command was started in its own session: its pid is the group's id."""
    pgid = proc.pid
    try:
        if _signal_group(pgid, signal.SIGTERM):
            waited = 0.0
            while waited < TERM_GRACE_S and _signal_group(pgid, 0):
                await asyncio.sleep(_POLL_S)
                waited += _POLL_S
    finally:
        # Runs even if the wait above is cancelled a second time.
        _signal_group(pgid, signal.SIGKILL)
        if proc.stdin is not None:
            proc.stdin.close()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), TERM_GRACE_S)
