"""Reading a session file: one pass that locates the messages and applies every other record.

The file is read in chunks and never held whole. A message record is recognised by its first
bytes (the writer puts ``"type"`` and ``"role"`` first) and only located — ``MessageLog``
parses it when it is first needed; a line that is not a complete JSON object (it must end
with ``}``) is refused at once. Every other record (header, checkpoint, turn end, rewind,
settings, and a message written in another key order) is parsed and validated here.

A torn last line (a crash mid-write) is the one damage tolerated: ignored with a warning,
and ``good_size`` tells the store where to cut it off. Anything else raises SessionError.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minicode.agent.deps import ToolOutcome
from minicode.compaction.checkpoint import Checkpoint
from minicode.errors import SessionError
from minicode.session import records
from minicode.session.log import ROLE_PREFIXES, MessageLog, Reader
from minicode.session.records import SessionSettings

__all__ = ["LoadedSession", "ReadResult", "read_session"]

_CHUNK = 4 * 1024 * 1024


@dataclass(slots=True)
class LoadedSession:
    """What a session file holds once its records are applied in order."""

    session_id: str
    created: str
    messages: MessageLog = field(default_factory=MessageLog)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    """Compaction checkpoints still valid for the conversation, oldest first (a rewind drops
    the ones that summarise messages it removed); the last is the one in effect."""
    settings: SessionSettings = field(default_factory=SessionSettings)
    warnings: list[str] = field(default_factory=list)

    @property
    def outcomes(self) -> dict[str, ToolOutcome]:
        """How each tool call ended, by tool_call_id, for the messages read so far (a message
        is read when first needed: ``messages[i]``, iteration, ``peek``)."""
        return self.messages.outcomes

    @property
    def checkpoint(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None

    def rewind(self, keep: int) -> None:
        """Continue from the first ``keep`` messages: later ones and the checkpoints that
        summarise any of them leave the conversation (they stay in the file)."""
        self.messages.truncate(keep)
        while self.checkpoints and self.checkpoints[-1].first_kept > keep:
            self.checkpoints.pop()


@dataclass(frozen=True, slots=True)
class ReadResult:
    loaded: LoadedSession
    good_size: int
    """Bytes up to the end of the last complete record (a torn last line is beyond it)."""
    total: int
    missing_newline: bool
    """The last record is complete but lacks its newline (a crash right before it)."""


def read_session(fd: int, path: Path, workspace: Path, session_id: str, reader: Reader) -> ReadResult:
    """Read the whole file behind ``fd`` (nothing is written to it).

    ``reader`` is how the messages are parsed later (it must stay valid while they are used)."""
    total = os.fstat(fd).st_size
    state = _State(path, workspace, session_id, reader)
    pos = 0
    carry = b""
    carry_at = 0  # file offset of carry[0]
    while pos < total:
        chunk = os.pread(fd, min(_CHUNK, total - pos), pos)
        if not chunk:
            break
        data = carry + chunk if carry else chunk
        start = 0
        find = data.find
        while (end := find(b"\n", start)) >= 0:
            state.line(data[start:end] if end - start < 64 else memoryview(data)[start:end], carry_at + start)
            start = end + 1
        carry = data[start:]
        carry_at += start
        pos += len(chunk)
    good = carry_at
    complete_tail = bool(carry) and state.tail(bytes(carry))
    if complete_tail:
        good += len(carry)
    return ReadResult(state.finish(), good, total, complete_tail)


class _State:
    def __init__(self, path: Path, workspace: Path, session_id: str, reader: Reader) -> None:
        self.path = path
        self.workspace = workspace
        self.session_id = session_id
        self.reader = reader
        self.loaded: LoadedSession | None = None
        self.number = 0

    def line(self, line: bytes | memoryview, offset: int) -> None:
        self.number += 1
        if self.loaded is not None:
            head = bytes(line[:40])
            for prefix, role in ROLE_PREFIXES.items():
                if head.startswith(prefix):
                    if bytes(line[-1:]) != b"}":
                        raise self.corrupt("not a complete record")
                    self.loaded.messages.append_slot((offset, len(line), self.number), role)
                    return
        self.apply(self.parse(bytes(line)))

    def tail(self, data: bytes) -> bool:
        """The last line, without a newline: True for a complete record (applied), False for
        a torn one (ignored with a warning)."""
        try:
            rec = json.loads(data)
            if not isinstance(rec, dict):
                raise ValueError("not an object")
            self.number += 1
            self.apply(rec)
        except (ValueError, SessionError):
            if self.loaded is not None:
                self.loaded.warnings.append(f"ignored a torn last line in {self.path.name} ({len(data)} bytes)")
            return False
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
            rec = json.loads(line)
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
                    raise ValueError("the checkpoint keeps messages the history does not have")
                loaded.checkpoints.append(checkpoint)
            elif kind == "rewind":
                keep = records.rewind_from_record(rec)
                if keep >= len(loaded.messages) or loaded.messages.role(keep) != "user":
                    raise ValueError("the rewind does not point at a user message")
                loaded.rewind(keep)
            elif kind == "settings":
                loaded.settings = loaded.settings.merged(records.settings_from_record(rec))
            elif kind != "turn_end":
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
