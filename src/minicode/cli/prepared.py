"""What a frontend needs once the command line is understood: config, workspace, mode."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minicode.config import Config

__all__ = ["Prepared"]


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a frontend needs once the command line is understood: config, workspace, mode."""

    config: Config
    workspace: Path
    mode: str
    piped: str | None
    """One-shot: the text piped in with TASK (attached as context), else None."""
    env: Mapping[str, str]
