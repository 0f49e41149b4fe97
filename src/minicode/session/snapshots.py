"""Undo snapshots: what write and edit replaced, kept under ``.minicode/snapshots/``.

Layout (git-ignored: the directory carries its own ``.gitignore`` of ``*``)::

    .minicode/snapshots/<session-id>/journal.jsonl   what changed, per task (append-only)
    .minicode/snapshots/<session-id>/blobs/<sha256>  the replaced contents (content-addressed)

``SnapshotStore.before_replace`` is the ``ToolContext.before_replace`` hook: the write/edit
tool calls it (in its worker thread) with what it is about to replace, read through the
directory it opened, right before the rename. The copy (blob, then a ``change`` line) is
fsynced before the hook returns, so a change is never made without its record; if the copy
cannot be kept the change is refused. Journal records:

- ``{"type":"task","task":R,"title":…}`` — a task (R: the raw id of its user message) began
  changing files or running commands;
- ``{"type":"change","task":R,"path":…,"before":{…},"after":{"sha":…,"mode":…}}`` — before is
  ``{"state":"file","sha":…,"size":…,"mode":…}``, ``{"state":"missing"}`` (the file was
  created) or ``{"state":"unsaved","size":…,"mode":…}`` (larger than the snapshot limit);
- ``{"type":"commands","task":R}`` — the task ran bash commands (their changes are not tracked);
- ``{"type":"undone","tasks":[R,…]}`` — /undo or /rewind restored these tasks' files;
- ``{"type":"pruned","sha":…}`` — that copy was deleted to stay under the size cap.

Bounded: all blobs of the workspace together stay under ``TOTAL_CAP_BYTES``; past it the
oldest copies (by last use) are deleted first and the journals say so.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Literal, Sequence

from minicode import jsonsafe
from dataclasses import dataclass, field
from minicode.private_file import write_private
from minicode.statedir import ensure_state_dir
from minicode.errors import MinicodeError, SessionError, ToolError
from minicode.tools.base import Replaced

__all__ = [
    "SNAPSHOTS_DIR",
    "TOTAL_CAP_BYTES",
    "Before",
    "Change",
    "DamagedSnapshot",
    "Journal",
    "SnapshotStore",
]

SNAPSHOTS_DIR = Path(".minicode") / "snapshots"
TOTAL_CAP_BYTES = 256 * 1024 * 1024
"""All snapshot copies of a workspace together; the oldest are pruned first past this."""
_FILE_MODE = 0o600
_DIR_MODE = 0o700
_TITLE_CHARS = 100


class DamagedSnapshot(MinicodeError):
    """A kept copy is missing without having been pruned, or no longer matches its hash."""


@dataclass(frozen=True, slots=True)
class Before:
    """A file's state before a change: ``file`` (a copy is kept: ``sha``), ``missing`` (the
    change created it) or ``unsaved`` (too large to keep a copy)."""

    state: Literal["file", "missing", "unsaved"]
    sha: str = ""
    size: int = 0
    mode: int | None = None


@dataclass(frozen=True, slots=True)
class Change:
    task: int
    path: str
    before: Before
    after_sha: str
    after_mode: int | None


@dataclass(slots=True)
class Journal:
    """Everything a session's journal says, in order."""

    changes: list[Change] = field(default_factory=list)
    titles: dict[int, str] = field(default_factory=dict)
    commands: set[int] = field(default_factory=set)
    undone: set[int] = field(default_factory=set)
    pruned: set[str] = field(default_factory=set)

    def tasks_with_changes(self) -> list[int]:
        """Tasks that changed files and were not undone, oldest first."""
        return sorted({c.task for c in self.changes if c.task not in self.undone})


