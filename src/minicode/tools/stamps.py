"""File stamps: what a file looked like when this session last read or wrote it.

``edit`` refuses a file that was not read or written in this session, or that changed
since (size, mtime and, when known, sha256). Hash policy: a stamp carries the sha256 of the
whole file only when the file is at most ``HASH_MAX_FILE_BYTES``; larger files get an empty
hash and are compared by size and mtime, because hashing 1 GB on every ``read`` would make
the first page of a huge file slow. ``edit`` refuses files above that size anyway, so the
full (size, mtime, hash) check holds for every file it can change. Every function here
blocks (stat, hashing): the tools call them inside their worker thread, never on the loop.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import BinaryIO

from minicode.errors import ToolError
from minicode.tools.base import FileStamp, ToolContext
from minicode.tools.fswrite import WriteTarget
from minicode.tools.truncate import HASH_MAX_FILE_BYTES

__all__ = ["check_fresh", "sha256_of", "stamp_open_file", "write_and_stamp"]

_HASH_CHUNK = 1024 * 1024


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stamp_open_file(f: BinaryIO, before: os.stat_result) -> FileStamp:
    """The stamp of a file ``read`` has open, ``before`` being its ``fstat`` taken before the
    page was read. Blocking: call it in the worker thread that reads the page.

    Hashing the same open file (not reopening the path) stamps the content the model was
    shown. If the file changed while it was read, the stamp keeps the state from before with
    no hash: it cannot match the file any more, so ``edit`` asks for a fresh read.
    """
    sha = ""
    if before.st_size <= HASH_MAX_FILE_BYTES:
        f.seek(0)
        digest = hashlib.sha256()
        while chunk := f.read(_HASH_CHUNK):
            digest.update(chunk)
        sha = digest.hexdigest()
    after = os.fstat(f.fileno())
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        return FileStamp(size=before.st_size, mtime_ns=before.st_mtime_ns, sha256="")
    return FileStamp(size=before.st_size, mtime_ns=before.st_mtime_ns, sha256=sha)


def write_and_stamp(target: WriteTarget, data: bytes, sha256: str | None = None) -> tuple[bool, FileStamp]:
    """``target.replace(data)`` plus the stamp of the written file: (it existed before, stamp).
    ``sha256`` is ``data``'s digest when the caller has it already. Blocking: run in a thread."""
    existed = target.replace(data)
    st = target.lstat()
    if st is None:  # removed right after the rename: stamp what we wrote; edit will see it is gone
        return existed, FileStamp(size=len(data), mtime_ns=0, sha256="")
    return existed, FileStamp(size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=sha256 or sha256_of(data))


def display_path(workspace: Path, path: Path) -> str:
    """``path`` (resolved) relative to the real workspace for messages (``.`` for the workspace itself)."""
    try:
        rel = path.relative_to(os.path.realpath(workspace))
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def check_fresh(ctx: ToolContext, path: Path, data: bytes, size: int, mtime_ns: int) -> None:
    """Raise ``ToolError`` unless ``path`` was read/written here and is unchanged since.

    ``data`` is the file's current content, ``size``/``mtime_ns`` its current stat. Hashes
    ``data``: call it in a worker thread.
    """
    shown = display_path(ctx.workspace, path)
    stamp = ctx.stamps.get(path)
    if stamp is None:
        raise ToolError(
            f"{shown} has not been read in this session; read it first "
            f"(read path={shown}) and then retry the edit with text copied from it" + _shown(ctx, path, data, size, mtime_ns)
        )
    changed = (size, mtime_ns) != (stamp.size, stamp.mtime_ns)
    if not changed and stamp.sha256:
        changed = sha256_of(data) != stamp.sha256
    if changed:
        raise ToolError(
            f"{shown} changed on disk since you last read it (size, mtime or content differ); "
            f"read it again (read path={shown}) and redo the edit against the current text"
            + _shown(ctx, path, data, size, mtime_ns)
        )


SHOWN_MAX_CHARS = 8000
"""The most of a file a refusal shows with the small-model assists on."""


def _shown(ctx: ToolContext, path: Path, data: bytes, size: int, mtime_ns: int) -> str:
    """With the small-model assists on: the file as it is now, appended to the refusal and
    stamped as read — a small model told to read first often edits again from memory; shown
    the text, it copies from it. "" otherwise, or for a file too large or not UTF-8."""
    if not ctx.read_before_write or len(data) > SHOWN_MAX_CHARS:
        return ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    ctx.stamps[path] = FileStamp(size=size, mtime_ns=mtime_ns, sha256=sha256_of(data))
    return f". Here it is now (so the edit may be retried at once):\n<file>\n{text}</file>"
