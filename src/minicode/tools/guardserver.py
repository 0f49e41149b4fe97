"""The command guard of one minicode process: it starts every command and kills them all if
minicode dies.

minicode cleans up after every command itself (``tools.spawn``: the whole process group gets
SIGTERM, then SIGKILL). A ``kill -9`` of minicode skips that, so commands are started by this
small server, run as ``python -I -S <this file>`` once per minicode process (``guardclient``)
with its stdin a ``SOCK_SEQPACKET`` unix socket whose other end only minicode holds:

- each request (``run``) carries an id, the cwd, argv and the environment (values travel over
  the socket, never in an argv or a log) and, by ``SCM_RIGHTS``, the write end of the pipe the
  command's stdout and stderr go to (or three pipe ends, the command's own stdin, stdout and
  stderr: a hook). The server starts the command with ``posix_spawn`` (a
  vfork: no copy of the server, no Python in the child) in the cwd, as the leader of a session
  of its own (the command's process group), with the default disposition for every signal and
  none blocked, stdin from /dev/null and no other descriptor, the program looked up in the
  command's own ``PATH``. It answers ``started ID PID``, then ``exited ID STATUS`` (the raw
  wait status: exit code or signal, exactly) when it reaps it, or ``failed ID ERRNO`` when the
  command cannot start (no such program, the cwd is gone; ``ENOSYS``: no ``setsid`` here);
- ``release ID`` says minicode has cleaned up the command's group and forgotten it;
- when the socket ends (minicode is gone, however it died) or the server gets SIGTERM/SIGHUP,
  every group not yet released gets SIGTERM, ``GRACE_S``, then SIGKILL, and the server exits.

On Linux the server is a child subreaper (``PR_SET_CHILD_SUBREAPER``): whatever a command
leaves behind when its parent exits — a background job that left the command's group
(``set -m``), a daemon that called ``setsid``, a ``(sleep 9 &)`` — becomes the server's child,
not init's. It reaps them as they end (an init that reaps late, as in some containers, would
leave zombies that keep a finished group looking alive for minicode's whole grace period), and
kills those of a command that is over (``sweep``): when minicode releases the command, when one
of them ends (its own children have just become the server's), and when the server ends.

There is no ``PR_SET_PDEATHSIG`` (posix_spawn cannot set it): if the server alone is killed,
minicode sees its socket end, reports the running commands' status as unknown and kills their
groups itself. Stdlib only; imports nothing of minicode — it runs as a script with ``-I -S``,
so nothing on the user's ``PYTHONPATH`` or in site-packages runs in the process that starts
every command.
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import signal
import socket
import sys

__all__ = ["GRACE_S", "main"]

GRACE_S = 0.5
"""After minicode is gone: how long the groups get after SIGTERM before SIGKILL."""
_POLL_S = 0.02
_END_SWEEPS = 25
"""At the end, rounds of killing adopted orphans (a nested ``set -m`` hands over one level a round)."""
_PR_SET_CHILD_SUBREAPER = 36
_MAX_REQUEST = 1 << 20
_DEFAULT_SIGNALS = tuple(sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}))
"""Reset in the command: what minicode or the server ignore or handle never reaches it."""


class Server:
    def __init__(self, control: socket.socket, wake: int) -> None:
        self.control = control
        self.wake = wake
        self.groups: dict[bytes, int] = {}  # request id -> pgid, until minicode releases it
        self.running: dict[int, bytes] = {}  # pid of a command not yet reaped -> request id
        self.released: set[int] = set()  # sessions of released commands, until nothing runs
        self.stopping = False

    def send(self, *fields: bytes) -> None:
        try:
            self.control.send(b"\0".join(fields))
        except OSError:
            pass  # minicode is gone: the end-of-file that follows ends everything

    def serve(self) -> None:
        self.send(b"ready")
        while not self.stopping:
            ready, _, _ = select.select([self.control.fileno(), self.wake], [], [])
            if self.wake in ready:
                self.drain_wake()
                self.reap()
                self.stopping = _STOP_REQUESTED
            if self.control.fileno() in ready and not self.stopping:
                self.receive()
        self.end_all()

    def drain_wake(self) -> None:
        try:
            while os.read(self.wake, 512):
                pass
        except BlockingIOError:
            pass

    def receive(self) -> None:
        try:
            data, ancdata, _, _ = self.control.recvmsg(_MAX_REQUEST, socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, ancdata = b"", []
        fds = _received_fds(ancdata)
        try:
            if not data:
                self.stopping = True
                return
            fields = data.split(b"\0")
            if fields[0] == b"run" and len(fds) in (1, 3) and len(fields) >= 5:
                self.run(fields[1:], fds)
            elif fields[0] == b"release" and len(fields) == 2:
                session = self.groups.pop(fields[1], None)
                if session is not None:
                    self.released.add(session)
                    self.sweep()
        finally:
            for fd in fds:
                os.close(fd)

    def run(self, fields: list[bytes], pipes: list[int]) -> None:
        request, cwd, argc = fields[0], fields[1], fields[2]
        count = int(argc) if argc.isdigit() else 0
        argv = fields[3 : 3 + count]
        env = dict(entry.partition(b"=")[::2] for entry in fields[3 + count :])
        try:
            if not argv or len(argv) != count:
                raise ValueError("no command, or not all of it")
            os.chdir(cwd)  # the child starts where the server is (posix_spawn has no chdir)
            pid = os.posix_spawn(_program(argv[0], env), argv, env, file_actions=_actions(pipes),
                                 setsid=True, setsigmask=(), setsigdef=_DEFAULT_SIGNALS)  # fmt: skip
        except (OSError, NotImplementedError, ValueError) as e:
            code = e.errno if isinstance(e, OSError) and e.errno else errno.EINVAL
            if isinstance(e, NotImplementedError):  # no POSIX_SPAWN_SETSID here
                code = errno.ENOSYS
            self.send(b"failed", request, str(code).encode())
            return
        finally:
            os.chdir("/")  # never hold a workspace busy
        self.groups[request] = pid
        self.running[pid] = request
        self.send(b"started", request, str(pid).encode())

    def reap(self) -> None:
        adopted_ended = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            request = self.running.pop(pid, None)
            if request is not None:
                self.send(b"exited", request, str(status).encode())
            else:
                adopted_ended = True  # an orphan ended: its children are ours now
        if adopted_ended and not self.stopping:
            self.sweep()

    def sweep(self, everything: bool = False) -> None:
        """Kill what finished commands left behind: the adopted orphans (children that are
        no command) of a released command's session — of any session once no command runs
        (a ``setsid`` daemon has one of its own), and all of them when ``everything``."""
        live = set(self.groups.values())
        for pid in _children():
            if pid in self.running:
                continue
            found = _session_and_group(pid)
            if found is None:
                continue
            session, group = found
            if everything or (session not in live and (not live or session in self.released)):
                if group != os.getpgid(0):
                    _signal_group(group, signal.SIGKILL)
                _signal_pid(pid, signal.SIGKILL)
        if not live:
            self.released.clear()

    def end_all(self) -> None:
        """minicode is gone: nothing it started may outlive it."""
        groups = list(self.groups.values())
        for pgid in groups:
            _signal_group(pgid, signal.SIGTERM)
        waited = 0.0
        while waited < GRACE_S:
            self.reap()
            if not any(_signal_group(pgid, 0) for pgid in groups):
                break
            select.select([], [], [], _POLL_S)
            waited += _POLL_S
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)
        self.groups.clear()
        for _ in range(_END_SWEEPS):  # each round's dead hand their children over to us
            self.reap()
            # A command just sent SIGKILL may not be dead yet: its orphans (a daemon in a session
            # of its own) come to us only once it is, so wait for it as well as for them.
            if not self.running and not any(pid not in self.running for pid in _children()):
                break
            self.sweep(everything=True)
            select.select([], [], [], _POLL_S)
        self.reap()


def _received_fds(ancdata: list[tuple[int, int, bytes]]) -> list[int]:
    fds: list[int] = []
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds.extend(int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4))
    return fds


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except OSError:
        return False
    return True


def _signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _children() -> list[int]:
    """The server's children (its commands and the orphans it adopted); none where Linux's
    ``/proc/PID/task/TID/children`` cannot be read (the server has one thread)."""
    pid = os.getpid()
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(word) for word in f.read().split()]
    except (OSError, ValueError):
        return []


def _session_and_group(pid: int) -> tuple[int, int] | None:
    """(session id, process group id) of ``pid``, from ``/proc/PID/stat``; None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return int(fields[3]), int(fields[2])  # state, ppid, pgrp, session
    except (OSError, ValueError, IndexError):
        return None


