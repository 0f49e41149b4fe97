"""The current content of a file, for a context-aware approval preview (``describe``).

Blocking (call it through ``asyncio.to_thread``) and bounded: only regular files up to
``PREVIEW_MAX_FILE_BYTES`` that are not binary are read; anything else says why not, so
the preview can say it did not compare.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from minicode.tools.truncate import BINARY_SNIFF_BYTES, PREVIEW_MAX_FILE_BYTES

__all__ = ["OldFile", "load_old_file"]


@dataclass(frozen=True, slots=True)
class OldFile:
    """An existing file: its bytes, or None and a ``note`` saying why they were not read."""

    data: bytes | None
    note: str = ""


def load_old_file(path: Path, max_bytes: int = PREVIEW_MAX_FILE_BYTES) -> OldFile | None:
    """The file at ``path``, or None when nothing exists there."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return OldFile(None, f"unreadable: {e.strerror or e}")
    if not stat.S_ISREG(st.st_mode):
        # never open a FIFO or device: it could block the worker for good
        return OldFile(None, "not a regular file")
    if st.st_size > max_bytes:
        return OldFile(None, f"{st.st_size:,} bytes, too large to compare")
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        return OldFile(None, f"unreadable: {e.strerror or e}")
    if len(data) > max_bytes:  # it grew since the stat
        return OldFile(None, f"over {max_bytes:,} bytes, too large to compare")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return OldFile(None, "binary")
    return OldFile(data)
