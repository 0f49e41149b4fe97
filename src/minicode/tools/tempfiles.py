"""Write temp files a killed run left behind: recorded before they exist, removed at the next start.

``write``/``edit`` replace a file by writing ``.<name>.<12 hex>.tmp`` next to it and renaming it
over the file (``fswrite``). A ``kill -9`` between the two leaves the temp file. So each temp
file is first noted in this process's journal, ``.minicode/tmp/writes-<pid>.jsonl`` (one JSON
line ``[directory, name]``, appended before the file is created). At the next start,
``clean_leftover_temps`` reads the journals of processes that are gone and removes exactly
those files — only where we wrote, only names of the exact temp shape, only regular files,
through the same confined descriptors as the tools (``fsroot``). A process that is still
running keeps its journal; a clean exit removes its own.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from minicode import jsonsafe
from minicode.statedir import ensure_state_dir
from minicode.errors import ToolError
from minicode.tools.fsroot import open_directory, write_target
from minicode.tools.fswrite import is_temp_name

__all__ = ["TEMP_JOURNAL_DIR", "TempJournal", "clean_leftover_temps"]

TEMP_JOURNAL_DIR = ".minicode/tmp"
_JOURNAL = re.compile(r"writes-(\d+)\.jsonl\Z")
_MAX_JOURNAL_BYTES = 4 * 1024 * 1024
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _journal_name(pid: int) -> str:
    return f"writes-{pid}.jsonl"


class TempJournal:
    """This process's journal of temp files; ``note`` is the ``ToolContext.on_temp`` hook.

    Blocking (a small append): called from the tools' worker threads. Failing to note is not a
    reason to fail a write: the temp file is then simply not cleaned up after a kill."""

    def __init__(self, workspace: Path, pid: int | None = None) -> None:
        self.workspace = workspace
        self.pid = os.getpid() if pid is None else pid
        self._path = f"{TEMP_JOURNAL_DIR}/{_journal_name(self.pid)}"
        self.noted = 0

    def note(self, directory: str, name: str) -> None:
        line = (json.dumps([directory, name]) + "\n").encode("ascii")
        try:
            ensure_state_dir(self.workspace)
            with write_target(self.workspace, self._path, make_parents=True) as target:
                fd = os.open(target.name, _FLAGS, 0o600, dir_fd=target.dir_fd)
                try:
                    os.write(fd, line)
                finally:
                    os.close(fd)
            self.noted += 1
        except (ToolError, OSError):
            pass  # e.g. .minicode is not writable: the write itself goes on

    def discard(self) -> None:
        """At a clean exit: every temp file was renamed or removed; forget them."""
        if not self.noted:
            return
        try:
            with write_target(self.workspace, self._path) as target:
                target.remove()
        except (ToolError, OSError):
            pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process has that pid now: leave its journal alone
    return True


def clean_leftover_temps(workspace: Path) -> list[str]:
    """Remove the temp files noted by processes that are gone; returns what was removed
    (workspace-relative). Blocking; never raises for a damaged or missing journal."""
    removed: list[str] = []
    try:
        with open_directory(workspace, TEMP_JOURNAL_DIR) as journals:
            names = [e.name for e in os.scandir(journals.fd) if e.is_file(follow_symlinks=False)]
            for name in names:
                match = _JOURNAL.match(name)
                if match is None or _alive(int(match.group(1))):
                    continue
                for directory, temp in _entries(journals.fd, name):
                    if _remove_temp(workspace, directory, temp):
                        removed.append(temp if directory in ("", ".") else f"{directory}/{temp}")
                _unlink(journals.fd, name)
    except (ToolError, OSError):
        return removed  # no journal directory (nothing was ever noted), or it is not ours
    return removed


def _entries(dir_fd: int, name: str) -> list[tuple[str, str]]:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        data = f.read(_MAX_JOURNAL_BYTES)
    entries: list[tuple[str, str]] = []
    for line in data.splitlines():
        try:
            directory, temp = jsonsafe.loads(line)
        except (ValueError, TypeError):
            continue  # a torn last line (killed mid-append) or damage: skip it
        if isinstance(directory, str) and isinstance(temp, str) and "/" not in temp:
            entries.append((directory, temp))
    return entries


def _remove_temp(workspace: Path, directory: str, temp: str) -> bool:
    """Remove ``directory/temp`` if it is still a regular file of the exact temp shape."""
    if not is_temp_name(temp):
        return False
    try:
        with open_directory(workspace, directory or ".") as opened:
            st = os.stat(temp, dir_fd=opened.fd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                return False
            os.unlink(temp, dir_fd=opened.fd)
            return True
    except (ToolError, OSError):
        return False  # renamed into place meanwhile, already gone, or the directory moved


def _unlink(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass  # already gone, or not ours to remove: the next start tries again
