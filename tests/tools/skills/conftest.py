"""A workspace and a home with skill directories, and a helper that writes one skill."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Places:
    workspace: Path
    home: Path

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home)}

    def skill(self, root: str, name: str, description: str = "Does things.", body: str = "Step one.\n",
              front_name: str | None = None) -> Path:
        """``root`` is ``.agents/skills`` (workspace) or ``~/...`` (home)."""
        base = self.home / root[2:] if root.startswith("~/") else self.workspace / root
        folder = base / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(f"---\nname: {front_name or name}\ndescription: {description}\n---\n{body}")
        return folder


@pytest.fixture
def places(tmp_path: Path) -> Places:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return Places((tmp_path / "ws").resolve(), (tmp_path / "home").resolve())