def _become_subreaper() -> None:
    """``prctl(PR_SET_CHILD_SUBREAPER, 1)``. Without it (not Linux) orphans go to init."""
    try:
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                                ctypes.c_ulong(0))  # fmt: skip
    except (OSError, AttributeError):
        pass


def _actions(pipes: list[int]) -> list[tuple[int, ...] | tuple[int, int, str, int, int]]:
    """One pipe: stdin from /dev/null, stdout and stderr onto it. Three (a hook): its stdin,
    stdout and stderr, in that order (received descriptors are above 2: nothing is overwritten
    before it is copied). Every other descriptor of the server is close-on-exec (Python's
    default, ``MSG_CMSG_CLOEXEC`` for the received pipes), and the server was started with none
    of minicode's: the command gets nothing else."""
    if len(pipes) == 3:
        return [(os.POSIX_SPAWN_DUP2, pipes[0], 0), (os.POSIX_SPAWN_DUP2, pipes[1], 1),
                (os.POSIX_SPAWN_DUP2, pipes[2], 2)]  # fmt: skip
    return [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, pipes[0], 1),
            (os.POSIX_SPAWN_DUP2, pipes[0], 2)]  # fmt: skip


def _program(name: bytes, env: dict[bytes, bytes]) -> bytes:
    """``name`` looked up in the command's own ``PATH``, as ``execvp`` in it would."""
    if b"/" in name:
        return name
    denied: OSError | None = None
    for directory in map(os.fsencode, os.get_exec_path(env)):  # type: ignore[arg-type]
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            if os.access(candidate, os.X_OK):
                return candidate
            denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    raise denied or FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))


def _on_signal(signum: int, frame: object) -> None:
    global _STOP_REQUESTED
    if signum in (signal.SIGTERM, signal.SIGHUP):
        _STOP_REQUESTED = True


_STOP_REQUESTED = False


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl+C is minicode's to handle
    signal.pthread_sigmask(signal.SIG_SETMASK, ())  # a SIGCHLD blocked in minicode would hide exits
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    control = socket.socket(fileno=os.dup(0))  # minicode passes it as stdin
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # fd 0 stays a harmless descriptor
    os.close(null)
    control.setblocking(False)
    _become_subreaper()
    Server(control, wake_r).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
