"""The workspace guard: turn a path the model sent into a real path inside the workspace.

Every file tool goes through ``resolve_in_workspace``. It accepts relative paths and
absolute paths inside the workspace and refuses anything that would end up outside it:
``..`` escapes, absolute paths elsewhere, and a symlink in any component (a file, a parent
directory, a dangling link) whose target lies outside. It walks the path component by
component, resolving each symlink as it meets it, so there is no component the check skips.
"""

from __future__ import annotations

import os
from pathlib import Path

from minicode.errors import ToolError

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

    Raises ``ToolError`` with an actionable message when the path is empty, leaves the
    workspace in any way, or (with ``must_exist``) does not exist. The result has every
    existing symlink resolved; a dangling symlink resolves to its (inside) target, so a
    write through it lands on the target, never beside the link.
    """
    root = workspace_root(workspace)
    if not path or not path.strip():
        raise ToolError("empty path; use a path relative to the workspace like src/x.py")
    if "\x00" in path:
        raise ToolError("the path contains a NUL byte")
    parts = _relative_parts(workspace, root, path)
    current = root
    for part in parts:
        current = _step(root, current, part, path)
    if must_exist and not current.exists():
        raise ToolError(f"{path}: no such file or directory (looked at {display_path(workspace, current)})")
    return current


def _outside(root: Path, path: str, why: str) -> ToolError:
    return ToolError(
        f"{path!r} {why}: paths must stay inside the workspace {root}; "
        "use a relative path like src/x.py"
    )


def _relative_parts(workspace: Path, root: Path, path: str) -> list[str]:
    """The components of ``path`` relative to the workspace root."""
    given = Path(path)
    if not given.is_absolute():
        return list(given.parts)
    # The workspace may be reached through a symlink (e.g. /tmp -> /private/tmp); accept
    # absolute paths spelled with either form.
    for base in (root, Path(os.path.abspath(workspace))):
        try:
            return list(given.relative_to(base).parts)
        except ValueError:
            continue
    # Last chance: the absolute path may reach the workspace through symlinks.
    real = Path(os.path.realpath(given))
    if is_inside(root, real):
        return list(real.relative_to(root).parts)
    raise _outside(root, path, "is an absolute path outside the workspace")


def _step(root: Path, current: Path, part: str, path: str) -> Path:
    """Move from ``current`` (real, inside) by one component, refusing any exit."""
    if part in ("", "."):
        return current
    if part == "..":
        if current == root:
            raise _outside(root, path, "leaves the workspace through '..'")
        return current.parent
    candidate = current / part
    if not os.path.islink(candidate):
        return candidate
    # realpath follows the whole chain, including a dangling link's target.
    target = Path(os.path.realpath(candidate))
    if not is_inside(root, target):
        raise _outside(root, path, f"goes through the symlink {part!r} that points outside to {target}")
    return target
