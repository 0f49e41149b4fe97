"""The workspace guard by name: which real path inside the workspace a model's path means.

The rules live in ``fsroot`` (one component at a time from the workspace root, symlinks
resolved only while they stay inside); this module gives their answer as a ``Path`` for
messages and identities. File I/O never goes through these names: tools open files with
``fsroot``, which applies the same rules to descriptors and so cannot be raced.
"""

from __future__ import annotations

import os
from pathlib import Path

from minicode.tools.fsroot import locate

__all__ = ["display_path", "is_inside", "resolve_in_workspace", "workspace_root"]


def workspace_root(workspace: Path) -> Path:
    """The workspace with every symlink resolved: the base of all containment checks."""
    return Path(os.path.realpath(workspace))


def is_inside(root: Path, path: Path) -> bool:
    """Whether ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


def display_path(workspace: Path, path: Path) -> str:
    """``path`` relative to the workspace for messages (``.`` for the workspace itself)."""
    root = workspace_root(workspace)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def resolve_in_workspace(workspace: Path, path: str, *, must_exist: bool = False) -> Path:
    """Resolve ``path`` (relative to ``workspace`` or absolute inside it) to a real path.

    Raises ``ToolError`` with an actionable message when the path is empty, invalid, too
    long, leaves the workspace in any way, or (with ``must_exist``) does not exist. A
    dangling symlink inside resolves to its (inside) target. The answer is a name: by the
    time it is used another process may have changed the tree, so never open it — use
    ``fsroot`` for that.
    """
    return locate(workspace, path, must_exist=must_exist).path
