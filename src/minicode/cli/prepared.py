"""What a frontend needs once the command line is understood: config, workspace, mode.

Its own module so that `minicode.cli` itself (the console entry) loads nothing for
`--version` and `--help`; a ``Value``, not a dataclass (``minicode.value``: the path to the
first frame and the first request imports no ``dataclasses``).
"""

from __future__ import annotations

from minicode.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

    from minicode.config import Config

__all__ = ["Prepared"]


class Prepared(Value):
    """What a frontend needs once the command line is understood: config, workspace, mode."""

    __slots__ = ("config", "workspace", "mode", "piped", "env")
    config: Config
    workspace: Path
    mode: str
    piped: str | None
    """One-shot: the text piped in with TASK (attached as context), else None."""
    env: Mapping[str, str]

    def __init__(self, config: Config, workspace: Path, mode: str, piped: str | None, env: Mapping[str, str]) -> None:
        put = object.__setattr__
        put(self, "config", config)
        put(self, "workspace", workspace)
        put(self, "mode", mode)
        put(self, "piped", piped)
        put(self, "env", env)
