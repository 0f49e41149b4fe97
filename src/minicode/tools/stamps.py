"""File stamps: what a file looked like when this session last read or wrote it.

``edit`` refuses a file that was not read or written in this session, or that changed
since (size, mtime and, when known, sha256). Hash policy: a stamp carries the sha256 of the
whole file only when the file is at most ``HASH_MAX_FILE_BYTES``; larger files get an empty
hash and are compared by size and mtime, because hashing 1 GB on every ``read`` would make
the first page of a huge file slow. ``edit`` refuses files above that size anyway, so the
full (size, mtime, hash) check holds for every file it can change. Hashing runs in a worker
thread so the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

from minicode.errors import ToolError
from minicode.tools.base import FileStamp, ToolContext
from minicode.tools.paths import display_path
from minicode.tools.truncate import HASH_MAX_FILE_BYTES

__all__ = ["check_fresh", "record_read", "stamp_for_written"]

_HASH_CHUNK = 1024 * 1024


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_sync(path: Path) -> FileStamp:
    st = os.stat(path)
    sha = _hash_file(path) if st.st_size <= HASH_MAX_FILE_BYTES else ""
    after = os.stat(path)
    if (after.st_size, after.st_mtime_ns) != (st.st_size, st.st_mtime_ns):
        # Changed while hashing: keep no hash so the next edit compares by size/mtime of
        # the later state rather than trusting a hash of a half-written file.
        return FileStamp(size=after.st_size, mtime_ns=after.st_mtime_ns, sha256="")
    return FileStamp(size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=sha)


async def record_read(ctx: ToolContext, path: Path) -> None:
    """Stamp ``path`` as read in this session."""
    ctx.stamps[path] = await asyncio.to_thread(_stamp_sync, path)


def stamp_for_written(path: Path, data: bytes) -> FileStamp:
    """The stamp of a file this session has just written with ``data``."""
    st = os.stat(path)
    return FileStamp(size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=hashlib.sha256(data).hexdigest())


def check_fresh(ctx: ToolContext, path: Path, data: bytes, size: int, mtime_ns: int) -> None:
    """Raise ``ToolError`` unless ``path`` was read/written here and is unchanged since.

    ``data`` is the file's current content, ``size``/``mtime_ns`` its current stat.
    """
    shown = display_path(ctx.workspace, path)
    stamp = ctx.stamps.get(path)
    if stamp is None:
        raise ToolError(
            f"{shown} has not been read in this session; read it first "
            f"(read path={shown}) and then retry the edit with text copied from it"
        )
    changed = (size, mtime_ns) != (stamp.size, stamp.mtime_ns)
    if not changed and stamp.sha256:
        changed = hashlib.sha256(data).hexdigest() != stamp.sha256
    if changed:
        raise ToolError(
            f"{shown} changed on disk since you last read it (size, mtime or content differ); "
            f"read it again (read path={shown}) and redo the edit against the current text"
        )
