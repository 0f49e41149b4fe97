"""Shared fixtures: a fresh workspace and a ToolContext for it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from minicode.tools.base import ToolContext


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    env = {"PATH": os.defpath + ":/usr/local/bin:/usr/bin:/bin", "HOME": str(ws), "LANG": "C.UTF-8"}
    return ToolContext(workspace=ws, env=env)
