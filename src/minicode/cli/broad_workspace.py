"""A workspace too broad to hand to the model without asking: ``/`` or a home directory.

Reads never ask (``read``, ``ls``, ``glob``, ``grep``), so the workspace is the limit of what
the model can see and send to the provider. Started in ``$HOME`` — a new terminal's default
directory — that would be ``~/.ssh``, tokens, mail, other projects. So when the start directory
is ``/``, ``$HOME`` or the directory holding the homes, minicode asks on the terminal first
(``y`` to go on) and, with nobody to ask, refuses with how to proceed; naming the directory
with ``-C DIR`` is that choice made explicitly (one warning line). Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["broad_reason", "confirm_workspace"]


def broad_reason(workspace: Path, home: str | None) -> str | None:
    """What ``workspace`` is when it is too broad ("your home directory (/home/ann)"), else None."""
    here = workspace.resolve()
    if here == Path(here.anchor):
        return f"the root directory {here}"
    if home and Path(home).is_absolute():
        own = Path(home).resolve()
        if here == own:
            return f"your home directory ({here})"
        if here == own.parent:
            return f"the directory that holds the home directories ({here})"
    return None


def confirm_workspace(workspace: Path, *, explicit: bool, env: Mapping[str, str],
                      ask: Callable[[str], str | None] | None, warn: Callable[[str], None]) -> None:
    """Go on, or raise ConfigError (exit 2) for a broad workspace nobody confirmed."""
    from minicode.errors import ConfigError

    why = broad_reason(workspace, env.get("HOME"))
    if why is None:
        return
    risk = "the model can read any file in it without asking (keys, tokens, other projects)"
    if explicit:
        warn(f"minicode: warning: the workspace is {why}: {risk}")
        return
    if ask is None:
        raise ConfigError(f"the workspace would be {why}, where {risk}; cd into a project directory, "
                          f"or name it with -C {workspace} to use it anyway")
    answer = ask(f"minicode: the workspace would be {why}: {risk}. Use it anyway? [y/N] ")
    if (answer or "").strip().lower() not in ("y", "yes"):
        raise ConfigError("not started: cd into a project directory (or name one with -C DIR)")
