"""Replacing a file inside an opened directory: temp file, fsync, rename — all by descriptor.

``WriteTarget`` is a file name in a directory ``fsroot.write_target`` opened (confined): read
what is there, replace it atomically, or remove it, without ever reopening a path by name.
Stdlib only; blocking.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from minicode.errors import ToolError
from minicode.tools.base import BeforeReplace, Replaced
from minicode.tools.fsresolve import CLOEXEC, NAME_MAX_BYTES, READ_FLAGS, Place, require_regular
from minicode.tools.truncate import SNAPSHOT_MAX_FILE_BYTES

__all__ = ["TEMP_SUFFIX", "WriteTarget", "is_temp_name", "temp_name"]

_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC


TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"\..*\.[0-9a-f]{12}\.tmp\Z", re.DOTALL)


def temp_name(name: str) -> str:
    """The name of a write's temp file next to ``name``: ``.<name>.<12 hex>.tmp``, the name cut
    so the whole stays a valid file name."""
    stem = name
    while len(os.fsencode(stem)) > NAME_MAX_BYTES - 20:
        stem = stem[: len(stem) // 2]
    return f".{stem}.{os.urandom(6).hex()}{TEMP_SUFFIX}"


def is_temp_name(name: str) -> bool:
    """Whether ``name`` has the exact shape ``temp_name`` gives."""
    return _TEMP_NAME.match(name) is not None


@dataclass(slots=True, eq=False)
class WriteTarget:
    """A file name in an opened directory, ready to be read, replaced or removed there.

    ``place`` is where it is (``place.exists``: something was there when resolved). Every
    operation works on ``dir_fd`` and ``name``; nothing is reopened by path.
    """

    dir_fd: int
    name: str
    place: Place
    on_temp: Callable[[str, str], None] | None
    before_replace: BeforeReplace | None = None

    def lstat(self) -> os.stat_result | None:
        """What is at the name now (not following a link), None if nothing."""
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise ToolError(f"cannot inspect {self.place.rel}: {e.strerror or e}") from e

    def read_existing(self, max_bytes: int) -> tuple[bytes, os.stat_result] | None:
        """The current content (None: no file) and its fstat, at most ``max_bytes`` + 1 bytes
        (so the caller sees it is larger). ``NotARegularFile`` when it is not a regular file."""
        try:
            fd = os.open(self.name, READ_FLAGS, dir_fd=self.dir_fd)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ToolError(f"{self.place.rel} became a symlink meanwhile; nothing was changed") from e
            raise ToolError(f"cannot read {self.place.rel}: {e.strerror or e}") from e
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            require_regular(st, self.place)
            os.set_blocking(fd, True)
            return f.read(max_bytes + 1), st

    def replace(self, data: bytes, mode: int | None = None) -> bool:
        """Replace the file with ``data`` atomically: a temp file in this directory, written,
        fsynced, given ``mode`` (default: the old mode, or the umask default for a new file),
        renamed over the name. Returns whether a file was there. On failure the temp file is
        removed, the old file kept.

        ``before_replace`` (undo snapshots) is told what is at the name right before the
        rename — read here, through this directory — and may refuse by raising ToolError."""
        old = self.lstat()
        if old is not None and not stat.S_ISREG(old.st_mode):
            what = "a directory" if stat.S_ISDIR(old.st_mode) else "a symlink" if stat.S_ISLNK(old.st_mode) else "not a regular file"
            raise ToolError(f"cannot write {self.place.rel}: it is {what} now; nothing was changed")
        tmp = temp_name(self.name)
        if self.on_temp is not None:
            self.on_temp(str(Path(self.place.rel).parent.as_posix()), tmp)
        try:
            # 0o666: the process umask decides a new file's mode, like an ordinary create.
            fd = os.open(tmp, _CREATE_FLAGS, 0o666, dir_fd=self.dir_fd)
        except OSError as e:
            raise ToolError(f"cannot create a temp file next to {self.place.rel}: {e.strerror or e}") from e
        try:
            try:
                _write_all(fd, data)
                if mode is None and old is not None:
                    mode = stat.S_IMODE(old.st_mode)
                if mode is not None:
                    os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            if self.before_replace is not None:
                self.before_replace(self._replaced(data))
            os.replace(tmp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except BaseException as e:
            _unlink_quietly(self.dir_fd, tmp)
            if isinstance(e, OSError):
                raise ToolError(f"cannot write {self.place.rel}: {e.strerror or e}; the old file is unchanged") from e
            raise
        _fsync_quietly(self.dir_fd)
        return old is not None

    def _replaced(self, new_data: bytes) -> Replaced:
        """What is at the name now: content (up to ``SNAPSHOT_MAX_FILE_BYTES``) and mode."""
        rel = self.place.rel
        try:
            fd = os.open(self.name, READ_FLAGS, dir_fd=self.dir_fd)
        except FileNotFoundError:
            return Replaced(rel, False, None, None, 0, new_data)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ToolError(f"{rel} became a symlink meanwhile; nothing was changed") from e
            raise ToolError(f"cannot read {rel} to keep a copy for /undo: {e.strerror or e}; nothing was changed") from e
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            require_regular(st, self.place)
            os.set_blocking(fd, True)
            mode = stat.S_IMODE(st.st_mode)
            if st.st_size > SNAPSHOT_MAX_FILE_BYTES:
                return Replaced(rel, True, None, mode, st.st_size, new_data)
            content = f.read(SNAPSHOT_MAX_FILE_BYTES + 1)
        if len(content) > SNAPSHOT_MAX_FILE_BYTES:  # it grew since the fstat
            return Replaced(rel, True, None, mode, len(content), new_data)
        return Replaced(rel, True, content, mode, len(content), new_data)

    def remove(self) -> bool:
        """Remove the file at the name (not a directory; a link itself, not its target).
        Returns whether something was removed."""
        try:
            os.unlink(self.name, dir_fd=self.dir_fd)
        except FileNotFoundError:
            return False
        except OSError as e:
            raise ToolError(f"cannot remove {self.place.rel}: {e.strerror or e}") from e
        _fsync_quietly(self.dir_fd)
        return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass  # already gone or never created; nothing else to clean


def _fsync_quietly(dir_fd: int) -> None:
    # Makes the rename durable; some file systems refuse to fsync directories, which is fine.
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # best effort: the data itself is already fsynced
