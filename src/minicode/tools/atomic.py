"""Atomic file replacement shared by ``write`` and ``edit``.

A temp file in the target's directory is written, fsynced, given the old file's mode (or
the umask-derived default for a new file), then renamed over the target. On any failure
the temp file is removed and the old file is left exactly as it was.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from minicode.errors import ToolError

__all__ = ["atomic_write"]


def atomic_write(path: Path, data: bytes) -> bool:
    """Replace ``path`` with ``data`` atomically. Returns True if the file existed before.

    Blocking: call it through ``asyncio.to_thread``. Raises ``ToolError`` (cause kept).
    """
    try:
        old_mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        old_mode = None
    except OSError as e:
        raise ToolError(f"cannot inspect {path}: {e.strerror or e}") from e
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        # 0o666 lets the process umask decide a new file's mode, like an ordinary create.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        raise ToolError(f"cannot create a temp file next to {path}: {e.strerror or e}") from e
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if old_mode is not None:
                os.fchmod(fd, old_mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as e:
        _remove_quietly(tmp)
        if isinstance(e, OSError):
            raise ToolError(f"cannot write {path}: {e.strerror or e}; the old file is unchanged") from e
        raise
    _fsync_dir(path.parent)
    return old_mode is not None


def _remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass  # already gone or never created; nothing else to clean


def _fsync_dir(directory: Path) -> None:
    # Makes the rename durable; some filesystems refuse to open directories, which is fine.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # best effort: the data itself is already fsynced
    finally:
        os.close(fd)
