"""The read-only search tools: ``ls``, ``glob`` and ``grep``.

All three stay inside the workspace (``paths``), skip ``.git/`` and ``.gitignore``d entries
(``ignore``), cap their output (``truncate``) and do their file-system work in a worker
thread. grep's thread checks a stop flag, so cancelling the call stops the scan.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypeVar

from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.ignore import IgnoreRules, glob_to_regex, load_ignore_rules, walk_files
from minicode.tools.paths import display_path, resolve_in_workspace, workspace_root
from minicode.tools.truncate import (
    BINARY_SNIFF_BYTES,
    GLOB_MAX_RESULTS,
    GREP_MAX_FILE_BYTES,
    GREP_MAX_LINE_CHARS,
    GREP_MAX_MATCHES,
    LS_MAX_ENTRIES,
    shorten_line,
)

__all__ = ["GlobTool", "GrepTool", "LsTool"]

_T = TypeVar("_T")
_PATH_PROP = {"type": "string", "description": "Directory relative to the workspace (default: the workspace)"}


def _directory(ctx: ToolContext, path: str | None) -> tuple[Path, Path]:
    """(workspace root, the directory to search), refusing files and escapes."""
    root = workspace_root(ctx.workspace)
    target = resolve_in_workspace(ctx.workspace, path or ".", must_exist=True)
    if not target.is_dir():
        raise ToolError(f"{display_path(ctx.workspace, target)} is not a directory")
    return root, target


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


# --- ls ------------------------------------------------------------------------------


def _list_dir(root: Path, target: Path, rules: IgnoreRules) -> str:
    try:
        with os.scandir(target) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as e:
        raise ToolError(f"cannot list {_rel(root, target) or '.'}: {e.strerror or e}") from e
    lines: list[str] = []
    hidden = 0
    for entry in entries:
        is_dir = entry.is_dir()  # follows symlinks: a link to a directory lists as one
        if rules.ignored(_rel(root, Path(entry.path)), is_dir=is_dir):
            hidden += 1
            continue
        lines.append(entry.name + ("/" if is_dir else ""))
    shown = lines[:LS_MAX_ENTRIES]
    if len(lines) > LS_MAX_ENTRIES:
        shown.append(f"[... {len(lines) - LS_MAX_ENTRIES} more entries not shown]")
    if hidden:
        noun = "entry" if hidden == 1 else "entries"
        shown.append(f"[{hidden} ignored {noun} hidden (.git, .gitignore, .minicode/sessions)]")
    return "\n".join(shown) if shown else "(empty directory)"


class LsTool:
    name = "ls"
    description = "List a directory of the workspace (sorted; directories end with /). Skips .git and ignored files."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": _PATH_PROP},
        "additionalProperties": False,
    }
    side_effects = False

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target=str(args.get("path") or "."))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        root, target = _directory(ctx, args.get("path"))
        rules = load_ignore_rules(root)
        text = await asyncio.to_thread(_list_dir, root, target, rules)
        count = text.count("\n") + 1
        return ToolResult(text=text, summary=f"{count} line" if count == 1 else f"{count} lines")


# --- glob ----------------------------------------------------------------------------


def _glob(root: Path, base: Path, pattern: re.Pattern[str], rules: IgnoreRules) -> list[str]:
    prefix = len(_rel(root, base)) + 1 if base != root else 0
    return sorted(rel for _, rel in walk_files(root, base, rules) if pattern.match(rel[prefix:]))


class GlobTool:
    name = "glob"
    description = (
        "Find files by name pattern, e.g. **/*.py or src/**/test_*.py (** crosses directories, "
        "* does not). Matches are relative to path and listed sorted. Skips .git and ignored files."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern, e.g. **/*.py"},
            "path": _PATH_PROP,
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    side_effects = False

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target=str(args.get("path") or "."), detail=str(args.get("pattern", "")))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ToolError("glob patterns are relative to path and may not contain '..'; e.g. **/*.py")
        root, base = _directory(ctx, args.get("path"))
        regex = re.compile(glob_to_regex(pattern))
        found = await asyncio.to_thread(_glob, root, base, regex, load_ignore_rules(root))
        if not found:
            return ToolResult(text=f"no files match {pattern}", summary="0 files")
        lines = found[:GLOB_MAX_RESULTS]
        if len(found) > GLOB_MAX_RESULTS:
            lines.append(f"[... {len(found) - GLOB_MAX_RESULTS} more files; use a narrower pattern or path]")
        return ToolResult(text="\n".join(lines), summary=f"{len(found)} files")


# --- grep ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _GrepJob:
    root: Path
    base: Path
    regex: re.Pattern[str]
    prefilter: re.Pattern[str] | None  # the regex in MULTILINE mode over whole files
    name_filter: re.Pattern[str] | None
    filter_on_name: bool  # a filter without "/" matches the file name, like rg --glob
    rules: IgnoreRules
    stop: threading.Event


def _grep_file(path: Path, rel: str, job: _GrepJob, out: list[str]) -> None:
    # Size is checked by the caller, so reading the whole file is bounded.
    data = path.read_bytes()
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return
    text = data.decode("utf-8", errors="replace")
    # One C-level search over the whole file rejects most files without a Python loop.
    if job.prefilter is not None and not job.prefilter.search(text):
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if job.stop.is_set():
            return  # cancelled: don't finish a large file nobody waits for
        line = line.rstrip("\r")
        if job.regex.search(line):
            out.append(f"{rel}:{number}:{shorten_line(line, GREP_MAX_LINE_CHARS)}")
            if len(out) >= GREP_MAX_MATCHES:
                return


def _grep(job: _GrepJob) -> tuple[list[str], int]:
    """Matches (at most cap + 1, so "capped" is known) and the count of files skipped as too large."""
    out: list[str] = []
    skipped = 0
    candidates: Iterable[tuple[Path, str]]
    if job.base.is_file():
        candidates = [(job.base, _rel(job.root, job.base))]
    else:
        candidates = walk_files(job.root, job.base, job.rules)
    for path, rel in candidates:
        if job.stop.is_set() or len(out) >= GREP_MAX_MATCHES:
            break
        if job.name_filter is not None:
            subject = rel.rsplit("/", 1)[-1] if job.filter_on_name else rel
            if not job.name_filter.match(subject):
                continue
        try:
            if path.stat().st_size > GREP_MAX_FILE_BYTES:
                skipped += 1
                continue
            _grep_file(path, rel, job, out)
        except OSError:
            continue  # vanished or unreadable mid-walk; the rest of the search still counts
    return out, skipped


class GrepTool:
    name = "grep"
    description = (
        "Search file contents with a Python regular expression; prints path:line:text. "
        "Narrow it with path (file or directory) and glob (e.g. *.py). Skips binary, .git and ignored files."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Python regular expression"},
            "path": {"type": "string", "description": "File or directory relative to the workspace"},
            "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.py or src/**/*.ts"},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive match (default false)"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    side_effects = False

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target=str(args.get("path") or "."), detail=str(args.get("pattern", "")))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        flags = re.IGNORECASE if args.get("ignore_case") else 0
        try:
            regex = re.compile(args["pattern"], flags)
        except re.error as e:
            raise ToolError(
                f"invalid regular expression {args['pattern']!r}: {e} "
                "(Python re syntax; escape literal characters like ( [ . * with a backslash)"
            ) from e
        root = workspace_root(ctx.workspace)
        base = resolve_in_workspace(ctx.workspace, args.get("path") or ".", must_exist=True)
        name_glob: str | None = args.get("glob")
        job = _GrepJob(
            root=root, base=base, regex=regex, prefilter=_prefilter(args["pattern"], flags),
            name_filter=re.compile(glob_to_regex(name_glob)) if name_glob else None,
            filter_on_name=bool(name_glob) and "/" not in (name_glob or ""),
            rules=load_ignore_rules(root), stop=threading.Event(),
        )  # fmt: skip
        try:
            found, skipped = await _in_daemon_thread(_grep, job)
        finally:
            job.stop.set()  # on cancellation the worker stops at the next line
        return ToolResult(text=_grep_text(found, skipped), summary=f"{len(found)} matches")


async def _in_daemon_thread(fn: Callable[[_GrepJob], _T], job: _GrepJob) -> _T:
    """Run ``fn(job)`` in a daemon thread. Not the default executor: one regex search cannot be
    interrupted, and ``asyncio.run`` waits for executor threads at exit, so a pathological pattern
    would keep Ctrl+C from ending minicode. A daemon thread is abandoned at exit instead."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def deliver(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def hand_over(outcome: Callable[[], None]) -> None:
        try:
            loop.call_soon_threadsafe(deliver, outcome)
        except RuntimeError:  # the loop is closed: nobody waits for this result any more
            pass

    def work() -> None:
        try:
            result = fn(job)
        except BaseException as e:  # handed to the awaiting task, not lost in the thread
            error = e
            hand_over(lambda: future.set_exception(error))
        else:
            hand_over(lambda: future.set_result(result))

    threading.Thread(target=work, name="minicode-grep", daemon=True).start()
    return await future


def _prefilter(pattern: str, flags: int) -> re.Pattern[str] | None:
    """A whole-file regex that matches whenever some line matches, or None if unsafe.

    With MULTILINE, ^ and $ behave as they do per line; \\A and \\Z do not, so such
    patterns go straight to the per-line scan.
    """
    if "\\A" in pattern or "\\Z" in pattern:
        return None
    return re.compile(pattern, flags | re.MULTILINE)


def _grep_text(found: list[str], skipped: int) -> str:
    lines = found[:GREP_MAX_MATCHES] if found else ["no matches"]
    if len(found) >= GREP_MAX_MATCHES:
        lines.append(f"[stopped at {GREP_MAX_MATCHES} matches; narrow the pattern, path or glob to see the rest]")
    if skipped:
        lines.append(f"[{skipped} files larger than {GREP_MAX_FILE_BYTES} bytes were not searched]")
    return "\n".join(lines)
