"""The session file: append-only JSON Lines under ``<workspace>/.minicode/sessions/<id>.jsonl``.

Owns ids, creating, loading, finding the latest session and appending records. The file
stays open for appends, so an append costs the same whatever the history length; every
append is one ``write`` followed by ``fsync``. Loading tolerates exactly one kind of damage,
a torn last line (a crash mid-write), which is cut off with a warning; anything else is
refused with a ``SessionError`` and the file is left untouched.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from minicode.agent.deps import ToolOutcome
from minicode.agent.events import CheckResult
from minicode.agent.stats import TaskStats
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session import records
from minicode.tools.scrub import scrub

__all__ = [
    "MAX_FILE_BYTES",
    "SESSIONS_DIR",
    "LoadedSession",
    "SessionStore",
    "latest_session_id",
    "session_path",
    "validate_session_id",
]

SESSIONS_DIR = Path(".minicode") / "sessions"
MAX_FILE_BYTES = 64 * 1024 * 1024
_FILE_MODE = 0o600
_DIR_MODE = 0o700
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def validate_session_id(text: str) -> str:
    """The normalised (lowercase) id, or SessionError(exit_code=2): only a UUID4, never a path."""
    candidate = text.strip().lower()
    if not _UUID4.fullmatch(candidate):
        shown = text if len(text) <= 80 else text[:80] + "…"
        raise SessionError(
            f"invalid session id {shown!r}: expected a session UUID such as 1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
            exit_code=2,
        )
    return candidate


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
        if entry.name == stem or not _UUID4.fullmatch(stem) or not entry.is_file(follow_symlinks=False):
            continue
        found.append((entry.stat(follow_symlinks=False).st_mtime_ns, stem))
    for _, stem in sorted(found, reverse=True):
        if _has_messages(session_path(workspace, stem)):
            return stem
    return None


# A message record right after the header: records are one JSON object per line with
# "type" first, and inside JSON strings quotes are escaped, so this prefix is unambiguous.
_MESSAGE_LINE = b'\n{"type":"message"'
_HEAD_BYTES = 64 * 1024  # the header line is short; the first message starts within this


def _has_messages(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return _MESSAGE_LINE in f.read(_HEAD_BYTES)
    except OSError:
        return False


@dataclass(slots=True)
class LoadedSession:
    """What a session file holds, in order of appearance."""

    session_id: str
    created: str
    messages: list[Message] = field(default_factory=list)
    checkpoint: Checkpoint | None = None
    warnings: list[str] = field(default_factory=list)
    outcomes: dict[str, ToolOutcome] = field(default_factory=dict)  # tool_call_id -> how it ended


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class SessionStore:
    """An open session file accepting appends. Close it with ``close()``."""

    def __init__(self, path: Path, fd: int, size: int) -> None:
        self.path = path
        self._fd = fd
        self._size = size

    # --- opening -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        workspace: Path,
        *,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        now: Callable[[], str] = _now,
    ) -> tuple["SessionStore", str]:
        """A new session file with its header; returns the store and the new id."""
        session_id = validate_session_id(new_id())
        _ensure_dir(workspace / SESSIONS_DIR)
        path = session_path(workspace, session_id)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _FILE_MODE)
        except OSError as e:
            raise SessionError(f"cannot create session file {path}: {e.strerror}") from e
        store = cls(path, fd, 0)
        store._append(records.header_record(session_id, str(workspace), now()))
        return store, session_id

    @classmethod
    def open(cls, workspace: Path, session_id: str) -> tuple["SessionStore", LoadedSession]:
        """Load an existing session of this workspace and open it for appends."""
        session_id = validate_session_id(session_id)
        path = session_path(workspace, session_id)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            raise SessionError(f"no session {session_id} in this workspace ({workspace})", exit_code=2) from None
        except OSError as e:
            raise SessionError(f"cannot open session file {path}: {e.strerror}") from e
        try:
            loaded, good_size, total = _load(fd, path, workspace, session_id)
            if good_size < total:
                # Cut the torn tail so the next append starts on a clean line.
                os.ftruncate(fd, good_size)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, good_size), loaded

    # --- appending -----------------------------------------------------------------------

    def append_message(self, message: Message, outcome: ToolOutcome | None = None) -> None:
        self._append(records.message_record(message, outcome))

    def append_checkpoint(self, checkpoint: Checkpoint) -> None:
        self._append(records.checkpoint_record(checkpoint))

    def append_turn_end(self, status: str, stats: TaskStats, checks: Sequence[CheckResult] = ()) -> None:
        self._append(records.turn_end_record(status, stats, checks))

    def _append(self, record: dict[str, Any]) -> None:
        if self._fd < 0:
            raise SessionError(f"session file {self.path} is closed")
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        # Lone surrogates (undecodable file names, bytes from argv) would make the file
        # invalid UTF-8 or crash the save; they are stored as U+FFFD instead.
        try:
            data = line.encode("utf-8")
        except UnicodeEncodeError:
            data = scrub(line).encode("utf-8")
        if self._size + len(data) > MAX_FILE_BYTES:
            raise SessionError(
                f"session file {self.path} would exceed {MAX_FILE_BYTES // (1024 * 1024)} MiB; start a new session"
            )
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as e:
            raise SessionError(f"cannot write session file {self.path}: {e.strerror}") from e
        self._size += len(data)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


def _ensure_dir(directory: Path) -> None:
    try:
        directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
    except OSError as e:
        raise SessionError(f"cannot create the sessions directory {directory}: {e.strerror}") from e


def _load(fd: int, path: Path, workspace: Path, session_id: str) -> tuple[LoadedSession, int, int]:
    """Parse the whole file; returns (contents, size of the good part, file size)."""
    total = os.fstat(fd).st_size
    if total > MAX_FILE_BYTES:
        raise SessionError(f"session file {path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; refusing to load it")
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(0)
        data = f.read()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    loaded: LoadedSession | None = None
    for number, line in enumerate(lines, start=1):
        loaded = _apply(loaded, _parse_line(line, path, number), path, number, workspace, session_id)
    good = len(data) - len(tail)
    if tail:
        try:
            rec = json.loads(tail)
            if not isinstance(rec, dict):
                raise ValueError("not an object")
            loaded = _apply(loaded, rec, path, len(lines) + 1, workspace, session_id)
            good = len(data)  # complete record, only its newline missing
        except (ValueError, SessionError):
            if loaded is not None:
                loaded.warnings.append(f"ignored a torn last line in {path.name} ({len(tail)} bytes)")
    if loaded is None:
        raise SessionError(f"session file {path} has no header record; refusing to load it")
    if good == len(data) and tail:
        os.write(fd, b"\n")
        good += 1
        total += 1
    return loaded, good, total


def _parse_line(line: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        rec = json.loads(line)
    except ValueError as e:
        raise SessionError(f"session file {path} is corrupt at line {number}; refusing to load it") from e
    if not isinstance(rec, dict):
        raise SessionError(f"session file {path} is corrupt at line {number}; refusing to load it")
    return rec


def _apply(
    loaded: LoadedSession | None,
    rec: dict[str, Any],
    path: Path,
    number: int,
    workspace: Path,
    session_id: str,
) -> LoadedSession:
    kind = rec.get("type")
    if loaded is None:
        return _header(rec, path, workspace, session_id)
    try:
        if kind == "message":
            message = records.message_from_record(rec)
            outcome = records.outcome_from_record(rec)
            if outcome is not None and message.tool_call_id is not None:
                loaded.outcomes[message.tool_call_id] = outcome
            loaded.messages.append(message)
        elif kind == "checkpoint":
            loaded.checkpoint = records.checkpoint_from_record(rec)
        elif kind != "turn_end":
            raise ValueError(f"unknown record type {kind!r}")
    except (ValueError, TypeError) as e:
        raise SessionError(f"session file {path} is corrupt at line {number} ({e}); refusing to load it") from e
    return loaded


def _header(rec: dict[str, Any], path: Path, workspace: Path, session_id: str) -> LoadedSession:
    if rec.get("type") != "header":
        raise SessionError(f"session file {path} has no header record; refusing to load it")
    if rec.get("v") != records.FORMAT_VERSION:
        raise SessionError(f"session file {path} has unknown format version {rec.get('v')!r}; refusing to load it")
    if rec.get("id") != session_id:
        raise SessionError(f"session file {path} belongs to another session id; refusing to load it")
    if rec.get("workspace") != str(workspace):
        raise SessionError(f"session file {path} belongs to another workspace; refusing to load it")
    return LoadedSession(session_id=session_id, created=str(rec.get("created", "")))
