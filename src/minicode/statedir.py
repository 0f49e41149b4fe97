"""``.minicode/``: minicode's own state in a workspace (sessions, snapshots, local rules,
temp-file journals, input history), private and never committed.

Every writer calls ``ensure_state_dir`` before it creates anything below it, so whichever
creates the directory first — and again after a ``git clean -fdx`` or ``rm -rf .minicode``
in the middle of a session — it is mode 0700 and holds a ``.gitignore`` of ``*``: git ignores
all of it (the subdirectories' own ``.gitignore`` files stay, belt and braces).

It is a real directory of the workspace: a ``.minicode`` that is a symbolic link, or one of its
state directories (``sessions``, ``snapshots``, ``local``, ``tmp``, ``memory``) as a link, is
refused (``OSError`` naming the link), because a repository can ship such a link and minicode
would then write conversations and copies of workspace files wherever it points. Standard
library only.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["STATE_DIR", "ensure_state_dir"]

STATE_DIR = ".minicode"
_IGNORE = b"# minicode's own state (sessions, snapshots, local rules): never committed\n*\n"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_STATE_SUBDIRS = ("sessions", "snapshots", "local", "tmp", "memory")


def ensure_state_dir(workspace: Path) -> Path:
    """``workspace/.minicode`` (made 0700 if missing) with its ``.gitignore``; OSError when it
    cannot be made or is a link (see the module doc). An existing ``.gitignore`` (or a link in
    its place) is left alone."""
    root = workspace / STATE_DIR
    _refuse_link(root)
    root.mkdir(mode=0o700, exist_ok=True)
    _refuse_link(root)  # (made meanwhile)
    for name in _STATE_SUBDIRS:
        _refuse_link(root / name)
    try:
        fd = os.open(root / ".gitignore", _FLAGS, 0o600)
    except FileExistsError:
        return root
    try:
        os.write(fd, _IGNORE)
    finally:
        os.close(fd)
    return root


def _refuse_link(path: Path) -> None:
    """OSError(ELOOP) saying what to do when ``path`` is a symbolic link."""
    try:
        target = os.readlink(path)
    except OSError:
        return  # not a link (or not there)
    raise OSError(errno.ELOOP, f"{path} is a symbolic link (to {target}); minicode keeps its state only in a "
                               "real directory inside the workspace: remove the link", str(path))
