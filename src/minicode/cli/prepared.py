"""What a frontend needs once the command line is understood: config, workspace, mode.

Its own module so that `minicode.cli` itself (the console entry) loads nothing for
`--version` and `--help`; ``@frozen``, not a dataclass (``minicode.frozen``: the path to the
first frame and the first request imports no ``dataclasses``).
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

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
