"""``.minicode/``: minicode's own state in a workspace (sessions, snapshots, local rules,
temp-file journals, input history), private and never committed.

Every writer calls ``ensure_state_dir`` before it creates anything below it, so whichever
creates the directory first — and again after a ``git clean -fdx`` or ``rm -rf .minicode``
in the middle of a session — it is mode 0700 and holds a ``.gitignore`` of ``*``: git ignores
all of it (the subdirectories' own ``.gitignore`` files stay, belt and braces). Standard
library only.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["STATE_DIR", "ensure_state_dir"]

STATE_DIR = ".minicode"
_IGNORE = b"# minicode's own state (sessions, snapshots, local rules): never committed\n*\n"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def ensure_state_dir(workspace: Path) -> Path:
    """``workspace/.minicode`` (made 0700 if missing) with its ``.gitignore``; OSError when it
    cannot be made. An existing ``.gitignore`` (or a link in its place) is left alone."""
    root = workspace / STATE_DIR
    root.mkdir(mode=0o700, exist_ok=True)
    try:
        fd = os.open(root / ".gitignore", _FLAGS, 0o600)
    except FileExistsError:
        return root
    try:
        os.write(fd, _IGNORE)
    finally:
        os.close(fd)
    return root
