"""What grep does to the files: the confined walk, the name filter, the line matching.

Runs inside the grep worker process (``grep_worker``), never on minicode's event loop: Python's
``re`` holds the GIL for as long as one match runs, and a catastrophic pattern (``^(a+)+$``
on ``"a"*40 + "!"``) runs for hours. In the worker a per-file budget interrupts such a match
(``FileTooSlow``, raised by the worker's alarm) and the scan goes on with the next file;
minicode kills the whole worker on cancellation or when the overall budget is spent.

Reports go through ``emit(kind, value)``: ``"file"`` and ``"end"`` around the matching of one
file (the worker's per-file timer runs between them), ``"match"`` (``path:line:text``),
``"slow"`` (a file abandoned after the per-file budget), ``"big"`` (files skipped as too large,
at the end).
Stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from minicode.tools.fsroot import NotARegularFile, open_directory, open_file
from minicode.tools.fswalk import WalkEntry, walk_files
from minicode.tools.ignore import glob_to_regex, load_ignore_rules
from minicode.tools.truncate import BINARY_SNIFF_BYTES, GREP_MAX_FILE_BYTES, GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES, shorten_line

__all__ = ["FileTooSlow", "GrepJob", "compile_pattern", "scan"]

Emit = Callable[[str, object], None]


class FileTooSlow(Exception):
    """Raised (by the worker's timer) inside a match that exceeded the per-file budget."""


@dataclass(frozen=True, slots=True)
class GrepJob:
    """One grep call, as the worker receives it (JSON)."""

    workspace: str
    path: str
    pattern: str
    ignore_case: bool = False
    glob: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"workspace": self.workspace, "path": self.path, "pattern": self.pattern,
                "ignore_case": self.ignore_case, "glob": self.glob}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, object]) -> GrepJob:
        glob = data.get("glob")
        return cls(str(data["workspace"]), str(data["path"]), str(data["pattern"]),
                   bool(data.get("ignore_case")), str(glob) if glob else None)  # fmt: skip


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """The compiled pattern (``re.error`` for a bad one)."""
    return re.compile(pattern, re.IGNORECASE if ignore_case else 0)


def _prefilter(pattern: str, flags: int) -> re.Pattern[str] | None:
    """A whole-file regex that matches whenever some line matches, or None if unsafe.

    With MULTILINE, ^ and $ behave as they do per line; \\A and \\Z do not, so such patterns
    go straight to the per-line scan."""
    if "\\A" in pattern or "\\Z" in pattern:
        return None
    return re.compile(pattern, flags | re.MULTILINE)


@dataclass(slots=True)
class _Scan:
    job: GrepJob
    regex: re.Pattern[str]
    prefilter: re.Pattern[str] | None
    name_filter: re.Pattern[str] | None
    emit: Emit
    matches: int = 0
    too_big: int = 0

    def full(self) -> bool:
        return self.matches >= GREP_MAX_MATCHES

    def wanted(self, rel: str) -> bool:
        if self.name_filter is None:
            return True
        on_name = self.job.glob is not None and "/" not in self.job.glob  # like rg --glob
        return self.name_filter.match(rel.rsplit("/", 1)[-1] if on_name else rel) is not None

    def search(self, rel: str, f: BinaryIO, size: int) -> None:
        if size > GREP_MAX_FILE_BYTES:
            self.too_big += 1
            return
        data = f.read(GREP_MAX_FILE_BYTES + 1)
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            return
        self.emit("file", rel)
        try:
            try:
                self._lines(rel, data.decode("utf-8", errors="replace"))
            finally:
                self.emit("end", rel)  # stops the timer; an alarm right before lands below
        except FileTooSlow:
            self.emit("slow", rel)

    def _lines(self, rel: str, text: str) -> None:
        # One C-level search over the whole file rejects most files without a Python loop.
        if self.prefilter is not None and not self.prefilter.search(text):
            return
        for number, line in enumerate(text.split("\n"), start=1):
            line = line.rstrip("\r")
            if self.regex.search(line):
                self.emit("match", f"{rel}:{number}:{shorten_line(line, GREP_MAX_LINE_CHARS)}")
                self.matches += 1
                if self.full():
                    return


def scan(job: GrepJob, emit: Emit) -> None:
    """Search ``job`` and report through ``emit``. Raises ``ToolError`` for a path that is
    refused or missing; everything found on the way is reported as it is found."""
    flags = re.IGNORECASE if job.ignore_case else 0
    state = _Scan(
        job, compile_pattern(job.pattern, job.ignore_case), _prefilter(job.pattern, flags),
        re.compile(glob_to_regex(job.glob)) if job.glob else None, emit,
    )  # fmt: skip
    workspace = Path(job.workspace)
    try:
        with open_file(workspace, job.path) as single:
            state.search(single.place.rel, single.file, single.stat.st_size)
    except NotARegularFile:  # a directory (anything else is refused by open_directory)
        rules = load_ignore_rules(workspace)
        with open_directory(workspace, job.path) as base:
            for entry in walk_files(workspace, base, rules):
                if state.full():
                    break
                if state.wanted(entry.rel):
                    _search_entry(state, workspace, entry)
    emit("big", state.too_big)


def _search_entry(state: _Scan, workspace: Path, entry: WalkEntry) -> None:
    try:
        with entry.open(workspace) as opened:
            if opened is not None:
                state.search(entry.rel, opened[0], opened[1].st_size)
    except OSError:
        pass  # vanished or unreadable mid-walk; the rest of the search still counts
