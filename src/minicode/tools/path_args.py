"""The ``path`` argument of a call, settled before anyone is asked about it.

A model's path may say more than it means: ``newdir/../app.py`` is ``app.py``, an absolute
path inside the workspace is a relative one, ``a/./b`` is ``a/b``. The approval must describe
the file that will actually change (an overwrite of ``app.py`` with its diff, not the
"create" of a harmless-looking name), permission rules must match the file itself, and a
write must not create the directories that ``..`` segments walk through. So a call's path
is replaced by what it names (``fsroot.locate``: confined, symlinks resolved) before its
preview, its rule check and its approval. A path that cannot name a file (control
characters, NUL, outside the workspace) is refused by the same checks the tools run.
Blocking helpers; stdlib only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from minicode.errors import ToolError

__all__ = ["FILE_TOOLS", "path_problem", "settled_path"]

FILE_TOOLS = ("read", "write", "edit")
"""Tools whose ``path`` names one file (ls/glob/grep name a place to look, read-only)."""


def path_problem(args: Mapping[str, Any]) -> str | None:
    """Why the call's ``path`` argument cannot name anything (e.g. it holds a newline), or
    None: checked before the call is shown, so a hidden target never reaches a question."""
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    from minicode.tools.fsroot import check_path_text  # the registry loads tools lazily

    try:
        check_path_text(path)
    except ToolError as e:
        return str(e)
    return None


def settled_path(workspace: Path, path: str) -> str:
    """The workspace-relative path ``path`` names (``newdir/../app.py`` → ``app.py``), or
    ``path`` itself when it names the workspace or cannot be resolved (the tool says why
    when it runs). Blocking: it walks the tree."""
    from minicode.tools.fsroot import locate

    try:
        rel = locate(workspace, path).rel
    except ToolError:
        return path
    return path if rel == "." else rel
