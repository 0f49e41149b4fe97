"""The guard process of one command: it starts the command and kills it if minicode dies.

minicode cleans up after every command itself (``tools.spawn``: the whole process group gets
SIGTERM, then SIGKILL). A ``kill -9`` of minicode skips that, so commands are started by the
command guard server (``guardserver.py``, one per minicode process); where no server can run
(it failed to start, or a request is too big for its socket) a command runs under this small
guard instead, started as ``python -I -S <this file> -- ARGV...`` in a session of its
own (the guard leads the process group; the command and everything it starts belong to it):

- the command is forked from the guard with ``PR_SET_PDEATHSIG`` = SIGKILL (Linux) and
  stdin from /dev/null, then exec'd;
- the guard's own stdin is a pipe whose other end only minicode holds, and never writes to:
  when it reads end-of-file, minicode is gone (or gave up on the command) and the guard
  SIGTERMs the group, gives it ``GRACE_S``, then SIGKILLs it — itself included;
- when the command ends, the guard ends the same way: the same exit code, or killed by the
  same signal, so minicode reports exactly what the command did.

``--stdio`` (an MCP server, ``minicode.mcp_client.connect``): the command keeps the guard's stdin,
stdout and stderr (the protocol's pipes, which minicode holds), and the guard's lifeline is
minicode itself instead of its stdin: a pidfd of its parent (Linux), else its parent id
looked at every ``_POLL_S``; when minicode is gone, the group ends as above, and when the server
exits, whatever it left in the group gets SIGTERM (an ``npx`` wrapper's node child).

The guard ignores SIGTERM/SIGINT/SIGHUP itself (they are meant for the command: minicode's
SIGTERM to the group must not orphan the command's status). Stdlib only; imports nothing of
minicode — it runs as a script, not as ``minicode.tools.cmdguard``, because importing the
package would load ``minicode.tools`` (typing, re, …: ~20 ms on every command) — so it starts
in a few milliseconds.
"""

from __future__ import annotations

import os
import select
import signal
import sys

__all__ = ["GRACE_S", "die_with", "main"]

GRACE_S = 0.5
"""After minicode is gone: how long the group gets after SIGTERM before SIGKILL."""
_POLL_S = 0.1  # only where pidfd_open is missing: how often to look at the command
_PR_SET_PDEATHSIG = 1


def die_with(parent: int) -> None:
    """SIGKILL this process when ``parent`` (the thread that started it) dies (Linux);
    elsewhere a no-op. Here: the forked child and its guard; also the grep worker."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the guard died before the request took effect
        os._exit(137)


def _start(argv: list[str], stdio: bool = False) -> int:
    guard = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: becomes the command
        # What the guard ignores, and what Python itself ignores (SIGPIPE, SIGXFSZ), would be
        # inherited through exec: the command gets the defaults, as subprocess gives them.
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        die_with(guard)
        if not stdio:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, f"minicode: cannot start {argv[0]}: {e.strerror or e}\n".encode())
        os._exit(127)
    os._exit(127)  # not reached: execvp does not return


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: look every _POLL_S instead
        return -1


def _wait(pid: int, parent: int | None = None) -> int | None:
    """Block until the command exits (its wait status) or minicode is gone (None): stdin
    ends, or with ``parent`` (``--stdio``) that process exits."""
    pidfd = _pidfd(pid)
    lifeline = 0 if parent is None else _pidfd(parent)
    watched = [fd for fd in (lifeline, pidfd) if fd >= 0]
    polling = pidfd < 0 or lifeline < 0
    if parent is not None and os.getppid() != parent:
        return None  # minicode died before its pidfd was opened
    while True:
        ready, _, _ = select.select(watched, [], [], _POLL_S if polling else None)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if parent is None and 0 in ready and not os.read(0, 512):
            return None  # minicode is gone: nobody will clean up but us
        if parent is not None and ((lifeline >= 0 and lifeline in ready) or os.getppid() != parent):
            return None  # minicode exited (a pidfd is readable once its process ended)


def _end_group() -> None:
    group = os.getpgid(0)
    try:
        os.killpg(group, signal.SIGTERM)
    except OSError:
        pass
    select.select([], [], [], GRACE_S)
    os.killpg(group, signal.SIGKILL)  # the guard too: nothing of the command outlives this


def _relay(status: int) -> int:
    """Leave the way the command left: its exit code, or killed by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be (and are) default
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status)


def main(argv: list[str]) -> int:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    stdio = argv[:1] == ["--stdio"]
    if stdio:
        argv = argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        return 2
    parent = os.getppid()
    pid = _start(argv, stdio)
    if stdio:  # the protocol's pipes are the command's: the guard keeps no copy (an end-of-file must get through)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
    status = _wait(pid, parent if stdio else None)
    if status is None:
        _end_group()
        return 137
    if stdio:  # the server is gone; what it started is not left behind (the guard itself ignores SIGTERM)
        try:
            os.killpg(os.getpgid(0), signal.SIGTERM)
        except OSError:
            pass
    return _relay(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
