"""A small private file replaced atomically: mode 0600 whatever the umask, written in full and
fsynced under a temporary name, then renamed over the old one (a reader sees the old file or
the new one, never a part). Blocking file I/O."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_private"]

_FILE_MODE = 0o600


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (see the module docstring); raises OSError."""
    tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, _FILE_MODE)
    try:
        try:
            os.fchmod(fd, _FILE_MODE)  # a restrictive umask must not matter, a loose one neither
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
