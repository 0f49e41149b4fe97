"""The input history of a workspace: what the user sent, kept across runs for Up/Down and Ctrl+R.

One JSON object per line in ``.minicode/sessions/input-history.jsonl`` (git-ignored with the
sessions, skipped by the tools, mode 0600, never followed through a symlink): ``{"text": …}``,
or for a draft that held large pastes ``{"shown": …, "pastes": [[label, text], …]}`` — the
pastes are stored as their text, so a recalled entry sends exactly what was sent before.
Capped at ``MAX_ENTRIES`` entries and ``MAX_BYTES``: the file is rewritten with the newest
entries that fit when it grows past the cap; an entry larger than ``MAX_ENTRY_BYTES`` is not
kept. Damaged lines are skipped, and a file that cannot be read or written only costs the
history (``error`` says why), never the session.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from minicode import jsonsafe
from minicode.private_file import write_private
from minicode.statedir import ensure_state_dir
from minicode.cli.frontends.tui.draft import Queued

__all__ = ["FILE_NAME", "MAX_BYTES", "MAX_ENTRIES", "MAX_ENTRY_BYTES", "InputLog"]

FILE_NAME = Path(".minicode") / "sessions" / "input-history.jsonl"
MAX_ENTRIES = 1000
MAX_BYTES = 4 * 1024 * 1024
MAX_ENTRY_BYTES = 256 * 1024
_FILE_MODE = 0o600


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _line(entry: Queued) -> bytes:
    record: dict[str, Any] = {"text": entry.text} if not entry.pastes else {
        "shown": entry.shown, "pastes": [list(p) for p in entry.pastes]}
    return json.dumps(record, ensure_ascii=False).encode("utf-8", "replace") + b"\n"


def _entry(raw: bytes) -> Queued | None:
    try:
        record = jsonsafe.loads(raw, repair_surrogates=True)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    text, shown, pastes = record.get("text"), record.get("shown"), record.get("pastes")
    if isinstance(text, str):
        return Queued(text, text)
    if not isinstance(shown, str) or not isinstance(pastes, list):
        return None
    held = tuple((p[0], p[1]) for p in pastes
                 if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p))
    full = shown
    for label, body in held:
        full = full.replace(label, body, 1)
    return Queued(full, shown, held)


class InputLog:
    """The history file of one workspace (see the module docstring)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.path = workspace / FILE_NAME
        self.error: str | None = None
        """Why the history could not be read or kept (shown once), or None."""
        self._size = 0
        self._count = 0

    def load(self) -> list[Queued]:
        """The stored entries, oldest first; compacts the file when it is over its cap."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return []
        except OSError as e:
            self.error = f"cannot read the input history {self.path}: {e.strerror}"
            return []
        try:
            size = os.fstat(fd).st_size
            os.lseek(fd, max(0, size - 2 * MAX_BYTES), os.SEEK_SET)  # a huge file: its end only
            data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
        except OSError as e:
            self.error = f"cannot read the input history {self.path}: {e.strerror}"
            return []
        finally:
            os.close(fd)
        entries = [e for e in map(_entry, data.split(b"\n")) if e is not None]
        self._size, self._count = size, len(entries)
        if size > MAX_BYTES or len(entries) > MAX_ENTRIES:
            entries = self._rewrite(entries)
        return entries

    def append(self, entry: Queued) -> None:
        """Keep ``entry`` (a small append, no fsync: losing the last line to a crash is fine)."""
        line = _line(entry)
        if len(line) > MAX_ENTRY_BYTES or self.error is not None:
            return
        try:
            ensure_state_dir(self.workspace)
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, _FILE_MODE)
            try:
                _write_all(fd, line)
            finally:
                os.close(fd)
        except OSError as e:
            self.error = f"cannot keep the input history in {self.path}: {e.strerror}"
            return
        self._size += len(line)
        self._count += 1
        if self._size > MAX_BYTES or self._count > MAX_ENTRIES:
            self.load()  # over the cap: rewrite with the newest that fit

    def _rewrite(self, entries: list[Queued]) -> list[Queued]:
        kept: list[bytes] = []
        size = 0
        for entry in reversed(entries):
            line = _line(entry)
            if len(kept) >= MAX_ENTRIES or size + len(line) > MAX_BYTES // 2:
                break  # half the cap: the next rewrite is far away
            kept.append(line)
            size += len(line)
        kept.reverse()
        try:
            write_private(self.path, b"".join(kept))
        except OSError as e:
            self.error = f"cannot compact the input history {self.path}: {e.strerror}"
        self._size, self._count = size, len(kept)
        return entries[len(entries) - len(kept):]
