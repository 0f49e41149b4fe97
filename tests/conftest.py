"""Fixtures shared across the test packages."""

from __future__ import annotations

import sys
from pathlib import Path

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
