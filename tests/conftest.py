"""Fixtures shared across the test packages."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.streams import FakeStream

RAM_DISK = Path("/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    """The tests' temporary directories (``tmp_path``: workspaces, HOMEs, session files) on a
    RAM disk where the machine has one that runs programs, unless ``TMPDIR`` or ``--basetemp``
    says where. minicode fsyncs every session record, snapshot and rules file it writes — on
    these machines' disk ~3 ms each, more under load, thousands of them per run — and no test is
    about the disk: on tmpfs the same calls happen and cost microseconds."""
    if os.environ.get("TMPDIR") or config.option.basetemp or not _runs_programs(RAM_DISK):
        return
    tempfile.tempdir = str(RAM_DISK)


def _runs_programs(directory: Path) -> bool:
    """A writable directory whose files can be executed (tests run scripts from ``tmp_path``;
    a container's /dev/shm is often mounted noexec)."""
    try:
        with tempfile.TemporaryDirectory(dir=directory) as d:
            script = Path(d) / "probe"
            script.write_text("#!/bin/sh\nexit 0\n")
            script.chmod(0o700)
            return subprocess.run([str(script)], timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME, no XDG_CONFIG_HOME, and stdin an empty non-terminal unless a test says otherwise."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr(sys, "stdin", FakeStream(""))
    return h


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory (resolved, as the session stores it)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture()
def fresh_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A new command guard server for this test (started by its first command), its failure
    count back at zero; stopped and waited for after."""
    from minicode.tools import guardlife

    if guardlife._current is not None:
        guardlife._current.stop()
    monkeypatch.setattr(guardlife, "_current", None)
    monkeypatch.setattr(guardlife, "_failed_starts", 0)
    yield
    if guardlife._current is not None:
        guardlife._current.stop()
        guardlife._current.wait(10.0)
