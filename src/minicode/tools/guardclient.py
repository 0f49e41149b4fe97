"""minicode's side of the command guard server (``guardserver.py``): one per minicode process
(which server is current, started on first use, replaced and ended at exit: ``guardlife``).

``GuardServer.spawn`` sends one request (argv, cwd, environment and the write end of a fresh
pipe — or, for a command with stdin and stderr of its own, its ends of three pipes — over a
``SOCK_SEQPACKET`` socketpair) and returns a ``GuardedCommand`` once the server says the command
started. A daemon thread reads the server's answers (``started``, ``exited``, ``failed``) and
settles the futures on each command's own event loop, so the loop never blocks on the socket
and commands of different loops (tests) share the server.

Races handled here: an id is registered before its request is sent (an answer can never
arrive for an unknown command); a spawn cancelled before ``started`` marks the command
abandoned, and whichever comes second — the cancellation or ``started`` — kills its group; the
server keeps a group in its kill-on-exit set until the command is released, after minicode
cleaned it up.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

__all__ = ["GuardedCommand", "GuardServer", "GuardUnavailable", "StdIo"]

_SCRIPT = Path(__file__).resolve().with_name("guardserver.py")
"""Run as a script: importing it as ``minicode.tools.guardserver`` would load the package first."""
_ANSWER_S = 10.0
"""How long the server may take to start a command: milliseconds normally, ~0.5 s at load 14."""
_LOST = "minicode's command guard stopped unexpectedly"
_GONE_S = 1.0
"""A stopped spawn: how long it waits for the server's answer, then for the group to be gone."""
_GONE_POLL_S = 0.01


class GuardUnavailable(Exception):
    """No server took the request: the command certainly did not start (use another way)."""


@dataclass(slots=True, eq=False)
class _Pending:
    """One request to the server: its loop, its futures, and what the answers said so far."""

    loop: asyncio.AbstractEventLoop
    started: asyncio.Future[int]
    exited: asyncio.Future[int | None]
    pid: int | None = None
    abandoned: bool = False
    failed: bool = False
    """The server answered "failed" or is gone: no command to wait for."""
    notes: list[str] = field(default_factory=list)


