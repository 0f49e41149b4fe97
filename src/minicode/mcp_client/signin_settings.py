"""Whether and where a remote MCP server's OAuth sign-in happens (``signin.py``): decided by
the frontend (is a person there?) and the environment (``$HOME``, a graphical browser).
Standard library only: read before the SDK is loaded."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Mapping

__all__ = ["SignInSettings"]


@dataclass(frozen=True, slots=True)
class SignInSettings:
    """Whether and where a remote server's OAuth sign-in happens (``signin.py``)."""

    attended: bool = False
    """A person is there to sign in (a terminal; not ``--yes``, ``--output json`` or a pipe)."""
    home: str | None = None
    """``$HOME``: the tokens are kept under ``~/.minicode/mcp-oauth/`` (None: this run only)."""
    open_browser: bool = False
    """Open the address in a browser too (it is shown either way)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, attended: bool) -> SignInSettings:
        """``$HOME``, and a browser only where one opens a window: on Linux without a display
        ``webbrowser`` would run a text browser in this terminal, under the full screen."""
        graphical = sys.platform in ("darwin", "win32") or any(
            env.get(name) for name in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"))
        return cls(attended=attended, home=env.get("HOME"), open_browser=graphical)
