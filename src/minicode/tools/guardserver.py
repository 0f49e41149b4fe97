"""The command guard of one minicode process: it starts every command and kills them all if
minicode dies.

minicode cleans up after every command itself (``tools.spawn``: the whole process group gets
SIGTERM, then SIGKILL). A ``kill -9`` of minicode skips that, so commands are started by this
small server, run as ``python -I -S <this file>`` once per minicode process (``guardclient``)
with its stdin a ``SOCK_SEQPACKET`` unix socket whose other end only minicode holds:

- each request (``run``) carries an id, the cwd, argv and the environment (values travel over
  the socket, never in an argv or a log) and, by ``SCM_RIGHTS``, the write end of the pipe the
  command's stdout and stderr go to. The server starts the command with ``posix_spawn`` (a
  vfork: no copy of the server, no Python in the child) in the cwd, as the leader of a session
  of its own (the command's process group), with the default disposition for every signal and
  none blocked, stdin from /dev/null and no other descriptor, the program looked up in the
  command's own ``PATH``. It answers ``started ID PID``, then ``exited ID STATUS`` (the raw
  wait status: exit code or signal, exactly) when it reaps it, or ``failed ID ERRNO`` when the
  command cannot start (no such program, the cwd is gone; ``ENOSYS``: no ``setsid`` here);
- ``release ID`` says minicode has cleaned up the command's group and forgotten it;
- when the socket ends (minicode is gone, however it died) or the server gets SIGTERM/SIGHUP,
  every group not yet released gets SIGTERM, ``GRACE_S``, then SIGKILL, and the server exits.

There is no ``PR_SET_PDEATHSIG`` (posix_spawn cannot set it): if the server alone is killed,
minicode sees its socket end, reports the running commands' status as unknown and kills their
groups itself. Stdlib only; imports nothing of minicode — it runs as a script, not as
``minicode.tools.guardserver``, because importing the package would load ``minicode.tools``
(typing, re, …) — so it starts in a few milliseconds, once.
"""

from __future__ import annotations

import errno
import os
import select
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs more than the whole server
if TYPE_CHECKING:  # the same names, typed
    import signal
    import socket
else:  # the C modules under them: ``socket`` and ``signal`` import enum, selectors, … (~20 ms
    # of CPU at start-up, on every run that offers bash); all the server needs is here
    import _signal as signal
    import _socket as socket

__all__ = ["GRACE_S", "main"]

GRACE_S = 0.5
"""After minicode is gone: how long the groups get after SIGTERM before SIGKILL."""
_POLL_S = 0.02
_MAX_REQUEST = 1 << 20
_DEFAULT_SIGNALS = tuple(sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}))
"""Reset in the command: what minicode or the server ignore or handle never reaches it."""


class Server:
    def __init__(self, control: socket.socket, wake: int) -> None:
        self.control = control
        self.wake = wake
        self.groups: dict[bytes, int] = {}  # request id -> pgid, until minicode releases it
        self.running: dict[int, bytes] = {}  # pid of a command not yet reaped -> request id
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
            if fields[0] == b"run" and len(fds) == 1 and len(fields) >= 5:
                self.run(fields[1:], fds[0])
            elif fields[0] == b"release" and len(fields) == 2:
                self.groups.pop(fields[1], None)
        finally:
            for fd in fds:
                os.close(fd)

    def run(self, fields: list[bytes], output: int) -> None:
        request, cwd, argc = fields[0], fields[1], fields[2]
        count = int(argc) if argc.isdigit() else 0
        argv = fields[3 : 3 + count]
        env = dict(entry.partition(b"=")[::2] for entry in fields[3 + count :])
        try:
            if not argv or len(argv) != count:
                raise ValueError("no command, or not all of it")
            os.chdir(cwd)  # the child starts where the server is (posix_spawn has no chdir)
            pid = os.posix_spawn(_program(argv[0], env), argv, env, file_actions=_actions(output),
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
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request = self.running.pop(pid, None)
            if request is not None:
                self.send(b"exited", request, str(status).encode())

    def end_all(self) -> None:
        """minicode is gone: nothing it started may outlive it."""
        groups = list(self.groups.values())
        for pgid in groups:
            _signal_group(pgid, signal.SIGTERM)
        waited = 0.0
        while waited < GRACE_S:
            self.reap()
            if not any(_signal_group(pgid, 0) for pgid in groups):
                return
            select.select([], [], [], _POLL_S)
            waited += _POLL_S
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)
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


def _actions(output: int) -> list[tuple[int, ...] | tuple[int, int, str, int, int]]:
    """stdin from /dev/null, stdout and stderr onto minicode's pipe. Every other descriptor of
    the server is close-on-exec (Python's default, ``MSG_CMSG_CLOEXEC`` for the received pipe),
    and the server was started with none of minicode's: the command gets nothing else."""
    return [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, output, 1),
            (os.POSIX_SPAWN_DUP2, output, 2)]  # fmt: skip


def _program(name: bytes, env: dict[bytes, bytes]) -> bytes:
    """``name`` looked up in the command's own ``PATH``, as ``execvp`` in it would."""
    if b"/" in name:
        return name
    denied: OSError | None = None
    for directory in os.get_exec_path(env):  # type: ignore[arg-type]  # bytes keys are accepted
        candidate = os.path.join(os.fsencode(directory), name)
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
    Server(control, wake_r).serve()
    return 0


if __name__ == "__main__":
    os._exit(main())  # nothing to flush: skip the interpreter teardown (minicode may wait for it)
