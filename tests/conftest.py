"""Fixtures shared across the test packages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.streams import FakeStream


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