class SnapshotStore:
    """One session's journal and copies. Thread-safe: the hook runs in tool worker threads."""

    def __init__(self, workspace: Path, session_id: str, *, cap: int = TOTAL_CAP_BYTES) -> None:
        self.workspace = workspace
        self.root = workspace / SNAPSHOTS_DIR
        self.directory = self.root / session_id
        self.cap = cap
        self._lock = threading.Lock()
        self._task: int | None = None
        self._title = ""
        self._announced: set[int] = set()
        self._total: int | None = None  # bytes of all blobs of the workspace, once counted

    # --- what the session tells it -------------------------------------------------------
    def begin_task(self, task: int, title: str) -> None:
        """Changes from now on belong to ``task`` (the raw id of its user message)."""
        with self._lock:
            self._task = task
            self._title = " ".join(title.split())[:_TITLE_CHARS]

    def note_commands(self, task: int) -> None:
        """``task`` ran bash commands (blocking: appends its journal lines, one write and one
        fsync with the task's own line when that is not written yet)."""
        with self._lock:
            self._append(*self._announcement(task), {"type": "commands", "task": task})
            self._announced.add(task)

    def mark_undone(self, tasks: list[int]) -> None:
        with self._lock:
            self._append({"type": "undone", "tasks": sorted(tasks)})

    # --- the hook -----------------------------------------------------------------------
    def before_replace(self, replaced: Replaced) -> None:
        """Keep a copy of what is about to be replaced (blocking). ToolError refuses the change."""
        try:
            with self._lock:
                self._record(replaced)
        except OSError as e:
            raise ToolError(
                f"cannot keep a copy of {replaced.rel} for /undo in {self.directory}: {e.strerror or e}; "
                "nothing was changed"
            ) from e

    def _record(self, replaced: Replaced) -> None:
        task = self._task if self._task is not None else -1
        self._ensure_dirs()
        if not replaced.existed:
            before: dict[str, Any] = {"state": "missing"}
        elif replaced.data is None:
            before = {"state": "unsaved", "size": replaced.size, "mode": replaced.mode}
        else:
            sha = self._keep_blob(replaced.data)
            before = {"state": "file", "sha": sha, "size": len(replaced.data), "mode": replaced.mode}
        after = {"sha": hashlib.sha256(replaced.new_data).hexdigest(), "mode": replaced.mode}
        change = {"type": "change", "task": task, "path": replaced.rel, "before": before, "after": after,
                  "time": round(time.time(), 3)}
        self._write_lines([*self._announcement(task), change])  # after the copy it names
        self._announced.add(task)
        if before.get("sha"):
            self._prune(keep=before["sha"])

    def _announcement(self, task: int) -> list[dict[str, Any]]:
        """The ``task`` line to write before the first record of ``task`` (none after it)."""
        if task in self._announced:
            return []
        return [{"type": "task", "task": task, "title": self._title if task == self._task else ""}]

    # --- reading -------------------------------------------------------------------------
    def read(self) -> Journal:
        """The journal (empty when the session never changed a file). SessionError when a
        line is damaged (nothing can be undone safely from it)."""
        path = self.directory / "journal.jsonl"
        try:
            with open(path, "rb") as f:
                lines = f.read().split(b"\n")
        except FileNotFoundError:
            return Journal()
        except OSError as e:
            raise SessionError(f"cannot read the undo journal {path}: {e.strerror or e}") from e
        journal = Journal()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                _apply(journal, jsonsafe.loads(line))
            except (ValueError, TypeError, KeyError) as e:
                raise SessionError(f"the undo journal {path} is damaged at line {number} ({e}); nothing can be undone from it") from e
        return journal

    def blob(self, sha: str) -> bytes:
        """The kept copy ``sha``, checked against its hash (DamagedSnapshot otherwise)."""
        path = self.directory / "blobs" / sha
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise DamagedSnapshot("its copy is missing from the snapshot store") from None
        except OSError as e:
            raise DamagedSnapshot(f"its copy cannot be read: {e.strerror or e}") from e
        if hashlib.sha256(data).hexdigest() != sha:
            raise DamagedSnapshot("its copy is damaged (the content does not match its checksum)")
        return data

    # --- storage -------------------------------------------------------------------------
    def _ensure_dirs(self) -> None:
        ensure_state_dir(self.workspace)
        (self.directory / "blobs").mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")

    def _append(self, *records: dict[str, Any]) -> None:
        self._ensure_dirs()
        self._write_lines(records)

    def _write_lines(self, records: Sequence[dict[str, Any]]) -> None:
        """Append ``records`` in one write and one fsync (the directories are ensured)."""
        # ASCII: a file name that is not valid UTF-8 (a lone surrogate) round-trips as \udcXX
        data = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records).encode("ascii")
        fd = os.open(self.directory / "journal.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, _FILE_MODE)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _keep_blob(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        path = self.directory / "blobs" / sha
        try:
            if path.stat().st_size == len(data):
                os.utime(path)  # used again: it is recent now (pruning goes by last use)
                return sha
        except FileNotFoundError:
            pass
        write_private(path, data)  # whole or not at all: a reader never sees half a copy
        if self._total is not None:
            self._total += len(data)
        return sha

    def _prune(self, keep: str) -> None:
        """Delete the least recently used copies (any session of the workspace) until all fit
        ``cap``; each deletion is recorded in its session's journal."""
        if self._total is None:
            self._total = sum(size for _, size, _, _ in _blobs(self.root))
        if self._total <= self.cap:
            return
        for _mtime, size, session_dir, sha in sorted(_blobs(self.root)):
            if self._total <= self.cap:
                break
            if sha == keep and session_dir == self.directory:
                continue
            try:
                os.unlink(session_dir / "blobs" / sha)
            except OSError:
                continue
            self._total -= size
            try:
                _append_to(session_dir, {"type": "pruned", "sha": sha})
            except OSError:
                pass  # that copy is gone either way; undo will call it missing


def _blobs(root: Path) -> list[tuple[float, int, Path, str]]:
    """(last use, size, session directory, sha) of every copy under ``root``."""
    out: list[tuple[float, int, Path, str]] = []
    try:
        sessions = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return out
    for session in sessions:
        try:
            entries = list(os.scandir(Path(session.path) / "blobs"))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            out.append((st.st_mtime, st.st_size, Path(session.path), entry.name))
    return out


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a regular file takes it in one, but a
    short write must not cut a journal line)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _append_to(session_dir: Path, record: dict[str, Any]) -> None:
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    fd = os.open(session_dir / "journal.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, _FILE_MODE)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


# --- parsing the journal -----------------------------------------------------------------------


def _apply(journal: Journal, rec: Any) -> None:
    if not isinstance(rec, dict):
        raise ValueError("not an object")
    kind = rec.get("type")
    if kind == "change":
        journal.changes.append(_change(rec))
    elif kind == "task":
        journal.titles[_task(rec["task"])] = str(rec.get("title") or "")
    elif kind == "commands":
        journal.commands.add(_task(rec["task"]))
    elif kind == "undone":
        tasks = rec["tasks"]
        if not isinstance(tasks, list):
            raise ValueError("malformed undone record")
        journal.undone.update(_task(t) for t in tasks)
    elif kind == "pruned":
        journal.pruned.add(_sha(rec["sha"]))
    else:
        raise ValueError(f"unknown record type {kind!r}")


def _change(rec: dict[str, Any]) -> Change:
    path = rec["path"]
    if not isinstance(path, str) or not path or path.startswith("/") or "\x00" in path:
        raise ValueError("malformed path")
    before, after = rec["before"], rec["after"]
    if not isinstance(before, dict) or not isinstance(after, dict):
        raise ValueError("malformed change")
    state = before.get("state")
    if state == "missing":
        b = Before("missing")
    elif state == "unsaved":
        b = Before("unsaved", size=_int(before["size"]), mode=_mode(before.get("mode")))
    elif state == "file":
        b = Before("file", _sha(before["sha"]), _int(before["size"]), _mode(before.get("mode")))
    else:
        raise ValueError(f"unknown state {state!r}")
    return Change(_task(rec["task"]), path, b, _sha(after["sha"]), _mode(after.get("mode")))


def _int(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("malformed number")
    return value


def _task(value: Any) -> int:
    """A task id: a raw message id, or -1 for a change made outside any task."""
    if type(value) is not int or value < -1:
        raise ValueError("malformed task")
    return value


def _mode(value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= 0o7777:
        raise ValueError("malformed mode")
    return value


def _sha(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise ValueError("malformed checksum")
    return value
