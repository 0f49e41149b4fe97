"""The session file: append-only JSON Lines under ``<workspace>/.minicode/sessions/<id>.jsonl``.

Owns ids, creating, opening, finding the latest session and appending records. The file
stays open for appends, so an append costs the same whatever the history length; every
append is one ``write`` followed by ``fsync``. Reading is ``session.reader``'s: it tolerates
exactly one kind of damage, a torn last line (a crash mid-write), which ``open`` cuts off
with a warning; anything else — a damaged message anywhere in the file too — is refused with
a ``SessionError`` before anything is written, and the file is left untouched. The open file also serves the messages ``MessageLog`` parses on demand.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from minicode.statedir import ensure_state_dir
from minicode.agent.deps import ToolOutcome
from minicode.agent.events import CheckResult
from minicode.agent.stats import TaskStats
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.provider.types import Message
from minicode.session import records
from minicode.session.files import SESSIONS_DIR, UUID4, is_session_id, latest_session_id, random_uuid, session_path
from minicode.session.log import FileReader, Slot
from minicode.session.reader import LoadedSession, read_session
from minicode.tools.todo_list import TodoList
from minicode.session.records import SessionSettings
from minicode.tools.scrub import scrub

__all__ = [
    "MAX_FILE_BYTES",
    "SESSIONS_DIR",
    "LoadedSession",
    "SessionStore",
    "reading_session",
    "is_session_id",
    "latest_session_id",
    "random_uuid",
    "session_path",
    "validate_session_id",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
_FILE_MODE = 0o600
_DIR_MODE = 0o700


def validate_session_id(text: str) -> str:
    """The normalised (lowercase) id, or SessionError(exit_code=2): only a UUID4, never a path."""
    candidate = text.strip().lower()
    if not UUID4.fullmatch(candidate):
        shown = text if len(text) <= 80 else text[:80] + "…"
        raise SessionError(
            f"invalid session id {shown!r}: expected a session UUID such as 1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
            exit_code=2,
        )
    return candidate


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class SessionStore:
    """An open session file accepting appends. Close it with ``close()``."""

    def __init__(self, path: Path, fd: int, size: int) -> None:
        self.path = path
        self._fd = fd
        self._size = size  # the file's length up to its last complete record
        self._damaged: str | None = None  # why no more appends are made (see _cut_back)
        self._lock_fd = -1  # holds the one-minicode-per-session lock (see _lock)
        self._lines = 0  # records in the file (the line number of the last one)
        self._relinked = False  # appends go to a copy the readers of the first file do not see

    # --- opening -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        workspace: Path,
        *,
        new_id: Callable[[], str] = random_uuid,
        now: Callable[[], str] = _now,
    ) -> tuple["SessionStore", str]:
        """A new session file with its header; returns the store and the new id."""
        session_id = validate_session_id(new_id())
        _ensure_dir(workspace, workspace / SESSIONS_DIR)
        path = session_path(workspace, session_id)
        try:
            # read-write: the conversation's messages are read back from it (``file_reader``)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _FILE_MODE)
        except OSError as e:
            raise SessionError(f"cannot create session file {path}: {e.strerror}") from e
        store = cls(path, fd, 0)
        try:
            store._lock_fd = _lock(path, session_id)
            store._append(records.header_record(session_id, str(workspace), now()))
        except BaseException:  # also an interrupt: no header-less file is left behind
            store.close()
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        return store, session_id

    @classmethod
    def open(cls, workspace: Path, session_id: str) -> tuple["SessionStore", LoadedSession]:
        """Load an existing session of this workspace and open it for appends."""
        session_id = validate_session_id(session_id)
        path = session_path(workspace, session_id)
        fd = _open_existing(path, workspace, session_id, os.O_RDWR | os.O_APPEND)
        lock = -1
        try:
            lock = _lock(path, session_id)
            _check_size(fd, path)
            result = read_session(fd, path, workspace, session_id, FileReader(fd))
            good = result.good_size
            if result.missing_newline:
                os.write(fd, b"\n")
                good += 1
            elif good < result.total:
                # Cut the torn tail so the next append starts on a clean line.
                os.ftruncate(fd, good)
                os.fsync(fd)
        except OSError as e:
            _close(fd, lock)
            raise SessionError(f"cannot read session file {path}: {e.strerror}") from e
        except BaseException:
            _close(fd, lock)
            raise
        store = cls(path, fd, good)
        store._lock_fd = lock
        store._lines = result.lines
        return store, result.loaded

    # --- appending -----------------------------------------------------------------------

    def append_message(self, message: Message, outcome: ToolOutcome | None = None) -> Slot | None:
        """Append a message record; returns where it is (offset, length, line number), so the
        message can be dropped from memory and read back later (None once the file had to be
        written anew after a deletion: its readers see only the first file)."""
        offset, line = self._size, self._lines + 1
        length = self._append(records.message_record(message, outcome))
        return None if self._relinked else (offset, length - 1, line)

    def file_reader(self) -> FileReader:
        """A reader of this file by offset, valid after ``close`` (its own descriptor)."""
        if self._fd < 0:
            raise SessionError(f"session file {self.path} is closed")
        return FileReader(self._fd)

    def append_checkpoint(self, checkpoint: Checkpoint) -> None:
        self._append(records.checkpoint_record(checkpoint))

    def append_turn_end(self, status: str, stats: TaskStats, checks: Sequence[CheckResult] = ()) -> None:
        self._append(records.turn_end_record(status, stats, checks))

    def append_rewind(self, keep: int) -> None:
        self._append(records.rewind_record(keep))

    def append_settings(self, settings: SessionSettings) -> None:
        self._append(records.settings_record(settings))

    def append_todo(self, todo: TodoList) -> None:
        self._append(records.todo_record(todo))

    def _append(self, record: dict[str, Any]) -> int:
        """Write and sync one record line; returns its length in bytes (newline included)."""
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
        if self._damaged is not None:
            raise SessionError(self._damaged)
        try:
            if os.fstat(self._fd).st_nlink == 0:
                self._relink()
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as e:
            raise self._cut_back(e) from e
        self._size += len(data)
        self._lines += 1
        return len(data)

    def _relink(self) -> None:
        """The file was deleted while open (``rm -rf .minicode``, ``git clean -fdx``): appends
        would go to a file nobody can open again and the printed resume command would lie. Write
        what it holds to a new file at the same path (the directories made again, private and
        git-ignored) and go on there. A different file already at the path is never touched:
        then nothing more is saved, and each append says so."""
        workspace = self.path.parent.parent.parent  # <workspace>/.minicode/sessions/<id>.jsonl
        _ensure_dir(workspace, self.path.parent)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _FILE_MODE)
        except FileExistsError:
            self._damaged = (f"session file {self.path} was deleted and another file now has its name; "
                             "nothing more is saved in this run")
            raise SessionError(self._damaged) from None
        try:
            # the open descriptor only writes; the deleted file is still readable through
            # /proc (Linux), whatever its name is now
            old_content = os.open(f"/proc/self/fd/{self._fd}", os.O_RDONLY | os.O_CLOEXEC)
            try:
                offset = 0
                while offset < self._size:
                    chunk = os.pread(old_content, min(1 << 20, self._size - offset), offset)
                    if not chunk:
                        break
                    offset += os.write(fd, chunk)
            finally:
                os.close(old_content)
            os.fsync(fd)
        except OSError:
            os.close(fd)
            os.unlink(self.path)
            raise
        old, self._fd = self._fd, fd
        self._relinked = True
        os.close(old)
        with contextlib.suppress(SessionError, OSError):  # nobody else can know the new file yet
            lock, self._lock_fd = self._lock_fd, _lock(self.path, self.path.stem)
            _close(lock)

    def _cut_back(self, error: OSError) -> SessionError:
        """All or nothing: a record that failed part-way (ENOSPC, EIO, a failed fsync) is cut
        off again, so the file ends with its last complete record and the next append starts
        a clean line. If even that fails, no more appends are made: one would land after the
        torn bytes, in the middle of the file, where a load must refuse it."""
        why = error.strerror or str(error)
        try:
            os.ftruncate(self._fd, self._size)
            os.fsync(self._fd)
        except OSError as undo:
            self._damaged = (
                f"session file {self.path} ends with a partly written record that could not be removed "
                f"({undo.strerror or undo}); nothing more is saved in this run — the next load cuts it off"
            )
            return SessionError(f"cannot write session file {self.path}: {why}; {self._damaged}")
        return SessionError(
            f"cannot write session file {self.path}: {why}; the partial record was removed, "
            f"the file ends with its last complete record"
        )

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)
        if self._lock_fd >= 0:
            lock, self._lock_fd = self._lock_fd, -1
            os.close(lock)


@contextlib.contextmanager
def reading_session(workspace: Path, session_id: str) -> Iterator[LoadedSession]:
    """A session read without opening it for appends (nothing is written; a torn last line is
    only ignored). Its messages can be parsed until the block ends."""
    session_id = validate_session_id(session_id)
    path = session_path(workspace, session_id)
    fd = _open_existing(path, workspace, session_id, os.O_RDONLY)
    try:
        try:
            _check_size(fd, path)
            loaded = read_session(fd, path, workspace, session_id, FileReader(fd)).loaded
        except OSError as e:
            raise SessionError(f"cannot read session file {path}: {e.strerror}") from e
        try:
            yield loaded
        finally:
            loaded.messages.close()
    finally:
        os.close(fd)


def _open_existing(path: Path, workspace: Path, session_id: str, flags: int) -> int:
    try:
        return os.open(path, flags | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise SessionError(f"no session {session_id} in this workspace ({workspace})", exit_code=2) from None
    except OSError as e:
        raise SessionError(f"cannot open session file {path}: {e.strerror}") from e


def _lock(path: Path, session_id: str) -> int:
    """One minicode per session: two appending to one file would interleave two conversations
    neither had. The lock (flock) is held on a descriptor of its own — not the one the lazy
    message log duplicates — and goes with the process, also on kill -9; readers (--export,
    --sessions) take none. Returns that descriptor (-1 on a file system without locks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionError(f"session {session_id[:8]} is open in another minicode; finish or leave it there "
                           "first (or start a new session)", exit_code=2) from None
    except OSError:
        os.close(fd)
        return -1  # no locks here: go on as before
    return fd


def _close(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def _check_size(fd: int, path: Path) -> None:
    if os.fstat(fd).st_size > MAX_FILE_BYTES:
        raise SessionError(f"session file {path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; refusing to load it")


def _ensure_dir(workspace: Path, directory: Path) -> None:
    try:
        ensure_state_dir(workspace)
        directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
    except OSError as e:
        raise SessionError(f"cannot create the sessions directory {directory}: {e.strerror}") from e
