"""The current content of a file, for a context-aware approval preview (``describe``).

Blocking (call it through ``asyncio.to_thread``) and bounded: only regular files up to
``PREVIEW_MAX_FILE_BYTES`` that are not binary are read; anything else says why not, so
the preview can say it did not compare. The file is opened through ``fsroot`` (confined,
never by name; a FIFO is never blocked on).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from minicode.errors import ToolError
from minicode.tools.fsroot import NotARegularFile, PathMissing, open_file
from minicode.tools.truncate import BINARY_SNIFF_BYTES, PREVIEW_MAX_FILE_BYTES

__all__ = ["OldFile", "load_old_file", "text_of"]


@dataclass(frozen=True, slots=True)
class OldFile:
    """An existing file: its bytes, or None and a ``note`` saying why they were not read."""

    data: bytes | None
    note: str = ""


def load_old_file(workspace: Path, path: str, max_bytes: int = PREVIEW_MAX_FILE_BYTES) -> OldFile | None:
    """The file ``path`` names in ``workspace``, or None when nothing exists there.

    Raises ``ToolError`` only when the path itself is refused (outside the workspace)."""
    try:
        with open_file(workspace, path) as opened:
            if opened.stat.st_size > max_bytes:
                return OldFile(None, f"{opened.stat.st_size:,} bytes, too large to compare")
            data = opened.file.read(max_bytes + 1)
    except PathMissing:
        return None
    except NotARegularFile:
        return OldFile(None, "not a regular file")
    except ToolError as e:
        cause = e.__cause__
        if isinstance(cause, OSError):
            return OldFile(None, f"unreadable: {cause.strerror or cause}")
        raise
    except OSError as e:
        return OldFile(None, f"unreadable: {e.strerror or e}")
    if len(data) > max_bytes:  # it grew since the stat
        return OldFile(None, f"over {max_bytes:,} bytes, too large to compare")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return OldFile(None, "binary")
    return OldFile(data)


def text_of(workspace: Path, path: str) -> str | None:
    """The UTF-8 text of a workspace file as ``load_old_file`` reads it (confined, size-capped,
    binary refused), or None: missing, refused, too large, binary or not UTF-8. Blocking."""
    from minicode.errors import MinicodeError

    try:
        old = load_old_file(workspace, path)
    except MinicodeError:
        return None
    if old is None or old.data is None:
        return None
    try:
        return old.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
