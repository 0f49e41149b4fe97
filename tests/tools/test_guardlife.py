"""This process's command guard server: one at a time, ended and reaped at exit; reaping it
never waits past its timeout."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Iterator

import pytest

from minicode.tools import guardclient, guardlife


@pytest.fixture
def server() -> Iterator[guardclient.GuardServer]:
    started = guardclient.GuardServer()
    yield started
    started.stop()
    if started._process.returncode is None:
        os.kill(started.pid, signal.SIGCONT)  # a test may have stopped it
    started.wait(10.0)


def _is_child(pid: int) -> bool:
    """``pid`` is still a child of this process (running or a zombie nobody reaped)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, IndexError, ValueError):
        return False


def test_wait_reaps_the_stopped_server(server: guardclient.GuardServer) -> None:
    server.stop()
    server.wait(10.0)
    assert server._process.returncode is not None
    assert not _is_child(server.pid)
    server.wait(10.0)  # again: nothing left to wait for, no error


def test_wait_gives_up_after_its_timeout_when_the_server_does_not_end(server: guardclient.GuardServer) -> None:
    os.kill(server.pid, signal.SIGSTOP)  # stopped: it cannot see its socket end
    server.stop()
    server.wait(0.05)
    assert server._process.returncode is None  # not reaped, and wait came back
    os.kill(server.pid, signal.SIGCONT)
    server.wait(10.0)
    assert server._process.returncode is not None


def test_two_waiters_at_once_both_return_and_the_server_is_reaped_once(server: guardclient.GuardServer) -> None:
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            server.wait(10.0)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    waiters = [threading.Thread(target=wait) for _ in range(2)]
    for waiter in waiters:
        waiter.start()
    server.stop()
    for waiter in waiters:
        waiter.join(30.0)
    assert errors == [] and not any(w.is_alive() for w in waiters)
    assert server._process.returncode is not None and not _is_child(server.pid)


def test_the_exit_hook_ends_and_reaps_this_processes_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guardlife, "_current", None)
    monkeypatch.setattr(guardlife, "_failed_starts", 0)
    server = guardlife.current()
    assert server is not None and guardlife.current() is server
    guardlife._stop_at_exit()
    assert server._process.returncode is not None
    assert not _is_child(server.pid)


def test_the_exit_hook_leaves_a_server_of_another_process_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guardlife, "_current", None)
    monkeypatch.setattr(guardlife, "_failed_starts", 0)
    server = guardlife.current()
    assert server is not None
    server.owner = -1  # as in a forked child: the parent's server is not its to end
    guardlife._stop_at_exit()
    assert server.alive and server._process.returncode is None
    server.stop()
    server.wait(10.0)
