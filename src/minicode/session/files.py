"""Where session files live and which of them to continue: names only, no records."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from minicode.errors import SessionError

__all__ = ["SESSIONS_DIR", "UUID4", "is_session_id", "latest_session_id", "random_uuid", "session_path"]

SESSIONS_DIR = Path(".minicode") / "sessions"
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")

# A message record right after the header: records are one JSON object per line with
# "type" first, and inside JSON strings quotes are escaped, so this prefix is unambiguous.
_MESSAGE_LINE = b'\n{"type":"message"'
_HEAD_BYTES = 64 * 1024  # the header line is short; the first message starts within this


def is_session_id(text: str) -> bool:
    """Whether ``text`` is exactly a lowercase session UUID4 (a file name, not a prefix)."""
    return UUID4.fullmatch(text) is not None


def random_uuid() -> str:
    """A random (version 4) UUID in its usual text form: a new session's id."""
    return str(uuid.uuid4())


def session_path(workspace: Path, session_id: str) -> Path:
    return workspace / SESSIONS_DIR / f"{session_id}.jsonl"


def latest_session_id(workspace: Path) -> str | None:
    """The id of the most recently updated session file of this workspace that holds at
    least one message (a header-only file, left by a failed start, is no session to continue)."""
    directory = workspace / SESSIONS_DIR
    found: list[tuple[int, str]] = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise SessionError(f"cannot list sessions in {directory}: {e.strerror}") from e
    for entry in entries:
        stem = entry.name.removesuffix(".jsonl")
        if entry.name == stem or not UUID4.fullmatch(stem) or not entry.is_file(follow_symlinks=False):
            continue
        found.append((entry.stat(follow_symlinks=False).st_mtime_ns, stem))
    for _, stem in sorted(found, reverse=True):
        if _has_messages(session_path(workspace, stem)):
            return stem
    return None


def _has_messages(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return _MESSAGE_LINE in f.read(_HEAD_BYTES)
    except OSError:
        return False
