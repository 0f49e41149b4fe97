"""Reading a session file: one pass that locates the messages and applies every other record.

The file is read in chunks and never held whole. A message record is recognised by its first
bytes (the writer puts ``"type"`` and ``"role"`` first); it is validated here (the check
``MessageLog`` applies when it parses the message later, ``records.message_from_line``) but
not kept: the log holds only where it is and parses it again when it is first needed. So a
damaged message refuses the load, naming its line, before a resume writes anything to the
file. Turn-end records (a task's statistics) hold nothing loading needs and are only located.
Every other record (header, checkpoint, rewind, settings, todo, and a message written in another
key order) is parsed, validated and applied here.

A torn last line (a crash mid-write: not a whole JSON object) is the one damage tolerated:
ignored with a warning, and ``good_size`` tells the store where to cut it off. Anything else
raises SessionError.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

from minicode import jsonsafe
from minicode.agent.deps import ToolOutcome
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from dataclasses import dataclass, field
from minicode.session import records
from minicode.session.log import ROLE_CODES, MessageLog, Reader, Slot
from minicode.session.records import SessionSettings
from minicode.session.turn_ends import turn_end_from_record
from minicode.tools.todo_list import TodoList

__all__ = ["LoadedSession", "ReadResult", "read_session"]

_WINDOW = 16 * 1024 * 1024
_MESSAGE = b'{"type":"message","role":"'
_ROLES = tuple((role.encode() + b'"', code) for role, code in ROLE_CODES.items() if role != "system")
_CLOSE = ord("}")
_TURN_END = b'{"type":"turn_end",'


@dataclass(slots=True, eq=False)
class LoadedSession:
    """What a session file holds once its records are applied in order. ``checkpoints``:
    compaction checkpoints still valid for the conversation, oldest first (a rewind drops
    the ones that summarise messages it removed); the last is the one in effect. Compared
    by identity: comparing by value would parse every message of a lazily read file."""

    session_id: str
    created: str
    messages: MessageLog = field(default_factory=MessageLog)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    settings: SessionSettings = field(default_factory=SessionSettings)
    todos: list[tuple[int, TodoList]] = field(default_factory=list)
    """Each task list recorded, with the number of messages before it, oldest first (a rewind
    drops the ones set after the point it continues from); the last is the list now."""
    warnings: list[str] = field(default_factory=list)

    @property
    def outcomes(self) -> dict[str, ToolOutcome]:
        """How each tool call ended, by tool_call_id, for the messages read so far (a message
        is read when first needed: ``messages[i]``, iteration, ``peek``)."""
        return self.messages.outcomes

    @property
    def checkpoint(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None

    @property
    def todo(self) -> TodoList:
        return self.todos[-1][1] if self.todos else TodoList()

    def set_todo(self, todo: TodoList) -> None:
        if self.todos and self.todos[-1][0] == len(self.messages):  # the same point: only the last counts
            self.todos[-1] = (len(self.messages), todo)
        else:
            self.todos.append((len(self.messages), todo))

    def rewind(self, keep: int) -> None:
        """Continue from the first ``keep`` messages: later ones and the checkpoints that
        summarise any of them leave the conversation (they stay in the file)."""
        self.messages.truncate(keep)
        while self.checkpoints and self.checkpoints[-1].first_kept > keep:
            self.checkpoints.pop()
        while self.todos and self.todos[-1][0] > keep:  # the list as it was at that point
            self.todos.pop()
        if self.checkpoints:  # what the checkpoint in effect summarises stays out of memory
            self.messages.release(self.checkpoints[-1].first_kept)


@dataclass(frozen=True, slots=True)
class ReadResult:
    loaded: LoadedSession
    good_size: int
    """Bytes up to the end of the last complete record (a torn last line is beyond it)."""
    total: int
    missing_newline: bool
    """The last record is complete but lacks its newline (a crash right before it)."""
    lines: int = 0
    """Complete records up to ``good_size`` (the line number of the last one)."""


def read_session(fd: int, path: Path, workspace: Path, session_id: str, reader: Reader) -> ReadResult:
    """Read the whole file behind ``fd`` (nothing is written to it).

    ``reader`` is how the messages are parsed later (it must stay valid while they are used).
    The file is mapped a window at a time (no copy of its bytes; at most one window resident
    beyond what the kernel caches anyway); a window grows only for a line longer than it."""
    total = os.fstat(fd).st_size
    state = _State(path, workspace, session_id, reader)
    scan = _Scan(state)
    pos = 0  # where the next line starts
    window = _WINDOW
    while pos < total:
        base = pos - pos % mmap.ALLOCATIONGRANULARITY
        length = min(window, total - base)
        with mmap.mmap(fd, length, access=mmap.ACCESS_READ, offset=base) as view:
            consumed = scan.lines(view, pos - base, base)
        if base + consumed == pos:  # no whole line in the window
            if base + length >= total:
                break  # what is left is a last line without its newline
            window *= 2
            continue
        pos = base + consumed
        window = _WINDOW
    scan.flush()
    state.number = scan.number
    complete_tail = False
    if pos < total:
        complete_tail = state.tail(os.pread(fd, total - pos, pos))
    good = total if complete_tail else pos
    return ReadResult(state.finish(), good, total, complete_tail, scan.number + (1 if complete_tail else 0))


class _Scan:
    """The per-line work, kept small: a prefix test; message positions gathered in plain lists
    and handed to the log in bulk before any other record (a rewind counts them)."""

    def __init__(self, state: _State) -> None:
        self.state = state
        self.number = 0
        self.slots: list[Slot] = []
        self.roles = bytearray()

    def lines(self, view: mmap.mmap, start: int, base: int) -> int:
        """Take every whole line of ``view`` from ``start``; returns where the first line that
        does not end in it starts."""
        find = view.find
        state = self.state
        prefix = len(_MESSAGE)
        while (end := find(b"\n", start)) >= 0:
            self.number += 1
            code = 0
            if view[start : start + prefix] == _MESSAGE and self.number > 1:
                at = start + prefix
                for word, role_code in _ROLES:
                    if view[at : at + len(word)] == word:
                        code = role_code
                        break
            if code:
                if view[end - 1] != _CLOSE:
                    state.number = self.number
                    raise state.corrupt("not a complete record")
                try:  # damage is found before a resume writes anything; the message is not kept
                    records.message_from_line(view[start:end], repair_surrogates=False)
                except (ValueError, TypeError) as e:
                    state.number = self.number
                    raise state.corrupt(str(e)) from e
                self.slots.append((base + start, end - start, self.number))
                self.roles.append(code)
            elif view[start : start + len(_TURN_END)] != _TURN_END or view[end - 1] != _CLOSE:
                self.flush()
                state.number = self.number
                state.apply(state.parse(view[start:end]))
            else:  # a task's end: only where it is (read when the replay shows it)
                state.messages().turn_ends.add(len(state.messages()) + len(self.slots),
                                               (base + start, end - start, self.number))
            start = end + 1
        return start

    def flush(self) -> None:
        if self.slots:
            self.state.messages().extend_slots(self.slots, self.roles)
            self.slots, self.roles = [], bytearray()


class _State:
    def __init__(self, path: Path, workspace: Path, session_id: str, reader: Reader) -> None:
        self.path = path
        self.workspace = workspace
        self.session_id = session_id
        self.reader = reader
        self.loaded: LoadedSession | None = None
        self.number = 0

    def messages(self) -> MessageLog:
        if self.loaded is None:  # a message before the header: line 1 is never one
            raise self.corrupt("a message before the header")
        return self.loaded.messages

    def tail(self, data: bytes) -> bool:
        """The last line, without a newline: True for a complete record (applied), False for
        a torn one (ignored with a warning). Torn means not a whole JSON object — what a crash
        mid-write leaves; a whole record with a damaged field is damage like on any other line."""
        try:
            rec = jsonsafe.loads(data, repair_surrogates=True)
        except ValueError:
            rec = None
        if not isinstance(rec, dict):
            if self.loaded is not None:
                self.loaded.warnings.append(f"ignored a torn last line in {self.path.name} ({len(data)} bytes)")
            return False
        self.number += 1
        self.apply(rec)
        return True

    def finish(self) -> LoadedSession:
        if self.loaded is None:
            raise SessionError(f"session file {self.path} has no header record; refusing to load it")
        return self.loaded

    def corrupt(self, why: str = "") -> SessionError:
        detail = f" ({why})" if why else ""
        return SessionError(f"session file {self.path} is corrupt at line {self.number}{detail}; refusing to load it")

    def parse(self, line: bytes) -> dict[str, Any]:
        try:
            rec = jsonsafe.loads(line, repair_surrogates=True)
        except ValueError as e:
            raise self.corrupt() from e
        if not isinstance(rec, dict):
            raise self.corrupt()
        return rec

    def apply(self, rec: dict[str, Any]) -> None:
        if self.loaded is None:
            self.loaded = _header(rec, self.path, self.workspace, self.session_id)
            self.loaded.messages = MessageLog(self.reader, f"session file {self.path}")
            return
        loaded = self.loaded
        kind = rec.get("type")
        try:
            if kind == "message":
                message = records.message_from_record(rec)
                outcome = records.outcome_from_record(rec)
                if outcome is not None and message.tool_call_id is not None:
                    loaded.messages.outcomes[message.tool_call_id] = outcome
                loaded.messages.append(message)
            elif kind == "checkpoint":
                checkpoint = records.checkpoint_from_record(rec)
                if checkpoint.first_kept > len(loaded.messages):
                    raise ValueError(
                        f"checkpoint field 'first_kept' is {checkpoint.first_kept} but only "
                        f"{len(loaded.messages)} messages come before it: it points outside the history"
                    )
                loaded.checkpoints.append(checkpoint)
            elif kind == "rewind":
                keep = records.rewind_from_record(rec)
                if keep >= len(loaded.messages) or loaded.messages.role(keep) != "user":
                    raise ValueError("the rewind does not point at a user message")
                loaded.rewind(keep)
            elif kind == "settings":
                loaded.settings = loaded.settings.merged(records.settings_from_record(rec))
            elif kind == "todo":
                loaded.set_todo(records.todo_from_record(rec))
            elif kind == "turn_end":
                try:
                    loaded.messages.turn_ends.add(len(loaded.messages), turn_end_from_record(rec))
                except ValueError:
                    pass  # statistics only: a damaged one shows no line, loading goes on
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except (ValueError, TypeError) as e:
            raise self.corrupt(str(e)) from e


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