def _settle(future: asyncio.Future[Any], value: Any = None, error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _returncode(status: int) -> int:
    """asyncio's convention: the exit code, or minus the signal that killed it."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@dataclass(frozen=True, slots=True)
class StdIo:
    """The stdin and stderr of a command that has its own (a hook: JSON in, the reason on stderr)."""

    stdin: asyncio.StreamWriter
    stderr: asyncio.StreamReader


class GuardedCommand:
    """A command the server started: its pid (= its process group), its output, its status."""

    def __init__(self, server: GuardServer, request: int, pid: int, stdout: asyncio.StreamReader,
                 transports: Sequence[asyncio.BaseTransport], exited: asyncio.Future[int | None], notes: list[str],
                 stdio: StdIo | None = None) -> None:  # fmt: skip
        self.pid = pid
        self.stdout = stdout
        self.stdio = stdio
        """A command started with ``own_stdio``: its stdin and stderr pipes."""
        self._server = server
        self._request = request
        self._transports = tuple(transports)
        self._exited = exited
        self._notes = notes

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    @property
    def finished(self) -> bool:
        """The command exited, or its status can no longer be known (the guard died)."""
        return self._exited.done()

    @property
    def lost(self) -> str | None:
        """Why the exit status is unknown, if it is."""
        return self._notes[0] if self._notes else None

    async def wait(self) -> int | None:
        return await asyncio.shield(self._exited)

    def release(self) -> None:
        """minicode has cleaned up the group: the server may forget it."""
        for transport in self._transports:
            transport.close()
        self._server.release(self._request)


class GuardServer:
    """The running server process, its socket and the thread that reads its answers."""

    def __init__(self) -> None:
        # An empty environment: nothing of minicode's (its API key) is in the server's. (A
        # Python that needs LD_LIBRARY_PATH fails to start it: commands then run under
        # guards of their own, which get the command's environment.)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_SCRIPT)], stdin=theirs.fileno(), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, cwd="/", env={}, start_new_session=True,
            )  # fmt: skip
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        self._socket = ours
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self.ready = False
        self.alive = True
        self.unsupported = False
        self.owner = os.getpid()
        threading.Thread(target=self._read, name="minicode-guard", daemon=True).start()

    @property
    def pid(self) -> int:
        return self._process.pid

    async def spawn(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], *,
                    own_stdio: bool = False) -> GuardedCommand:
        """Start ``argv``; ``OSError`` when it cannot, ``GuardUnavailable`` when no server took it.
        ``own_stdio``: stdin and stderr are pipes of their own too (``GuardedCommand.stdio``)."""
        loop = asyncio.get_running_loop()
        request = next(self._ids)
        pending = _Pending(loop, loop.create_future(), loop.create_future())
        payload = _request(request, argv, cwd, env)
        read_end, write_end = os.pipe()
        ours, theirs = [read_end], [write_end]
        if own_stdio:  # the command's ends in the order of its descriptors 0, 1, 2
            stdin_read, stdin_write = os.pipe()
            stderr_read, stderr_write = os.pipe()
            ours, theirs = [read_end, stdin_write, stderr_read], [stdin_read, write_end, stderr_write]
        with self._lock:
            self._pending[request] = pending
        try:
            socket.send_fds(self._socket, [payload], theirs)
        except OSError as e:  # the server is gone or stuck (full buffer), or the request is too big
            self._forget(request)
            for fd in ours:
                os.close(fd)
            raise GuardUnavailable(str(e)) from e
        finally:
            for fd in theirs:
                os.close(fd)
        files = [os.fdopen(fd, "wb" if index == 1 else "rb", buffering=0) for index, fd in enumerate(ours)]
        transports: list[asyncio.BaseTransport] = []
        try:
            pid = await self._started(pending.started)
            stdout = await _reader(loop, files[0], transports)
            stdio = None
            if own_stdio:
                stdin = await _writer(loop, files[1], transports)
                stdio = StdIo(stdin, await _reader(loop, files[2], transports))
        except BaseException as e:
            self._abandon(request)
            for transport in transports:
                transport.close()
            for file in files:
                file.close()
            if isinstance(e, asyncio.CancelledError):
                await _gone(pending)
            raise
        return GuardedCommand(self, request, pid, stdout, transports, pending.exited, pending.notes, stdio)

    async def _started(self, started: asyncio.Future[int]) -> int:
        """The pid, once the server says the command runs. A server that does not answer in
        ``_ANSWER_S`` (stopped, wedged) is killed — its commands are then reported lost — and
        the next command starts a new one; this one is not started again (it may have run)."""
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns the result and drops
            # a cancellation that lands as the answer arrives — a stop signal would go unheard
            # and the task would run on.
            async with asyncio.timeout(_ANSWER_S):
                return await asyncio.shield(started)
        except TimeoutError:
            started.cancel()
            with contextlib.suppress(OSError):
                self._process.kill()
            raise OSError(errno.ETIMEDOUT, f"{_LOST}: it did not answer in {_ANSWER_S:g} s") from None
        except asyncio.CancelledError:
            started.cancel()
            raise

    def release(self, request: int) -> None:
        self._forget(request)
        self._send(b"release\0%d" % request)

    def stop(self) -> None:
        """End the server as minicode's death would (its groups die); used by tests and at exit."""
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)

    def _send(self, message: bytes) -> None:
        with contextlib.suppress(OSError):
            self._socket.send(message)

    def _forget(self, request: int) -> None:
        with self._lock:
            self._pending.pop(request, None)

    def _abandon(self, request: int) -> None:
        """The spawn was cancelled (or failed after the request went out): kill it when it runs."""
        with self._lock:
            pending = self._pending.get(request)
            if pending is None:
                return
            pending.abandoned = True
            pid = pending.pid
        if pid is not None:
            _kill_group(pid)

    def _read(self) -> None:
        try:
            while True:
                select.select([self._socket], [], [])
                try:
                    data = self._socket.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    return
                self._answer(data.split(b"\0"))
        finally:
            self._lost()

    def _answer(self, fields: list[bytes]) -> None:
        if fields[0] == b"ready":
            self.ready = True
            return
        if len(fields) != 3:
            return
        kind, request, value = fields[0], int(fields[1]), fields[2]
        with self._lock:
            pending = self._pending.get(request)
            if pending is None:
                return
            if kind == b"started":
                pending.pid = int(value)
            abandoned = pending.abandoned
            if kind != b"started" and (abandoned or kind == b"failed"):
                self._pending.pop(request, None)
        if kind == b"started":
            if abandoned:
                _kill_group(int(value))
            self._call(pending, _settle, pending.started, int(value))
        elif kind == b"exited":
            if abandoned:
                _kill_group(pending.pid or 0)
                self._send(b"release\0%d" % request)
            self._call(pending, _settle, pending.exited, _returncode(int(value)))
        elif kind == b"failed":
            pending.failed = True
            code = int(value)
            if code == errno.ENOSYS:  # this system cannot start commands the server's way
                self.unsupported = True
                error: Exception = GuardUnavailable("posix_spawn cannot start a new session here")
            else:
                error = OSError(code, os.strerror(code))
            self._call(pending, _settle, pending.started, None, error)

    def _lost(self) -> None:
        """The socket ended: the server died (or was stopped). Every open request learns it."""
        self.alive = False
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        for entry in pending:
            entry.failed = True
            if entry.pid is None:
                lost: Exception = (
                    OSError(f"{_LOST} before the command started; it did not run or was stopped")
                    if self.ready else GuardUnavailable("the command guard did not start")
                )  # fmt: skip
                self._call(entry, _settle, entry.started, None, lost)
            else:
                entry.notes.append(_LOST)
                self._call(entry, _settle, entry.exited, None)
        self.wait(1.0)  # reap it (it is exiting or gone)

    def wait(self, timeout: float) -> None:
        """Reap the server, waiting at most ``timeout`` for it to end (the reader thread and
        the exit hook may both wait: ``Popen.wait`` takes that)."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self._process.wait(timeout=timeout)

    def close(self) -> None:
        """Drop a dead server's socket (from the loop's thread, which is the one sending)."""
        self._socket.close()

    @staticmethod
    def _call(pending: _Pending, function: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
            pending.loop.call_soon_threadsafe(function, *args)


async def _gone(pending: _Pending) -> None:
    """A spawn stopped before it returned (its command is abandoned: killed once the server
    says it started, at once if it did already): wait until that command's group is gone, at
    most ``_GONE_S`` for each step, so a stopped task leaves nothing running when it returns —
    as ``spawn.terminate_group`` waits for a command that did start. A second stop ends the
    wait; the kill stands either way."""
    waited = 0.0
    while pending.pid is None and not pending.failed and waited < _GONE_S:
        await asyncio.sleep(_GONE_POLL_S)  # the server's answer is on its way (milliseconds)
        waited += _GONE_POLL_S
    if pending.pid is None:
        return  # it never started, or the server is gone (it killed its groups then)
    waited = 0.0
    while _group_alive(pending.pid) and waited < _GONE_S:
        await asyncio.sleep(_GONE_POLL_S)
        waited += _GONE_POLL_S


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # the id went to someone else's process: ours is gone
    return True


async def _reader(loop: asyncio.AbstractEventLoop, pipe: Any,
                  transports: list[asyncio.BaseTransport]) -> asyncio.StreamReader:
    stream = asyncio.StreamReader(limit=2**16, loop=loop)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe)
    transports.append(transport)
    return stream


async def _writer(loop: asyncio.AbstractEventLoop, pipe: Any,
                  transports: list[asyncio.BaseTransport]) -> asyncio.StreamWriter:
    # FlowControlMixin is what asyncio's own subprocess stdin runs on: drain() waits while the pipe is full
    transport, protocol = await loop.connect_write_pipe(lambda: asyncio.streams.FlowControlMixin(loop=loop), pipe)
    transports.append(transport)
    return asyncio.StreamWriter(transport, protocol, None, loop)


def _request(request: int, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> bytes:
    """The ``run`` message; ``ValueError`` for what no exec can carry, as ``subprocess`` says."""
    if not argv:
        raise ValueError("an empty command")
    fields = [b"run", b"%d" % request, os.fsencode(cwd), b"%d" % len(argv)]
    fields += [os.fsencode(arg) for arg in argv]
    for key, value in env.items():
        if not key or "=" in key:
            raise ValueError(f"illegal environment variable name: {key!r}")
        fields.append(os.fsencode(key) + b"=" + os.fsencode(value))
    if any(b"\0" in item for item in fields):
        raise ValueError("embedded null byte")
    return b"\0".join(fields)
