"""The ``grep`` tool: search file contents with a Python regex, in a worker process.

The search itself (``grep_scan``) runs in ``grep_worker``, a child process, so that nothing a
pattern does can hold minicode: a catastrophic pattern is abandoned per file after
``GREP_FILE_BUDGET_S``, the whole call is stopped after ``GREP_TOTAL_BUDGET_S`` (matches found
so far are kept), and cancelling the call (Esc, Ctrl+C, SIGTERM, ``--timeout``) kills the worker
at once. The worker walks and opens files through ``fsroot``/``fswalk`` like every other tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import minicode
from minicode.errors import ToolError
from minicode.tools.base import ToolContext, ToolPreview, ToolResult
from minicode.tools.grep_scan import GrepJob, compile_pattern
from minicode.tools.grep_worker import BOOT
from minicode.tools.specs import GREP
from minicode.tools.truncate import GREP_FILE_BUDGET_S, GREP_MAX_FILE_BYTES, GREP_MAX_MATCHES, GREP_TOTAL_BUDGET_S

__all__ = ["GrepTool"]

_LINE_LIMIT = 1024 * 1024  # one report line (a match is at most ~300 characters, JSON-escaped)
_SHOWN_SLOW_FILES = 5


@dataclass(slots=True)
class _Found:
    matches: list[str] = field(default_factory=list)
    slow: list[str] = field(default_factory=list)
    too_big: int = 0
    error: str | None = None
    stopped: bool = False  # the overall budget ran out


class GrepTool:
    name = GREP.name
    description = GREP.description
    parameters: Mapping[str, Any] = GREP.parameters
    side_effects = GREP.side_effects

    def preview(self, args: Mapping[str, Any]) -> ToolPreview:
        return ToolPreview(target=str(args.get("path") or "."), detail=str(args.get("pattern", "")))

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        try:
            compile_pattern(pattern, bool(args.get("ignore_case")))
        except (re.error, RecursionError, OverflowError, ValueError) as e:
            raise ToolError(
                f"invalid regular expression {pattern!r}: {e} "
                "(Python re syntax; escape literal characters like ( [ . * with a backslash)"
            ) from e
        job = GrepJob(str(ctx.workspace), args.get("path") or ".", pattern, bool(args.get("ignore_case")), args.get("glob"))
        found = await _run_worker(job)
        if found.error is not None:
            raise ToolError(found.error)
        if ctx.read_before_write and found.matches:  # the small-model assists (docs/small-models.md)
            found.matches = await asyncio.to_thread(_with_definitions, ctx.workspace, found.matches)
        return ToolResult(text=_grep_text(found), summary=f"{len(found.matches)} matches")


async def _run_worker(job: GrepJob, budget: float = GREP_TOTAL_BUDGET_S) -> _Found:
    """Run the worker for ``job``; whatever ends the call, the worker is dead afterwards."""
    package_parent = str(Path(minicode.__file__).resolve().parent.parent)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-S", "-c", BOOT, package_parent, str(os.getpid()),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={}, start_new_session=True, limit=_LINE_LIMIT,
        )  # fmt: skip
    except OSError as e:
        raise ToolError(f"cannot start the grep worker: {e.strerror or e}") from e
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    found = _Found()
    errors = asyncio.create_task(proc.stderr.read())
    try:
        proc.stdin.write((json.dumps(job.to_json()) + "\n").encode("ascii"))
        with contextlib.suppress(ConnectionError):
            await proc.stdin.drain()
        proc.stdin.close()
        try:
            async with asyncio.timeout(budget):
                while line := await proc.stdout.readline():
                    _take(found, line)
        except TimeoutError:
            found.stopped = True
        code = await proc.wait() if not found.stopped else None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(asyncio.CancelledError):
                await proc.wait()  # already SIGKILLed: this returns at once
        errors.cancel()
    if code not in (None, 0):
        raise ToolError(f"grep failed: its worker process exited with code {code}")
    return found


def _take(found: _Found, line: bytes) -> None:
    try:
        kind, value = json.loads(line)
    except (ValueError, TypeError):
        return  # not a report (cannot happen unless the worker is broken): skip it
    if kind == "match" and len(found.matches) < GREP_MAX_MATCHES:
        found.matches.append(str(value))
    elif kind == "slow":
        found.slow.append(str(value))
    elif kind == "big" and isinstance(value, int):
        found.too_big = value
    elif kind == "error":
        found.error = str(value)


_MATCH = re.compile(r"^(.+?\.py):(\d+):")


def _with_definitions(workspace: Path, matches: list[str]) -> list[str]:
    """Each match in a Python file with the function or class it is in (``billing.py:9 in remind_overdue(): …``):
    asked which function calls ``send_email``, a 1.5B model grepped, got ``app/billing.py:9:
    send_email(…)`` and named ``send_email``; the line number alone does not say. Blocking."""
    from minicode.tools.preview_file import text_of

    spans: dict[str, list[tuple[int, int, str]]] = {}
    shown = []
    for match in matches:
        found = _MATCH.match(match)
        if found is None:
            shown.append(match)
            continue
        path, line = found.group(1), int(found.group(2))
        if path not in spans:
            spans[path] = _definition_spans(text_of(workspace, path))
        inside = [name for start, end, name in spans[path] if start <= line <= end]
        # the function next to the place, where the eye starts: put after the line, "[in
        # remind_overdue()]" was passed over and the answer named the function called instead
        shown.append(f"{path}:{line} in {inside[-1]}:{match[found.end():]}" if inside else match)
    return shown


def _definition_spans(text: str | None) -> list[tuple[int, int, str]]:
    """The functions and classes of a Python text as (first line, last line, dotted name),
    outer before inner; [] for text that does not parse."""
    import ast

    try:
        tree = ast.parse(text or "")
    except (SyntaxError, ValueError):
        return []
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                spans.append((child.lineno, child.end_lineno or child.lineno,
                              name if isinstance(child, ast.ClassDef) else f"{name}()"))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def _grep_text(found: _Found) -> str:
    lines = list(found.matches) if found.matches else ["no matches"]
    if len(found.matches) >= GREP_MAX_MATCHES:
        lines.append(f"[stopped at {GREP_MAX_MATCHES} matches; narrow the pattern, path or glob to see the rest]")
    if found.too_big:
        lines.append(f"[{found.too_big} files larger than {GREP_MAX_FILE_BYTES} bytes were not searched]")
    if found.slow:
        shown = ", ".join(found.slow[:_SHOWN_SLOW_FILES]) + (" …" if len(found.slow) > _SHOWN_SLOW_FILES else "")
        lines.append(
            f"[{len(found.slow)} file(s) not fully searched: the pattern took over {GREP_FILE_BUDGET_S:g} s on "
            f"each ({shown}); nested repetition like (a+)+ backtracks catastrophically — simplify the pattern]"
        )
    if found.stopped:
        lines.append(f"[grep stopped after {GREP_TOTAL_BUDGET_S:g} s; the matches above are what was found so far]")
    return "\n".join(lines)
